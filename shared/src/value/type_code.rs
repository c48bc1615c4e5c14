//! The short form a type takes inside encoded values (journals, state
//! snapshots, messages between processes).
//!
//! A typed null, unknown, list or map carries its type, and state holds
//! many of them (every unset attribute of every object is a null of its
//! schema's type). Written with the type's derived encoding, a null
//! `string` took 18 bytes of MessagePack (`{"TypedNull": "String"}`) where
//! an untyped null takes 5, and a 40-attribute object with 36 unset
//! attributes grew from 405 to 972 bytes. The short form writes a
//! primitive type as one small integer and a composite one as a sequence
//! led by its kind:
//!
//! | type | short form |
//! | --- | --- |
//! | `bool`, `number`, `string`, `dynamic` | `0`, `1`, `2`, `3` |
//! | `list`, `set` or `map` of `bool`, `number` or `string` | `9` to `17` (`list(bool)` 9, `list(number)` 10, … `map(string)` 17) |
//! | any other `list(T)`, `set(T)`, `map(T)` | `[4, T]`, `[5, T]`, `[6, T]` |
//! | `tuple([T, …])` | `[7, [T, …]]` |
//! | `object({k = T, …})` | `[8, {k: T, …}]`, or `[8, {…}, [optional keys]]` |
//!
//! Reading takes the short form and also the derived one (an integer or a
//! sequence cannot be the derived form, which is a name or a one-entry
//! map), so what earlier versions wrote reads the same.

use crate::types::Type;
use serde::de::{self, IntoDeserializer, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};

const BOOL: u8 = 0;
const NUMBER: u8 = 1;
const STRING: u8 = 2;
const DYNAMIC: u8 = 3;
const LIST: u8 = 4;
const SET: u8 = 5;
const MAP: u8 = 6;
const TUPLE: u8 = 7;
const OBJECT: u8 = 8;
/// The first one-number code of a collection of a primitive type.
const PRIMITIVE_COLLECTIONS: u8 = 9;

/// The primitive's code (0 to 2) when `ty` is `bool`, `number` or `string`.
fn primitive(ty: &Type) -> Option<u8> {
    match ty {
        Type::Bool => Some(BOOL),
        Type::Number => Some(NUMBER),
        Type::String => Some(STRING),
        _ => None,
    }
}

/// A type, written in the short form.
pub(crate) struct Short<'a>(pub &'a Type);

impl Serialize for Short<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, inner) = match self.0 {
            Type::Bool => return s.serialize_u8(BOOL),
            Type::Number => return s.serialize_u8(NUMBER),
            Type::String => return s.serialize_u8(STRING),
            Type::Dynamic => return s.serialize_u8(DYNAMIC),
            Type::List(t) => (LIST, t),
            Type::Set(t) => (SET, t),
            Type::Map(t) => (MAP, t),
            Type::Tuple(items) => {
                let mut seq = s.serialize_seq(Some(2))?;
                seq.serialize_element(&TUPLE)?;
                seq.serialize_element(&ShortItems(items))?;
                return seq.end();
            }
            Type::Object { attrs, optional } => {
                let mut seq = s.serialize_seq(Some(if optional.is_empty() { 2 } else { 3 }))?;
                seq.serialize_element(&OBJECT)?;
                seq.serialize_element(&ShortAttrs(attrs))?;
                if !optional.is_empty() {
                    seq.serialize_element(optional)?;
                }
                return seq.end();
            }
        };
        if let Some(p) = primitive(inner) {
            // Kinds 4, 5, 6 take three codes each from 9 on.
            return s.serialize_u8(PRIMITIVE_COLLECTIONS + (kind - LIST) * 3 + p);
        }
        let mut seq = s.serialize_seq(Some(2))?;
        seq.serialize_element(&kind)?;
        seq.serialize_element(&Short(inner))?;
        seq.end()
    }
}

struct ShortItems<'a>(&'a [Type]);

impl Serialize for ShortItems<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Short))
    }
}

struct ShortAttrs<'a>(&'a BTreeMap<String, Type>);

impl Serialize for ShortAttrs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, t)| (k, Short(t))))
    }
}

/// A type read in either form.
pub(crate) struct Read(pub Type);

impl<'de> Deserialize<'de> for Read {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Read, D::Error> {
        d.deserialize_any(TypeVisitor).map(Read)
    }
}

struct TypeVisitor;

