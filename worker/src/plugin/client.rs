//! [`PluginClient`]: a provider plugin process spoken to over tfplugin5 or
//! tfplugin6, whichever the plugin chose from the versions we offered.
//!
//! Values on the wire are typed by the schema, so the client fetches the
//! provider schema once and decodes every later call with the type of the
//! resource, data source or provider configuration the call is about.

use super::process::{PluginProcess, SpawnOptions};
use super::tls::{ClientCert, client_config};
use super::{Provider, ProviderError, transport};
use async_trait::async_trait;
use fleetform_proto::convert::{
    ConvertError, FromProto, ToProto, decode_value, diagnostics_from_proto,
    validate_data_config_to_proto,
};
use fleetform_proto::plugin::Empty;
use fleetform_proto::plugin::grpc_controller_client::GrpcControllerClient;
use fleetform_proto::tfplugin6 as pb;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::*;
use fleetform_shared::types::Type;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;
use tonic::transport::Channel;

mod rpc;

use rpc::Rpc;

/// Real provider schemas exceed tonic's 4 MiB default (the AWS one is ~10 MiB).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 256 * 1024 * 1024;
/// The plugin protocol versions this client speaks, offered in this order
/// (go-plugin plugins pick the highest they support).
pub const PROTOCOL_VERSIONS: [u32; 2] = [5, 6];

/// How to start one plugin.
#[derive(Clone, Debug)]
pub struct PluginConfig {
    pub path: PathBuf,
    /// Shown in logs, e.g. `registry.terraform.io/hashicorp/null`.
    pub name: String,
    /// Offered in `PLUGIN_PROTOCOL_VERSIONS`.
    pub protocol_versions: Vec<u32>,
    /// Whether to run go-plugin's AutoMTLS (Terraform always does).
    pub auto_mtls: bool,
    pub handshake_timeout: Duration,
    pub max_message_size: usize,
}

impl PluginConfig {
    pub fn new(path: impl Into<PathBuf>, name: impl Into<String>) -> PluginConfig {
        PluginConfig {
            path: path.into(),
            name: name.into(),
            protocol_versions: PROTOCOL_VERSIONS.to_vec(),
            auto_mtls: true,
            handshake_timeout: Duration::from_secs(60),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
        }
    }
}

/// The schema, with the value type of everything the provider knows.
struct Schemas {
    response: GetProviderSchemaResponse,
    provider: Type,
    resources: HashMap<String, Type>,
    data_sources: HashMap<String, Type>,
    ephemeral: HashMap<String, Type>,
}

impl Schemas {
    fn new(response: GetProviderSchemaResponse) -> Schemas {
        let s = &response.schema;
        Schemas {
            provider: s.provider.block.implied_type(),
            resources: s
                .resources
                .iter()
                .map(|(k, v)| (k.clone(), v.block.implied_type()))
                .collect(),
            data_sources: s
                .data_sources
                .iter()
                .map(|(k, v)| (k.clone(), v.block.implied_type()))
                .collect(),
            ephemeral: s
                .ephemeral_resources
                .iter()
                .map(|(k, v)| (k.clone(), v.block.implied_type()))
                .collect(),
            response,
        }
    }

    fn ephemeral(&self, name: &str) -> Result<&Type, ProviderError> {
        self.ephemeral
            .get(name)
            .ok_or_else(|| ProviderError::UnknownType {
                kind: "ephemeral resource",
                name: name.into(),
            })
    }

    fn resource(&self, name: &str) -> Result<&Type, ProviderError> {
        self.resources
            .get(name)
            .ok_or_else(|| ProviderError::UnknownType {
                kind: "resource",
                name: name.into(),
            })
    }

    fn data_source(&self, name: &str) -> Result<&Type, ProviderError> {
        self.data_sources
            .get(name)
            .ok_or_else(|| ProviderError::UnknownType {
                kind: "data source",
                name: name.into(),
            })
    }
}

