//! [`Rpc`]: the generated tfplugin5 or tfplugin6 client, whichever the
//! plugin chose in its handshake, behind tfplugin6-shaped methods.
//!
//! A tfplugin5 call takes the [`Twin`] of the tfplugin6 request and answers
//! the twin of the tfplugin6 response, so the client above speaks one set of
//! messages and converts values once.

use fleetform_proto::convert::v5::Twin;
use fleetform_proto::tfplugin5::provider_client::ProviderClient as Client5;
use fleetform_proto::tfplugin6 as pb;
use fleetform_proto::tfplugin6::provider_client::ProviderClient as Client6;
use tonic::transport::Channel;
use tonic::{Response, Status};

/// tfplugin5: Terraform ≤ 0.15 hosts and providers built on the SDKv2 or
/// `tfprotov5`; tfplugin6: everything newer.
#[derive(Clone)]
pub(super) enum Rpc {
    V5(Client5<Channel>),
    V6(Client6<Channel>),
}

type Reply<T> = Result<Response<T>, Status>;

/// One method per call: `name(v6 request) -> v6 response`, made with the v5
/// method `v5` (and the twin messages) when the plugin speaks protocol 5.
macro_rules! calls {
    ($($name:ident / $v5:ident: $msg:ident;)*) => {$(
        pub async fn $name(&self, req: pb::$msg::Request) -> Reply<pb::$msg::Response> {
            match self {
                Rpc::V6(c) => c.clone().$name(req).await,
                Rpc::V5(c) => Ok(c.clone().$v5(req.into_v5()).await?.map(Twin::from_v5)),
            }
        }
    )*};
}

impl Rpc {
    pub fn new(protocol_version: u32, channel: Channel, max_message_size: usize) -> Option<Rpc> {
        let size = max_message_size;
        match protocol_version {
            5 => Some(Rpc::V5(
                Client5::new(channel)
                    .max_decoding_message_size(size)
                    .max_encoding_message_size(size),
            )),
            6 => Some(Rpc::V6(
                Client6::new(channel)
                    .max_decoding_message_size(size)
                    .max_encoding_message_size(size),
            )),
            _ => None,
        }
    }

    calls! {
        get_provider_schema / get_schema: get_provider_schema;
        validate_resource_config / validate_resource_type_config: validate_resource_config;
        validate_data_resource_config / validate_data_source_config: validate_data_resource_config;
        configure_provider / configure: configure_provider;
        upgrade_resource_state / upgrade_resource_state: upgrade_resource_state;
        read_resource / read_resource: read_resource;
        plan_resource_change / plan_resource_change: plan_resource_change;
        apply_resource_change / apply_resource_change: apply_resource_change;
        read_data_source / read_data_source: read_data_source;
        import_resource_state / import_resource_state: import_resource_state;
        stop_provider / stop: stop_provider;
        call_function / call_function: call_function;
        validate_ephemeral_resource_config / validate_ephemeral_resource_config: validate_ephemeral_resource_config;
        open_ephemeral_resource / open_ephemeral_resource: open_ephemeral_resource;
        renew_ephemeral_resource / renew_ephemeral_resource: renew_ephemeral_resource;
        close_ephemeral_resource / close_ephemeral_resource: close_ephemeral_resource;
    }

    /// tfplugin6 `ValidateProviderConfig`, or tfplugin5 `PrepareProviderConfig`
    /// whose prepared configuration comes back as the second value.
    pub async fn validate_provider_config(
        &self,
        req: pb::validate_provider_config::Request,
    ) -> Result<
        (
            pb::validate_provider_config::Response,
            Option<pb::DynamicValue>,
        ),
        Status,
    > {
        match self {
            Rpc::V6(c) => Ok((
                c.clone().validate_provider_config(req).await?.into_inner(),
                None,
            )),
            Rpc::V5(c) => {
                let resp = c
                    .clone()
                    .prepare_provider_config(req.into_v5())
                    .await?
                    .into_inner();
                Ok((
                    pb::validate_provider_config::Response {
                        diagnostics: resp.diagnostics.into_iter().map(Twin::from_v5).collect(),
                    },
                    resp.prepared_config.map(Twin::from_v5),
                ))
            }
        }
    }
}
