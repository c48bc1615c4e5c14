//! cty types: what the provider schemas say a value must be.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Type {
    Bool,
    Number,
    String,
    /// cty's `DynamicPseudoType`: any type, carried with the value on the wire.
    Dynamic,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>),
    Object {
        attrs: BTreeMap<String, Type>,
        /// Attributes that may be omitted (type constraints with `optional()`).
        optional: BTreeSet<String>,
    },
    Tuple(Vec<Type>),
}

impl Type {
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }

    pub fn set(t: Type) -> Type {
        Type::Set(Box::new(t))
    }

    pub fn map(t: Type) -> Type {
        Type::Map(Box::new(t))
    }

    pub fn object<K: Into<String>>(attrs: impl IntoIterator<Item = (K, Type)>) -> Type {
        Type::Object {
            attrs: attrs.into_iter().map(|(k, t)| (k.into(), t)).collect(),
            optional: BTreeSet::new(),
        }
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Bool | Type::Number | Type::String)
    }

    /// The element type of a collection type.
    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => Some(t),
            _ => None,
        }
    }
}

impl Type {
    /// How cty names the type in messages (its `FriendlyName`): `string`,
    /// `list of string`, `object`, `tuple`, `dynamic`.
    pub fn friendly_name(&self) -> String {
        match self {
            Type::String => "string".into(),
            Type::Number => "number".into(),
            Type::Bool => "bool".into(),
            Type::Dynamic => "dynamic".into(),
            Type::List(e) => format!("list of {}", e.friendly_name()),
            Type::Set(e) => format!("set of {}", e.friendly_name()),
            Type::Map(e) => format!("map of {}", e.friendly_name()),
            Type::Tuple(_) => "tuple".into(),
            Type::Object { .. } => "object".into(),
        }
    }

    /// The type as Terraform's console prints it (`type(x)`): collections
    /// of primitives on one line (`list(string)`), anything deeper one
    /// member per line, indented four spaces a level.
    pub fn console_text(&self) -> String {
        let mut out = String::new();
        self.console_into(&mut out, 0);
        out
    }

    fn console_into(&self, out: &mut String, depth: usize) {
        let pad = |n: usize| "    ".repeat(n);
        match self {
            Type::Bool => out.push_str("bool"),
            Type::Number => out.push_str("number"),
            Type::String => out.push_str("string"),
            Type::Dynamic => out.push_str("dynamic"),
            Type::List(e) | Type::Set(e) | Type::Map(e) => {
                let kind = match self {
                    Type::List(_) => "list",
                    Type::Set(_) => "set",
                    _ => "map",
                };
                out.push_str(kind);
                out.push('(');
                // One line while the element fits on one (`map(list(string))`).
                let mut inner = String::new();
                e.console_into(&mut inner, depth + 1);
                if inner.contains('\n') {
                    out.push('\n');
                    out.push_str(&pad(depth + 1));
                    out.push_str(&inner);
                    out.push_str(",\n");
                    out.push_str(&pad(depth));
                } else {
                    out.push_str(&inner);
                }
                out.push(')');
            }
            Type::Tuple(ts) if ts.is_empty() => out.push_str("tuple([])"),
            Type::Tuple(ts) => {
                out.push_str("tuple([\n");
                for t in ts {
                    out.push_str(&pad(depth + 1));
                    t.console_into(out, depth + 1);
                    out.push_str(",\n");
                }
                out.push_str(&pad(depth));
                out.push_str("])");
            }
            Type::Object { attrs, .. } if attrs.is_empty() => out.push_str("object({})"),
            Type::Object { attrs, .. } => {
                out.push_str("object({\n");
                for (k, t) in attrs {
                    out.push_str(&pad(depth + 1));
                    out.push_str(k);
                    out.push_str(": ");
                    t.console_into(out, depth + 1);
                    out.push_str(",\n");
                }
                out.push_str(&pad(depth));
                out.push_str("})");
            }
        }
    }
}

impl fmt::Display for Type {
    /// Renders the type the way HCL type constraints are written (`map(string)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => write!(f, "bool"),
            Type::Number => write!(f, "number"),
            Type::String => write!(f, "string"),
            Type::Dynamic => write!(f, "any"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Set(t) => write!(f, "set({t})"),
            Type::Map(t) => write!(f, "map({t})"),
            Type::Object { attrs, .. } => {
                write!(f, "object({{")?;
                for (i, (k, t)) in attrs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k}={t}")?;
                }
                write!(f, "}})")
            }
            Type::Tuple(ts) => {
                write!(f, "tuple([")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, "])")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_text_is_terraforms() {
        assert_eq!(Type::list(Type::String).console_text(), "list(string)");
        assert_eq!(Type::set(Type::Dynamic).console_text(), "set(dynamic)");
        assert_eq!(Type::Tuple(vec![]).console_text(), "tuple([])");
        let nested = Type::object([
            ("a", Type::Number),
            (
                "b",
                Type::Tuple(vec![Type::Number, Type::object([("c", Type::String)])]),
            ),
        ]);
        assert_eq!(
            nested.console_text(),
            "object({\n    a: number,\n    b: tuple([\n        number,\n        object({\n            c: string,\n        }),\n    ]),\n})"
        );
        assert_eq!(
            Type::list(Type::object([("a", Type::Number)])).console_text(),
            "list(\n    object({\n        a: number,\n    }),\n)"
        );
    }
}
