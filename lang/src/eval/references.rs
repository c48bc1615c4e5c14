//! References from expressions to named objects (variables, locals, resources…),
//! which the graph builder turns into dependency edges.

use super::expr::{Expr, ExprKind, TemplatePart};
use fleetform_shared::addr::{InstanceKey, Resource};
use fleetform_shared::diag::SourceRange;
use fleetform_shared::provider::AttrPath;
use fleetform_shared::value::{PathStep, Value};
use std::fmt;

/// Something an expression refers to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reference {
    Variable(String),
    Local(String),
    Resource(Resource),
    CountIndex,
    EachKey,
    EachValue,
    Path(String),
    Workspace,
    /// `module.NAME`: every output of every instance of the call.
    ModuleCall(String),
    /// `module.NAME.OUTPUT`: one output of a call without count/for_each.
    ModuleOutput(String, String),
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reference::Variable(n) => write!(f, "var.{n}"),
            Reference::Local(n) => write!(f, "local.{n}"),
            Reference::Resource(r) => write!(f, "{r}"),
            Reference::CountIndex => write!(f, "count.index"),
            Reference::EachKey => write!(f, "each.key"),
            Reference::EachValue => write!(f, "each.value"),
            Reference::Path(n) => write!(f, "path.{n}"),
            Reference::Workspace => write!(f, "terraform.workspace"),
            Reference::ModuleCall(c) => write!(f, "module.{c}"),
            Reference::ModuleOutput(c, o) => write!(f, "module.{c}.{o}"),
        }
    }
}

/// A reference with the static rest of its traversal: which part of the
/// object it reads (`sim_object.a["k"].tags["env"]`: instance `"k"`, path
/// `tags`, `"env"`), as far as attribute names and literal indexes go; a
/// computed index ends it (`sim_object.a.tags[var.k]` reads `tags`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReferencePath {
    pub reference: Reference,
    /// A literal index right after a resource or a module call: the
    /// instance it names. None for the object without a key (or when the
    /// index is not a literal).
    pub key: Option<InstanceKey>,
    /// The attribute path after the object (and its key).
    pub path: AttrPath,
}

/// A reference with the expression of the index right after it, where it
/// is a resource or a module call indexed ([`Expr::instance_references`]).
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceReference {
    pub reference: Reference,
    pub index: Option<Expr>,
    /// The static attribute path after the object and its index: for a
    /// module call, the output read first.
    pub path: AttrPath,
}

impl InstanceReference {
    /// A reference that names no instance (a `dynamic` block's, a JSON
    /// body's).
    pub fn whole(reference: Reference) -> InstanceReference {
        InstanceReference {
            reference,
            index: None,
            path: AttrPath::new(),
        }
    }
}

/// Root names that are never resource types.
const RESERVED_ROOTS: &[&str] = &[
    "var",
    "local",
    "count",
    "each",
    "path",
    "terraform",
    "data",
    "ephemeral",
    "self",
    "module",
];

/// The reference a root name and its leading attribute names make, and how
/// many attribute steps it used.
pub fn reference_of(root: &str, attrs: &[&str]) -> Option<(Reference, usize)> {
    let first = attrs.first().copied();
    let r = match (root, first) {
        ("var", Some(n)) => (Reference::Variable(n.to_string()), 1),
        ("local", Some(n)) => (Reference::Local(n.to_string()), 1),
        ("count", Some("index")) => (Reference::CountIndex, 1),
        ("each", Some("key")) => (Reference::EachKey, 1),
        ("each", Some("value")) => (Reference::EachValue, 1),
        ("path", Some(n)) => (Reference::Path(n.to_string()), 1),
        ("terraform", Some("workspace")) => (Reference::Workspace, 1),
        ("data", Some(t)) => (Reference::Resource(Resource::data(t, attrs.get(1)?)), 2),
        ("ephemeral", Some(t)) => (
            Reference::Resource(Resource::ephemeral(t, attrs.get(1)?)),
            2,
        ),
        ("module", Some(c)) => match attrs.get(1) {
            Some(o) => (Reference::ModuleOutput(c.to_string(), o.to_string()), 2),
            None => (Reference::ModuleCall(c.to_string()), 1),
        },
        (r, Some(n)) if !RESERVED_ROOTS.contains(&r) => {
            (Reference::Resource(Resource::managed(r, n)), 1)
        }
        _ => return None,
    };
    Some(r)
}

