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
