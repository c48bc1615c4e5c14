//! Type constraint expressions (`list(string)`, `object({a = optional(number, 1)})`)
//! into [`Type`], with the defaults of optional attributes ([`TypeDefaults`]),
//! as Terraform 1.9 decodes a variable's `type`.

use super::convert::convert;
use super::expr::{Expr, ExprKind};
use super::{EmptyScope, evaluate};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Decodes a `type = ...` constraint expression (defaults are checked but dropped).
pub fn type_constraint(e: &Expr) -> Result<Type, Diagnostics> {
    type_constraint_with_defaults(e).map(|(t, _)| t)
}

/// Decodes a `type = ...` constraint expression and the defaults its
/// `optional(type, default)` attributes give; None when there are none.
/// Apply the defaults to a value ([`TypeDefaults::apply`]) before
/// converting it to the type, as Terraform does.
pub fn type_constraint_with_defaults(
    e: &Expr,
) -> Result<(Type, Option<TypeDefaults>), Diagnostics> {
    if let ExprKind::Literal(Value::String(s)) = &e.kind {
        return Err(quoted_type(e, s));
    }
    // Terraform's own shorthands, only for a whole constraint.
    match e.as_keyword() {
        Some("list") => return Ok((Type::list(Type::Dynamic), None)),
        Some("map") => return Ok((Type::map(Type::Dynamic), None)),
        _ => {}
    }
    let mut diags = Diagnostics::new();
    let out = get_type(e, &mut diags);
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

/// Default values for the optional attributes of an object type, and for
/// those of nested types. Like HCL's `typeexpr.Defaults`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDefaults {
    /// The type these defaults belong to: objects and tuples find nested
    /// defaults by attribute name or index, collections under "".
    pub ty: Type,
    /// Defaults of this object's attributes, already converted to their types.
    pub values: BTreeMap<String, Value>,
    pub children: BTreeMap<String, TypeDefaults>,
}

impl TypeDefaults {
    /// Fills null or missing optional attributes with their defaults, through
    /// lists, sets, maps, tuples and objects; a default that is itself an
    /// object gets that object's defaults. Null and unknown values stay as
    /// they are.
    pub fn apply(&self, v: Value) -> Value {
        match v {
            Value::List(items) => Value::List(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| match self.child(&i.to_string()) {
                        Some(d) => d.apply(e),
                        None => e,
                    })
                    .collect(),
            ),
            Value::Map(items) => {
                let mut out: fleetform_shared::value::ValueMap = items
                    .into_iter()
                    .map(|(k, e)| {
                        let e = match self.child(&k) {
                            Some(d) => d.apply(e),
                            None => e,
                        };
                        (k, e)
                    })
                    .collect();
                for (k, default) in &self.values {
                    if out.get(k).is_none_or(Value::is_null) {
                        let default = match self.children.get(k) {
                            Some(d) => d.apply(default.clone()),
                            None => default.clone(),
                        };
                        out.insert(k.clone(), default);
                    }
                }
                Value::Map(out)
            }
            other => other,
        }
    }

    fn child(&self, key: &str) -> Option<&TypeDefaults> {
        match self.ty {
            Type::Object { .. } | Type::Tuple(_) => self.children.get(key),
            _ => self.children.get(""),
        }
    }
}

fn invalid(e: &Expr, detail: &str) -> Diagnostic {
    Diagnostic::error("Invalid type specification", detail).at(e.range.clone())
}

/// Terraform 0.11's quoted types are errors with a hint.
fn quoted_type(e: &Expr, s: &str) -> Diagnostics {
    const OLD: &str = "Terraform 0.11 and earlier required type constraints to be given in quotes, but that form is now deprecated and will be removed in a future version of Terraform.";
    let (summary, detail) = match s {
        "string" => (
            "Invalid quoted type constraints",
            format!("{OLD} Remove the quotes around \"string\"."),
        ),
        "list" | "map" => (
            "Invalid quoted type constraints",
            format!(
                "{OLD} Remove the quotes around \"{s}\" and write {s}(string) instead to explicitly indicate that the {s} elements are strings."
            ),
        ),
        _ => (
            "Invalid legacy variable type hint",
            "To provide a full type expression, remove the surrounding quotes and give the type expression directly.".into(),
        ),
    };
    Diagnostic::error(summary, detail)
        .at(e.range.clone())
        .into()
}

fn constructor_detail(name: &str) -> String {
    match name {
        "object" => "The object type constructor requires one argument specifying the attribute types and values as a map.".into(),
        "tuple" => "The tuple type constructor requires one argument specifying the element types as a list.".into(),
        _ => format!("The {name} type constructor requires one argument specifying the element type."),
    }
}

