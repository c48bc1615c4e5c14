//! Names shared instead of copied: a resource's type and name and a
//! provider's source address are the same few strings in every one of a
//! run's instance addresses. As `String`s, a million instances held a
//! million copies of each, in the state, the plan, the record of reads and
//! the walks' maps (about 300 bytes an instance, heap and inline). A
//! [`Name`] is a pointer to one shared copy: cloning it copies the pointer,
//! and a name read from a snapshot or a message is looked up among the
//! names the same thread made last, so decoding a million addresses makes
//! a few strings, not millions.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string shared by every copy. Compares, orders, hashes and
/// encodes as the text it holds (a `String` in its place encodes the same).
#[derive(Clone)]
pub struct Name(Arc<str>);

/// How many names each thread keeps at hand to share; past it, the table
/// starts again (names already made stay valid, only less is shared).
const KEPT: usize = 4096;

thread_local! {
    static RECENT: RefCell<HashSet<Arc<str>>> = RefCell::new(HashSet::new());
}

impl Name {
    /// The name `text`, sharing the copy this thread made last, if any.
    pub fn new(text: &str) -> Name {
        RECENT.with(|recent| {
            let mut recent = recent.borrow_mut();
            if let Some(kept) = recent.get(text) {
                return Name(kept.clone());
            }
            if recent.len() >= KEPT {
                recent.clear();
            }
            let made: Arc<str> = Arc::from(text);
            recent.insert(made.clone());
            Name(made)
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the very same copy.
    pub fn shares(&self, other: &Name) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for Name {
    fn default() -> Name {
        Name::new("")
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// As `str` hashes, so a map keyed by names can be searched with a `&str`.
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.0).hash(state)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

/// As `str` prints: width, fill and alignment apply (`{name:<8}`).
impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Name {
        Name::new(text)
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Name {
        Name::new(text)
    }
}

impl From<String> for Name {
    fn from(text: String) -> Name {
        Name::new(&text)
    }
}

impl From<&Name> for Name {
    fn from(name: &Name) -> Name {
        name.clone()
    }
}

impl From<&Name> for String {
    fn from(name: &Name) -> String {
        name.0.to_string()
    }
}

impl From<Name> for String {
    fn from(name: Name) -> String {
        name.0.to_string()
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Name, E> {
                Ok(Name::new(v))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Name, E> {
                std::str::from_utf8(v)
                    .map(Name::new)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Bytes(v), &self))
            }
        }
        d.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::Name;
    use std::collections::{BTreeMap, HashMap};

    #[test]
    fn a_name_prints_padded_as_a_str_does() {
        let n = Name::new("id");
        assert_eq!(format!("[{n:<4}]"), "[id  ]");
        assert_eq!(format!("[{n:>4}]"), "[  id]");
        assert_eq!(format!("{n}"), "id");
    }

    #[test]
    fn names_made_or_decoded_on_one_thread_share_one_copy() {
        let a = Name::new("sim_object");
        let b = Name::from(String::from("sim_object"));
        assert!(a.shares(&b));
        let encoded = rmp_serde::to_vec(&vec![a.clone(), a.clone()]).unwrap();
        let decoded: Vec<Name> = rmp_serde::from_slice(&encoded).unwrap();
        assert!(decoded[0].shares(&a) && decoded[1].shares(&a));
        // Encoded as a string is: either reads the other.
        assert_eq!(
            encoded,
            rmp_serde::to_vec(&vec!["sim_object", "sim_object"]).unwrap()
        );
        let other = std::thread::spawn(|| Name::new("sim_object"))
            .join()
            .unwrap();
        assert_eq!(other, a);
    }

    #[test]
    fn a_name_behaves_as_its_text() {
        let mut names: Vec<Name> = ["b", "a", "c"].into_iter().map(Name::from).collect();
        names.sort();
        assert_eq!(names, ["a", "b", "c"].map(Name::from));
        let (text, owned): (&str, String) = ("a", "a".into());
        assert!(names[0] == text);
        assert!(text == names[0]);
        assert!(names[0] == owned);
        assert!(owned == names[0]);
        let by_name: HashMap<Name, u8> = [(Name::new("x"), 1)].into();
        assert_eq!(by_name.get("x"), Some(&1));
        let ordered: BTreeMap<Name, u8> = [(Name::new("x"), 1)].into();
        assert_eq!(ordered.get("x"), Some(&1));
        assert_eq!(format!("{} {:?}", names[1], names[1]), "b \"b\"");
        assert_eq!(serde_json::to_string(&names[2]).unwrap(), "\"c\"");
        let back: Name = serde_json::from_str("\"c\"").unwrap();
        assert_eq!(back, names[2]);
    }

    #[test]
    fn past_the_table_names_still_compare_by_text() {
        let first = Name::new("n-0");
        for i in 0..(super::KEPT + 10) {
            Name::new(&format!("n-{i}"));
        }
        let again = Name::new("n-0");
        assert_eq!(first, again);
    }
}
