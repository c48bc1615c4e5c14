//! Protobuf definitions and their conversions to and from `fleetform-shared`
//! types: nothing else lives here.
//!
//! # Layout
//! - [`tfplugin5`], [`tfplugin6`]: the Terraform provider plugin protocol,
//!   versions 5 and 6.
//! - [`plugin`]: go-plugin's controller service (`GRPCController.Shutdown`).
//! - [`health`]: the gRPC health service go-plugin hosts ping.
//! - [`fleetform`]: the CLI ↔ coordinator API.
//! - [`convert`]: conversions between tfplugin6 messages and shared types;
//!   [`convert::v5`] does the same for tfplugin5.

#[allow(clippy::all, clippy::pedantic, rust_2018_idioms, missing_docs)]
pub mod tfplugin5 {
    tonic::include_proto!("tfplugin5");
}

#[allow(clippy::all, clippy::pedantic, rust_2018_idioms, missing_docs)]
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

#[allow(clippy::all, clippy::pedantic, rust_2018_idioms, missing_docs)]
pub mod plugin {
    tonic::include_proto!("plugin");
}

#[allow(clippy::all, clippy::pedantic, rust_2018_idioms, missing_docs)]
pub mod health {
    tonic::include_proto!("grpc.health.v1");
}

#[allow(clippy::all, clippy::pedantic, rust_2018_idioms, missing_docs)]
pub mod fleetform {
    tonic::include_proto!("fleetform.v1");
}

pub mod convert;

pub use convert::{ConvertError, FromProto, ToProto};