/// One type expression; problems go to `diags` and the type is then `any`.
fn get_type(e: &Expr, diags: &mut Diagnostics) -> (Type, Option<TypeDefaults>) {
    let dynamic = (Type::Dynamic, None);
    if let ExprKind::Parens(inner) = &e.kind {
        return get_type(inner, diags);
    }
    if let Some(kw) = e.as_keyword() {
        let t = match kw {
            "bool" => Type::Bool,
            "string" => Type::String,
            "number" => Type::Number,
            "any" => Type::Dynamic,
            "list" | "map" | "set" | "object" | "tuple" => {
                diags.push(invalid(e, &constructor_detail(kw)));
                Type::Dynamic
            }
            other => {
                diags.push(invalid(
                    e,
                    &format!("The keyword \"{other}\" is not a valid type specification."),
                ));
                Type::Dynamic
            }
        };
        return (t, None);
    }
    let ExprKind::Call { name, args, .. } = &e.kind else {
        diags.push(invalid(
            e,
            "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
        ));
        return dynamic;
    };
    let name = name.as_str();
    match name {
        "bool" | "string" | "number" => {
            diags.push(invalid(
                e,
                &format!("Primitive type keyword \"{name}\" does not expect arguments."),
            ));
            return dynamic;
        }
        "any" => {
            diags.push(invalid(
                e,
                &format!("Type constraint keyword \"{name}\" does not expect arguments."),
            ));
            return dynamic;
        }
        "list" | "set" | "map" | "object" | "tuple" if args.len() != 1 => {
            diags.push(invalid(e, &constructor_detail(name)));
            return dynamic;
        }
        _ => {}
    }
    match name {
        "list" | "set" | "map" => {
            let (ety, d) = get_type(&args[0], diags);
            let ty = match name {
                "list" => Type::list(ety),
                "set" => Type::set(ety),
                _ => Type::map(ety),
            };
            let defaults = d.map(|d| TypeDefaults {
                ty: ty.clone(),
                values: BTreeMap::new(),
                children: BTreeMap::from([(String::new(), d)]),
            });
            (ty, defaults)
        }
        "object" => object(&args[0], diags),
        "tuple" => {
            let ExprKind::Tuple(items) = &args[0].kind else {
                diags.push(invalid(
                    &args[0],
                    "Tuple type constructor requires a list of element types.",
                ));
                return dynamic;
            };
            let mut types = Vec::with_capacity(items.len());
            let mut children = BTreeMap::new();
            for (i, item) in items.iter().enumerate() {
                let (t, d) = get_type(item, diags);
                types.push(t);
                if let Some(d) = d {
                    children.insert(i.to_string(), d);
                }
            }
            let ty = Type::Tuple(types);
            let defaults = structured(&ty, BTreeMap::new(), children);
            (ty, defaults)
        }
        "optional" => {
            diags.push(invalid(
                e,
                "Keyword \"optional\" is valid only as a modifier for object type attributes.",
            ));
            dynamic
        }
        other => {
            diags.push(invalid(
                e,
                &format!("Keyword \"{other}\" is not a valid type constructor."),
            ));
            dynamic
        }
    }
}

fn structured(
    ty: &Type,
    values: BTreeMap<String, Value>,
    children: BTreeMap<String, TypeDefaults>,
) -> Option<TypeDefaults> {
    (!values.is_empty() || !children.is_empty()).then(|| TypeDefaults {
        ty: ty.clone(),
        values,
        children,
    })
}

fn object(a: &Expr, diags: &mut Diagnostics) -> (Type, Option<TypeDefaults>) {
    let ExprKind::Object(items) = &a.kind else {
        diags.push(invalid(
            a,
            "Object type constructor requires a map whose keys are attribute names and whose values are the corresponding attribute types.",
        ));
        return (Type::Dynamic, None);
    };
    let mut attrs = BTreeMap::new();
    let mut optional = BTreeSet::new();
    let mut values = BTreeMap::new();
    let mut children = BTreeMap::new();
    for (k, v) in items {
        let name = match &k.kind {
            ExprKind::Literal(Value::String(s)) => s.clone(),
            ExprKind::Variable(s) => s.clone(),
            _ => {
                diags.push(invalid(
                    k,
                    "Object constructor map keys must be attribute names.",
                ));
                continue;
            }
        };
        if attrs.contains_key(&name) {
            diags.push(invalid(k, "Object constructor map keys must be unique."));
            continue;
        }
        let mut aty_expr = v;
        let mut default = None;
        if let ExprKind::Call { name: f, args, .. } = &v.kind
            && f == "optional"
        {
            match args.as_slice() {
                [] => {
                    diags.push(invalid(
                        v,
                        "Optional attribute modifier requires the attribute type as its argument.",
                    ));
                    continue;
                }
                [t] => aty_expr = t,
                [t, d] => {
                    aty_expr = t;
                    // Defaults are constants: no variables in scope.
                    match evaluate(d, &EmptyScope) {
                        Ok(value) => default = Some((value, d)),
                        Err(d) => diags.extend(d),
                    }
                }
                [t, ..] => {
                    aty_expr = t;
                    diags.push(invalid(
                        v,
                        "Optional attribute modifier expects at most two arguments: the attribute type, and a default value.",
                    ));
                }
            }
            optional.insert(name.clone());
        }
        let (aty, d) = get_type(aty_expr, diags);
        if let Some((value, expr)) = default {
            match convert(value, &aty) {
                Ok(value) => {
                    values.insert(name.clone(), value);
                }
                Err(e) => diags.push(
                    Diagnostic::error(
                        "Invalid default value for optional attribute",
                        format!("This default value is not compatible with the attribute's type constraint: {e}."),
                    )
                    .at(expr.range.clone()),
                ),
            }
        }
        if let Some(d) = d {
            children.insert(name.clone(), d);
        }
        attrs.insert(name, aty);
    }
    let ty = Type::Object { attrs, optional };
    let defaults = structured(&ty, values, children);
    (ty, defaults)
}
