//! The provider plugin host: the [`Provider`] trait the worker's tasks call,
//! the real plugin client behind it, and an in-process fake for tests.
//!
//! # Layout
//! - [`handshake`]: the go-plugin handshake line.
//! - [`tls`]: AutoMTLS: the client certificate and the pinned server certificate.
//! - `process`: starting the plugin, its stdout/stderr, stopping it.
//! - `transport`: the gRPC channel over tcp or unix sockets, with or without TLS.
//! - [`client`]: [`PluginClient`], the tfplugin5/tfplugin6 client implementing [`Provider`].
//! - [`pool`]: one configured process per (binary, configuration), shared.
//! - [`fake`]: [`FakeProvider`], an in-process provider for unit tests.

pub mod client;
pub mod fake;
pub mod handshake;
pub mod pool;
mod process;
pub mod tls;
mod transport;

pub use client::{PluginClient, PluginConfig};
pub use fake::FakeProvider;
pub use pool::{Launcher, ManagedProvider, PluginLauncher, PoolConfig, ProviderKey, ProviderPool};

use async_trait::async_trait;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, CallFunctionRequest,
    CallFunctionResponse, ConfigureProviderRequest, GetProviderSchemaResponse,
    ImportResourceStateRequest, ImportResourceStateResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse, ReadDataSourceRequest, ReadDataSourceResponse, ReadResourceRequest,
    ReadResourceResponse, UpgradeResourceStateRequest, UpgradeResourceStateResponse,
    ValidateProviderConfigRequest, ValidateResourceConfigRequest,
};
use fleetform_shared::provider::{
    EphemeralResourceRequest, OpenEphemeralResourceRequest, OpenEphemeralResourceResponse,
    RenewEphemeralResourceResponse,
};
use std::process::ExitStatus;

/// A provider as the worker sees it: one method per protocol call.
///
/// Problems the provider reports (bad configuration, an API error) come back
/// as diagnostics inside the responses; `Err` means the call itself failed.
#[async_trait]
pub trait Provider: Send + Sync {
    async fn get_provider_schema(&self) -> Result<GetProviderSchemaResponse, ProviderError>;

    async fn validate_provider_config(
        &self,
        req: &ValidateProviderConfigRequest,
    ) -> Result<Diagnostics, ProviderError>;

    async fn validate_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError>;

    /// `ValidateDataResourceConfig`: same request shape as for resources.
    async fn validate_data_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError>;

    async fn configure_provider(
        &self,
        req: &ConfigureProviderRequest,
    ) -> Result<Diagnostics, ProviderError>;

    async fn upgrade_resource_state(
        &self,
        req: &UpgradeResourceStateRequest,
    ) -> Result<UpgradeResourceStateResponse, ProviderError>;

    async fn read_resource(
        &self,
        req: &ReadResourceRequest,
    ) -> Result<ReadResourceResponse, ProviderError>;

    async fn plan_resource_change(
        &self,
        req: &PlanResourceChangeRequest,
    ) -> Result<PlanResourceChangeResponse, ProviderError>;

    async fn apply_resource_change(
        &self,
        req: &ApplyResourceChangeRequest,
    ) -> Result<ApplyResourceChangeResponse, ProviderError>;

    async fn read_data_source(
        &self,
        req: &ReadDataSourceRequest,
    ) -> Result<ReadDataSourceResponse, ProviderError>;

    /// Asks the provider to cancel its in-flight calls (`StopProvider`).
    async fn stop(&self) -> Result<(), ProviderError>;

    /// `CallFunction`: one of the provider's functions; the signature says
    /// how each argument and the result travel.
    async fn call_function(
        &self,
        req: &CallFunctionRequest,
        signature: &FunctionSignature,
    ) -> Result<CallFunctionResponse, ProviderError> {
        let _ = (req, signature);
        Err(ProviderError::Protocol {
            method: "CallFunction",
            message: "this provider offers no functions".into(),
        })
    }

    /// `ValidateEphemeralResourceConfig`: same request shape as for resources.
    async fn validate_ephemeral_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let _ = req;
        Err(no_ephemeral("ValidateEphemeralResourceConfig"))
    }

    /// `OpenEphemeralResource`: the value of an ephemeral resource.
    async fn open_ephemeral_resource(
        &self,
        req: &OpenEphemeralResourceRequest,
    ) -> Result<OpenEphemeralResourceResponse, ProviderError> {
        let _ = req;
        Err(no_ephemeral("OpenEphemeralResource"))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: &EphemeralResourceRequest,
    ) -> Result<RenewEphemeralResourceResponse, ProviderError> {
        let _ = req;
        Err(no_ephemeral("RenewEphemeralResource"))
    }

    async fn close_ephemeral_resource(
        &self,
        req: &EphemeralResourceRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let _ = req;
        Err(no_ephemeral("CloseEphemeralResource"))
    }

    /// `ImportResourceState`: the objects an existing remote id stands for.
    async fn import_resource_state(
        &self,
        req: &ImportResourceStateRequest,
    ) -> Result<ImportResourceStateResponse, ProviderError> {
        let _ = req;
        Err(ProviderError::Protocol {
            method: "ImportResourceState",
            message: "this provider does not support import".into(),
        })
    }
}

fn no_ephemeral(method: &'static str) -> ProviderError {
    ProviderError::Protocol {
        method,
        message: "this provider offers no ephemeral resources".into(),
    }
}

/// Why a provider call could not be made or understood.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("could not start provider {path}: {source}")]
    Spawn {
        path: String,
        source: std::io::Error,
    },
    #[error("provider handshake failed: {0}")]
    Handshake(String),
    #[error("tls setup failed: {0}")]
    Tls(String),
    #[error("could not connect to provider: {0}")]
    Connect(#[from] tonic::transport::Error),
    #[error("provider call {method} failed: {status}")]
    Rpc {
        method: &'static str,
        status: Box<tonic::Status>,
    },
    /// The provider answered something the protocol does not allow, or a
    /// value did not match its schema.
    #[error("provider protocol violation in {method}: {message}")]
    Protocol {
        method: &'static str,
        message: String,
    },
    /// A request value did not match the provider's schema.
    #[error("cannot encode {method} request: {message}")]
    Encode {
        method: &'static str,
        message: String,
    },
    #[error("provider has no {kind} type {name:?}")]
    UnknownType { kind: &'static str, name: String },
    #[error("provider process exited ({status}) during {method}")]
    Exited {
        method: &'static str,
        status: ExitStatus,
    },
    #[error("provider refused to stop: {0}")]
    Stop(String),
    /// The run was cancelled: no provider is handed out for it any more.
    #[error("the run was cancelled")]
    RunStopped,
    /// The provider rejected its configuration; the diagnostics say why.
    #[error("provider configuration failed: {}", summaries(.0))]
    Configure(Diagnostics),
    #[error(transparent)]
    Resolve(#[from] fleetform_install::ResolveError),
}

fn summaries(diags: &Diagnostics) -> String {
    let errors: Vec<&str> = diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.summary.as_str())
        .collect();
    errors.join("; ")
}
