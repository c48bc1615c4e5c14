//! `validate` against the providers' schemas: every resource, data source
//! and provider block of every module is decoded as a plan decodes it, but
//! with every reference unknown (as Terraform validates: no variables, no
//! state), so what remains are the problems of the configuration itself:
//! unsupported and missing arguments, values of the wrong type, nested
//! block counts, resource types the provider does not have, and calls of
//! provider functions that do not exist (or whose provider the module does
//! not declare in `required_providers`).

use super::tree::Config;
use crate::eval::Scope;
use crate::provider_functions::{ModuleFunctions, PluginFunctions, Signatures, check_calls};
use fleetform_shared::ProviderAddr;
use fleetform_shared::addr::{Resource, ResourceMode};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Every name answers, with a value not known yet; provider functions are
/// checked against their signatures but not called.
struct UnknownScope {
    functions: ModuleFunctions,
    /// What the module's expressions may name that is ephemeral.
    ephemeral: std::collections::BTreeSet<crate::eval::Reference>,
}

impl Scope for UnknownScope {
    fn is_ephemeral(&self, reference: &crate::eval::Reference) -> bool {
        self.ephemeral.contains(reference)
    }
    fn provider_functions(&self) -> Option<&dyn crate::eval::ProviderFunctions> {
        Some(&self.functions)
    }
    fn variable(&self, _: &str) -> Option<Value> {
        Some(Value::unknown())
    }
    fn local(&self, _: &str) -> Option<Value> {
        Some(Value::unknown())
    }
    fn resource(&self, _: &Resource) -> Option<Value> {
        Some(Value::unknown())
    }
    fn module_call(&self, _: &str) -> Option<Value> {
        Some(Value::unknown())
    }
    fn count_index(&self) -> Option<Value> {
        Some(Value::unknown())
    }
    fn each(&self) -> Option<(Value, Value)> {
        Some((Value::unknown(), Value::unknown()))
    }
    fn path(&self, _: &str) -> Option<Value> {
        Some(Value::unknown())
    }
    fn workspace(&self) -> Option<Value> {
        Some(Value::unknown())
    }
}

/// Ephemeral values in managed resources' arguments that are not
/// write-only by `schemas` (see [`super::check_resource_arguments`]): a
/// check of its own, so `validate` reports these with the configuration's
/// other ephemeral errors, found without schemas.
pub fn check_ephemeral_arguments(
    config: &Config,
    schemas: &BTreeMap<ProviderAddr, ProviderSchema>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let mut ephemeral = super::ephemeral_references(config);
    for node in config.modules() {
        let module = &node.module;
        let scope = UnknownScope {
            functions: ModuleFunctions::new(module, Arc::new(Signatures(BTreeMap::new()))),
            ephemeral: ephemeral.remove(&node.path).unwrap_or_default(),
        };
        for (r, block) in &module.resources {
            let local = block.provider.split('.').next().unwrap_or(&block.provider);
            let type_schema = schemas
                .get(&module.provider_addr(local))
                .and_then(|s| s.resources.get(r.type_name.as_str()));
            let (Some(type_schema), ResourceMode::Managed) = (type_schema, r.mode) else {
                continue;
            };
            let address = match node.path.0.is_empty() {
                true => r.to_string(),
                false => format!("{}.{r}", node.path),
            };
            diags.extend(super::check_resource_arguments(
                &block.body,
                &type_schema.block,
                &scope,
                &block.header(),
                &address,
            ));
        }
    }
    diags
}

