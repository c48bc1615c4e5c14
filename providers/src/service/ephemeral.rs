//! The ephemeral resource calls of [`ProviderService`]: validate, open,
//! renew and close, each dispatched to the type the request names.

use super::{Entry, ProviderService, Reply, diags, one_error, refuse, status, unknown_type};
use crate::framework::{EphemeralResource, Provider};
use fleetform_proto::FromProto;
use fleetform_proto::ToProto;
use fleetform_proto::convert::{
    close_request_from_proto, renew_request_from_proto, renew_response_to_proto,
    validate_ephemeral_config_from_proto,
};
use fleetform_proto::tfplugin6 as pb;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{
    OpenEphemeralResourceRequest, OpenEphemeralResourceResponse, RenewEphemeralResourceResponse,
};
use fleetform_shared::value::Value;
use tonic::Response;

impl<P: Provider> ProviderService<P> {
    fn ephemeral_type(
        &self,
        name: &str,
    ) -> Result<&Entry<dyn EphemeralResource<P::Client>>, Diagnostics> {
        self.ephemeral
            .get(name)
            .ok_or_else(|| unknown_type("ephemeral resource", self.provider.name(), name))
    }

    pub(super) fn validate_ephemeral(
        &self,
        req: pb::validate_ephemeral_resource_config::Request,
    ) -> Reply<pb::validate_ephemeral_resource_config::Response> {
        let d = match self.ephemeral_type(&req.type_name) {
            Ok(e) => e.imp.validate(
                &validate_ephemeral_config_from_proto(req, &e.ty)
                    .map_err(|e| status(e, true))?
                    .config,
            ),
            Err(d) => d,
        };
        Ok(Response::new(
            pb::validate_ephemeral_resource_config::Response {
                diagnostics: diags(&d),
            },
        ))
    }

    pub(super) async fn open_ephemeral(
        &self,
        req: pb::open_ephemeral_resource::Request,
    ) -> Reply<pb::open_ephemeral_resource::Response> {
        let (e, client) = match self
            .ephemeral_type(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let req =
            OpenEphemeralResourceRequest::from_proto(req, &e.ty).map_err(|e| status(e, true))?;
        if !req.config.is_wholly_known() {
            return refuse(&one_error(
                "Unknown configuration",
                "an ephemeral resource is opened only with a wholly known configuration",
            ));
        }
        let resp = match self.stop.scope(e.imp.open(&client, &req.config)).await {
            Ok(o) => OpenEphemeralResourceResponse {
                result: o.result,
                private: o.private,
                renew_at: o.renew_at,
                diagnostics: Diagnostics::new(),
            },
            Err(d) => OpenEphemeralResourceResponse {
                result: Value::null(),
                private: None,
                renew_at: None,
                diagnostics: d,
            },
        };
        tracing::debug!(type_name = %req.type_name, ok = !resp.diagnostics.has_errors(), "opened");
        Ok(Response::new(
            resp.to_proto(&e.ty).map_err(|e| status(e, false))?,
        ))
    }

    pub(super) async fn renew_ephemeral(
        &self,
        req: pb::renew_ephemeral_resource::Request,
    ) -> Reply<pb::renew_ephemeral_resource::Response> {
        let req = renew_request_from_proto(req);
        let (e, client) = match self
            .ephemeral_type(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let resp = match e.imp.renew(&client, req.private.as_deref()).await {
            Ok(o) => RenewEphemeralResourceResponse {
                private: o.private,
                renew_at: o.renew_at,
                diagnostics: Diagnostics::new(),
            },
            Err(d) => RenewEphemeralResourceResponse {
                private: req.private,
                renew_at: None,
                diagnostics: d,
            },
        };
        Ok(Response::new(renew_response_to_proto(&resp)))
    }

    pub(super) async fn close_ephemeral(
        &self,
        req: pb::close_ephemeral_resource::Request,
    ) -> Reply<pb::close_ephemeral_resource::Response> {
        let req = close_request_from_proto(req);
        let (e, client) = match self
            .ephemeral_type(&req.type_name)
            .and_then(|e| Ok((e, self.client()?)))
        {
            Ok(x) => x,
            Err(d) => return refuse(&d),
        };
        let d = match e.imp.close(&client, req.private.as_deref()).await {
            Ok(()) => Diagnostics::new(),
            Err(d) => d,
        };
        Ok(Response::new(pb::close_ephemeral_resource::Response {
            diagnostics: diags(&d),
        }))
    }
}
