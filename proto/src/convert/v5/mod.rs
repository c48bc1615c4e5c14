//! Conversions between tfplugin5 messages and `fleetform-shared` types.
//!
//! Every call struct that converts to or from its tfplugin6 message (see
//! [`ToProto`], [`FromProto`]) converts to or from the tfplugin5 twin of
//! that message too: [`ToProto5`] and [`FromProto5`] go through
//! [`Twin`], so both protocol versions share one set of value, schema,
//! path and diagnostic rules.
//!
//! `PrepareProviderConfig` has no twin (its answer may carry a prepared
//! configuration); callers build its messages with the functions here.

mod twins;

pub use twins::Twin;

use super::{ConvertError, FromProto, ToProto, calls, diag};
use crate::tfplugin5 as pb;
use crate::tfplugin6 as v6;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{GetProviderSchemaResponse, ValidateResourceConfigRequest};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// A shared call struct that can be turned into its tfplugin5 message.
pub trait ToProto5 {
    type Proto;
    fn to_proto5(&self, ty: &Type) -> Result<Self::Proto, ConvertError>;
}

/// A shared call struct that can be built from its tfplugin5 message.
pub trait FromProto5: Sized {
    type Proto;
    fn from_proto5(proto: Self::Proto, ty: &Type) -> Result<Self, ConvertError>;
}

impl<T> ToProto5 for T
where
    T: ToProto,
    T::Proto: Twin,
{
    type Proto = <T::Proto as Twin>::V5;
    fn to_proto5(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        self.to_proto(ty).map(Twin::into_v5)
    }
}

impl<T> FromProto5 for T
where
    T: FromProto,
    T::Proto: Twin,
{
    type Proto = <T::Proto as Twin>::V5;
    fn from_proto5(proto: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        T::from_proto(Twin::from_v5(proto), ty)
    }
}

impl TryFrom<pb::get_provider_schema::Response> for GetProviderSchemaResponse {
    type Error = ConvertError;
    fn try_from(r: pb::get_provider_schema::Response) -> Result<Self, ConvertError> {
        GetProviderSchemaResponse::try_from(v6::get_provider_schema::Response::from_v5(r))
    }
}

impl From<&GetProviderSchemaResponse> for pb::get_provider_schema::Response {
    fn from(r: &GetProviderSchemaResponse) -> Self {
        v6::get_provider_schema::Response::from(r).into_v5()
    }
}

pub fn diagnostics_from_proto5(ds: Vec<pb::Diagnostic>) -> Diagnostics {
    diag::diagnostics_from_proto(ds.into_iter().map(Twin::from_v5).collect())
}

pub fn diagnostics_to_proto5(ds: &Diagnostics) -> Vec<pb::Diagnostic> {
    diag::diagnostics_to_proto(ds)
        .into_iter()
        .map(Twin::into_v5)
        .collect()
}

/// Encodes a value as msgpack, as [`super::encode_value`] does for tfplugin6.
pub fn encode_value5(value: &Value, ty: &Type) -> Result<pb::DynamicValue, ConvertError> {
    super::encode_value(value, ty).map(Twin::into_v5)
}

/// Decodes a value; an absent or empty `DynamicValue` is null.
pub fn decode_value5(dv: Option<pb::DynamicValue>, ty: &Type) -> Result<Value, ConvertError> {
    super::decode_value(dv.map(Twin::from_v5).as_ref(), ty)
}

/// `PrepareProviderConfig` asks for what tfplugin6 `ValidateProviderConfig` does.
pub fn prepare_provider_config_request(
    config: &Value,
    ty: &Type,
) -> Result<pb::prepare_provider_config::Request, ConvertError> {
    Ok(pb::prepare_provider_config::Request {
        config: Some(encode_value5(config, ty)?),
    })
}

/// Data sources are validated with the same shared request as resources.
pub fn validate_data_config_to_proto5(
    r: &ValidateResourceConfigRequest,
    ty: &Type,
) -> Result<pb::validate_data_source_config::Request, ConvertError> {
    calls::validate_data_config_to_proto(r, ty).map(Twin::into_v5)
}

pub fn validate_data_config_from_proto5(
    p: pb::validate_data_source_config::Request,
    ty: &Type,
) -> Result<ValidateResourceConfigRequest, ConvertError> {
    calls::validate_data_config_from_proto(Twin::from_v5(p), ty)
}

#[cfg(test)]
mod tests;
