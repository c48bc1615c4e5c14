//! The attributes of an object value (and the elements of a map value):
//! a map from name to value, kept as one sorted vector.
//!
//! Objects are small and many: a resource instance's object is in the plan,
//! in the state and among the run's values, and an apply of 100,000
//! instances holds 300,000 of them. A `BTreeMap` node has room for eleven
//! entries whatever it holds, about 640 bytes for an object of four
//! attributes, where a vector of four entries takes 224. Lookups are binary
//! searches; building from an iterator sorts once, so large maps (a
//! `for_each` over thousands of keys) cost no more than in a tree.
//!
//! The storage is `litemap` (ICU4X's sorted-vector map); this wrapper gives
//! it the part of `BTreeMap`'s interface the code base uses, prints as a map
//! and (de)serialises as one, so every encoding is unchanged.
//!
//! The entries are shared: cloning a map (an object copied from the state
//! into the run's values, the plan's `before`, the refresh record) copies
//! a pointer, and changing a map copies its entries only while another
//! value shares them. At a million instances a re-plan held six copies of
//! each object; most are clones of one another. An empty map without a
//! type allocates nothing.
//!
//! Like [`super::ValueList`], a map may carry its type: an object type (the
//! types of its attributes, null ones included) or a map type (its element
//! type, which an empty map cannot show). Without one the value is an object
//! whose attribute types follow from the attributes. Equality ignores the
//! type. Changing an object's set of attributes forgets its type; a map's
//! element type is kept.

use super::Value;
use crate::name::Name;
use crate::types::Type;
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Shared entries, and a typed map's type beside them in a box: a typed
/// copy of a shared object (what a reference to a resource sees) shares
/// its entries too.
#[derive(Clone)]
pub struct ValueMap(Repr);

type Entries = LiteMap<Name, Value>;

#[derive(Clone, Default)]
enum Repr {
    /// No entries and no type.
    #[default]
    Empty,
    Plain(Arc<Entries>),
    /// The type is shared too: every instance of a resource carries the
    /// one its schema implies.
    Typed(Box<(Arc<Entries>, Arc<Type>)>),
}

/// What an empty map without a type reads as.
static NO_ENTRIES: Entries = LiteMap::new_vec();

impl Default for ValueMap {
    fn default() -> ValueMap {
        ValueMap::new()
    }
}

impl PartialEq for ValueMap {
    fn eq(&self, other: &ValueMap) -> bool {
        match (self.shared(), other.shared()) {
            // The same entries (a clone of the other).
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.e() == other.e(),
        }
    }
}

/// Without a type: a map, as before values carried types. With one: the
/// pair `[T, {...}]`, which no map can be mistaken for.
impl Serialize for ValueMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        match &self.0 {
            Repr::Empty => NO_ENTRIES.serialize(s),
            Repr::Plain(entries) => entries.serialize(s),
            Repr::Typed(b) => {
                let mut t = s.serialize_tuple(2)?;
                t.serialize_element(&super::type_code::Short(&b.1))?;
                t.serialize_element(&*b.0)?;
                t.end()
            }
        }
    }
}

/// Read as a map; the length an encoding announces is not trusted for the
/// room set aside (litemap's own reader reserves it all, so a corrupted
/// object claiming four billion entries aborted the process).
impl<'de> Deserialize<'de> for ValueMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ValueMap, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = ValueMap;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of values")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<ValueMap, A::Error> {
                let room = access.size_hint().unwrap_or(0).min(4096);
                let mut entries = Vec::with_capacity(room);
                while let Some(entry) = access.next_entry::<Name, Value>()? {
                    entries.push(entry);
                }
                Ok(entries.into_iter().collect())
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<ValueMap, A::Error> {
                let bad = || serde::de::Error::custom("a typed map is the pair [type, entries]");
                let super::type_code::Read(ty) = access.next_element()?.ok_or_else(bad)?;
                let mut m: ValueMap = access.next_element()?.ok_or_else(bad)?;
                m.set_ty(Some(ty));
                Ok(m)
            }
        }
        d.deserialize_any(Entries)
    }
}

impl ValueMap {
    pub const fn new() -> ValueMap {
        ValueMap(Repr::Empty)
    }

    pub fn with_capacity(n: usize) -> ValueMap {
        match n {
            0 => ValueMap::new(),
            n => ValueMap(Repr::Plain(Arc::new(LiteMap::with_capacity(n)))),
        }
    }

    /// A map of `entries` (sorted and unique), untyped.
    fn plain(entries: Entries) -> ValueMap {
        match entries.is_empty() {
            true => ValueMap::new(),
            false => ValueMap(Repr::Plain(Arc::new(entries))),
        }
    }

