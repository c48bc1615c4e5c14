//! The type a null or an unknown value carries.
//!
//! cty's nulls and unknowns have types (`tostring(null)` is a null string,
//! a planned attribute an unknown of its schema's type); the literal `null`
//! and an unknown nothing says more of are of the dynamic type. The tag is
//! one pointer (absent for dynamic), so a [`super::Value`] stays 32 bytes,
//! and shared: the nulls of many instances may point at one type.

use crate::types::Type;
use std::sync::{Arc, LazyLock};

/// A null's or an unknown's type; `DYNAMIC` when it has none.
///
/// Tags never make values unequal: cty's nulls are equal whatever their
/// types, and a plan must not show a change that is only a type's name.
#[derive(Clone, Default)]
pub struct TypeTag(Option<Arc<Type>>);

impl TypeTag {
    /// The dynamic type: no type known.
    pub const DYNAMIC: TypeTag = TypeTag(None);

    /// A tag for `ty` (`dynamic` is the empty tag).
    pub fn of(ty: Type) -> TypeTag {
        // Primitive nulls are the most common (a schema's unset string
        // attributes): they share one allocation per type.
        static PRIMITIVES: LazyLock<[Arc<Type>; 3]> = LazyLock::new(|| {
            [
                Arc::new(Type::Bool),
                Arc::new(Type::Number),
                Arc::new(Type::String),
            ]
        });
        match ty {
            Type::Dynamic => TypeTag::DYNAMIC,
            Type::Bool => TypeTag(Some(PRIMITIVES[0].clone())),
            Type::Number => TypeTag(Some(PRIMITIVES[1].clone())),
            Type::String => TypeTag(Some(PRIMITIVES[2].clone())),
            ty => TypeTag(Some(Arc::new(ty))),
        }
    }

    /// A tag pointing at a shared type.
    pub fn shared(ty: Arc<Type>) -> TypeTag {
        match *ty {
            Type::Dynamic => TypeTag::DYNAMIC,
            _ => TypeTag(Some(ty)),
        }
    }

    /// The type, unless it is dynamic.
    pub fn get(&self) -> Option<&Type> {
        self.0.as_deref()
    }

    /// The type (`Type::Dynamic` for the empty tag).
    pub fn ty(&self) -> Type {
        self.get().cloned().unwrap_or(Type::Dynamic)
    }

    pub fn is_dynamic(&self) -> bool {
        self.0.is_none()
    }
}

impl PartialEq for TypeTag {
    fn eq(&self, _: &TypeTag) -> bool {
        true
    }
}

impl std::fmt::Debug for TypeTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.get() {
            Some(t) => write!(f, "{t}"),
            None => f.write_str("dynamic"),
        }
    }
}
