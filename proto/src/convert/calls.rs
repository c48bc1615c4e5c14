//! Request and response conversions for every call in
//! `fleetform_shared::provider`, in both directions: the plugin client turns
//! shared requests into messages and responses back; a provider server does
//! the reverse.

use super::diag::{diagnostics_from_proto, diagnostics_to_proto};
use super::path::{path_from_proto, path_to_proto};
use super::value::{decode_value, encode_value};
use super::{ConvertError, FromProto, ToProto};
use crate::tfplugin6 as pb;
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::*;
use fleetform_shared::schema::{ProviderSchema, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

fn enc(value: &Value, ty: &Type) -> Result<Option<pb::DynamicValue>, ConvertError> {
    encode_value(value, ty).map(Some)
}

fn dec(dv: Option<pb::DynamicValue>, ty: &Type) -> Result<Value, ConvertError> {
    decode_value(dv.as_ref(), ty)
}

impl TryFrom<pb::get_provider_schema::Response> for GetProviderSchemaResponse {
    type Error = ConvertError;
    fn try_from(r: pb::get_provider_schema::Response) -> Result<Self, ConvertError> {
        let schemas = |m: std::collections::HashMap<String, pb::Schema>| -> Result<BTreeMap<String, Schema>, ConvertError> {
            m.into_iter().map(|(k, s)| Ok((k, Schema::try_from(s)?))).collect()
        };
        Ok(GetProviderSchemaResponse {
            schema: ProviderSchema {
                provider: r
                    .provider
                    .map(Schema::try_from)
                    .transpose()?
                    .unwrap_or_default(),
                resources: schemas(r.resource_schemas)?,
                data_sources: schemas(r.data_source_schemas)?,
                ephemeral_resources: schemas(r.ephemeral_resource_schemas)?,
                capabilities: r.server_capabilities.map(Into::into).unwrap_or_default(),
                functions: r
                    .functions
                    .into_iter()
                    .map(|(k, f)| Ok((k, FunctionSignature::try_from(f)?)))
                    .collect::<Result<_, ConvertError>>()?,
            },
            diagnostics: diagnostics_from_proto(r.diagnostics),
        })
    }
}

impl From<&GetProviderSchemaResponse> for pb::get_provider_schema::Response {
    fn from(r: &GetProviderSchemaResponse) -> Self {
        let schemas = |m: &BTreeMap<String, Schema>| {
            m.iter()
                .map(|(k, s)| (k.clone(), pb::Schema::from(s)))
                .collect()
        };
        pb::get_provider_schema::Response {
            provider: Some(pb::Schema::from(&r.schema.provider)),
            resource_schemas: schemas(&r.schema.resources),
            data_source_schemas: schemas(&r.schema.data_sources),
            ephemeral_resource_schemas: schemas(&r.schema.ephemeral_resources),
            diagnostics: diagnostics_to_proto(&r.diagnostics),
            provider_meta: None,
            server_capabilities: Some((&r.schema.capabilities).into()),
            functions: r
                .schema
                .functions
                .iter()
                .map(|(k, f)| (k.clone(), pb::Function::from(f)))
                .collect(),
        }
    }
}

impl ToProto for ValidateProviderConfigRequest {
    type Proto = pb::validate_provider_config::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            config: enc(&self.config, ty)?,
        })
    }
}

impl FromProto for ValidateProviderConfigRequest {
    type Proto = pb::validate_provider_config::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            config: dec(p.config, ty)?,
        })
    }
}

impl ToProto for ValidateResourceConfigRequest {
    type Proto = pb::validate_resource_config::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            config: enc(&self.config, ty)?,
            client_capabilities: None,
        })
    }
}

impl FromProto for ValidateResourceConfigRequest {
    type Proto = pb::validate_resource_config::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            config: dec(p.config, ty)?,
        })
    }
}

