//! Dynamic values as the evaluator, planner and state see them.
//!
//! Every value has a type in Terraform's type system ([`Value::ty`]). A
//! primitive's type is its kind. A sequence or an object carries its type
//! when something gave it one (a conversion to a type constraint, a function
//! whose result Terraform types, a schema); otherwise its type follows from
//! its items, as the language's own constructors make tuples and objects.
//! `Null` and `Unknown` carry their type as cty's do (a [`TypeTag`]:
//! `tostring(null)` is a null string, a planned attribute of a schema an
//! unknown of its type); without one they are of the dynamic type, as a
//! literal `null` is. Types are information: equality compares values, not
//! type names (see [`ValueList`]); nulls are equal whatever their types,
//! as in cty.

mod identical;
mod list;
mod map;
mod number;
mod number_ops;
mod serde_impl;
pub mod set_order;
mod type_code;
mod type_tag;

pub use list::ValueList;
pub use map::ValueMap;

pub use number::{BigNumber, MAX_DECIMAL_EXPONENT, Number};
pub use number_ops::DIVISION_DIGITS;
pub use type_tag::TypeTag;

use crate::types::Type;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A dynamic value. `Map` holds both cty objects and cty maps; `List` holds
/// lists, sets and tuples: their carried type tells them apart.
///
/// There is one null and one unknown whatever their type: match them as
/// `Value::Null(_)` / `Value::Unknown(_)`, make them with [`Value::null`],
/// [`Value::null_of`] and the like.
#[derive(Clone, PartialEq)]
pub enum Value {
    /// A null, of the type the tag says (dynamic without one).
    Null(TypeTag),
    /// Not known until apply ("(known after apply)"), of the type the tag
    /// says.
    Unknown(TypeTag),
    Bool(bool),
    Number(Number),
    String(String),
    List(ValueList),
    Map(ValueMap),
}

// Values are many (every attribute of every object of a run): carrying
// types must not make each one bigger.
const _: () = assert!(std::mem::size_of::<Value>() == 32);

/// An untyped null to borrow where a reference is wanted (`unwrap_or(&NULL)`).
pub static NULL: Value = Value::null();

impl Default for Value {
    fn default() -> Value {
        Value::null()
    }
}

impl Value {
    /// A null of the dynamic type (the literal `null`).
    pub const fn null() -> Value {
        Value::Null(TypeTag::DYNAMIC)
    }

    /// An unknown of the dynamic type.
    pub const fn unknown() -> Value {
        Value::Unknown(TypeTag::DYNAMIC)
    }

    /// A null of type `ty` (`tostring(null)` is a null string).
    pub fn null_of(ty: Type) -> Value {
        Value::Null(TypeTag::of(ty))
    }

    /// An unknown of type `ty` (a planned attribute of a schema).
    pub fn unknown_of(ty: Type) -> Value {
        Value::Unknown(TypeTag::of(ty))
    }

    /// A null of a shared type (every null attribute of a resource's
    /// instances may point at one type).
    pub fn null_shared(ty: Arc<Type>) -> Value {
        Value::Null(TypeTag::shared(ty))
    }

    /// An unknown of a shared type.
    pub fn unknown_shared(ty: Arc<Type>) -> Value {
        Value::Unknown(TypeTag::shared(ty))
    }

    /// The same value with the type `ty` when it is a null or an unknown
    /// (which may carry any type); other values are returned as they are.
    pub fn with_null_type(self, ty: &Type) -> Value {
        match self {
            Value::Null(_) => Value::null_of(ty.clone()),
            Value::Unknown(_) => Value::unknown_of(ty.clone()),
            v => v,
        }
    }
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    pub fn int(i: i64) -> Value {
        Value::Number(Number::Int(i))
    }

