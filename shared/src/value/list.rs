//! The items of a sequence value (a cty tuple, list or set), with the
//! sequence's type when it has one.
//!
//! A sequence built by the language (`[a, b]`, a `for` expression) is a
//! tuple whose type follows from its items, so it carries no type. A
//! conversion to a type constraint (`list(string)`, `toset(...)`), a function
//! whose result Terraform types (`split`, `keys`, `regex`) or a decoder
//! reading a schema gives the sequence its type; the type says what its
//! items are even where they cannot (an empty `list(string)`, a `null`
//! element of `list(number)`).
//!
//! The type is information, not identity: two sequences with the same
//! items are equal whatever their types, as they were before values carried
//! types, so a plan never shows a change that is only a type's name.
//!
//! A mutable borrow of a tuple's items forgets the tuple's type (its length
//! may change); a list's or set's element type is kept, since our code only
//! stores elements of that type into it.

use super::Value;
use crate::types::Type;
use serde::{Deserialize, Serialize};
use std::ops::{Deref, DerefMut};

/// Untyped sequences (most of them) keep the items inline; a typed one
/// boxes items and type together, so a `ValueList` is no bigger than a
/// vector and a [`Value`] stays 32 bytes.
#[derive(Clone)]
pub struct ValueList(Repr);

#[derive(Clone)]
enum Repr {
    Plain(Vec<Value>),
    Typed(Box<(Vec<Value>, Type)>),
}

impl Default for ValueList {
    fn default() -> ValueList {
        ValueList::new()
    }
}

fn sequence_type(ty: Type) -> Option<Type> {
    matches!(ty, Type::List(_) | Type::Set(_) | Type::Tuple(_)).then_some(ty)
}

impl ValueList {
    pub const fn new() -> ValueList {
        ValueList(Repr::Plain(Vec::new()))
    }

    /// A sequence of type `ty` (a list, set or tuple type; any other type
    /// is dropped and the sequence is a tuple of its items).
    pub fn typed(items: Vec<Value>, ty: Type) -> ValueList {
        match sequence_type(ty) {
            Some(ty) => ValueList(Repr::Typed(Box::new((items, ty)))),
            None => ValueList(Repr::Plain(items)),
        }
    }

    /// The sequence's type, when it was given one.
    pub fn ty(&self) -> Option<&Type> {
        match &self.0 {
            Repr::Plain(_) => None,
            Repr::Typed(b) => Some(&b.1),
        }
    }

    /// Gives the sequence a type, or takes it away (`None`).
    pub fn set_ty(&mut self, ty: Option<Type>) {
        let items = std::mem::take(self).into_vec();
        *self = match ty {
            Some(ty) => ValueList::typed(items, ty),
            None => ValueList::from(items),
        };
    }

    pub fn into_vec(self) -> Vec<Value> {
        self.into_parts().0
    }

    /// The items and the type, apart.
    pub fn into_parts(self) -> (Vec<Value>, Option<Type>) {
        match self.0 {
            Repr::Plain(items) => (items, None),
            Repr::Typed(b) => {
                let (items, ty) = *b;
                (items, Some(ty))
            }
        }
    }
}

impl Deref for ValueList {
    type Target = Vec<Value>;

    fn deref(&self) -> &Vec<Value> {
        match &self.0 {
            Repr::Plain(items) => items,
            Repr::Typed(b) => &b.0,
        }
    }
}

impl DerefMut for ValueList {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        if matches!(self.ty(), Some(Type::Tuple(_))) {
            self.set_ty(None);
        }
        match &mut self.0 {
            Repr::Plain(items) => items,
            Repr::Typed(b) => &mut b.0,
        }
    }
}