/// Data sources are validated with the same shared request as resources.
pub fn validate_data_config_to_proto(
    r: &ValidateResourceConfigRequest,
    ty: &Type,
) -> Result<pb::validate_data_resource_config::Request, ConvertError> {
    Ok(pb::validate_data_resource_config::Request {
        type_name: r.type_name.clone(),
        config: enc(&r.config, ty)?,
    })
}

pub fn validate_data_config_from_proto(
    p: pb::validate_data_resource_config::Request,
    ty: &Type,
) -> Result<ValidateResourceConfigRequest, ConvertError> {
    Ok(ValidateResourceConfigRequest {
        type_name: p.type_name,
        config: dec(p.config, ty)?,
    })
}

impl ToProto for ConfigureProviderRequest {
    type Proto = pb::configure_provider::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            terraform_version: self.terraform_version.clone(),
            config: enc(&self.config, ty)?,
            client_capabilities: None,
        })
    }
}

impl FromProto for ConfigureProviderRequest {
    type Proto = pb::configure_provider::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            terraform_version: p.terraform_version,
            config: dec(p.config, ty)?,
        })
    }
}

/// The raw state is JSON text of an older schema version: no type applies.
impl ToProto for UpgradeResourceStateRequest {
    type Proto = pb::upgrade_resource_state::Request;
    fn to_proto(&self, _ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            version: self.version,
            raw_state: Some(pb::RawState {
                json: self.raw_state_json.clone(),
                flatmap: Default::default(),
            }),
        })
    }
}

impl FromProto for UpgradeResourceStateRequest {
    type Proto = pb::upgrade_resource_state::Request;
    fn from_proto(p: Self::Proto, _ty: &Type) -> Result<Self, ConvertError> {
        let raw = p.raw_state.unwrap_or_default();
        if raw.json.is_empty() && !raw.flatmap.is_empty() {
            return Err(ConvertError::Unsupported("legacy flatmap state"));
        }
        Ok(Self {
            type_name: p.type_name,
            version: p.version,
            raw_state_json: raw.json,
        })
    }
}

impl ToProto for UpgradeResourceStateResponse {
    type Proto = pb::upgrade_resource_state::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            upgraded_state: enc(&self.upgraded_state, ty)?,
            diagnostics: diagnostics_to_proto(&self.diagnostics),
        })
    }
}

impl FromProto for UpgradeResourceStateResponse {
    type Proto = pb::upgrade_resource_state::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            upgraded_state: dec(p.upgraded_state, ty)?,
            diagnostics: diagnostics_from_proto(p.diagnostics),
        })
    }
}

impl ToProto for ReadResourceRequest {
    type Proto = pb::read_resource::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            current_state: enc(&self.current_state, ty)?,
            private: self.private.clone(),
            provider_meta: None,
            client_capabilities: None,
        })
    }
}

impl FromProto for ReadResourceRequest {
    type Proto = pb::read_resource::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            current_state: dec(p.current_state, ty)?,
            private: p.private,
        })
    }
}

impl ToProto for ReadResourceResponse {
    type Proto = pb::read_resource::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            new_state: enc(&self.new_state, ty)?,
            diagnostics: diagnostics_to_proto(&self.diagnostics),
            private: self.private.clone(),
            deferred: None,
        })
    }
}

impl FromProto for ReadResourceResponse {
    type Proto = pb::read_resource::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        if p.deferred.is_some() {
            return Err(ConvertError::Unsupported("deferred read"));
        }
        Ok(Self {
            new_state: dec(p.new_state, ty)?,
            diagnostics: diagnostics_from_proto(p.diagnostics),
            private: p.private,
        })
    }
}

impl ToProto for PlanResourceChangeRequest {
    type Proto = pb::plan_resource_change::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            prior_state: enc(&self.prior_state, ty)?,
            proposed_new_state: enc(&self.proposed_new_state, ty)?,
            config: enc(&self.config, ty)?,
            prior_private: self.prior_private.clone(),
            provider_meta: None,
            client_capabilities: None,
        })
    }
}

