//! Conversions of the ephemeral resource calls (Terraform 1.10):
//! ValidateEphemeralResourceConfig, Open, Renew and Close.

use super::diag::{diagnostics_from_proto, diagnostics_to_proto};
use super::value::{decode_value, encode_value};
use super::{ConvertError, FromProto, ToProto};
use crate::tfplugin6 as pb;
use fleetform_shared::provider::{
    EphemeralResourceRequest, OpenEphemeralResourceRequest, OpenEphemeralResourceResponse,
    RenewEphemeralResourceResponse, ValidateResourceConfigRequest,
};
use fleetform_shared::types::Type;

fn timestamp_to_millis(t: pb::Timestamp) -> i64 {
    t.seconds
        .saturating_mul(1000)
        .saturating_add(i64::from(t.nanos) / 1_000_000)
}

fn millis_to_timestamp(ms: i64) -> pb::Timestamp {
    pb::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// Ephemeral resources are validated with the same shared request as
/// managed resources and data sources.
pub fn validate_ephemeral_config_to_proto(
    r: &ValidateResourceConfigRequest,
    ty: &Type,
) -> Result<pb::validate_ephemeral_resource_config::Request, ConvertError> {
    Ok(pb::validate_ephemeral_resource_config::Request {
        type_name: r.type_name.clone(),
        config: Some(encode_value(&r.config, ty)?),
    })
}

pub fn validate_ephemeral_config_from_proto(
    p: pb::validate_ephemeral_resource_config::Request,
    ty: &Type,
) -> Result<ValidateResourceConfigRequest, ConvertError> {
    Ok(ValidateResourceConfigRequest {
        type_name: p.type_name,
        config: decode_value(p.config.as_ref(), ty)?,
    })
}

impl ToProto for OpenEphemeralResourceRequest {
    type Proto = pb::open_ephemeral_resource::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            config: Some(encode_value(&self.config, ty)?),
            client_capabilities: Some(pb::ClientCapabilities {
                deferral_allowed: false,
                write_only_attributes_allowed: true,
            }),
        })
    }
}

impl FromProto for OpenEphemeralResourceRequest {
    type Proto = pb::open_ephemeral_resource::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            config: decode_value(p.config.as_ref(), ty)?,
        })
    }
}

impl ToProto for OpenEphemeralResourceResponse {
    type Proto = pb::open_ephemeral_resource::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            diagnostics: diagnostics_to_proto(&self.diagnostics),
            renew_at: self.renew_at.map(millis_to_timestamp),
            result: Some(encode_value(&self.result, ty)?),
            private: self.private.clone(),
            deferred: None,
        })
    }
}

impl FromProto for OpenEphemeralResourceResponse {
    type Proto = pb::open_ephemeral_resource::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        // The client says it does not allow deferrals.
        if p.deferred.is_some() {
            return Err(ConvertError::Unsupported("deferred ephemeral resource"));
        }
        Ok(Self {
            result: decode_value(p.result.as_ref(), ty)?,
            private: p.private,
            renew_at: p.renew_at.map(timestamp_to_millis),
            diagnostics: diagnostics_from_proto(p.diagnostics),
        })
    }
}

pub fn renew_request_to_proto(
    r: &EphemeralResourceRequest,
) -> pb::renew_ephemeral_resource::Request {
    pb::renew_ephemeral_resource::Request {
        type_name: r.type_name.clone(),
        private: r.private.clone(),
    }
}

pub fn renew_request_from_proto(
    p: pb::renew_ephemeral_resource::Request,
) -> EphemeralResourceRequest {
    EphemeralResourceRequest {
        type_name: p.type_name,
        private: p.private,
    }
}

pub fn renew_response_to_proto(
    r: &RenewEphemeralResourceResponse,
) -> pb::renew_ephemeral_resource::Response {
    pb::renew_ephemeral_resource::Response {
        diagnostics: diagnostics_to_proto(&r.diagnostics),
        renew_at: r.renew_at.map(millis_to_timestamp),
        private: r.private.clone(),
    }
}

pub fn renew_response_from_proto(
    p: pb::renew_ephemeral_resource::Response,
) -> RenewEphemeralResourceResponse {
    RenewEphemeralResourceResponse {
        private: p.private,
        renew_at: p.renew_at.map(timestamp_to_millis),
        diagnostics: diagnostics_from_proto(p.diagnostics),
    }
}

pub fn close_request_to_proto(
    r: &EphemeralResourceRequest,
) -> pb::close_ephemeral_resource::Request {
    pb::close_ephemeral_resource::Request {
        type_name: r.type_name.clone(),
        private: r.private.clone(),
    }
}

pub fn close_request_from_proto(
    p: pb::close_ephemeral_resource::Request,
) -> EphemeralResourceRequest {
    EphemeralResourceRequest {
        type_name: p.type_name,
        private: p.private,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renew_at_round_trips_through_a_timestamp() {
        for ms in [0, 1_700_000_000_123, -1] {
            assert_eq!(timestamp_to_millis(millis_to_timestamp(ms)), ms);
        }
    }
}