impl Expr {
    /// Every reference in the expression, in source order, with the range of
    /// the traversal that makes it. Names bound by `for` expressions and
    /// template `for` directives are not references.
    pub fn references(&self) -> Vec<(Reference, SourceRange)> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.into_iter().map(|f| (f.reference, f.range)).collect()
    }

    /// [`Expr::references`] with the range of each whole static traversal
    /// (`sim_object.a.tags["k"]`, up to a computed index), for listing
    /// references as Terraform's JSON configuration does.
    pub fn reference_traversals(&self) -> Vec<(Reference, SourceRange)> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.into_iter().map(|f| (f.reference, f.whole)).collect()
    }

    /// Every reference in the expression with the expression of the index
    /// right after it, where it is a resource or a module call indexed
    /// (`sim_object.a[count.index]` gives `count.index`): which instance it
    /// reads, once that is evaluated.
    pub fn instance_references(&self) -> Vec<InstanceReference> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.into_iter()
            .map(|f| InstanceReference {
                reference: f.reference,
                index: f.index,
                path: f.path,
            })
            .collect()
    }

    /// Every reference in the expression with the part of its object it
    /// reads ([`ReferencePath`]), in source order.
    pub fn reference_paths(&self) -> Vec<ReferencePath> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.into_iter()
            .map(|f| ReferencePath {
                reference: f.reference,
                key: f.key,
                path: f.path,
            })
            .collect()
    }
}

/// A reference as a traversal makes it.
struct Found {
    reference: Reference,
    /// The range of the traversal's part that names the object.
    range: SourceRange,
    /// The range of the whole static traversal.
    whole: SourceRange,
    key: Option<InstanceKey>,
    path: AttrPath,
    /// The expression of an index right after a resource or a module call
    /// (literal or not).
    index: Option<Expr>,
}

fn walk(e: &Expr, bound: &mut Vec<String>, out: &mut Vec<Found>) {
    match &e.kind {
        ExprKind::Variable(_) | ExprKind::GetAttr(..) | ExprKind::Index(..) => {
            if let Some(chain) = chain(e) {
                traversal(&chain, bound, out);
                return;
            }
        }
        ExprKind::For(fe) => {
            walk(&fe.collection, bound, out);
            let n = bound.len();
            bound.extend(fe.key_var.iter().cloned());
            bound.push(fe.value_var.clone());
            for x in fe
                .key_expr
                .iter()
                .chain([&fe.value_expr])
                .chain(fe.cond.iter())
            {
                walk(x, bound, out);
            }
            bound.truncate(n);
            return;
        }
        ExprKind::Template(parts) => {
            parts.iter().for_each(|p| walk_part(p, bound, out));
            return;
        }
        _ => {}
    }
    e.for_each_child(&mut |c| walk(c, bound, out));
}

fn walk_part(p: &TemplatePart, bound: &mut Vec<String>, out: &mut Vec<Found>) {
    match p {
        TemplatePart::Literal(_) => {}
        TemplatePart::Interpolation(e) => walk(e, bound, out),
        TemplatePart::If {
            cond,
            then,
            otherwise,
        } => {
            walk(cond, bound, out);
            then.iter()
                .chain(otherwise)
                .for_each(|p| walk_part(p, bound, out));
        }
        TemplatePart::For {
            key_var,
            value_var,
            collection,
            body,
        } => {
            walk(collection, bound, out);
            let n = bound.len();
            bound.extend(key_var.iter().cloned());
            bound.push(value_var.clone());
            body.iter().for_each(|p| walk_part(p, bound, out));
            bound.truncate(n);
        }
    }
}

/// The nodes of a traversal from its root variable outwards, or None when the
/// innermost expression is not a variable.
pub(crate) fn chain(e: &Expr) -> Option<Vec<&Expr>> {
    let mut nodes = vec![e];
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Variable(_) => break,
            ExprKind::GetAttr(inner, _) | ExprKind::Index(inner, _) => cur = inner,
            _ => return None,
        }
        nodes.push(cur);
    }
    nodes.reverse();
    Some(nodes)
}

fn traversal(nodes: &[&Expr], bound: &mut Vec<String>, out: &mut Vec<Found>) {
    if let ExprKind::Variable(root) = &nodes[0].kind
        && !bound.contains(root)
    {
        root_reference(root, nodes, out);
    }
    // Index keys are expressions of their own.
    for n in nodes {
        if let ExprKind::Index(_, key) = &n.kind {
            walk(key, bound, out);
        }
    }
}

fn root_reference(root: &str, nodes: &[&Expr], out: &mut Vec<Found>) {
    let attrs: Vec<&str> = nodes[1..]
        .iter()
        .map_while(|n| match &n.kind {
            ExprKind::GetAttr(_, a) => Some(a.as_str()),
            _ => None,
        })
        .collect();
    if let Some((r, used)) = reference_of(root, &attrs) {
        // The static part: attributes and literal indexes.
        let steps: Vec<Option<PathStep>> = nodes[used + 1..].iter().map(|n| step(n)).collect();
        let static_len = steps.iter().take_while(|s| s.is_some()).count();
        // The range goes on over any literal index (a `true` too), as
        // Terraform's JSON configuration lists traversals.
        let literal_len = nodes[used + 1..]
            .iter()
            .take_while(|n| match &n.kind {
                ExprKind::GetAttr(..) => true,
                ExprKind::Index(_, key) => matches!(key.kind, ExprKind::Literal(_)),
                _ => false,
            })
            .count();
        let mut steps: Vec<PathStep> = steps.into_iter().take(static_len).flatten().collect();
        let keyed = matches!(r, Reference::Resource(_) | Reference::ModuleCall(_));
        let key = match steps.first() {
            Some(first) if keyed && matches!(nodes[used + 1].kind, ExprKind::Index(..)) => {
                let key = match first {
                    PathStep::Index(i) => InstanceKey::Int(*i),
                    PathStep::Key(k) => InstanceKey::Str(k.clone()),
                };
                steps.remove(0);
                Some(key)
            }
            _ => None,
        };
        let index = match nodes.get(used + 1).map(|n| &n.kind) {
            Some(ExprKind::Index(_, i)) if keyed => Some((**i).clone()),
            _ => None,
        };
        out.push(Found {
            reference: r,
            range: nodes[used].range.clone(),
            whole: nodes[used + literal_len].range.clone(),
            key,
            path: steps,
            index,
        });
    }
}