impl FromProto for PlanResourceChangeRequest {
    type Proto = pb::plan_resource_change::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            prior_state: dec(p.prior_state, ty)?,
            proposed_new_state: dec(p.proposed_new_state, ty)?,
            config: dec(p.config, ty)?,
            prior_private: p.prior_private,
        })
    }
}

impl ToProto for PlanResourceChangeResponse {
    type Proto = pb::plan_resource_change::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            planned_state: enc(&self.planned_state, ty)?,
            requires_replace: self
                .requires_replace
                .iter()
                .map(|p| path_to_proto(p, ty))
                .collect(),
            planned_private: self.planned_private.clone(),
            diagnostics: diagnostics_to_proto(&self.diagnostics),
            legacy_type_system: self.legacy_type_system,
            deferred: None,
        })
    }
}

impl FromProto for PlanResourceChangeResponse {
    type Proto = pb::plan_resource_change::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        if p.deferred.is_some() {
            return Err(ConvertError::Unsupported("deferred plan"));
        }
        Ok(Self {
            planned_state: dec(p.planned_state, ty)?,
            requires_replace: p.requires_replace.iter().map(path_from_proto).collect(),
            planned_private: p.planned_private,
            diagnostics: diagnostics_from_proto(p.diagnostics),
            legacy_type_system: p.legacy_type_system,
        })
    }
}

impl ToProto for ApplyResourceChangeRequest {
    type Proto = pb::apply_resource_change::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            prior_state: enc(&self.prior_state, ty)?,
            planned_state: enc(&self.planned_state, ty)?,
            config: enc(&self.config, ty)?,
            planned_private: self.planned_private.clone(),
            provider_meta: None,
        })
    }
}

impl FromProto for ApplyResourceChangeRequest {
    type Proto = pb::apply_resource_change::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            prior_state: dec(p.prior_state, ty)?,
            planned_state: dec(p.planned_state, ty)?,
            config: dec(p.config, ty)?,
            planned_private: p.planned_private,
        })
    }
}

impl ToProto for ApplyResourceChangeResponse {
    type Proto = pb::apply_resource_change::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            new_state: enc(&self.new_state, ty)?,
            private: self.private.clone(),
            diagnostics: diagnostics_to_proto(&self.diagnostics),
            legacy_type_system: self.legacy_type_system,
        })
    }
}

impl FromProto for ApplyResourceChangeResponse {
    type Proto = pb::apply_resource_change::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            new_state: dec(p.new_state, ty)?,
            private: p.private,
            diagnostics: diagnostics_from_proto(p.diagnostics),
            legacy_type_system: p.legacy_type_system,
        })
    }
}

impl ToProto for ReadDataSourceRequest {
    type Proto = pb::read_data_source::Request;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            config: enc(&self.config, ty)?,
            provider_meta: None,
            client_capabilities: None,
        })
    }
}

impl FromProto for ReadDataSourceRequest {
    type Proto = pb::read_data_source::Request;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        Ok(Self {
            type_name: p.type_name,
            config: dec(p.config, ty)?,
        })
    }
}

impl ToProto for ReadDataSourceResponse {
    type Proto = pb::read_data_source::Response;
    fn to_proto(&self, ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            state: enc(&self.state, ty)?,
            diagnostics: diagnostics_to_proto(&self.diagnostics),
            deferred: None,
        })
    }
}

impl FromProto for ReadDataSourceResponse {
    type Proto = pb::read_data_source::Response;
    fn from_proto(p: Self::Proto, ty: &Type) -> Result<Self, ConvertError> {
        if p.deferred.is_some() {
            return Err(ConvertError::Unsupported("deferred data source read"));
        }
        Ok(Self {
            state: dec(p.state, ty)?,
            diagnostics: diagnostics_from_proto(p.diagnostics),
        })
    }
}