    /// Whether both hold the very same entries (one is a clone of the
    /// other, or of a third).
    pub fn shares_entries(&self, other: &ValueMap) -> bool {
        match (self.shared(), other.shared()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The entries, when there are any to share.
    fn shared(&self) -> Option<&Arc<Entries>> {
        match &self.0 {
            Repr::Empty => None,
            Repr::Plain(e) => Some(e),
            Repr::Typed(b) => Some(&b.0),
        }
    }

    /// A map or object of type `ty` (any other type is dropped).
    pub fn typed(self, ty: Type) -> ValueMap {
        let mut m = self;
        m.set_ty(Some(ty));
        m
    }

    /// A map or object of the shared type `ty` (any other type is
    /// dropped): the instances of a resource share their schema's type.
    pub fn typed_shared(self, ty: Arc<Type>) -> ValueMap {
        let mut m = self;
        m.set_shared_ty(Some(ty));
        m
    }

    /// The value's type, when it was given one.
    pub fn ty(&self) -> Option<&Type> {
        match &self.0 {
            Repr::Empty | Repr::Plain(_) => None,
            Repr::Typed(b) => Some(&b.1),
        }
    }

    /// Gives the value a type (a map or object type), or takes it away.
    pub fn set_ty(&mut self, ty: Option<Type>) {
        self.set_shared_ty(ty.map(Arc::new))
    }

    fn set_shared_ty(&mut self, ty: Option<Arc<Type>>) {
        let entries = match std::mem::take(&mut self.0) {
            Repr::Empty => None,
            Repr::Plain(e) => Some(e),
            Repr::Typed(b) => Some(b.0),
        };
        self.0 = match ty.filter(|t| matches!(**t, Type::Map(_) | Type::Object { .. })) {
            Some(ty) => Repr::Typed(Box::new((
                entries.unwrap_or_else(|| Arc::new(LiteMap::new_vec())),
                ty,
            ))),
            None => match entries {
                Some(e) if !e.is_empty() => Repr::Plain(e),
                _ => Repr::Empty,
            },
        };
    }

    fn e(&self) -> &Entries {
        match &self.0 {
            Repr::Empty => &NO_ENTRIES,
            Repr::Plain(e) => e,
            Repr::Typed(b) => &b.0,
        }
    }

    /// The entries to change: copied first if another value shares them.
    fn e_mut(&mut self) -> &mut Entries {
        if matches!(self.0, Repr::Empty) {
            self.0 = Repr::Plain(Arc::new(LiteMap::new_vec()));
        }
        let shared = match &mut self.0 {
            Repr::Empty => unreachable!("made plain above"),
            Repr::Plain(e) => e,
            Repr::Typed(b) => &mut b.0,
        };
        Arc::make_mut(shared)
    }

    /// An object type that does not name `key` no longer describes the
    /// object once `key` is set.
    fn keep_ty_for(&mut self, key: &str) {
        if let Some(Type::Object { attrs, .. }) = self.ty()
            && !attrs.contains_key(key)
        {
            self.set_ty(None);
        }
    }

    fn forget_object_ty(&mut self) {
        if matches!(self.ty(), Some(Type::Object { .. })) {
            self.set_ty(None);
        }
    }

    pub fn len(&self) -> usize {
        self.e().len()
    }

    pub fn is_empty(&self) -> bool {
        self.e().is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.e().get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.e_mut().get_mut(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.e().contains_key(key)
    }

    /// Sets `key`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<Name>, value: Value) -> Option<Value> {
        let key = key.into();
        self.keep_ty_for(&key);
        // In order (a map built key by key from a sorted source): appended.
        match self.e_mut().try_append(key, value) {
            None => None,
            Some((key, value)) => self.e_mut().insert(key, value),
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.forget_object_ty();
        self.e_mut().remove(key)
    }

    pub fn entry(
        &mut self,
        key: impl Into<Name>,
    ) -> litemap::Entry<'_, Name, Value, Vec<(Name, Value)>> {
        let key = key.into();
        self.keep_ty_for(&key);
        self.e_mut().entry(key)
    }

    /// The entries, in key order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&Name, &Value)> + ExactSizeIterator + Clone {
        self.e().as_slice().iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Name> + ExactSizeIterator + Clone {
        self.e().as_slice().iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.e().as_slice().iter().map(|(_, v)| v)
    }

    /// The entries, sorted by key, without copying them unless another
    /// value shares them.
    pub fn into_entries(self) -> Vec<(Name, Value)> {
        let shared = match self.0 {
            Repr::Empty => return Vec::new(),
            Repr::Plain(e) => e,
            Repr::Typed(b) => b.0,
        };
        Arc::unwrap_or_clone(shared).into_tuple_vec()
    }
}

impl std::fmt::Debug for ValueMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Name>> FromIterator<(K, Value)> for ValueMap {
    /// Sorts once; of entries with the same key the last one is kept, as
    /// `BTreeMap` does.
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> ValueMap {
        ValueMap::plain(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl<K: Into<Name>> Extend<(K, Value)> for ValueMap {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        self.forget_object_ty();
        self.e_mut()
            .extend(iter.into_iter().map(|(k, v)| (k.into(), v)))
    }
}

impl IntoIterator for ValueMap {
    type Item = (Name, Value);
    type IntoIter = std::vec::IntoIter<(Name, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_entries().into_iter()
    }
}

impl<'a> IntoIterator for &'a ValueMap {
    type Item = (&'a Name, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Name, Value)>,
        fn(&'a (Name, Value)) -> (&'a Name, &'a Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.e().as_slice().iter().map(|(k, v)| (k, v))
    }
}

impl<K: Into<Name>> From<BTreeMap<K, Value>> for ValueMap {
    fn from(m: BTreeMap<K, Value>) -> ValueMap {
        // Already sorted and unique.
        ValueMap::plain(LiteMap::from_sorted_store_unchecked(
            m.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        ))
    }
}

impl<K: Into<Name>, const N: usize> From<[(K, Value); N]> for ValueMap {
    fn from(entries: [(K, Value); N]) -> ValueMap {
        entries.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.to_string())
    }

    #[test]
    fn it_keeps_keys_sorted_and_unique_however_it_is_built() {
        let mut m = ValueMap::new();
        for k in ["b", "d", "a", "c", "b"] {
            m.insert(k.to_string(), s(k));
        }
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        let collected: ValueMap = [("z", 1), ("a", 2), ("z", 3)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::int(v)))
            .collect();
        assert_eq!(collected.len(), 2);
        assert_eq!(
            collected.get("z"),
            Some(&Value::int(3)),
            "the last one wins"
        );
        let mut extended = m.clone();
        extended.extend([("0".to_string(), s("0")), ("c".to_string(), s("C"))]);
        assert_eq!(
            extended.keys().collect::<Vec<_>>(),
            ["0", "a", "b", "c", "d"]
        );
        assert_eq!(extended.get("c"), Some(&s("C")));
        assert_eq!(extended.remove("a"), Some(s("a")));
        assert!(!extended.contains_key("a"));
        assert_eq!(extended.len(), 4);
    }

    #[test]
    fn it_encodes_as_a_btreemap_does() {
        let tree: BTreeMap<String, Value> =
            [("id", s("x")), ("name", s("n")), ("a", Value::null())]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
        let flat = ValueMap::from(tree.clone());
        let bytes = rmp_serde::to_vec_named(&flat).unwrap();
        assert_eq!(bytes, rmp_serde::to_vec_named(&tree).unwrap());
        assert_eq!(rmp_serde::from_slice::<ValueMap>(&bytes).unwrap(), flat);
        assert_eq!(
            serde_json::to_string(&flat).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        assert_eq!(format!("{flat:?}"), format!("{tree:?}"));
        // An encoding out of order (another writer) is read sorted.
        let json = r#"{"b": {"Bool": true}, "a": "Null", "b": {"Bool": false}}"#;
        let read: ValueMap = serde_json::from_str(json).unwrap();
        assert_eq!(read.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(read.get("b"), Some(&Value::Bool(false)));
    }

    #[test]
    fn a_clone_shares_its_entries_until_one_of_them_changes() {
        let original: ValueMap = [("id", s("x")), ("name", s("n"))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let copy = original.clone();
        assert!(Arc::ptr_eq(
            original.shared().unwrap(),
            copy.shared().unwrap()
        ));
        assert_eq!(copy, original);
        // A typed copy (a reference's view) shares them too.
        let ty = Arc::new(Type::Object {
            attrs: [
                ("id".to_string(), Type::String),
                ("name".to_string(), Type::String),
            ]
            .into(),
            optional: Default::default(),
        });
        let typed = copy.clone().typed_shared(ty);
        assert!(Arc::ptr_eq(
            original.shared().unwrap(),
            typed.shared().unwrap()
        ));
        assert!(typed.ty().is_some());
        // A change copies: the others keep what they had.
        let mut changed = copy.clone();
        changed.insert("name", s("m"));
        assert_eq!(changed.get("name"), Some(&s("m")));
        assert_eq!(original.get("name"), Some(&s("n")));
        assert_eq!(typed.get("name"), Some(&s("n")));
        assert!(!Arc::ptr_eq(
            original.shared().unwrap(),
            changed.shared().unwrap()
        ));
        assert_ne!(changed, original);
        // Taken apart while shared: a copy of the entries.
        assert_eq!(copy.into_entries().len(), 2);
        assert_eq!(original.len(), 2);
        // Empty: nothing to share, and it reads and encodes as before.
        let empty = ValueMap::new();
        assert!(empty.shared().is_none() && empty.is_empty());
        assert_eq!(
            rmp_serde::to_vec_named(&empty).unwrap(),
            rmp_serde::to_vec_named(&BTreeMap::<String, Value>::new()).unwrap()
        );
        let mut grown = ValueMap::new();
        grown.insert("a", s("a"));
        assert_eq!(grown.len(), 1);
        let mut emptied = grown.clone();
        assert_eq!(emptied.remove("a"), Some(s("a")));
        assert_eq!((grown.len(), emptied.len()), (1, 0));
    }

    #[test]
    fn a_claimed_length_beyond_the_input_is_an_error() {
        // A map of 2^32 - 1 entries, according to its header.
        let bytes = [0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'a', 0xc0];
        assert!(rmp_serde::from_slice::<ValueMap>(&bytes).is_err());
    }
}