impl<'de> Visitor<'de> for TypeVisitor {
    type Value = Type;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a type")
    }

    fn visit_u64<E: de::Error>(self, code: u64) -> Result<Type, E> {
        let prim = |p: u64| [Type::Bool, Type::Number, Type::String][p as usize].clone();
        let first = PRIMITIVE_COLLECTIONS as u64;
        Ok(match code {
            0..=2 => prim(code),
            c if c == DYNAMIC as u64 => Type::Dynamic,
            c if (first..first + 9).contains(&c) => {
                let elem = prim((c - first) % 3);
                match (c - first) / 3 {
                    0 => Type::list(elem),
                    1 => Type::set(elem),
                    _ => Type::map(elem),
                }
            }
            other => return Err(E::custom(format!("{other} is not a type's code"))),
        })
    }

    fn visit_i64<E: de::Error>(self, code: i64) -> Result<Type, E> {
        match u64::try_from(code) {
            Ok(c) => self.visit_u64(c),
            Err(_) => Err(E::custom(format!("{code} is not a type's code"))),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Type, A::Error> {
        let missing = || de::Error::custom("a composite type's short form is [kind, …]");
        let kind: u8 = seq.next_element()?.ok_or_else(missing)?;
        let ty = match kind {
            LIST | SET | MAP => {
                let Read(inner) = seq.next_element()?.ok_or_else(missing)?;
                match kind {
                    LIST => Type::list(inner),
                    SET => Type::set(inner),
                    _ => Type::map(inner),
                }
            }
            TUPLE => {
                let items: Vec<Read> = seq.next_element()?.ok_or_else(missing)?;
                Type::Tuple(items.into_iter().map(|Read(t)| t).collect())
            }
            OBJECT => {
                let attrs: BTreeMap<String, Read> = seq.next_element()?.ok_or_else(missing)?;
                let optional: BTreeSet<String> = seq.next_element()?.unwrap_or_default();
                Type::Object {
                    attrs: attrs.into_iter().map(|(k, Read(t))| (k, t)).collect(),
                    optional,
                }
            }
            other => return Err(de::Error::custom(format!("{other} is not a type's kind"))),
        };
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a type's short form has extra entries"));
        }
        Ok(ty)
    }

    // The derived form: a unit variant's name, or a one-entry map.
    fn visit_str<E: de::Error>(self, name: &str) -> Result<Type, E> {
        Type::deserialize(name.into_deserializer())
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Type, A::Error> {
        Type::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Type> {
        vec![
            Type::Bool,
            Type::Number,
            Type::String,
            Type::Dynamic,
            Type::list(Type::String),
            Type::list(Type::Bool),
            Type::set(Type::Number),
            Type::map(Type::String),
            Type::list(Type::Dynamic),
            Type::set(Type::map(Type::Number)),
            Type::Tuple(vec![Type::String, Type::list(Type::Bool)]),
            Type::Tuple(vec![]),
            Type::object([("a", Type::String), ("b", Type::set(Type::Dynamic))]),
            Type::Object {
                attrs: [("x".to_string(), Type::Number)].into(),
                optional: ["x".to_string()].into(),
            },
        ]
    }

    #[test]
    fn every_type_reads_back_from_its_short_form_in_each_encoding() {
        for ty in samples() {
            let named = rmp_serde::to_vec_named(&Short(&ty)).unwrap();
            let Read(back) = rmp_serde::from_slice(&named).unwrap();
            assert_eq!(back, ty);
            let plain = rmp_serde::to_vec(&Short(&ty)).unwrap();
            let Read(back) = rmp_serde::from_slice(&plain).unwrap();
            assert_eq!(back, ty);
            let json = serde_json::to_string(&Short(&ty)).unwrap();
            let Read(back) = serde_json::from_str(&json).unwrap();
            assert_eq!(back, ty, "{json}");
        }
    }

    #[test]
    fn the_derived_form_earlier_versions_wrote_still_reads() {
        for ty in samples() {
            for bytes in [
                rmp_serde::to_vec_named(&ty).unwrap(),
                rmp_serde::to_vec(&ty).unwrap(),
            ] {
                let Read(back) = rmp_serde::from_slice(&bytes).unwrap();
                assert_eq!(back, ty);
            }
            let Read(back) = serde_json::from_str(&serde_json::to_string(&ty).unwrap()).unwrap();
            assert_eq!(back, ty);
        }
    }

    #[test]
    fn primitives_and_their_collections_take_one_byte() {
        let len = |ty: &Type| rmp_serde::to_vec_named(&Short(ty)).unwrap().len();
        assert_eq!(len(&Type::String), 1);
        assert_eq!(len(&Type::list(Type::String)), 1);
        assert_eq!(len(&Type::map(Type::Bool)), 1);
        assert_eq!(len(&Type::list(Type::list(Type::String))), 3);
        // Each of the nine codes names its own type.
        let codes: std::collections::BTreeSet<Vec<u8>> = [Type::list, Type::set, Type::map]
            .iter()
            .flat_map(|k| [Type::Bool, Type::Number, Type::String].map(k))
            .map(|t| rmp_serde::to_vec(&Short(&t)).unwrap())
            .collect();
        assert_eq!(codes.len(), 9);
        // The derived form for comparison: the name alone is 7 bytes.
        assert_eq!(rmp_serde::to_vec_named(&Type::String).unwrap().len(), 7);
    }

    #[test]
    fn codes_that_name_no_type_are_refused() {
        for bad in [
            rmp_serde::to_vec(&18u8).unwrap(),
            rmp_serde::to_vec(&(42u8, 2u8)).unwrap(),
            rmp_serde::to_vec(&(4u8,)).unwrap(),
            rmp_serde::to_vec(&(4u8, 2u8, 2u8)).unwrap(),
        ] {
            assert!(rmp_serde::from_slice::<Read>(&bad).is_err(), "{bad:?}");
        }
    }
}