/// A running provider plugin. Calls may be made concurrently.
pub struct PluginClient {
    name: String,
    protocol_version: u32,
    provider: Rpc,
    controller: GrpcControllerClient<Channel>,
    process: PluginProcess,
    schemas: OnceCell<Arc<Schemas>>,
}

impl PluginClient {
    /// Starts the plugin, completes the handshake and connects to it.
    pub async fn start(config: &PluginConfig) -> Result<PluginClient, ProviderError> {
        let cert = if config.auto_mtls {
            Some(ClientCert::generate()?)
        } else {
            None
        };
        let process = PluginProcess::spawn(SpawnOptions {
            path: &config.path,
            name: &config.name,
            protocol_versions: &config.protocol_versions,
            client_cert_pem: cert.as_ref().map(|c| c.pem.as_str()),
            handshake_timeout: config.handshake_timeout,
        })
        .await?;
        let hs = &process.handshake;
        if !PROTOCOL_VERSIONS.contains(&hs.protocol_version) {
            process.kill().await;
            return Err(ProviderError::Handshake(format!(
                "plugin chose protocol {}, but only tfplugin5 and tfplugin6 are implemented",
                hs.protocol_version
            )));
        }
        let tls = match (&cert, &hs.server_cert) {
            (Some(cert), Some(server)) => Some(client_config(cert, server.clone())?),
            (None, None) => None,
            (Some(_), None) => {
                process.kill().await;
                return Err(ProviderError::Handshake(
                    "plugin ignored AutoMTLS: no server certificate".into(),
                ));
            }
            (None, Some(_)) => {
                process.kill().await;
                return Err(ProviderError::Handshake(
                    "plugin sent a certificate without AutoMTLS".into(),
                ));
            }
        };
        let channel = match transport::connect(&hs.network, tls, config.handshake_timeout).await {
            Ok(channel) => channel,
            Err(e) => {
                process.kill().await;
                return Err(e);
            }
        };
        tracing::debug!(provider = config.name.as_str(), network = ?hs.network, tls = cert.is_some(), protocol = hs.protocol_version, "connected to provider plugin");
        let protocol_version = hs.protocol_version;
        let provider = Rpc::new(protocol_version, channel.clone(), config.max_message_size)
            .expect("the version was checked above");
        Ok(PluginClient {
            name: config.name.clone(),
            protocol_version,
            provider,
            controller: GrpcControllerClient::new(channel),
            process,
            schemas: OnceCell::new(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin protocol the plugin chose in its handshake (5 or 6).
    pub fn protocol_version(&self) -> u32 {
        self.protocol_version
    }

    /// The process's exit status, once it has exited.
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.process.exit_status()
    }

    /// Asks the plugin to shut down (`GRPCController.Shutdown`), waits a
    /// little for it to exit, then kills it.
    pub async fn close(&self) {
        let mut controller = self.controller.clone();
        let grace = Duration::from_secs(2);
        match tokio::time::timeout(grace, controller.shutdown(Empty {})).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::debug!(provider = self.name.as_str(), error = %e, "provider refused shutdown")
            }
            Err(_) => tracing::debug!(
                provider = self.name.as_str(),
                "provider did not answer shutdown"
            ),
        }
        if self.process.wait_exit(grace).await.is_none() {
            tracing::debug!(
                provider = self.name.as_str(),
                "provider still running after shutdown, killing it"
            );
        }
        self.process.kill().await;
    }

    async fn schemas(&self) -> Result<&Arc<Schemas>, ProviderError> {
        self.schemas
            .get_or_try_init(|| async {
                let method = "GetProviderSchema";
                let resp = self
                    .finish(
                        method,
                        self.provider
                            .get_provider_schema(pb::get_provider_schema::Request {})
                            .await,
                    )
                    .await?;
                let resp =
                    GetProviderSchemaResponse::try_from(resp).map_err(|e| protocol(method, e))?;
                Ok(Arc::new(Schemas::new(resp)))
            })
            .await
    }

    /// Turns a failed call into the right error: a dead process is reported
    /// as such rather than as the transport error it caused.
    async fn finish<T>(
        &self,
        method: &'static str,
        result: Result<tonic::Response<T>, tonic::Status>,
    ) -> Result<T, ProviderError> {
        match result {
            Ok(resp) => Ok(resp.into_inner()),
            Err(status) => {
                let exited = if status.code() == tonic::Code::Unavailable
                    || status.code() == tonic::Code::Unknown
                {
                    self.process.wait_exit(Duration::from_millis(200)).await
                } else {
                    self.process.exit_status()
                };
                Err(match exited {
                    Some(status) => ProviderError::Exited { method, status },
                    None => ProviderError::Rpc {
                        method,
                        status: Box::new(status),
                    },
                })
            }
        }
    }
}

fn protocol(method: &'static str, e: ConvertError) -> ProviderError {
    ProviderError::Protocol {
        method,
        message: e.to_string(),
    }
}

fn encode(method: &'static str, e: ConvertError) -> ProviderError {
    ProviderError::Encode {
        method,
        message: e.to_string(),
    }
}

#[async_trait]
impl Provider for PluginClient {
    async fn get_provider_schema(&self) -> Result<GetProviderSchemaResponse, ProviderError> {
        Ok(self.schemas().await?.response.clone())
    }

