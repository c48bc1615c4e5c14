//! The tfplugin6 `Provider` gRPC service over a [`Provider`] implementation:
//! decodes requests against the schema of the type they name, dispatches to
//! the resource or data source, and encodes the answer.

mod ephemeral;
pub mod v5;

use crate::framework::{DataSource, EphemeralResource, Function, Provider, Resource, StopSignal};
use fleetform_proto::convert::{
    ConvertError, call_function_request_from_proto, call_function_response_to_proto,
    diagnostics_to_proto, validate_data_config_from_proto,
};
use fleetform_proto::tfplugin6 as pb;
use fleetform_proto::{FromProto, ToProto};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::*;
use fleetform_shared::schema::{ProviderSchema, Schema, ServerCapabilities};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use tonic::{Request, Response, Status};

/// A registered type with its schema and implied value type, computed once.
struct Entry<T: ?Sized> {
    imp: Arc<T>,
    schema: Schema,
    ty: Type,
}

/// Serves one provider. Calls that need the configured client fail with a
/// diagnostic until `ConfigureProvider` succeeded.
pub struct ProviderService<P: Provider> {
    provider: P,
    provider_ty: Type,
    resources: BTreeMap<String, Entry<dyn Resource<P::Client>>>,
    data_sources: BTreeMap<String, Entry<dyn DataSource<P::Client>>>,
    ephemeral: BTreeMap<String, Entry<dyn EphemeralResource<P::Client>>>,
    functions: BTreeMap<String, (Arc<dyn Function>, FunctionSignature)>,
    schema_response: pb::get_provider_schema::Response,
    client: RwLock<Option<Arc<P::Client>>>,
    /// Raised by `StopProvider`.
    stop: StopSignal,
}

impl<P: Provider> ProviderService<P> {
    pub fn new(provider: P) -> ProviderService<P> {
        let provider_schema = provider.config_schema();
        let resources: BTreeMap<_, _> = provider
            .resources()
            .into_iter()
            .map(|imp| {
                let schema = imp.schema();
                let ty = schema.block.implied_type();
                (imp.type_name().to_string(), Entry { imp, schema, ty })
            })
            .collect();
        let data_sources: BTreeMap<_, _> = provider
            .data_sources()
            .into_iter()
            .map(|imp| {
                let schema = imp.schema();
                let ty = schema.block.implied_type();
                (imp.type_name().to_string(), Entry { imp, schema, ty })
            })
            .collect();
        let ephemeral: BTreeMap<_, _> = provider
            .ephemeral_resources()
            .into_iter()
            .map(|imp| {
                let schema = imp.schema();
                let ty = schema.block.implied_type();
                (imp.type_name().to_string(), Entry { imp, schema, ty })
            })
            .collect();
        let functions: BTreeMap<_, _> = provider
            .functions()
            .into_iter()
            .map(|f| (f.name().to_string(), (f.clone(), f.signature())))
            .collect();
        let schema = ProviderSchema {
            provider: provider_schema.clone(),
            resources: resources
                .iter()
                .map(|(k, e)| (k.clone(), e.schema.clone()))
                .collect(),
            data_sources: data_sources
                .iter()
                .map(|(k, e)| (k.clone(), e.schema.clone()))
                .collect(),
            ephemeral_resources: ephemeral
                .iter()
                .map(|(k, e)| (k.clone(), e.schema.clone()))
                .collect(),
            capabilities: capabilities(provider.plan_destroy()),
            functions: functions
                .iter()
                .map(|(k, (_, sig))| (k.clone(), sig.clone()))
                .collect(),
        };
        let schema_response = pb::get_provider_schema::Response::from(&GetProviderSchemaResponse {
            schema,
            diagnostics: Diagnostics::new(),
        });
        ProviderService {
            provider_ty: provider_schema.block.implied_type(),
            provider,
            resources,
            data_sources,
            ephemeral,
            functions,
            schema_response,
            client: RwLock::new(None),
            stop: StopSignal::default(),
        }
    }

    fn client(&self) -> Result<Arc<P::Client>, Diagnostics> {
        let guard = self.client.read().unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or_else(|| {
            one_error(
                "Provider not configured",
                "ConfigureProvider must succeed before this call",
            )
        })
    }

    fn resource(&self, name: &str) -> Result<&Entry<dyn Resource<P::Client>>, Diagnostics> {
        self.resources
            .get(name)
            .ok_or_else(|| unknown_type("resource", self.provider.name(), name))
    }

    fn data_source(&self, name: &str) -> Result<&Entry<dyn DataSource<P::Client>>, Diagnostics> {
        self.data_sources
            .get(name)
            .ok_or_else(|| unknown_type("data source", self.provider.name(), name))
    }
}

