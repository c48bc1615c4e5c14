//! `provisioner` and `connection` blocks of managed resources: decoding
//! `provisioner "local-exec"` into [`Provisioner`] with Terraform's
//! validation (keywords, arguments, the destroy-time reference rule), and
//! evaluating one, at apply time, into the [`ProvisionerSpec`] a worker runs.
//! `file` and `remote-exec` provisioners and `connection` blocks are errors
//! at their source: fleetform does not carry them out.

use super::args::{labels, missing_argument, not_implemented, reject_rest};
use super::body::{Attribute, Body, NestedBlockSyntax};
use super::model::{Provisioner, ProvisionerOnFailure, ProvisionerWhen};
use crate::eval::{Expr, ExprKind, Reference, Scope, convert, evaluate_marked};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{OnFailure, ProvisionerSpec};
use std::collections::BTreeMap;

/// Takes the `provisioner` and `connection` blocks out of a managed
/// resource's body; the `local-exec` ones are returned.
pub(super) fn take_provisioners(body: &mut Body, diags: &mut Diagnostics) -> Vec<Provisioner> {
    for c in body.take_blocks("connection") {
        diags.push(not_implemented("connection blocks", &c.decl_range));
    }
    let mut out = Vec::new();
    for b in body.take_blocks("provisioner") {
        // Labels are checked for their number only: any text names a type.
        if b.labels.len() != 1 {
            labels(&b, &["type"], diags);
            continue;
        }
        match b.labels[0].as_str() {
            "local-exec" => out.extend(local_exec(b, diags)),
            kind @ ("file" | "remote-exec") => diags.push(not_implemented(
                &format!("\"{kind}\" provisioners"),
                &b.decl_range,
            )),
            kind @ ("chef" | "habitat" | "puppet" | "salt-masterless") => diags.push(
                Diagnostic::error(
                    format!("The \"{kind}\" provisioner has been removed"),
                    format!("The \"{kind}\" provisioner was deprecated in Terraform 0.13.4 has been removed from Terraform. Visit https://learn.hashicorp.com/collections/terraform/provision for alternatives to using provisioners that are a better fit for the Terraform workflow."),
                )
                .at(b.label_ranges[0].clone()),
            ),
            kind => diags.push(
                Diagnostic::error(
                    "Failed to obtain provisioner schema",
                    format!("Could not load the schema for provisioner \"{kind}\": unavailable provisioner \"{kind}\"."),
                )
                .at(b.label_ranges[0].clone()),
            ),
        }
    }
    out
}

