//! [`Twin`]: each tfplugin6 message paired with its tfplugin5 counterpart,
//! field by field.
//!
//! Protocol 5 and 6 carry the same fields under the same numbers in almost
//! every message; they differ in RPC and message names (`Configure` vs
//! `ConfigureProvider` …) and in nested attributes, which only protocol 6
//! has. Mapping v5 messages onto v6 ones lets the value, schema, path and
//! diagnostic rules live once, in the v6 conversions.

use crate::convert::schema::nested_object_type;
use crate::tfplugin5 as v5;
use crate::tfplugin6 as v6;
use fleetform_shared::cty;

/// A tfplugin6 message and its tfplugin5 twin.
pub trait Twin: Sized {
    type V5;
    fn into_v5(self) -> Self::V5;
    fn from_v5(m: Self::V5) -> Self;
}

/// One field, converted in direction `$dir` (`into_v5` or `from_v5`):
/// moved as is, or as an optional (`one`), repeated (`many`) or map
/// (`by_name`) message.
macro_rules! field {
    ($dir:ident, $e:expr) => {
        $e
    };
    ($dir:ident, $e:expr, one) => {
        $e.map(Twin::$dir)
    };
    ($dir:ident, $e:expr, many) => {
        $e.into_iter().map(Twin::$dir).collect()
    };
    ($dir:ident, $e:expr, by_name) => {
        $e.into_iter().map(|(k, v)| (k, Twin::$dir(v))).collect()
    };
}

/// Declares twins. Every field of both messages must be listed: a struct
/// literal missing one does not compile, so a field added to either proto
/// file cannot be dropped silently.
macro_rules! twins {
    ($($v6:path => $v5:path { $($field:ident $(: $how:ident)?),* $(,)? })*) => {$(
        impl Twin for $v6 {
            type V5 = $v5;
            #[allow(unused_variables)]
            fn into_v5(self) -> $v5 {
                $v5 { $($field: field!(into_v5, self.$field $(, $how)?)),* }
            }
            #[allow(unused_variables)]
            fn from_v5(m: $v5) -> $v6 {
                $v6 { $($field: field!(from_v5, m.$field $(, $how)?)),* }
            }
        }
    )*};
}

