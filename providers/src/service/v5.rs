//! The tfplugin5 gRPC service: [`ProviderServiceV5`] answers protocol 5
//! hosts (Terraform 0.12 to 0.15 offer nothing else) with the same
//! [`ProviderService`] that serves tfplugin6.
//!
//! Every v5 message is the [`Twin`] of a v6 one, so each call is the v6 call
//! with its messages mapped; only `PrepareProviderConfig`, which answers a
//! prepared configuration as well, is shaped differently.

use crate::framework::Provider;
use crate::service::ProviderService;
use fleetform_proto::convert::v5::Twin;
use fleetform_proto::tfplugin5 as pb;
use fleetform_proto::tfplugin6::provider_server::Provider as V6;
use tonic::{Request, Response, Status};

/// Serves one provider over tfplugin5.
pub struct ProviderServiceV5<P: Provider>(ProviderService<P>);

impl<P: Provider> ProviderServiceV5<P> {
    pub fn new(provider: P) -> ProviderServiceV5<P> {
        ProviderServiceV5(ProviderService::new(provider))
    }
}

impl<P: Provider> From<ProviderService<P>> for ProviderServiceV5<P> {
    fn from(service: ProviderService<P>) -> Self {
        ProviderServiceV5(service)
    }
}

type Reply<T> = Result<Response<T>, Status>;

/// The v6 answer to `req`'s v6 twin, as its v5 twin.
fn v5<T: Twin>(resp: Response<T>) -> Response<T::V5> {
    resp.map(Twin::into_v5)
}

#[tonic::async_trait]
impl<P: Provider> pb::provider_server::Provider for ProviderServiceV5<P> {
    async fn get_metadata(
        &self,
        req: Request<pb::get_metadata::Request>,
    ) -> Reply<pb::get_metadata::Response> {
        Ok(v5(self.0.get_metadata(req.map(Twin::from_v5)).await?))
    }

    async fn get_schema(
        &self,
        req: Request<pb::get_provider_schema::Request>,
    ) -> Reply<pb::get_provider_schema::Response> {
        Ok(v5(self
            .0
            .get_provider_schema(req.map(Twin::from_v5))
            .await?))
    }

    /// Validates like tfplugin6 `ValidateProviderConfig`. Our providers fill
    /// in no defaults, so the prepared configuration is the one received.
    async fn prepare_provider_config(
        &self,
        req: Request<pb::prepare_provider_config::Request>,
    ) -> Reply<pb::prepare_provider_config::Response> {
        let prepared_config = req.get_ref().config.clone();
        let resp = self
            .0
            .validate_provider_config(req.map(Twin::from_v5))
            .await?
            .into_inner();
        let diagnostics = resp.diagnostics.into_iter().map(Twin::into_v5).collect();
        Ok(Response::new(pb::prepare_provider_config::Response {
            prepared_config,
            diagnostics,
        }))
    }

    async fn validate_resource_type_config(
        &self,
        req: Request<pb::validate_resource_type_config::Request>,
    ) -> Reply<pb::validate_resource_type_config::Response> {
        Ok(v5(self
            .0
            .validate_resource_config(req.map(Twin::from_v5))
            .await?))
    }

