//! References from expressions to named objects (variables, locals, resources…),
//! which the graph builder turns into dependency edges.

use super::expr::{Expr, ExprKind, TemplatePart};
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::SourceRange;
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
        out.into_iter().map(|(r, range, _)| (r, range)).collect()
    }

    /// [`Expr::references`] with the range of each whole static traversal
    /// (`sim_object.a.tags["k"]`, up to a computed index), for listing
    /// references as Terraform's JSON configuration does.
    pub fn reference_traversals(&self) -> Vec<(Reference, SourceRange)> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.into_iter().map(|(r, _, whole)| (r, whole)).collect()
    }
}

/// A reference, the range that makes it, and the range of its whole
/// static traversal.
type Found = (Reference, SourceRange, SourceRange);

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
        let mut last = used;
        for (i, n) in nodes.iter().enumerate().skip(used + 1) {
            let literal = match &n.kind {
                ExprKind::GetAttr(..) => true,
                ExprKind::Index(_, key) => matches!(key.kind, ExprKind::Literal(_)),
                _ => false,
            };
            if !literal {
                break;
            }
            last = i;
        }
        out.push((r, nodes[used].range.clone(), nodes[last].range.clone()));
    }
}
