//! Protocol negotiation of the provider binaries as a go-plugin server does
//! it: a host that offers only protocol 5 (Terraform 0.12 to 0.15) gets a
//! tfplugin5 server, and nothing else is served on the socket.

// Each test crate uses a different part of the shared host.
#[allow(dead_code)]
mod client;

use anyhow::Result;
use client::{ClientIdentity, Plugin};
use fleetform_proto::convert::v5::diagnostics_from_proto5;
use fleetform_proto::tfplugin5 as pb5;
use fleetform_proto::tfplugin5::provider_client::ProviderClient as Client5;
use fleetform_proto::tfplugin6 as pb6;
use fleetform_proto::tfplugin6::provider_client::ProviderClient as Client6;
use fleetform_shared::provider::GetProviderSchemaResponse;

const NULL: &str = env!("CARGO_BIN_EXE_terraform-provider-null");

#[tokio::test]
async fn a_host_offering_only_5_gets_a_tfplugin5_server() -> Result<()> {
    let id = ClientIdentity::generate()?;
    let plugin = Plugin::start_offering(NULL, Some(&id), &[], "5", "5").await?;
    let channel = plugin.channel(Some(&id)).await?;

    let schema = Client5::new(channel.clone())
        .get_schema(pb5::get_provider_schema::Request {})
        .await?
        .into_inner();
    let schema = GetProviderSchemaResponse::try_from(schema)?;
    assert!(schema.schema.resources.contains_key("null_resource"));
    assert!(schema.schema.data_sources.contains_key("null_data_source"));

    let prepared = Client5::new(channel.clone())
        .prepare_provider_config(pb5::prepare_provider_config::Request {
            config: Some(pb5::DynamicValue {
                // msgpack for an empty map: the null provider has no arguments.
                msgpack: vec![0x80],
                json: Vec::new(),
            }),
        })
        .await?
        .into_inner();
    assert!(!diagnostics_from_proto5(prepared.diagnostics).has_errors());
    assert_eq!(
        prepared.prepared_config.map(|c| c.msgpack),
        Some(vec![0x80])
    );

    let v6 = Client6::new(channel)
        .get_provider_schema(pb6::get_provider_schema::Request {})
        .await
        .expect_err("no tfplugin6 service next to tfplugin5");
    assert_eq!(v6.code(), tonic::Code::Unimplemented, "{v6}");

    assert!(plugin.shutdown(Some(&id)).await?.success());
    Ok(())
}

/// go-plugin answers a host that offers nothing it knows with its lowest
/// version and lets the host refuse.
#[tokio::test]
async fn an_unknown_offer_is_answered_with_protocol_5() -> Result<()> {
    let plugin = Plugin::start_offering(NULL, None, &[], "4,7", "5").await?;
    let schema = Client5::new(plugin.channel(None).await?)
        .get_schema(pb5::get_provider_schema::Request {})
        .await?;
    assert!(schema.get_ref().diagnostics.is_empty());
    assert!(plugin.shutdown(None).await?.success());
    Ok(())
}
