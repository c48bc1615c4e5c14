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
        // The most common types share one allocation each: primitive
        // nulls (a schema's unset string attributes) and collections of a
        // primitive (unset `tags`), which every instance of a resource has.
        // Without this, each decoded object allocated its collection
        // nulls' types anew.
        static SHARED: LazyLock<[Arc<Type>; 12]> = LazyLock::new(|| {
            let p = [Type::Bool, Type::Number, Type::String];
            let mut all = p.clone().map(Arc::new).to_vec();
            for kind in [Type::list, Type::set, Type::map] {
                all.extend(p.clone().map(|e| Arc::new(kind(e))));
            }
            all.try_into().expect("twelve types")
        });
        let primitive = |t: &Type| match t {
            Type::Bool => Some(0),
            Type::Number => Some(1),
            Type::String => Some(2),
            _ => None,
        };
        let shared = match &ty {
            Type::Dynamic => return TypeTag::DYNAMIC,
            t => primitive(t).or_else(|| match t {
                Type::List(e) => primitive(e).map(|i| 3 + i),
                Type::Set(e) => primitive(e).map(|i| 6 + i),
                Type::Map(e) => primitive(e).map(|i| 9 + i),
                _ => None,
            }),
        };
        match shared {
            Some(i) => TypeTag(Some(SHARED[i].clone())),
            None => TypeTag(Some(Arc::new(ty))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_types_share_one_allocation_and_keep_their_meaning() {
        for ty in [
            Type::String,
            Type::list(Type::String),
            Type::set(Type::Number),
            Type::map(Type::Bool),
        ] {
            let (a, b) = (TypeTag::of(ty.clone()), TypeTag::of(ty.clone()));
            assert_eq!(a.get(), Some(&ty));
            assert!(std::ptr::eq(a.get().unwrap(), b.get().unwrap()), "{ty:?}");
        }
        let nested = Type::list(Type::list(Type::String));
        assert_eq!(TypeTag::of(nested.clone()).get(), Some(&nested));
        assert!(TypeTag::of(Type::Dynamic).is_dynamic());
    }
}