/// The path step a traversal node makes when it is static: an attribute
/// name, or an index by a literal string or whole number.
fn step(n: &Expr) -> Option<PathStep> {
    match &n.kind {
        ExprKind::GetAttr(_, a) => Some(PathStep::Key(a.clone())),
        ExprKind::Index(_, key) => match &key.kind {
            ExprKind::Literal(Value::String(s)) => Some(PathStep::Key(s.clone())),
            ExprKind::Literal(Value::Number(n)) => n.as_i64().map(PathStep::Index),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::parse_expression;

    /// Each reference of `src` as `object key path` text.
    fn paths(src: &str) -> Vec<String> {
        let e = parse_expression("t.tf", src).unwrap();
        e.reference_paths()
            .into_iter()
            .map(|r| {
                let key = r.key.map(|k| k.to_string()).unwrap_or_default();
                let path: Vec<String> = r
                    .path
                    .iter()
                    .map(|s| match s {
                        PathStep::Key(k) => format!("{k:?}"),
                        PathStep::Index(i) => i.to_string(),
                    })
                    .collect();
                format!("{}{key} [{}]", r.reference, path.join(","))
            })
            .collect()
    }

    /// The index right after a resource or a module call is given as an
    /// expression (to evaluate in an instance's scope); none for a whole
    /// resource, a splat or an index after an attribute.
    #[test]
    fn instance_references_give_the_index_after_the_object() {
        let e = parse_expression(
            "t.tf",
            "\"${sim_object.a[count.index].id}/${sim_object.b.id}/${data.sim_x.c[each.key].v}/${sim_object.d[*].id}/${sim_object.e.tags[var.k]}\"",
        )
        .unwrap();
        let got: Vec<String> = e
            .instance_references()
            .into_iter()
            .map(|x| match x.index {
                Some(i) => format!(
                    "{}[{}]",
                    x.reference,
                    i.references()
                        .first()
                        .map(|x| x.0.to_string())
                        .unwrap_or_default()
                ),
                None => x.reference.to_string(),
            })
            .collect();
        assert_eq!(
            got,
            [
                "sim_object.a[count.index]",
                "count.index",
                "sim_object.b",
                "data.sim_x.c[each.key]",
                "each.key",
                "sim_object.d",
                "sim_object.e",
                "var.k"
            ]
        );
    }

    /// A path goes as far as attribute names and literal indexes; a literal
    /// index right after a resource or module call is its instance key.
    #[test]
    fn reference_paths_follow_the_static_traversal() {
        assert_eq!(paths("sim_object.a.name"), ["sim_object.a [\"name\"]"]);
        assert_eq!(
            paths("sim_object.a.tags[\"k\"].x"),
            ["sim_object.a [\"tags\",\"k\",\"x\"]"]
        );
        assert_eq!(paths("sim_object.a.list[0]"), ["sim_object.a [\"list\",0]"]);
        assert_eq!(
            paths("sim_object.a[\"k\"].name"),
            ["sim_object.a[\"k\"] [\"name\"]"]
        );
        assert_eq!(paths("data.sim_x.d[1].id"), ["data.sim_x.d[1] [\"id\"]"]);
        assert_eq!(paths("module.m[0].out"), ["module.m[0] [\"out\"]"]);
        assert_eq!(paths("module.m.out.x"), ["module.m.out [\"x\"]"]);
        assert_eq!(paths("sim_object.a"), ["sim_object.a []"]);
    }

    /// A computed index ends the path (its own references are found too);
    /// a splat reads the whole object.
    #[test]
    fn a_computed_index_ends_the_path() {
        assert_eq!(
            paths("sim_object.a.tags[var.k].x"),
            ["sim_object.a [\"tags\"]", "var.k []"]
        );
        assert_eq!(
            paths("sim_object.a[count.index].name"),
            ["sim_object.a []", "count.index []"]
        );
        assert_eq!(paths("sim_object.a[*].name"), ["sim_object.a []"]);
        assert_eq!(
            paths("[for o in sim_object.a : o.name]"),
            ["sim_object.a []"]
        );
    }
}