fn local_exec(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> Option<Provisioner> {
    let when = match b.body.take_attribute("when") {
        None => ProvisionerWhen::Create,
        Some(a) => match keyword(&a, diags).as_deref() {
            Some("create") => ProvisionerWhen::Create,
            Some("destroy") => ProvisionerWhen::Destroy,
            _ => {
                diags.push(
                    Diagnostic::error(
                        "Invalid \"when\" keyword",
                        "The \"when\" argument requires one of the following keywords: create or destroy.",
                    )
                    .at(a.expr.range.clone()),
                );
                ProvisionerWhen::Create
            }
        },
    };
    let on_failure = match b.body.take_attribute("on_failure") {
        None => ProvisionerOnFailure::Fail,
        Some(a) => match keyword(&a, diags).as_deref() {
            Some("continue") => ProvisionerOnFailure::Continue,
            Some("fail") => ProvisionerOnFailure::Fail,
            _ => {
                diags.push(
                    Diagnostic::error(
                        "Invalid \"on_failure\" keyword",
                        "The \"on_failure\" argument requires one of the following keywords: continue or fail.",
                    )
                    .at(a.expr.range.clone()),
                );
                ProvisionerOnFailure::Fail
            }
        },
    };
    for c in b.body.take_blocks("connection") {
        diags.push(not_implemented("connection blocks", &c.decl_range));
    }
    for e in b.body.take_blocks("_") {
        diags.push(not_implemented(
            "escaping blocks (\"_\") in provisioners",
            &e.decl_range,
        ));
    }
    for l in b.body.take_blocks("lifecycle") {
        diags.push(
            Diagnostic::error(
                "Reserved block type name in provisioner block",
                "The block type name \"lifecycle\" is reserved for use by Terraform in a future version.",
            )
            .at(l.decl_range.clone()),
        );
    }
    if when == ProvisionerWhen::Destroy {
        only_self_references(&b.body, diags);
    }
    let command = b.body.take_attribute("command");
    let mut take = |name: &str| b.body.take_attribute(name).map(|a| a.expr);
    let (interpreter, working_dir, environment, quiet) = (
        take("interpreter"),
        take("working_dir"),
        take("environment"),
        take("quiet"),
    );
    reject_rest(&b.body, diags);
    let Some(command) = command else {
        diags.push(missing_argument("command", &b.body.missing_item_range));
        return None;
    };
    Some(Provisioner {
        kind: b.labels[0].clone(),
        command: command.expr,
        interpreter,
        working_dir,
        environment,
        quiet,
        when,
        on_failure,
        range: b.range,
        decl_range: b.decl_range,
    })
}

/// A keyword argument (`when = destroy`); the quoted form Terraform 0.11
/// needed is accepted with Terraform's deprecation warning.
fn keyword(a: &Attribute, diags: &mut Diagnostics) -> Option<String> {
    match &a.expr.kind {
        ExprKind::Variable(k) => Some(k.clone()),
        ExprKind::Literal(Value::String(k)) => {
            diags.push(
                Diagnostic::warning(
                    "Quoted keywords are deprecated",
                    "In this context, keywords are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted keywords are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this keyword to silence this warning.",
                )
                .at(a.expr.range.clone()),
            );
            Some(k.clone())
        }
        _ => None,
    }
}

/// Destroy-time provisioners run when the rest of the configuration may be
/// gone or half-destroyed: they may refer only to their own instance.
fn only_self_references(body: &Body, diags: &mut Diagnostics) {
    for a in body.attributes.values() {
        for (r, _) in a.expr.references() {
            let allowed = matches!(
                r,
                Reference::CountIndex
                    | Reference::EachKey
                    | Reference::Path(_)
                    | Reference::Workspace
            );
            if !allowed {
                diags.push(
                    Diagnostic::error(
                        "Invalid reference from destroy provisioner",
                        "Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
                    )
                    .at(a.expr.range.clone()),
                );
            }
        }
    }
}

impl Provisioner {
    /// Evaluates the arguments (in a scope that has `self`) into what a
    /// worker runs. Sensitive values anywhere in them suppress the output.
    /// `context` is the resource's header, for diagnostics.
    pub fn evaluate(
        &self,
        scope: &dyn Scope,
        context: &str,
    ) -> Result<ProvisionerSpec, Diagnostics> {
        let mut diags = Diagnostics::new();
        let mut sensitive = false;
        let mut ephemeral = false;
        let mut arg = |name: &str, e: Option<&Expr>, ty: &Type| -> Value {
            let Some(e) = e else {
                return Value::null();
            };
            ephemeral |= crate::eval::derives_from_ephemeral(scope, e);
            let (v, marks) = match evaluate_marked(e, scope) {
                Ok(r) => r,
                Err(d) => {
                    diags.extend(d);
                    return Value::null();
                }
            };
            sensitive |= !marks.is_empty();
            if !v.is_wholly_known() {
                diags.push(
                    Diagnostic::error(
                        "Invalid provisioner argument",
                        format!("The value of \"{name}\" is still unknown after everything it depends on was applied; fleetform never runs a provisioner with unknown arguments."),
                    )
                    .at(e.range.clone()),
                );
                return Value::null();
            }
            match convert(v, ty) {
                Ok(v) => v,
                Err(msg) => {
                    diags.push(
                        Diagnostic::error(
                            "Incorrect attribute value type",
                            format!("Inappropriate value for attribute \"{name}\": {msg}."),
                        )
                        .at(e.range.clone()),
                    );
                    Value::null()
                }
            }
        };
        let command = arg("command", Some(&self.command), &Type::String);
        let list = Type::List(Box::new(Type::String));
        let interpreter = arg("interpreter", self.interpreter.as_ref(), &list);
        let working_dir = arg("working_dir", self.working_dir.as_ref(), &Type::String);
        let map = Type::Map(Box::new(Type::String));
        let environment = arg("environment", self.environment.as_ref(), &map);
        let quiet = arg("quiet", self.quiet.as_ref(), &Type::Bool);
        if diags.has_errors() {
            return Err(diags);
        }
        let command = match command {
            Value::String(s) => s,
            _ => {
                return Err(Diagnostic::error(
                    "Invalid local-exec provisioner configuration",
                    "attribute \"command\" is required",
                )
                .at(self.command.range.clone())
                .into());
            }
        };
        // Null elements are skipped, as Terraform's local-exec skips them.
        let interpreter = match interpreter {
            Value::List(items) => items
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let environment: BTreeMap<String, String> = match environment {
            Value::Map(m) => m
                .into_iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.to_string(), s.to_string())))
                .collect(),
            _ => BTreeMap::new(),
        };
        Ok(ProvisionerSpec {
            kind: self.kind.clone(),
            command,
            interpreter,
            working_dir: working_dir.as_str().map(str::to_string),
            environment,
            quiet: quiet == Value::Bool(true),
            on_failure: match self.on_failure {
                ProvisionerOnFailure::Fail => OnFailure::Fail,
                ProvisionerOnFailure::Continue => OnFailure::Continue,
            },
            suppress_output: sensitive || ephemeral,
            ephemeral_config: ephemeral,
            range: Some(self.decl_range.clone()),
            context: Some(context.to_string()),
        })
    }
}

#[cfg(test)]
#[path = "provisioner_tests.rs"]
mod tests;