impl PartialEq for ValueList {
    fn eq(&self, other: &ValueList) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for ValueList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<Value>> for ValueList {
    fn from(items: Vec<Value>) -> ValueList {
        ValueList(Repr::Plain(items))
    }
}

impl<const N: usize> From<[Value; N]> for ValueList {
    fn from(items: [Value; N]) -> ValueList {
        ValueList::from(Vec::from(items))
    }
}

impl From<ValueList> for Vec<Value> {
    fn from(l: ValueList) -> Vec<Value> {
        l.into_vec()
    }
}

impl FromIterator<Value> for ValueList {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> ValueList {
        ValueList::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl IntoIterator for ValueList {
    type Item = Value;
    type IntoIter = std::vec::IntoIter<Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a ValueList {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut ValueList {
    type Item = &'a mut Value;
    type IntoIter = std::slice::IterMut<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.deref_mut().iter_mut()
    }
}

/// A sequence without a type encodes as a plain sequence, as before values
/// carried types (journals and snapshots written earlier read the same);
/// one with a type as a two-entry map `{"t": T, "i": [...]}` (T in the
/// short form of `type_code`), which no plain sequence can be mistaken
/// for. `{"type": T, "items": [...]}`, written before the short form, is
/// read too.
impl Serialize for ValueList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.0 {
            Repr::Plain(items) => items.serialize(s),
            Repr::Typed(b) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("t", &super::type_code::Short(&b.1))?;
                m.serialize_entry("i", &b.0)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ValueList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ValueList, D::Error> {
        struct Items;
        impl<'de> serde::de::Visitor<'de> for Items {
            type Value = ValueList;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of values")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<ValueList, A::Error> {
                // The announced length is not trusted for the room set aside.
                let room = access.size_hint().unwrap_or(0).min(4096);
                let mut items = Vec::with_capacity(room);
                while let Some(v) = access.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(ValueList::from(items))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<ValueList, A::Error> {
                let mut ty: Option<Type> = None;
                let mut items: Option<Vec<Value>> = None;
                while let Some(key) = access.next_key::<String>()? {
                    match key.as_str() {
                        "t" | "type" => ty = Some(access.next_value::<super::type_code::Read>()?.0),
                        "i" | "items" => items = Some(access.next_value::<ValueList>()?.into_vec()),
                        other => {
                            return Err(serde::de::Error::unknown_field(other, &["t", "i"]));
                        }
                    }
                }
                let items = items.ok_or_else(|| serde::de::Error::missing_field("items"))?;
                let ty = ty.ok_or_else(|| serde::de::Error::missing_field("type"))?;
                Ok(ValueList::typed(items, ty))
            }
        }
        d.deserialize_any(Items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untyped_sequence_encodes_as_before_and_a_typed_one_keeps_its_type() {
        let items = vec![Value::string("a"), Value::null()];
        let plain = ValueList::from(items.clone());
        let bytes = rmp_serde::to_vec_named(&plain).unwrap();
        assert_eq!(bytes, rmp_serde::to_vec_named(&items).unwrap());
        let back: ValueList = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(back.ty(), None);

        let typed = ValueList::typed(items.clone(), Type::list(Type::String));
        for bytes in [
            rmp_serde::to_vec_named(&typed).unwrap(),
            rmp_serde::to_vec(&typed).unwrap(),
        ] {
            let back: ValueList = rmp_serde::from_slice(&bytes).unwrap();
            assert_eq!(back.ty(), Some(&Type::list(Type::String)));
            assert_eq!(*back, items);
        }
        let json = serde_json::to_string(&typed).unwrap();
        let back: ValueList = serde_json::from_str(&json).unwrap();
        assert_eq!(back.ty(), Some(&Type::list(Type::String)));
    }

    #[test]
    fn a_typed_sequence_written_before_the_short_type_form_still_reads() {
        #[derive(serde::Serialize)]
        struct Before {
            r#type: Type,
            items: Vec<Value>,
        }
        let before = Before {
            r#type: Type::set(Type::Number),
            items: vec![Value::int(1)],
        };
        let back: ValueList =
            rmp_serde::from_slice(&rmp_serde::to_vec_named(&before).unwrap()).unwrap();
        assert_eq!(back.ty(), Some(&Type::set(Type::Number)));
        assert_eq!(*back, [Value::int(1)]);
    }

    #[test]
    fn equality_ignores_the_type_and_a_tuple_forgets_its_type_when_changed() {
        let a = ValueList::typed(vec![Value::int(1)], Type::list(Type::Number));
        let b = ValueList::from(vec![Value::int(1)]);
        assert_eq!(a, b);
        let mut t = ValueList::typed(vec![Value::int(1)], Type::Tuple(vec![Type::Number]));
        t.push(Value::Bool(true));
        assert_eq!(t.ty(), None);
        let mut l = a.clone();
        l.push(Value::int(2));
        assert_eq!(l.ty(), Some(&Type::list(Type::Number)));
        assert_eq!(ValueList::typed(vec![], Type::String).ty(), None);
    }
}