fn capabilities(plan_destroy: bool) -> ServerCapabilities {
    // Schemas are static, so a host may cache them.
    ServerCapabilities {
        plan_destroy,
        get_provider_schema_optional: true,
    }
}

fn one_error(summary: &str, detail: &str) -> Diagnostics {
    Diagnostics(vec![Diagnostic::error(summary, detail)])
}

fn unknown_type(kind: &str, provider: &str, name: &str) -> Diagnostics {
    one_error(
        &format!("Unknown {kind} type"),
        &format!("provider {provider} has no {kind} type {name:?}"),
    )
}

/// The one place conversion failures become gRPC statuses: an undecodable
/// request is the caller's fault, an unencodable answer is ours.
fn status(e: ConvertError, request: bool) -> Status {
    if request {
        Status::invalid_argument(e.to_string())
    } else {
        Status::internal(e.to_string())
    }
}

fn diags(d: &Diagnostics) -> Vec<pb::Diagnostic> {
    diagnostics_to_proto(d)
}

type Reply<T> = Result<Response<T>, Status>;

/// A response that can carry only diagnostics: the answer to a call that
/// cannot start (unknown type name, provider not configured).
trait Refusal: Default {
    fn set_diagnostics(&mut self, d: Vec<pb::Diagnostic>);
}

macro_rules! refusal {
    ($($t:ty),* $(,)?) => {
        $(impl Refusal for $t {
            fn set_diagnostics(&mut self, d: Vec<pb::Diagnostic>) {
                self.diagnostics = d;
            }
        })*
    };
}

refusal!(
    pb::upgrade_resource_state::Response,
    pb::read_resource::Response,
    pb::plan_resource_change::Response,
    pb::apply_resource_change::Response,
    pb::import_resource_state::Response,
    pb::read_data_source::Response,
    pb::open_ephemeral_resource::Response,
    pb::renew_ephemeral_resource::Response,
    pb::close_ephemeral_resource::Response,
);

fn refuse<T: Refusal>(d: &Diagnostics) -> Reply<T> {
    let mut resp = T::default();
    resp.set_diagnostics(diags(d));
    Ok(Response::new(resp))
}