/// The problems of `config`'s blocks against `schemas` (providers missing
/// from `schemas` are skipped: the caller reports why it has no schema).
pub fn check_against_schemas(
    config: &Config,
    schemas: &BTreeMap<ProviderAddr, ProviderSchema>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let signatures: Arc<dyn PluginFunctions> = Arc::new(Signatures(
        schemas
            .iter()
            .map(|(addr, s)| (addr.clone(), s.functions.clone()))
            .collect(),
    ));
    for node in config.modules() {
        let module = &node.module;
        let scope = UnknownScope {
            functions: ModuleFunctions::new(module, signatures.clone()),
            ephemeral: Default::default(),
        };
        for block in module.providers.values() {
            let addr = module.provider_addr(&block.name);
            if let Some(schema) = schemas.get(&addr) {
                let (_, d) = block.body.decode(&schema.provider.block, &scope);
                diags.extend(d);
            }
        }
        for (r, block) in &module.resources {
            let local = block.provider.split('.').next().unwrap_or(&block.provider);
            let addr = module.provider_addr(local);
            let Some(schema) = schemas.get(&addr) else {
                continue;
            };
            let (types, what) = match r.mode {
                ResourceMode::Data => (&schema.data_sources, "data source"),
                ResourceMode::Managed => (&schema.resources, "resource type"),
                ResourceMode::Ephemeral => (&schema.ephemeral_resources, "ephemeral resource"),
            };
            let Some(type_schema) = types.get(r.type_name.as_str()) else {
                diags.push(
                    Diagnostic::error(
                        format!("Invalid {what}"),
                        format!(
                            "The provider {addr} does not support {what} \"{}\".",
                            r.type_name
                        ),
                    )
                    .at(block.decl_range.clone())
                    .in_context(block.header()),
                );
                continue;
            };
            let (_, found) = block.body.decode(&type_schema.block, &scope);
            for mut d in found.into_iter() {
                // A data source in a `check` block only warns.
                if block.check.is_some() {
                    d.severity = Severity::Warning;
                }
                diags.push(d.in_context(block.header()));
            }
        }
        // Calls outside the blocks decoded above (locals, outputs…); those
        // inside them were reported by decoding already.
        for d in check_calls(module, &scope.functions).into_iter() {
            let seen = diags
                .iter()
                .any(|o| o.summary == d.summary && o.range == d.range);
            if !seen {
                diags.push(d);
            }
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;
    use fleetform_shared::schema::{Attribute, Block, Schema};
    use fleetform_shared::types::Type;

    fn schemas() -> BTreeMap<ProviderAddr, ProviderSchema> {
        let attr = |ty: Type, required: bool| Attribute {
            ty,
            description: String::new(),
            required,
            optional: !required,
            computed: false,
            sensitive: false,
            deprecated: false,
            write_only: false,
            nested: None,
        };
        let block = Block {
            attributes: BTreeMap::from([
                ("filename".to_string(), attr(Type::String, true)),
                ("content".to_string(), attr(Type::String, false)),
                ("length".to_string(), attr(Type::Number, false)),
            ]),
            ..Block::default()
        };
        let schema = ProviderSchema {
            resources: BTreeMap::from([(
                "local_file".to_string(),
                Schema {
                    block,
                    ..Schema::default()
                },
            )]),
            ..ProviderSchema::default()
        };
        BTreeMap::from([(ProviderAddr::new("hashicorp", "local"), schema)])
    }

    fn check(src: &str) -> Vec<String> {
        let files = BTreeMap::from([("main.tf".to_string(), src.to_string())]);
        let (config, diags) = load_config(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        check_against_schemas(&config.unwrap(), &schemas())
            .iter()
            .map(|d| {
                let line = d.range.as_ref().map_or(0, |r| r.start.line);
                format!("{}: {} (line {line})", d.summary, d.detail)
            })
            .collect()
    }

    #[test]
    fn missing_unknown_and_mistyped_arguments_are_found_with_their_line() {
        let got = check(
            "resource \"local_file\" \"f\" {\n  content = var.x\n  bogus = 1\n  length = \"abc\"\n}\n",
        );
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(
            got.iter()
                .any(|d| d.starts_with("Unsupported argument") && d.ends_with("(line 3)")),
            "{got:#?}"
        );
        assert!(
            got.iter()
                .any(|d| d.starts_with("Missing required argument") && d.contains("\"filename\"")),
            "{got:#?}"
        );
        assert!(got.iter().any(|d| d.starts_with("Incorrect attribute value type") && d.ends_with("(line 4)")), "{got:#?}");
    }

    #[test]
    fn references_are_unknown_so_a_good_block_passes_and_bad_types_are_named() {
        assert!(
            check("resource \"local_file\" \"f\" {\n  count = 2\n  filename = \"f${count.index}\"\n  content = local.c\n  length = var.n\n}\n")
                .is_empty()
        );
        let got = check(
            "resource \"local_file\" \"g\" {\n  filename = \"x\"\n}\nresource \"local_nope\" \"h\" {\n}\n",
        );
        assert_eq!(got.len(), 1, "{got:#?}");
        assert!(
            got[0].contains("does not support resource type \"local_nope\""),
            "{got:#?}"
        );
    }
}
