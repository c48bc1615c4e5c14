//! Type constraint expressions (`list(string)`, `object({a = optional(number)})`) into [`Type`].

use super::expr::{Expr, ExprKind};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::types::Type;
use std::collections::{BTreeMap, BTreeSet};

/// Decodes a `type = ...` constraint expression.
pub fn type_constraint(e: &Expr) -> Result<Type, Diagnostics> {
    constraint(e, false)
}

fn invalid(e: &Expr, detail: &str) -> Diagnostics {
    Diagnostic::error("Invalid type specification", detail)
        .at(e.range.clone())
        .into()
}

fn constraint(e: &Expr, in_object: bool) -> Result<Type, Diagnostics> {
    match &e.kind {
        ExprKind::Parens(inner) => constraint(inner, in_object),
        ExprKind::Variable(name) => match name.as_str() {
            "string" => Ok(Type::String),
            "number" => Ok(Type::Number),
            "bool" => Ok(Type::Bool),
            "any" => Ok(Type::Dynamic),
            // Legacy bare collection keywords mean "of any".
            "list" => Ok(Type::list(Type::Dynamic)),
            "map" => Ok(Type::map(Type::Dynamic)),
            "set" => Ok(Type::set(Type::Dynamic)),
            other => Err(invalid(
                e,
                &format!("The keyword \"{other}\" is not a valid type specification."),
            )),
        },
        ExprKind::Call { name, args, .. } => {
            let one = || -> Result<Type, Diagnostics> {
                match args.as_slice() {
                    [a] => constraint(a, false),
                    _ => Err(invalid(
                        e,
                        &format!(
                            "The {name} type constructor requires one argument specifying the element type."
                        ),
                    )),
                }
            };
            match name.as_str() {
                "list" => Ok(Type::list(one()?)),
                "set" => Ok(Type::set(one()?)),
                "map" => Ok(Type::map(one()?)),
                "tuple" => match args.as_slice() {
                    [a] => match &a.kind {
                        ExprKind::Tuple(items) => Ok(Type::Tuple(
                            items
                                .iter()
                                .map(|i| constraint(i, false))
                                .collect::<Result<_, _>>()?,
                        )),
                        _ => Err(invalid(
                            a,
                            "Tuple type constructor requires a list of element types.",
                        )),
                    },
                    _ => Err(invalid(
                        e,
                        "The tuple type constructor requires one argument specifying the element types as a list.",
                    )),
                },
                "object" => match args.as_slice() {
                    [a] => object(a),
                    _ => Err(invalid(
                        e,
                        "The object type constructor requires one argument specifying the attribute types as a map.",
                    )),
                },
                "optional" if in_object => match args.as_slice() {
                    // The default (second argument) is not carried by [`Type`].
                    [a] | [a, _] => constraint(a, false),
                    _ => Err(invalid(
                        e,
                        "Optional attribute modifier requires the attribute type as its argument.",
                    )),
                },
                "optional" => Err(invalid(
                    e,
                    "Keyword \"optional\" is valid only as a modifier for object type attributes.",
                )),
                other => Err(invalid(
                    e,
                    &format!("Keyword \"{other}\" is not a valid type constructor."),
                )),
            }
        }
        _ => Err(invalid(
            e,
            "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
        )),
    }
}

fn object(a: &Expr) -> Result<Type, Diagnostics> {
    let ExprKind::Object(items) = &a.kind else {
        return Err(invalid(
            a,
            "Object type constructor requires a map whose keys are attribute names and whose values are the corresponding attribute types.",
        ));
    };
    let mut attrs = BTreeMap::new();
    let mut optional = BTreeSet::new();
    for (k, v) in items {
        let name = match &k.kind {
            ExprKind::Literal(fleetform_shared::Value::String(s)) => s.clone(),
            ExprKind::Variable(s) => s.clone(),
            _ => {
                return Err(invalid(
                    k,
                    "Object constructor map keys must be attribute names.",
                ));
            }
        };
        if matches!(&v.kind, ExprKind::Call { name, .. } if name == "optional") {
            optional.insert(name.clone());
        }
        attrs.insert(name, constraint(v, true)?);
    }
    Ok(Type::Object { attrs, optional })
}