#[tonic::async_trait]
impl<P: Provider> pb::provider_server::Provider for ProviderService<P> {
    async fn get_metadata(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> Reply<pb::get_metadata::Response> {
        Ok(Response::new(pb::get_metadata::Response {
            server_capabilities: Some((&capabilities(self.provider.plan_destroy())).into()),
            diagnostics: Vec::new(),
            data_sources: self
                .data_sources
                .keys()
                .map(|n| pb::get_metadata::DataSourceMetadata {
                    type_name: n.clone(),
                })
                .collect(),
            resources: self
                .resources
                .keys()
                .map(|n| pb::get_metadata::ResourceMetadata {
                    type_name: n.clone(),
                })
                .collect(),
        }))
    }

    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> Reply<pb::get_provider_schema::Response> {
        Ok(Response::new(self.schema_response.clone()))
    }

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> Reply<pb::get_functions::Response> {
        Ok(Response::new(pb::get_functions::Response {
            functions: self.schema_response.functions.clone(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        req: Request<pb::call_function::Request>,
    ) -> Reply<pb::call_function::Response> {
        let req = req.into_inner();
        let Some((f, sig)) = self.functions.get(&req.name) else {
            return Ok(Response::new(pb::call_function::Response {
                result: None,
                error: Some(pb::FunctionError {
                    text: format!("this provider has no function named {:?}", req.name),
                    function_argument: None,
                }),
            }));
        };
        let call = call_function_request_from_proto(req, sig)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let resp = CallFunctionResponse {
            result: f.call(&call.arguments),
        };
        call_function_response_to_proto(&resp, &sig.return_type)
            .map(Response::new)
            .map_err(|e| Status::internal(e.to_string()))
    }

    async fn validate_provider_config(
        &self,
        req: Request<pb::validate_provider_config::Request>,
    ) -> Reply<pb::validate_provider_config::Response> {
        let req = ValidateProviderConfigRequest::from_proto(req.into_inner(), &self.provider_ty)
            .map_err(|e| status(e, true))?;
        let d = self.provider.validate_config(&req.config);
        Ok(Response::new(pb::validate_provider_config::Response {
            diagnostics: diags(&d),
        }))
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Reply<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        let d = match self.resource(&req.type_name) {
            Ok(e) => e.imp.validate(
                &ValidateResourceConfigRequest::from_proto(req, &e.ty)
                    .map_err(|e| status(e, true))?
                    .config,
            ),
            Err(d) => d,
        };
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics: diags(&d),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> Reply<pb::validate_data_resource_config::Response> {
        let req = req.into_inner();
        let d = match self.data_source(&req.type_name) {
            Ok(e) => e.imp.validate(
                &validate_data_config_from_proto(req, &e.ty)
                    .map_err(|e| status(e, true))?
                    .config,
            ),
            Err(d) => d,
        };
        Ok(Response::new(pb::validate_data_resource_config::Response {
            diagnostics: diags(&d),
        }))
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Reply<pb::upgrade_resource_state::Response> {
        let req = req.into_inner();
        let e = match self.resource(&req.type_name) {
            Ok(e) => e,
            Err(d) => return refuse(&d),
        };
        let req =
            UpgradeResourceStateRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        let resp = e.imp.upgrade(&req, &e.schema);
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    async fn configure_provider(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> Reply<pb::configure_provider::Response> {
        let req = ConfigureProviderRequest::from_proto(req.into_inner(), &self.provider_ty)
            .map_err(|e| status(e, true))?;
        let d = match self.provider.configure(&req.config).await {
            Ok(client) => {
                *self.client.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(client));
                tracing::debug!(provider = self.provider.name(), terraform_version = %req.terraform_version, "configured");
                Diagnostics::new()
            }
            Err(d) => d,
        };
        Ok(Response::new(pb::configure_provider::Response {
            diagnostics: diags(&d),
        }))
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Reply<pb::read_resource::Response> {
        let req = req.into_inner();
        let (e, client) = match self
            .resource(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let req = ReadResourceRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        let resp = match self
            .stop
            .scope(e.imp.read(&client, &req.current_state))
            .await
        {
            Ok(new_state) => ReadResourceResponse {
                new_state,
                diagnostics: Diagnostics::new(),
                private: req.private,
            },
            // A failed read keeps the current state so the host loses nothing.
            Err(d) => ReadResourceResponse {
                new_state: req.current_state,
                diagnostics: d,
                private: req.private,
            },
        };
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Reply<pb::plan_resource_change::Response> {
        let req = req.into_inner();
        let e = match self.resource(&req.type_name) {
            Ok(e) => e,
            Err(d) => return refuse(&d),
        };
        let req = PlanResourceChangeRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        let resp = e.imp.plan(&req, &e.schema);
        tracing::debug!(type_name = %req.type_name, replace = resp.requires_replace.len(), "planned");
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Reply<pb::apply_resource_change::Response> {
        let req = req.into_inner();
        let (e, client) = match self
            .resource(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let req =
            ApplyResourceChangeRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        let resp = self.stop.scope(e.imp.apply(&client, &req)).await;
        tracing::debug!(type_name = %req.type_name, ok = !resp.diagnostics.has_errors(), "applied");
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Reply<pb::import_resource_state::Response> {
        let req = req.into_inner();
        let (e, client) = match self
            .resource(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let mut resp = pb::import_resource_state::Response::default();
        match self.stop.scope(e.imp.import(&client, &req.id)).await {
            Ok(state) => {
                resp.imported_resources
                    .push(pb::import_resource_state::ImportedResource {
                        type_name: req.type_name,
                        state: Some(
                            fleetform_proto::convert::encode_value(&state, &e.ty)
                                .map_err(|e| status(e, false))?,
                        ),
                        private: Vec::new(),
                    })
            }
            Err(d) => resp.diagnostics = diags(&d),
        }
        Ok(Response::new(resp))
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Reply<pb::read_data_source::Response> {
        let req = req.into_inner();
        let (e, client) = match self
            .data_source(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let req = ReadDataSourceRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        let resp = match self.stop.scope(e.imp.read(&client, &req.config)).await {
            Ok(state) => ReadDataSourceResponse {
                state,
                diagnostics: Diagnostics::new(),
            },
            Err(d) => ReadDataSourceResponse {
                state: Value::null(),
                diagnostics: d,
            },
        };
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> Reply<pb::validate_ephemeral_resource_config::Response> {
        self.validate_ephemeral(req.into_inner())
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Reply<pb::open_ephemeral_resource::Response> {
        self.open_ephemeral(req.into_inner()).await
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Reply<pb::renew_ephemeral_resource::Response> {
        self.renew_ephemeral(req.into_inner()).await
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Reply<pb::close_ephemeral_resource::Response> {
        self.close_ephemeral(req.into_inner()).await
    }

    async fn stop_provider(
        &self,
        _: Request<pb::stop_provider::Request>,
    ) -> Reply<pb::stop_provider::Response> {
        // Calls in progress see it where they wait (see
        // `framework::stoppable_sleep`); the host starts a new process for
        // anything after a stop.
        tracing::info!(
            provider = self.provider.name(),
            "StopProvider: interrupting calls in progress"
        );
        self.stop.raise();
        Ok(Response::new(pb::stop_provider::Response {
            error: String::new(),
        }))
    }
}
