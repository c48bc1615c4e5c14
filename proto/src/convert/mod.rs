//! Conversions between tfplugin6 messages and `fleetform-shared` types;
//! [`v5`] adds tfplugin5 on top of them.
//!
//! Values need their schema type to be encoded or decoded, so conversions
//! that carry values take a [`Type`]: see [`ToProto`] and [`FromProto`].
//! Schema, path and diagnostic conversions are plain `From`/`TryFrom`.

mod calls;
mod diag;
mod ephemeral;
mod function;
mod path;
mod schema;
pub mod v5;
mod value;

pub use diag::{diagnostic_path, diagnostics_from_proto, diagnostics_to_proto};
pub use ephemeral::{
    close_request_from_proto, close_request_to_proto, renew_request_from_proto,
    renew_request_to_proto, renew_response_from_proto, renew_response_to_proto,
    validate_ephemeral_config_from_proto, validate_ephemeral_config_to_proto,
};
pub use function::{
    call_function_request_from_proto, call_function_request_to_proto,
    call_function_response_from_proto, call_function_response_to_proto,
};
pub use path::{path_from_proto, path_to_proto, path_to_proto_untyped};
pub use schema::nested_object_type;
pub use value::{decode_value, encode_value, encode_value_json};

use fleetform_shared::cty::CodecError;
use fleetform_shared::types::Type;

/// Why a message could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{what}: {source}")]
    Codec {
        what: &'static str,
        source: CodecError,
    },
    #[error("invalid schema attribute {name:?}: {message}")]
    Schema { name: String, message: String },
    #[error("unsupported {0}")]
    Unsupported(&'static str),
}

/// A shared call struct that can be turned into its tfplugin6 message; values
/// are encoded with `ty` (the schema type of the resource, data source or
/// provider the call is about).
pub trait ToProto {
    type Proto;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError>;
}

/// A shared call struct that can be built from its tfplugin6 message,
/// decoding values with `ty`.
pub trait FromProto: Sized {
    type Proto;
    fn from_proto(proto: Self::Proto, ty: &Type) -> Result<Self, ConvertError>;
}

pub use calls::{
    import_response_from_proto, validate_data_config_from_proto, validate_data_config_to_proto,
};
