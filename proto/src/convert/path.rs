//! `AttributePath` ↔ [`PathStep`] lists.
//!
//! A shared path does not say whether a string step names an object
//! attribute or a map key, but the wire does; the schema type decides.

use crate::tfplugin6::AttributePath;
use crate::tfplugin6::attribute_path::{Step, step::Selector};
use fleetform_shared::types::Type;
use fleetform_shared::value::PathStep;

/// Converts a wire path; attribute names and string keys both become [`PathStep::Key`].
pub fn path_from_proto(path: &AttributePath) -> Vec<PathStep> {
    path.steps
        .iter()
        .filter_map(|s| match s.selector.as_ref()? {
            Selector::AttributeName(n) | Selector::ElementKeyString(n) => {
                Some(PathStep::Key(n.clone()))
            }
            Selector::ElementKeyInt(i) => Some(PathStep::Index(*i)),
        })
        .collect()
}

/// Converts a path into the value of type `ty` (usually a resource's object
/// type): string steps into objects are attribute names, into maps element keys.
pub fn path_to_proto(path: &[PathStep], ty: &Type) -> AttributePath {
    let mut cur = Some(ty);
    let mut steps = Vec::with_capacity(path.len());
    for step in path {
        let here = cur.take();
        let selector = match (step, here) {
            (PathStep::Key(k), Some(Type::Object { attrs, .. })) => {
                cur = attrs.get(k);
                Selector::AttributeName(k.clone())
            }
            (PathStep::Key(k), Some(Type::Map(elem))) => {
                cur = Some(elem);
                Selector::ElementKeyString(k.clone())
            }
            (PathStep::Key(k), _) => Selector::AttributeName(k.clone()),
            (PathStep::Index(i), Some(Type::List(elem) | Type::Set(elem))) => {
                cur = Some(elem);
                Selector::ElementKeyInt(*i)
            }
            (PathStep::Index(i), Some(Type::Tuple(elems))) => {
                cur = usize::try_from(*i).ok().and_then(|i| elems.get(i));
                Selector::ElementKeyInt(*i)
            }
            (PathStep::Index(i), _) => Selector::ElementKeyInt(*i),
        };
        steps.push(Step {
            selector: Some(selector),
        });
    }
    AttributePath { steps }
}

/// Converts a path without a type: every string step is an attribute name.
pub fn path_to_proto_untyped(path: &[PathStep]) -> AttributePath {
    path_to_proto(path, &Type::Dynamic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(p: &AttributePath) -> Vec<Selector> {
        p.steps
            .iter()
            .map(|s| s.selector.clone().unwrap())
            .collect()
    }

    #[test]
    fn the_type_decides_between_attribute_names_and_map_keys() {
        let ty = Type::object([
            ("tags", Type::map(Type::String)),
            ("rules", Type::list(Type::object([("x", Type::Number)]))),
        ]);
        let p = vec![PathStep::Key("tags".into()), PathStep::Key("env".into())];
        assert_eq!(
            sel(&path_to_proto(&p, &ty)),
            vec![
                Selector::AttributeName("tags".into()),
                Selector::ElementKeyString("env".into())
            ]
        );
        let p = vec![
            PathStep::Key("rules".into()),
            PathStep::Index(2),
            PathStep::Key("x".into()),
        ];
        let proto = path_to_proto(&p, &ty);
        assert_eq!(
            sel(&proto),
            vec![
                Selector::AttributeName("rules".into()),
                Selector::ElementKeyInt(2),
                Selector::AttributeName("x".into())
            ]
        );
        assert_eq!(path_from_proto(&proto), p);
    }
}
