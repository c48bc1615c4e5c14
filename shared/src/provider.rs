//! The provider protocol as domain types: one request and one response struct
//! per provider call, with values already decoded against the schema.
//!
//! The worker's plugin client and our provider servers both speak in these
//! types; `fleetform-proto` converts them to and from tfplugin6 messages.

use crate::diag::Diagnostics;
use crate::schema::ProviderSchema;
use crate::value::Value;
use serde::{Deserialize, Serialize};

/// An attribute path as providers report it (defined beside `PathStep`).
pub use crate::value::AttrPath;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetProviderSchemaResponse {
    pub schema: ProviderSchema,
    pub diagnostics: Diagnostics,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateProviderConfigRequest {
    pub config: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateResourceConfigRequest {
    pub type_name: String,
    pub config: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigureProviderRequest {
    pub terraform_version: String,
    pub config: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpgradeResourceStateRequest {
    pub type_name: String,
    pub version: i64,
    /// The stored object as JSON text (Terraform's `RawState.json`).
    pub raw_state_json: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpgradeResourceStateResponse {
    pub upgraded_state: Value,
    pub diagnostics: Diagnostics,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceRequest {
    pub type_name: String,
    pub current_state: Value,
    pub private: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResponse {
    /// Null when the object no longer exists.
    pub new_state: Value,
    pub diagnostics: Diagnostics,
    pub private: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanResourceChangeRequest {
    pub type_name: String,
    pub prior_state: Value,
    pub proposed_new_state: Value,
    pub config: Value,
    pub prior_private: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanResourceChangeResponse {
    pub planned_state: Value,
    pub requires_replace: Vec<AttrPath>,
    pub planned_private: Vec<u8>,
    pub diagnostics: Diagnostics,
    pub legacy_type_system: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyResourceChangeRequest {
    pub type_name: String,
    pub prior_state: Value,
    pub planned_state: Value,
    pub config: Value,
    pub planned_private: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyResourceChangeResponse {
    pub new_state: Value,
    pub private: Vec<u8>,
    pub diagnostics: Diagnostics,
    pub legacy_type_system: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadDataSourceRequest {
    pub type_name: String,
    pub config: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadDataSourceResponse {
    pub state: Value,
    pub diagnostics: Diagnostics,
}

/// `OpenEphemeralResource`: the configuration, wholly known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenEphemeralResourceRequest {
    pub type_name: String,
    pub config: Value,
}

/// What opening an ephemeral resource gave: its value, what the provider
/// wants back to renew or close it, and when to renew it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenEphemeralResourceResponse {
    pub result: Value,
    pub private: Option<Vec<u8>>,
    /// Unix time in milliseconds after which `RenewEphemeralResource` is due.
    pub renew_at: Option<i64>,
    pub diagnostics: Diagnostics,
}

/// `RenewEphemeralResource` and `CloseEphemeralResource` take the same.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EphemeralResourceRequest {
    pub type_name: String,
    pub private: Option<Vec<u8>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RenewEphemeralResourceResponse {
    pub private: Option<Vec<u8>>,
    pub renew_at: Option<i64>,
    pub diagnostics: Diagnostics,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportResourceStateRequest {
    pub type_name: String,
    pub id: String,
}

/// One object an import produced (a provider may return several types).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportedResource {
    pub type_name: String,
    pub state: Value,
    pub private: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportResourceStateResponse {
    pub imported: Vec<ImportedResource>,
    pub diagnostics: Diagnostics,
}

/// `CallFunction`: the arguments, each already of its parameter's type.
#[derive(Clone, Debug, PartialEq)]
pub struct CallFunctionRequest {
    pub name: String,
    pub arguments: Vec<Value>,
}

/// What a `CallFunction` answered: the result, or why the call failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CallFunctionResponse {
    pub result: Result<Value, crate::function::FunctionError>,
}