    /// A sequence whose type follows from its items (a cty tuple unless a
    /// conversion gives it a collection type).
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::List(ValueList::from(items))
    }

    /// A sequence of type `ty` (`list(T)`, `set(T)` or a tuple type).
    pub fn typed_list(items: Vec<Value>, ty: crate::types::Type) -> Value {
        Value::List(ValueList::typed(items, ty))
    }

    /// This value carrying the object type `ty` when it is an untyped
    /// object with exactly `ty`'s attributes; otherwise as it is (an object
    /// from an older schema that lacks some attributes stays untyped rather
    /// than claim attributes it does not have).
    pub fn typed_as_object(self, ty: &std::sync::Arc<crate::types::Type>) -> Value {
        match self {
            Value::Map(m) if m.ty().is_none() => {
                let fits = match &**ty {
                    crate::types::Type::Object { attrs, .. } => {
                        attrs.len() == m.len() && attrs.keys().all(|k| m.contains_key(k))
                    }
                    _ => false,
                };
                Value::Map(if fits { m.typed_shared(ty.clone()) } else { m })
            }
            v => v,
        }
    }

    /// The value's type in Terraform's type system: the type it carries, or
    /// the one its structure gives (tuples, objects); an untyped `Null`
    /// or `Unknown` is dynamic.
    pub fn ty(&self) -> Type {
        match self {
            Value::Null(t) | Value::Unknown(t) => t.ty(),
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(items) => match items.ty() {
                Some(t) => t.clone(),
                None => Type::Tuple(items.iter().map(Value::ty).collect()),
            },
            Value::Map(items) => match items.ty() {
                Some(t @ Type::Object { .. }) => refined(t, self),
                Some(t) => t.clone(),
                None => Type::Object {
                    attrs: items.iter().map(|(k, v)| (k.to_string(), v.ty())).collect(),
                    optional: Default::default(),
                },
            },
        }
    }

    pub fn object<K: Into<String>>(items: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Map(items.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null(_))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    /// True when no unknown appears anywhere inside the value.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(items) => items.iter().all(Value::is_wholly_known),
            Value::Map(items) => items.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&ValueMap> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Attribute of an object value; `Null` when absent or when self is not an object.
    pub fn get_attr(&self, name: &str) -> &Value {
        match self {
            Value::Map(m) => m.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// Short name of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null(_) => "null",
            Value::Unknown(_) => "unknown",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Map(_) => "object",
        }
    }

    /// Walks every value with its path, depth first; used by contract checks
    /// and by the plan renderer.
    pub fn walk<'a>(&'a self, path: &mut Vec<PathStep>, f: &mut dyn FnMut(&[PathStep], &'a Value)) {
        f(path, self);
        match self {
            Value::List(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(PathStep::Index(i as i64));
                    v.walk(path, f);
                    path.pop();
                }
            }
            Value::Map(items) => {
                for (k, v) in items {
                    path.push(PathStep::Key(k.to_string()));
                    v.walk(path, f);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    /// The value at `path`, if present.
    pub fn at_path(&self, path: &[PathStep]) -> Option<&Value> {
        let mut cur = self;
        for step in path {
            cur = match (step, cur) {
                (PathStep::Key(k), Value::Map(m)) => m.get(k)?,
                (PathStep::Index(i), Value::List(l)) => l.get(usize::try_from(*i).ok()?)?,
                (PathStep::Key(k), Value::List(l)) => l.get(k.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }
}

/// An attribute path as providers report it (`requires_replace`,
/// diagnostics, sensitive paths).
pub type AttrPath = Vec<PathStep>;

/// One step of an attribute path (`tags["a"]`, `list[0]`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PathStep {
    /// An object attribute or a map key.
    Key(String),
    Index(i64),
}

/// Renders a path the way Terraform names attributes in messages: `.tags["a"]`.
pub fn path_string(path: &[PathStep]) -> String {
    let mut out = String::new();
    for (i, step) in path.iter().enumerate() {
        match step {
            PathStep::Key(k) if i == 0 => out.push_str(k),
            PathStep::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            PathStep::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// Untyped nulls and unknowns print as before (`Null`), typed ones with
/// their type (`Null(string)`).
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tagged = |f: &mut std::fmt::Formatter<'_>, name: &str, t: &TypeTag| match t.get() {
            None => f.write_str(name),
            Some(ty) => write!(f, "{name}({ty})"),
        };
        match self {
            Value::Null(t) => tagged(f, "Null", t),
            Value::Unknown(t) => tagged(f, "Unknown", t),
            Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Value::Number(n) => f.debug_tuple("Number").field(n).finish(),
            Value::String(s) => f.debug_tuple("String").field(s).finish(),
            Value::List(l) => f.debug_tuple("List").field(l).finish(),
            Value::Map(m) => f.debug_tuple("Map").field(m).finish(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::int(i)
    }
}

/// An object type `ty` carries, with each `dynamic` attribute (a schema's
/// "any type" attribute, `terraform_data`'s `input`) replaced by the type
/// of the value there: in Terraform a value's type is never dynamic unless
/// it is null or unknown.
fn refined(ty: &Type, value: &Value) -> Type {
    match (ty, value) {
        (Type::Dynamic, v) => v.ty(),
        (Type::Object { attrs, optional }, Value::Map(m)) => Type::Object {
            attrs: attrs
                .iter()
                .map(|(k, t)| {
                    let t = match m.get(k) {
                        Some(v) => refined(t, v),
                        None => t.clone(),
                    };
                    (k.clone(), t)
                })
                .collect(),
            optional: optional.clone(),
        },
        (t, _) => t.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_equal_ints() {
        assert_eq!(Value::Number(Number::Float(2.0)), Value::int(2));
        assert_ne!(Value::Number(Number::Float(2.5)), Value::int(2));
    }

    #[test]
    fn known_ness_is_deep() {
        let v = Value::object([("a", Value::tuple(vec![Value::int(1), Value::unknown()]))]);
        assert!(!v.is_wholly_known());
        assert!(Value::object([("a", Value::int(1))]).is_wholly_known());
    }

    #[test]
    fn a_typed_object_keeps_null_attribute_types_and_refines_dynamic_ones() {
        use crate::types::Type;
        let ty = Type::Object {
            attrs: [
                ("id".to_string(), Type::String),
                ("input".to_string(), Type::Dynamic),
                ("tags".to_string(), Type::map(Type::String)),
            ]
            .into(),
            optional: Default::default(),
        };
        let v = Value::object([
            ("id", Value::from("x")),
            ("input", Value::tuple(vec![Value::int(1)])),
            ("tags", Value::null()),
        ]);
        let Value::Map(m) = v.clone() else {
            unreachable!()
        };
        let typed = Value::Map(m.typed_shared(std::sync::Arc::new(ty)));
        assert_eq!(
            typed.ty().console_text(),
            "object({\n    id: string,\n    input: tuple([\n        number,\n    ]),\n    tags: map(string),\n})"
        );
        // Untyped, the null attribute's type is unknown.
        assert!(v.ty().console_text().contains("tags: dynamic"));
    }

    #[test]
    fn nulls_carry_types_without_a_second_null_and_stay_equal() {
        use crate::types::Type;
        let s = Value::null_of(Type::String);
        assert!(s.is_null() && matches!(s, Value::Null(_)));
        assert_eq!(s.ty(), Type::String);
        assert_eq!(Value::null().ty(), Type::Dynamic);
        // cty: nulls are equal whatever their types (`null ==
        // tostring(null)` is true in Terraform 1.11's console).
        assert_eq!(s, Value::null());
        assert_eq!(Value::null_of(Type::Number), s);
        assert_ne!(s, Value::unknown_of(Type::String));
        // Dynamic is no type at all: one representation.
        assert!(matches!(Value::null_of(Type::Dynamic), Value::Null(t) if t.is_dynamic()));
        assert_eq!(format!("{:?}", Value::null()), "Null");
        assert_eq!(format!("{s:?}"), "Null(string)");
        assert_eq!(
            Value::unknown().with_null_type(&Type::Bool).ty(),
            Type::Bool
        );
    }

    #[test]
    fn paths_resolve_and_render() {
        let v = Value::object([("tags", Value::object([("a", Value::from("x"))]))]);
        let p = vec![PathStep::Key("tags".into()), PathStep::Key("a".into())];
        assert_eq!(v.at_path(&p), Some(&Value::from("x")));
        assert_eq!(path_string(&p), "tags.a");
    }
}