    async fn validate_provider_config(
        &self,
        req: &ValidateProviderConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "ValidateProviderConfig";
        let ty = &self.schemas().await?.provider;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let call = self.provider.validate_provider_config(msg).await;
        let (resp, prepared) = self.finish(method, call.map(tonic::Response::new)).await?;
        // Terraform configures with the original configuration, never the
        // prepared one (hashicorp/terraform#26816); so do we, noting the
        // difference for whoever debugs the provider.
        if let Some(prepared) = prepared {
            match decode_value(Some(&prepared), ty) {
                Ok(v) if v == req.config => {}
                Ok(_) => tracing::debug!(
                    provider = self.name.as_str(),
                    "PrepareProviderConfig altered the configuration; the original is used"
                ),
                Err(e) => tracing::debug!(
                    provider = self.name.as_str(),
                    error = %e,
                    "PrepareProviderConfig answered an undecodable configuration; ignored"
                ),
            }
        }
        Ok(diagnostics_from_proto(resp.diagnostics))
    }

    async fn validate_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "ValidateResourceConfig";
        let msg = req
            .to_proto(self.schemas().await?.resource(&req.type_name)?)
            .map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.validate_resource_config(msg).await)
            .await?;
        Ok(diagnostics_from_proto(resp.diagnostics))
    }

    async fn validate_data_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "ValidateDataResourceConfig";
        let msg =
            validate_data_config_to_proto(req, self.schemas().await?.data_source(&req.type_name)?)
                .map_err(|e| encode(method, e))?;
        let resp = self
            .finish(
                method,
                self.provider.validate_data_resource_config(msg).await,
            )
            .await?;
        Ok(diagnostics_from_proto(resp.diagnostics))
    }

    async fn configure_provider(
        &self,
        req: &ConfigureProviderRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "ConfigureProvider";
        let msg = req
            .to_proto(&self.schemas().await?.provider)
            .map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.configure_provider(msg).await)
            .await?;
        Ok(diagnostics_from_proto(resp.diagnostics))
    }

    async fn upgrade_resource_state(
        &self,
        req: &UpgradeResourceStateRequest,
    ) -> Result<UpgradeResourceStateResponse, ProviderError> {
        let method = "UpgradeResourceState";
        let ty = self.schemas().await?.resource(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.upgrade_resource_state(msg).await)
            .await?;
        UpgradeResourceStateResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn read_resource(
        &self,
        req: &ReadResourceRequest,
    ) -> Result<ReadResourceResponse, ProviderError> {
        let method = "ReadResource";
        let ty = self.schemas().await?.resource(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.read_resource(msg).await)
            .await?;
        ReadResourceResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn plan_resource_change(
        &self,
        req: &PlanResourceChangeRequest,
    ) -> Result<PlanResourceChangeResponse, ProviderError> {
        let method = "PlanResourceChange";
        let ty = self.schemas().await?.resource(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.plan_resource_change(msg).await)
            .await?;
        PlanResourceChangeResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn apply_resource_change(
        &self,
        req: &ApplyResourceChangeRequest,
    ) -> Result<ApplyResourceChangeResponse, ProviderError> {
        let method = "ApplyResourceChange";
        let ty = self.schemas().await?.resource(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.apply_resource_change(msg).await)
            .await?;
        ApplyResourceChangeResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn read_data_source(
        &self,
        req: &ReadDataSourceRequest,
    ) -> Result<ReadDataSourceResponse, ProviderError> {
        let method = "ReadDataSource";
        let ty = self.schemas().await?.data_source(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.read_data_source(msg).await)
            .await?;
        ReadDataSourceResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "ValidateEphemeralResourceConfig";
        let ty = self.schemas().await?.ephemeral(&req.type_name)?;
        let msg = fleetform_proto::convert::validate_ephemeral_config_to_proto(req, ty)
            .map_err(|e| encode(method, e))?;
        let resp = self
            .finish(
                method,
                self.provider.validate_ephemeral_resource_config(msg).await,
            )
            .await?;
        Ok(fleetform_proto::convert::diagnostics_from_proto(
            resp.diagnostics,
        ))
    }

    async fn open_ephemeral_resource(
        &self,
        req: &OpenEphemeralResourceRequest,
    ) -> Result<OpenEphemeralResourceResponse, ProviderError> {
        let method = "OpenEphemeralResource";
        let ty = self.schemas().await?.ephemeral(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.open_ephemeral_resource(msg).await)
            .await?;
        OpenEphemeralResourceResponse::from_proto(resp, ty).map_err(|e| protocol(method, e))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: &EphemeralResourceRequest,
    ) -> Result<RenewEphemeralResourceResponse, ProviderError> {
        let method = "RenewEphemeralResource";
        let msg = fleetform_proto::convert::renew_request_to_proto(req);
        let resp = self
            .finish(method, self.provider.renew_ephemeral_resource(msg).await)
            .await?;
        Ok(fleetform_proto::convert::renew_response_from_proto(resp))
    }

    async fn close_ephemeral_resource(
        &self,
        req: &EphemeralResourceRequest,
    ) -> Result<Diagnostics, ProviderError> {
        let method = "CloseEphemeralResource";
        let msg = fleetform_proto::convert::close_request_to_proto(req);
        let resp = self
            .finish(method, self.provider.close_ephemeral_resource(msg).await)
            .await?;
        Ok(fleetform_proto::convert::diagnostics_from_proto(
            resp.diagnostics,
        ))
    }

    async fn import_resource_state(
        &self,
        req: &ImportResourceStateRequest,
    ) -> Result<ImportResourceStateResponse, ProviderError> {
        let method = "ImportResourceState";
        let ty = self.schemas().await?.resource(&req.type_name)?;
        let msg = req.to_proto(ty).map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.import_resource_state(msg).await)
            .await?;
        fleetform_proto::convert::import_response_from_proto(resp, &req.type_name, ty)
            .map_err(|e| protocol(method, e))
    }

    async fn call_function(
        &self,
        req: &CallFunctionRequest,
        signature: &FunctionSignature,
    ) -> Result<CallFunctionResponse, ProviderError> {
        let method = "CallFunction";
        let msg = fleetform_proto::convert::call_function_request_to_proto(req, signature)
            .map_err(|e| encode(method, e))?;
        let resp = self
            .finish(method, self.provider.call_function(msg).await)
            .await?;
        fleetform_proto::convert::call_function_response_from_proto(resp, &signature.return_type)
            .map_err(|e| protocol(method, e))
    }

    async fn stop(&self) -> Result<(), ProviderError> {
        let method = "StopProvider";
        let resp = self
            .finish(
                method,
                self.provider
                    .stop_provider(pb::stop_provider::Request {})
                    .await,
            )
            .await?;
        if resp.error.is_empty() {
            Ok(())
        } else {
            Err(ProviderError::Stop(resp.error))
        }
    }
}
