//! Sensitivity marks: which parts of a value are sensitive.
//!
//! Terraform attaches marks to cty values themselves. fleetform keeps
//! [`Value`](crate::value::Value) free of them (values travel to providers, workers, plans and
//! state, and none of those may ever see a mark) and carries the marks beside
//! the value instead: a set of attribute paths into it. The empty path means
//! the whole value is sensitive; `[Key("b")]` means only `value.b` is. The
//! evaluator returns a value together with its marks
//! (`fleetform_lang::eval::evaluate_marked`) and the coordinator keeps marks for
//! variables, locals and resource instances next to their values.

use crate::provider::AttrPath;
use crate::types::Type;
use crate::value::PathStep;
use std::collections::BTreeSet;

/// The sensitive parts of one value, as paths into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks(BTreeSet<AttrPath>);

impl Marks {
    /// Nothing is sensitive.
    pub fn none() -> Marks {
        Marks::default()
    }

    /// The whole value is sensitive.
    pub fn whole() -> Marks {
        Marks(BTreeSet::from([Vec::new()]))
    }

    pub fn from_paths(paths: impl IntoIterator<Item = AttrPath>) -> Marks {
        Marks(paths.into_iter().collect())
    }

    pub fn paths(&self) -> impl Iterator<Item = &AttrPath> {
        self.0.iter()
    }

    pub fn into_paths(self) -> Vec<AttrPath> {
        self.0.into_iter().collect()
    }

    /// True when no part of the value is sensitive.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when the value itself (not only some part of it) is sensitive.
    pub fn is_whole(&self) -> bool {
        self.0.contains(&Vec::new())
    }

    /// Marks the whole value too.
    pub fn add_whole(&mut self) {
        self.0.insert(Vec::new());
    }

    pub fn extend(&mut self, other: Marks) {
        self.0.extend(other.0);
    }

    /// `self` with `other`'s marks added.
    pub fn with(mut self, other: Marks) -> Marks {
        self.extend(other);
        self
    }

    /// The whole value if any part of it is sensitive: what a value derived
    /// from all of this one (an operator's result, most functions') carries.
    pub fn collapse(&self) -> Marks {
        if self.is_empty() {
            Marks::none()
        } else {
            Marks::whole()
        }
    }

    /// Only the mark on the value itself, dropping those of its parts.
    pub fn top(&self) -> Marks {
        if self.is_whole() {
            Marks::whole()
        } else {
            Marks::none()
        }
    }

    /// The marks of the element `step` of this value: its own, and the whole
    /// element when this value as a whole is sensitive (an element taken
    /// from a sensitive collection is sensitive).
    pub fn child(&self, step: &PathStep) -> Marks {
        let mut out = self.top();
        out.0.extend(
            self.0
                .iter()
                .filter(|p| p.first() == Some(step))
                .map(|p| p[1..].to_vec()),
        );
        out
    }

    /// These marks as the marks of element `step` of an enclosing value.
    pub fn nest(self, step: PathStep) -> Marks {
        Marks(
            self.0
                .into_iter()
                .map(|mut p| {
                    p.insert(0, step.clone());
                    p
                })
                .collect(),
        )
    }

    /// Replaces the marks of element `step` (an object key set twice, a
    /// map entry `merge` overrides).
    pub fn set_child(&mut self, step: &PathStep, marks: Marks) {
        self.0.retain(|p| p.first() != Some(step));
        self.extend(marks.nest(step.clone()));
    }

    /// Without the mark on the value itself; marks of its parts stay
    /// (`nonsensitive` is shallow, like Terraform's).
    pub fn without_whole(mut self) -> Marks {
        self.0.remove(&Vec::new());
        self
    }

    /// Whether the value at `path` is sensitive: a mark at it or above it.
    pub fn covers(&self, path: &[PathStep]) -> bool {
        self.0.iter().any(|p| path.starts_with(p))
    }

    /// Whether anything at or below `path` is sensitive.
    pub fn touches(&self, path: &[PathStep]) -> bool {
        self.0
            .iter()
            .any(|p| path.starts_with(p) || p.starts_with(path))
    }

    /// The marks a value keeps once converted to `ty`: marks inside a set's
    /// elements mark the whole set (cty cannot mark set elements, and our
    /// conversion may reorder or merge them), and marks on object attributes
    /// the type does not have are dropped with the attributes.
    pub fn conform(&self, ty: &Type) -> Marks {
        if self.is_empty() {
            return Marks::none();
        }
        if self.is_whole() {
            return Marks::whole();
        }
        let steps: BTreeSet<&PathStep> = self.0.iter().filter_map(|p| p.first()).collect();
        let mut out = Marks::none();
        for step in steps {
            let elem = match (ty, step) {
                (Type::Dynamic, _) => Some(&Type::Dynamic),
                (Type::Set(_), _) => return Marks::whole(),
                (Type::List(e) | Type::Map(e), _) => Some(e.as_ref()),
                (Type::Object { attrs, .. }, PathStep::Key(k)) => attrs.get(k),
                (Type::Tuple(ts), PathStep::Index(i)) => {
                    usize::try_from(*i).ok().and_then(|i| ts.get(i))
                }
                // Parts of a primitive: the conversion made one value of them.
                (Type::Bool | Type::Number | Type::String, _) => return Marks::whole(),
                _ => None,
            };
            if let Some(elem) = elem {
                out.extend(self.child(step).conform(elem).nest(step.clone()));
            }
        }
        out
    }
}

impl FromIterator<AttrPath> for Marks {
    fn from_iter<I: IntoIterator<Item = AttrPath>>(iter: I) -> Marks {
        Marks(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> PathStep {
        PathStep::Key(k.into())
    }

    #[test]
    fn narrowing_keeps_only_the_element_s_own_marks() {
        let m = Marks::from_paths([vec![key("b")], vec![key("c"), PathStep::Index(1)]]);
        assert!(m.child(&key("a")).is_empty());
        assert!(m.child(&key("b")).is_whole());
        assert_eq!(
            m.child(&key("c")),
            Marks::from_paths([vec![PathStep::Index(1)]])
        );
        assert!(m.child(&key("c")).child(&PathStep::Index(0)).is_empty());
    }

    #[test]
    fn a_wholly_sensitive_value_makes_every_element_sensitive() {
        assert!(Marks::whole().child(&key("x")).is_whole());
        assert!(Marks::whole().child(&PathStep::Index(3)).is_whole());
    }

    #[test]
    fn nesting_and_replacing_children() {
        let mut m = Marks::whole().nest(key("a"));
        assert!(m.covers(&[key("a"), key("x")]));
        assert!(!m.covers(&[key("b")]));
        assert!(m.touches(&[]));
        m.set_child(&key("a"), Marks::none());
        assert!(m.is_empty());
    }

    #[test]
    fn nonsensitive_removes_only_the_top_mark() {
        let m = Marks::whole().with(Marks::whole().nest(key("a")));
        let lifted = m.without_whole();
        assert!(!lifted.is_whole());
        assert!(lifted.child(&key("a")).is_whole());
    }

    #[test]
    fn conversion_to_a_set_marks_the_whole_set() {
        let m = Marks::whole().nest(PathStep::Index(1)).nest(key("tags"));
        let ty = Type::object([("tags", Type::set(Type::String))]);
        assert_eq!(m.conform(&ty), Marks::whole().nest(key("tags")));
        let ty = Type::object([("tags", Type::list(Type::String))]);
        assert_eq!(m.conform(&ty), m);
        // An attribute the type does not have takes its mark with it.
        let gone = Marks::whole().nest(key("extra"));
        assert!(gone.conform(&ty).is_empty());
    }
}