    async fn validate_data_source_config(
        &self,
        req: Request<pb::validate_data_source_config::Request>,
    ) -> Reply<pb::validate_data_source_config::Response> {
        Ok(v5(self
            .0
            .validate_data_resource_config(req.map(Twin::from_v5))
            .await?))
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Reply<pb::upgrade_resource_state::Response> {
        Ok(v5(self
            .0
            .upgrade_resource_state(req.map(Twin::from_v5))
            .await?))
    }

    async fn configure(
        &self,
        req: Request<pb::configure::Request>,
    ) -> Reply<pb::configure::Response> {
        Ok(v5(self
            .0
            .configure_provider(req.map(Twin::from_v5))
            .await?))
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Reply<pb::read_resource::Response> {
        Ok(v5(self.0.read_resource(req.map(Twin::from_v5)).await?))
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Reply<pb::plan_resource_change::Response> {
        Ok(v5(self
            .0
            .plan_resource_change(req.map(Twin::from_v5))
            .await?))
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Reply<pb::apply_resource_change::Response> {
        Ok(v5(self
            .0
            .apply_resource_change(req.map(Twin::from_v5))
            .await?))
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Reply<pb::import_resource_state::Response> {
        Ok(v5(self
            .0
            .import_resource_state(req.map(Twin::from_v5))
            .await?))
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Reply<pb::read_data_source::Response> {
        Ok(v5(self.0.read_data_source(req.map(Twin::from_v5)).await?))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> Reply<pb::validate_ephemeral_resource_config::Response> {
        Ok(v5(self
            .0
            .validate_ephemeral_resource_config(req.map(Twin::from_v5))
            .await?))
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Reply<pb::open_ephemeral_resource::Response> {
        Ok(v5(self
            .0
            .open_ephemeral_resource(req.map(Twin::from_v5))
            .await?))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Reply<pb::renew_ephemeral_resource::Response> {
        Ok(v5(self
            .0
            .renew_ephemeral_resource(req.map(Twin::from_v5))
            .await?))
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Reply<pb::close_ephemeral_resource::Response> {
        Ok(v5(self
            .0
            .close_ephemeral_resource(req.map(Twin::from_v5))
            .await?))
    }

    async fn get_functions(
        &self,
        req: Request<pb::get_functions::Request>,
    ) -> Reply<pb::get_functions::Response> {
        Ok(v5(self.0.get_functions(req.map(Twin::from_v5)).await?))
    }

    async fn call_function(
        &self,
        req: Request<pb::call_function::Request>,
    ) -> Reply<pb::call_function::Response> {
        Ok(v5(self.0.call_function(req.map(Twin::from_v5)).await?))
    }

    async fn stop(&self, req: Request<pb::stop::Request>) -> Reply<pb::stop::Response> {
        Ok(v5(self.0.stop_provider(req.map(Twin::from_v5)).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::null::NullProvider;
    use fleetform_proto::FromProto;
    use fleetform_proto::convert::v5::{
        ToProto5, decode_value5, diagnostics_from_proto5, encode_value5,
    };
    use fleetform_proto::tfplugin5::provider_server::Provider as _;
    use fleetform_shared::provider::*;
    use fleetform_shared::schema::Schema;
    use fleetform_shared::types::Type;
    use fleetform_shared::value::Value;

    async fn null_resource_schema(svc: &ProviderServiceV5<NullProvider>) -> Schema {
        let resp = svc
            .get_schema(Request::new(pb::get_provider_schema::Request {}))
            .await
            .unwrap()
            .into_inner();
        let resp = GetProviderSchemaResponse::try_from(resp).unwrap();
        resp.schema.resources["null_resource"].clone()
    }

    #[tokio::test]
    async fn prepare_provider_config_answers_the_config_it_was_given() {
        let svc = ProviderServiceV5::new(NullProvider);
        let ty = Type::object(Vec::<(&str, Type)>::new());
        let config = encode_value5(&Value::Map(Default::default()), &ty).unwrap();
        let resp = svc
            .prepare_provider_config(Request::new(pb::prepare_provider_config::Request {
                config: Some(config.clone()),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(resp.prepared_config, Some(config));
        assert!(!diagnostics_from_proto5(resp.diagnostics).has_errors());
    }

    #[tokio::test]
    async fn a_null_resource_is_planned_and_created_over_v5() {
        let svc = ProviderServiceV5::new(NullProvider);
        let ty = null_resource_schema(&svc).await.block.implied_type();
        let configure = ConfigureProviderRequest {
            terraform_version: "0.15.5".into(),
            config: Value::Map(Default::default()),
        };
        let resp = svc
            .configure(Request::new(
                configure
                    .to_proto5(&Type::object(Vec::<(&str, Type)>::new()))
                    .unwrap(),
            ))
            .await
            .unwrap()
            .into_inner();
        assert!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);

        let config = Value::object([("id", Value::null()), ("triggers", Value::null())]);
        let plan = PlanResourceChangeRequest {
            type_name: "null_resource".into(),
            prior_state: Value::null(),
            proposed_new_state: config.clone(),
            config: config.clone(),
            prior_private: Vec::new(),
        };
        let planned = svc
            .plan_resource_change(Request::new(plan.to_proto5(&ty).unwrap()))
            .await
            .unwrap()
            .into_inner();
        let planned_state = decode_value5(planned.planned_state, &ty).unwrap();
        assert!(planned_state.get_attr("id").is_unknown());

        let apply = ApplyResourceChangeRequest {
            type_name: "null_resource".into(),
            prior_state: Value::null(),
            planned_state,
            config,
            planned_private: planned.planned_private,
        };
        let applied = svc
            .apply_resource_change(Request::new(apply.to_proto5(&ty).unwrap()))
            .await
            .unwrap()
            .into_inner();
        let applied = ApplyResourceChangeResponse::from_proto(Twin::from_v5(applied), &ty).unwrap();
        assert!(
            !applied.diagnostics.has_errors(),
            "{:?}",
            applied.diagnostics
        );
        assert!(applied.new_state.get_attr("id").as_str().is_some());
    }

    #[tokio::test]
    async fn functions_are_in_the_schema_and_called_over_v5() {
        let svc = ProviderServiceV5::new(crate::sim::SimProvider);
        let resp = svc
            .get_schema(Request::new(pb::get_provider_schema::Request {}))
            .await
            .unwrap()
            .into_inner();
        let schema = GetProviderSchemaResponse::try_from(resp).unwrap().schema;
        let sig = schema.functions["shout"].clone();
        assert_eq!(sig.parameters.len(), 2);
        assert!(sig.parameters[0].allow_null && !sig.parameters[1].allow_null);
        let call = |args: Vec<Value>| {
            let v6 = fleetform_proto::convert::call_function_request_to_proto(
                &CallFunctionRequest {
                    name: "shout".into(),
                    arguments: args,
                },
                &sig,
            )
            .unwrap();
            let svc = &svc;
            async move {
                let resp = svc
                    .call_function(Request::new(v6.into_v5()))
                    .await
                    .unwrap()
                    .into_inner();
                fleetform_proto::convert::call_function_response_from_proto(
                    Twin::from_v5(resp),
                    &Type::String,
                )
                .unwrap()
                .result
            }
        };
        assert_eq!(
            call(vec![Value::from("a"), Value::int(2)]).await,
            Ok(Value::from("A!!"))
        );
        let e = call(vec![Value::null(), Value::int(-1)]).await.unwrap_err();
        assert_eq!(e.argument, Some(1));
        assert_eq!(e.text, "times must not be negative, got -1");
    }
}