twins! {
    v6::DynamicValue => v5::DynamicValue { msgpack, json }
    v6::Diagnostic => v5::Diagnostic { severity, summary, detail, attribute: one }
    v6::AttributePath => v5::AttributePath { steps: many }
    v6::attribute_path::Step => v5::attribute_path::Step { selector: one }
    v6::RawState => v5::RawState { json, flatmap }
    v6::Schema => v5::Schema { version, block: one }
    v6::schema::Block => v5::schema::Block {
        version, attributes: many, block_types: many, description, description_kind, deprecated,
    }
    v6::schema::NestedBlock => v5::schema::NestedBlock {
        type_name, block: one, nesting, min_items, max_items,
    }
    v6::ServerCapabilities => v5::ServerCapabilities {
        plan_destroy, get_provider_schema_optional, move_resource_state,
    }
    v6::ClientCapabilities => v5::ClientCapabilities {
        deferral_allowed, write_only_attributes_allowed,
    }
    v6::Deferred => v5::Deferred { reason }

    v6::get_metadata::Request => v5::get_metadata::Request {}
    v6::get_metadata::Response => v5::get_metadata::Response {
        server_capabilities: one, diagnostics: many, data_sources: many, resources: many,
    }
    v6::get_metadata::DataSourceMetadata => v5::get_metadata::DataSourceMetadata { type_name }
    v6::get_metadata::ResourceMetadata => v5::get_metadata::ResourceMetadata { type_name }
    v6::get_provider_schema::Request => v5::get_provider_schema::Request {}
    v6::get_provider_schema::Response => v5::get_provider_schema::Response {
        provider: one, resource_schemas: by_name, data_source_schemas: by_name,
        diagnostics: many, provider_meta: one, server_capabilities: one, functions: by_name,
        ephemeral_resource_schemas: by_name,
    }
    v6::Function => v5::Function {
        parameters: many, variadic_parameter: one, r#return: one, summary, description,
        description_kind, deprecation_message,
    }
    v6::function::Parameter => v5::function::Parameter {
        name, r#type, allow_null_value, allow_unknown_values, description, description_kind,
    }
    v6::function::Return => v5::function::Return { r#type }
    v6::FunctionError => v5::FunctionError { text, function_argument }
    v6::get_functions::Request => v5::get_functions::Request {}
    v6::get_functions::Response => v5::get_functions::Response {
        functions: by_name, diagnostics: many,
    }
    v6::call_function::Request => v5::call_function::Request { name, arguments: many }
    v6::call_function::Response => v5::call_function::Response { result: one, error: one }
    v6::validate_provider_config::Request => v5::prepare_provider_config::Request { config: one }
    v6::validate_resource_config::Request => v5::validate_resource_type_config::Request {
        type_name, config: one, client_capabilities: one,
    }
    v6::validate_resource_config::Response => v5::validate_resource_type_config::Response {
        diagnostics: many,
    }
    v6::validate_data_resource_config::Request => v5::validate_data_source_config::Request {
        type_name, config: one,
    }
    v6::validate_data_resource_config::Response => v5::validate_data_source_config::Response {
        diagnostics: many,
    }
    v6::upgrade_resource_state::Request => v5::upgrade_resource_state::Request {
        type_name, version, raw_state: one,
    }
    v6::upgrade_resource_state::Response => v5::upgrade_resource_state::Response {
        upgraded_state: one, diagnostics: many,
    }
    v6::configure_provider::Request => v5::configure::Request {
        terraform_version, config: one, client_capabilities: one,
    }
    v6::configure_provider::Response => v5::configure::Response { diagnostics: many }
    v6::read_resource::Request => v5::read_resource::Request {
        type_name, current_state: one, private, provider_meta: one, client_capabilities: one,
    }
    v6::read_resource::Response => v5::read_resource::Response {
        new_state: one, diagnostics: many, private, deferred: one,
    }
    v6::plan_resource_change::Request => v5::plan_resource_change::Request {
        type_name, prior_state: one, proposed_new_state: one, config: one, prior_private,
        provider_meta: one, client_capabilities: one,
    }
    v6::plan_resource_change::Response => v5::plan_resource_change::Response {
        planned_state: one, requires_replace: many, planned_private, diagnostics: many,
        legacy_type_system, deferred: one,
    }
    v6::apply_resource_change::Request => v5::apply_resource_change::Request {
        type_name, prior_state: one, planned_state: one, config: one, planned_private,
        provider_meta: one,
    }
    v6::apply_resource_change::Response => v5::apply_resource_change::Response {
        new_state: one, private, diagnostics: many, legacy_type_system,
    }
    v6::import_resource_state::Request => v5::import_resource_state::Request {
        type_name, id, client_capabilities: one,
    }
    v6::import_resource_state::ImportedResource => v5::import_resource_state::ImportedResource {
        type_name, state: one, private,
    }
    v6::import_resource_state::Response => v5::import_resource_state::Response {
        imported_resources: many, diagnostics: many, deferred: one,
    }
    v6::read_data_source::Request => v5::read_data_source::Request {
        type_name, config: one, provider_meta: one, client_capabilities: one,
    }
    v6::read_data_source::Response => v5::read_data_source::Response {
        state: one, diagnostics: many, deferred: one,
    }
    v6::Timestamp => v5::Timestamp { seconds, nanos }
    v6::validate_ephemeral_resource_config::Request => v5::validate_ephemeral_resource_config::Request {
        type_name, config: one,
    }
    v6::validate_ephemeral_resource_config::Response => v5::validate_ephemeral_resource_config::Response {
        diagnostics: many,
    }
    v6::open_ephemeral_resource::Request => v5::open_ephemeral_resource::Request {
        type_name, config: one, client_capabilities: one,
    }
    v6::open_ephemeral_resource::Response => v5::open_ephemeral_resource::Response {
        diagnostics: many, renew_at: one, result: one, private, deferred: one,
    }
    v6::renew_ephemeral_resource::Request => v5::renew_ephemeral_resource::Request {
        type_name, private,
    }
    v6::renew_ephemeral_resource::Response => v5::renew_ephemeral_resource::Response {
        diagnostics: many, renew_at: one, private,
    }
    v6::close_ephemeral_resource::Request => v5::close_ephemeral_resource::Request {
        type_name, private,
    }
    v6::close_ephemeral_resource::Response => v5::close_ephemeral_resource::Response {
        diagnostics: many,
    }
    v6::stop_provider::Request => v5::stop::Request {}
    v6::stop_provider::Response => v5::stop::Response { error }
}

impl Twin for v6::attribute_path::step::Selector {
    type V5 = v5::attribute_path::step::Selector;
    fn into_v5(self) -> Self::V5 {
        use v5::attribute_path::step::Selector as S5;
        match self {
            Self::AttributeName(n) => S5::AttributeName(n),
            Self::ElementKeyString(k) => S5::ElementKeyString(k),
            Self::ElementKeyInt(i) => S5::ElementKeyInt(i),
        }
    }
    fn from_v5(m: Self::V5) -> Self {
        use v5::attribute_path::step::Selector as S5;
        match m {
            S5::AttributeName(n) => Self::AttributeName(n),
            S5::ElementKeyString(k) => Self::ElementKeyString(k),
            S5::ElementKeyInt(i) => Self::ElementKeyInt(i),
        }
    }
}

/// Protocol 5 has no nested attributes: one becomes a plain attribute of
/// the equivalent cty type, which is how Terraform reads it too.
impl Twin for v6::schema::Attribute {
    type V5 = v5::schema::Attribute;
    fn into_v5(self) -> Self::V5 {
        let r#type = match self.nested_type.as_ref().map(nested_object_type) {
            Some(Ok(ty)) => cty::type_to_json(&ty),
            // An invalid nested type stays untyped; the reader reports it.
            None | Some(Err(_)) => self.r#type,
        };
        v5::schema::Attribute {
            name: self.name,
            r#type,
            description: self.description,
            required: self.required,
            optional: self.optional,
            computed: self.computed,
            sensitive: self.sensitive,
            description_kind: self.description_kind,
            deprecated: self.deprecated,
            write_only: self.write_only,
        }
    }
    fn from_v5(m: Self::V5) -> Self {
        v6::schema::Attribute {
            name: m.name,
            r#type: m.r#type,
            description: m.description,
            required: m.required,
            optional: m.optional,
            computed: m.computed,
            sensitive: m.sensitive,
            description_kind: m.description_kind,
            deprecated: m.deprecated,
            nested_type: None,
            write_only: m.write_only,
        }
    }
}