impl ToProto for ImportResourceStateRequest {
    type Proto = pb::import_resource_state::Request;
    fn to_proto(&self, _ty: &Type) -> Result<Self::Proto, ConvertError> {
        Ok(Self::Proto {
            type_name: self.type_name.clone(),
            id: self.id.clone(),
            client_capabilities: None,
        })
    }
}

/// Decodes an import response: objects of `type_name` are decoded with `ty`;
/// objects of other types (a provider may return several) are refused,
/// because fleetform imports one instance at a time.
pub fn import_response_from_proto(
    p: pb::import_resource_state::Response,
    type_name: &str,
    ty: &Type,
) -> Result<ImportResourceStateResponse, ConvertError> {
    if p.deferred.is_some() {
        return Err(ConvertError::Unsupported("deferred import"));
    }
    let mut imported = Vec::with_capacity(p.imported_resources.len());
    for r in p.imported_resources {
        if r.type_name != type_name {
            return Err(ConvertError::Unsupported(
                "import returned an object of another resource type",
            ));
        }
        imported.push(ImportedResource {
            type_name: r.type_name,
            state: dec(r.state, ty)?,
            private: r.private,
        });
    }
    Ok(ImportResourceStateResponse {
        imported,
        diagnostics: diagnostics_from_proto(p.diagnostics),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::diag::{Diagnostic, Diagnostics};
    use fleetform_shared::schema::Attribute;
    use fleetform_shared::value::PathStep;

    fn ty() -> Type {
        Type::object([
            ("id", Type::String),
            ("name", Type::String),
            ("tags", Type::map(Type::String)),
        ])
    }

    #[test]
    fn plan_request_and_response_round_trip() {
        let req = PlanResourceChangeRequest {
            type_name: "sim_object".into(),
            prior_state: Value::null(),
            proposed_new_state: Value::object([
                ("id", Value::null()),
                ("name", "a".into()),
                ("tags", Value::null()),
            ]),
            config: Value::object([
                ("id", Value::null()),
                ("name", "a".into()),
                ("tags", Value::null()),
            ]),
            prior_private: vec![1, 2],
        };
        let wire = req.to_proto(&ty()).unwrap();
        assert_eq!(
            PlanResourceChangeRequest::from_proto(wire, &ty()).unwrap(),
            req
        );

        let resp = PlanResourceChangeResponse {
            planned_state: Value::object([
                ("id", Value::unknown()),
                ("name", "a".into()),
                ("tags", Value::null()),
            ]),
            requires_replace: vec![vec![PathStep::Key("name".into())]],
            planned_private: vec![],
            diagnostics: Diagnostics(vec![Diagnostic::warning("w", "d")]),
            legacy_type_system: false,
        };
        let wire = resp.to_proto(&ty()).unwrap();
        assert_eq!(
            PlanResourceChangeResponse::from_proto(wire, &ty()).unwrap(),
            resp
        );
    }

    #[test]
    fn flatmap_state_is_rejected() {
        let p = pb::upgrade_resource_state::Request {
            type_name: "x".into(),
            version: 0,
            raw_state: Some(pb::RawState {
                json: vec![],
                flatmap: [("id".to_string(), "1".to_string())].into(),
            }),
        };
        assert!(UpgradeResourceStateRequest::from_proto(p, &Type::Dynamic).is_err());
    }

    #[test]
    fn provider_schema_response_round_trips() {
        let mut schema = ProviderSchema::default();
        let mut s = Schema::default();
        s.block
            .attributes
            .insert("name".into(), Attribute::new(Type::String).required());
        schema.resources.insert("sim_object".into(), s);
        schema.capabilities.plan_destroy = true;
        let resp = GetProviderSchemaResponse {
            schema,
            diagnostics: Diagnostics::new(),
        };
        let wire = pb::get_provider_schema::Response::from(&resp);
        assert_eq!(GetProviderSchemaResponse::try_from(wire).unwrap(), resp);
    }
}
