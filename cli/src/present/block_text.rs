//! Values drawn by their schema shape ([`BlockShape`]), as Terraform 1.11's
//! renderer draws them: nested blocks as `name {` (a list's in order, a
//! set's matched by value with the removed before the added, a map's as
//! `name "key" {`) after a block's attributes, a blank line before each
//! group of blocks and `# (N unchanged blocks hidden)` after them; protocol
//! 6 nested attributes as objects, lists, sets and maps of objects.
//!
//! A change is first worked out as a tree of [`Diff`]s, each with the
//! action it shows (a block's is the sum of its children's, as
//! Terraform's `CompareActions` sums them), then drawn. A line at depth
//! `d` starts with `4·d` spaces and a three-column action symbol; plain
//! attribute values are drawn by [`super::value_text`] at that sign's column.

use super::value_text::{self, At, HIDDEN};
use fleetform_shared::marks::Marks;
use fleetform_shared::plan::shape::{AttrShape, BlockShape, NestedAttrsShape};
use fleetform_shared::provider::AttrPath;
use fleetform_shared::schema::Nesting;
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// What a line shows was done to its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    NoOp,
    Create,
    Update,
    Delete,
}

impl Act {
    fn symbol(self) -> &'static str {
        match self {
            Act::NoOp => "   ",
            Act::Create => "  +",
            Act::Update => "  ~",
            Act::Delete => "  -",
        }
    }

    /// Terraform's `CompareActions`: a child's change added to its parent's.
    fn and(self, next: Act) -> Act {
        match (self, next) {
            (cur, Act::NoOp) => cur,
            (cur, next) if cur == next => cur,
            _ => Act::Update,
        }
    }

    /// The action of a container before its children are counted.
    fn of(b: &Value, a: &Value) -> Act {
        match (b.is_null(), a.is_null()) {
            (true, true) | (false, false) => Act::NoOp,
            (true, false) => Act::Create,
            (false, true) => Act::Delete,
        }
    }
}

/// The marks and replace paths a change is drawn with.
pub struct Cx<'a> {
    pub before: &'a Marks,
    pub after: &'a Marks,
    pub replace: &'a [AttrPath],
}

impl Cx<'_> {
    fn sensitive(&self, path: &[PathStep], shape: Option<&AttrShape>) -> (bool, bool) {
        let s = shape.is_some_and(|s| s.sensitive);
        (s || self.before.covers(path), s || self.after.covers(path))
    }

    fn forces(&self, path: &[PathStep]) -> bool {
        self.replace.iter().any(|p| p.as_slice() == path)
    }
}

pub struct Diff {
    pub act: Act,
    replace: bool,
    body: Body,
}

enum Body {
    /// A plain attribute: drawn by `value_text`; `hidden` are the keys of
    /// a map's sensitive entries.
    Plain {
        b: Value,
        a: Value,
        hidden: BTreeSet<String>,
    },
    Sensitive,
    /// `(known after apply)`, after what it was when it was something.
    Unknown(Option<Box<Diff>>),
    /// A nested attribute's object (single nesting, or an element).
    Object(Vec<(String, Diff)>),
    Block(BlockDiff),
    /// A nested attribute's list or set of objects.
    Seq(Vec<Diff>),
    /// A nested attribute's map of objects.
    Map(Vec<(String, Diff)>),
}

pub struct BlockDiff {
    attrs: Vec<(String, Diff)>,
    /// Each block type's blocks (sorted by type name), with the label a
    /// map block shows (` "key"`).
    groups: Vec<(String, Vec<(String, Diff)>)>,
}

fn step(path: &[PathStep], s: PathStep) -> AttrPath {
    let mut p = path.to_vec();
    p.push(s);
    p
}

fn key(path: &[PathStep], k: &str) -> AttrPath {
    step(path, PathStep::Key(k.to_string()))
}

/// A plain or nested attribute's change; `None` when it is null before
/// and after (Terraform neither shows nor counts those).
pub fn attribute(
    path: &[PathStep],
    b: &Value,
    a: &Value,
    shape: Option<&AttrShape>,
    cx: &Cx<'_>,
) -> Option<Diff> {
    if b.is_null() && a.is_null() {
        return None;
    }
    let replace = cx.forces(path);
    let (sb, sa) = cx.sensitive(path, shape);
    if sb || sa {
        let mut act = plain_act(b, a);
        if act == Act::NoOp && sb != sa {
            act = Act::Update;
        }
        return Some(Diff {
            act,
            replace,
            body: Body::Sensitive,
        });
    }
    if a.is_unknown() {
        return Some(unknown(
            path,
            b,
            shape.and_then(|s| s.nested.as_ref()),
            cx,
            replace,
        ));
    }
    if let Some(n) = shape.and_then(|s| s.nested.as_ref()) {
        return Some(nested(path, b, a, n, cx, replace));
    }
    // A sensitive map entry hides only that entry.
    let hidden = cx
        .before
        .paths()
        .chain(cx.after.paths())
        .filter(|p| p.len() == path.len() + 1 && p.starts_with(path))
        .filter_map(|p| match p.last() {
            Some(PathStep::Key(k)) => Some(k.clone()),
            _ => None,
        })
        .collect();
    // Parts deeper than an entry are replaced by the placeholder in the
    // values drawn (the entries themselves are `hidden`), so that no
    // sensitive part can be printed.
    Some(Diff {
        act: plain_act(b, a),
        replace,
        body: Body::Plain {
            b: masked_below(b, path, cx.before, 2),
            a: masked_below(a, path, cx.after, 2),
            hidden,
        },
    })
}

const PLACEHOLDER: &str = "(sensitive value)";

/// `v` (the value at `path`) with each part that `marks` cover at least
/// `depth` steps below `path` replaced by the placeholder string.
fn masked_below(v: &Value, path: &[PathStep], marks: &Marks, depth: usize) -> Value {
    fn set(v: &mut Value, rest: &[PathStep]) {
        match (rest.split_first(), v) {
            (None, v) if !v.is_null() => *v = Value::from(PLACEHOLDER),
            (Some((PathStep::Key(k), rest)), Value::Map(m)) => {
                if let Some(x) = m.get_mut(k) {
                    set(x, rest);
                }
            }
            (Some((PathStep::Index(i), rest)), Value::List(items)) => {
                if let Some(x) = usize::try_from(*i).ok().and_then(|i| items.get_mut(i)) {
                    set(x, rest);
                }
            }
            _ => {}
        }
    }
    let mut out = v.clone();
    for p in marks.paths() {
        if p.len() >= path.len() + depth && p.starts_with(path) {
            set(&mut out, &p[path.len()..]);
        }
    }
    out
}

/// The placeholder drawn bare, as Terraform draws it, not as a string.
fn unquoted_placeholder(text: String) -> String {
    text.replace(&format!("\"{PLACEHOLDER}\""), PLACEHOLDER)
}

fn plain_act(b: &Value, a: &Value) -> Act {
    match Act::of(b, a) {
        Act::NoOp if b != a => Act::Update,
        act => act,
    }
}

fn unknown(
    path: &[PathStep],
    b: &Value,
    nested_shape: Option<&NestedAttrsShape>,
    cx: &Cx<'_>,
    replace: bool,
) -> Diff {
    let before = (!b.is_null()).then(|| {
        let d = match nested_shape {
            Some(n) => nested(path, b, &Value::null(), n, cx, false),
            None => Diff {
                act: Act::Delete,
                replace: false,
                body: Body::Plain {
                    b: b.clone(),
                    a: Value::null(),
                    hidden: BTreeSet::new(),
                },
            },
        };
        Box::new(d)
    });
    Diff {
        act: if b.is_null() {
            Act::Create
        } else {
            Act::Update
        },
        replace,
        body: Body::Unknown(before),
    }
}

fn nested(
    path: &[PathStep],
    b: &Value,
    a: &Value,
    n: &NestedAttrsShape,
    cx: &Cx<'_>,
    replace: bool,
) -> Diff {
    let mut act = Act::of(b, a);
    let body = match n.nesting {
        Nesting::Single | Nesting::Group => {
            let attrs = object(path, b, a, n, cx, &mut act);
            Body::Object(attrs)
        }
        Nesting::List | Nesting::Set => {
            let pairs = match n.nesting {
                Nesting::Set => set_pairs(b, a),
                _ => list_pairs(b, a),
            };
            let items = pairs
                .into_iter()
                .enumerate()
                .map(|(i, (x, y))| {
                    let p = step(path, PathStep::Index(i as i64));
                    let mut el = Act::of(x, y);
                    let attrs = object(&p, x, y, n, cx, &mut el);
                    act = act.and(el);
                    Diff {
                        act: el,
                        replace: false,
                        body: Body::Object(attrs),
                    }
                })
                .collect();
            Body::Seq(items)
        }
        Nesting::Map => {
            let items = map_pairs(b, a)
                .into_iter()
                .map(|(k, x, y)| {
                    let p = key(path, &k);
                    let mut el = Act::of(x, y);
                    let attrs = object(&p, x, y, n, cx, &mut el);
                    act = act.and(el);
                    let d = Diff {
                        act: el,
                        replace: false,
                        body: Body::Object(attrs),
                    };
                    (k, d)
                })
                .collect();
            Body::Map(items)
        }
    };
    Diff { act, replace, body }
}

/// The attributes of one nested attribute object, summed into `act`.
fn object(
    path: &[PathStep],
    b: &Value,
    a: &Value,
    n: &NestedAttrsShape,
    cx: &Cx<'_>,
    act: &mut Act,
) -> Vec<(String, Diff)> {
    let mut out = Vec::new();
    for (name, s) in &n.attributes {
        let p = key(path, name);
        if let Some(d) = attribute(&p, b.get_attr(name), a.get_attr(name), Some(s), cx) {
            *act = act.and(d.act);
            out.push((name.clone(), d));
        }
    }
    out
}

/// A block's change (`None` when it is absent before and after).
pub fn block(
    path: &[PathStep],
    b: &Value,
    a: &Value,
    shape: &BlockShape,
    cx: &Cx<'_>,
) -> Option<Diff> {
    if b.is_null() && a.is_null() {
        return None;
    }
    let replace = cx.forces(path);
    if a.is_unknown() {
        return Some(unknown(path, b, None, cx, replace));
    }
    let mut act = Act::of(b, a);
    let mut attrs = Vec::new();
    for (name, s) in &shape.attributes {
        let p = key(path, name);
        if let Some(d) = attribute(&p, b.get_attr(name), a.get_attr(name), Some(s), cx) {
            act = act.and(d.act);
            attrs.push((name.clone(), d));
        }
    }
    let groups = block_groups(path, b, a, shape, cx, &mut act);
    Some(Diff {
        act,
        replace,
        body: Body::Block(BlockDiff { attrs, groups }),
    })
}

/// The nested blocks of a block, by type, summed into `act`.
pub fn block_groups(
    path: &[PathStep],
    b: &Value,
    a: &Value,
    shape: &BlockShape,
    cx: &Cx<'_>,
    act: &mut Act,
) -> Vec<(String, Vec<(String, Diff)>)> {
    let mut groups = Vec::new();
    for (name, nb) in &shape.blocks {
        let (x, y) = (b.get_attr(name), a.get_attr(name));
        let p = key(path, name);
        let mut items = Vec::new();
        match nb.nesting {
            Nesting::Single | Nesting::Group => {
                items.extend(block(&p, x, y, &nb.block, cx).map(|d| (String::new(), d)));
            }
            Nesting::List | Nesting::Set => {
                let pairs = match nb.nesting {
                    Nesting::Set => set_pairs(x, y),
                    _ => list_pairs(x, y),
                };
                for (i, (bx, ay)) in pairs.into_iter().enumerate() {
                    let ep = step(&p, PathStep::Index(i as i64));
                    items.extend(block(&ep, bx, ay, &nb.block, cx).map(|d| (String::new(), d)));
                }
            }
            Nesting::Map => {
                for (k, bx, ay) in map_pairs(x, y) {
                    let ep = key(&p, &k);
                    let label = format!(" {}", quote(&k));
                    items.extend(block(&ep, bx, ay, &nb.block, cx).map(|d| (label, d)));
                }
            }
        }
        // A list block whose list changes in the whole sums as one.
        for (_, d) in &items {
            *act = act.and(d.act);
        }
        if !items.is_empty() {
            groups.push((name.clone(), items));
        }
    }
    groups
}

use fleetform_shared::value::NULL;

fn elements(v: &Value) -> Vec<&Value> {
    match v {
        Value::List(l) => l.iter().collect(),
        _ => Vec::new(),
    }
}

/// A list's elements position by position.
fn list_pairs<'v>(b: &'v Value, a: &'v Value) -> Vec<(&'v Value, &'v Value)> {
    let (bs, as_) = (elements(b), elements(a));
    (0..bs.len().max(as_.len()))
        .map(|i| {
            (
                bs.get(i).copied().unwrap_or(&NULL),
                as_.get(i).copied().unwrap_or(&NULL),
            )
        })
        .collect()
}

/// A set's elements matched by value: the before ones in order (with their
/// match, or removed), then the after ones no before one matched.
fn set_pairs<'v>(b: &'v Value, a: &'v Value) -> Vec<(&'v Value, &'v Value)> {
    let bs = fleetform_shared::value::set_order::sorted(elements(b));
    let as_ = fleetform_shared::value::set_order::sorted(elements(a));
    let mut taken = vec![false; as_.len()];
    let mut out = Vec::new();
    for x in &bs {
        let found = (0..as_.len()).find(|&j| !taken[j] && as_[j] == *x && x.is_wholly_known());
        match found {
            Some(j) => {
                taken[j] = true;
                out.push((*x, as_[j]));
            }
            None => out.push((*x, &NULL)),
        }
    }
    for (j, y) in as_.iter().enumerate() {
        if !taken[j] {
            out.push((&NULL, *y));
        }
    }
    out
}

fn map_pairs<'v>(b: &'v Value, a: &'v Value) -> Vec<(String, &'v Value, &'v Value)> {
    let (bm, am) = (b.as_map(), a.as_map());
    let keys: BTreeSet<&fleetform_shared::name::Name> = bm
        .iter()
        .flat_map(|m| m.keys())
        .chain(am.iter().flat_map(|m| m.keys()))
        .collect();
    keys.into_iter()
        .map(|k| {
            let x = bm.and_then(|m| m.get(k)).unwrap_or(&NULL);
            let y = am.and_then(|m| m.get(k)).unwrap_or(&NULL);
            (k.to_string(), x, y)
        })
        .collect()
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| s.to_string())
}

/// An attribute name as Terraform writes it: quoted when it is not an
/// identifier.
fn name_text(k: &str) -> String {
    let ident = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ident { k.to_string() } else { quote(k) }
}

/// Attributes Terraform always shows: they say which object it is.
pub const IMPORTANT: [&str; 3] = ["id", "name", "tags"];

/// How a diff is drawn (Terraform's `RenderHumanOpts`).
#[derive(Clone, Copy, Default)]
pub struct Opts {
    /// Unchanged children are drawn rather than counted.
    pub show_unchanged: bool,
    /// No ` -> null` after a removed value.
    pub no_null_suffix: bool,
    /// No action symbols (`show` of a state): a line is its indent alone.
    pub plain: bool,
}

impl Opts {
    fn prefix(&self, depth: usize, act: Act) -> String {
        match self.plain {
            true => "    ".repeat(depth),
            false => format!("{}{} ", "    ".repeat(depth), act.symbol()),
        }
    }

    fn null_suffix(&self, act: Act) -> &'static str {
        match !self.no_null_suffix && act == Act::Delete && !self.plain {
            true => " -> null",
            false => "",
        }
    }
}

fn note(replace: bool) -> &'static str {
    if replace { " # forces replacement" } else { "" }
}

impl Diff {
    /// What follows `name = ` (or a block's `name `) on a line at `depth`.
    pub fn render(&self, depth: usize, opts: Opts) -> String {
        let col = 4 * depth + 2;
        match &self.body {
            Body::Sensitive => format!(
                "{HIDDEN}{}{}",
                opts.null_suffix(self.act),
                note(self.replace)
            ),
            Body::Unknown(before) => match before {
                Some(b) if self.act != Act::Create => {
                    let o = Opts {
                        no_null_suffix: true,
                        ..opts
                    };
                    let was = Diff {
                        replace: false,
                        ..clone_shallow(b)
                    };
                    format!(
                        "{} -> (known after apply){}",
                        was.render(depth, o),
                        note(self.replace)
                    )
                }
                _ => format!("(known after apply){}", note(self.replace)),
            },
            Body::Plain { b, a, hidden } => {
                if opts.plain {
                    // `state show` draws the value alone: its sensitive
                    // entries as the placeholder too.
                    let mut shown = a.clone();
                    if let Value::Map(m) = &mut shown {
                        for k in hidden {
                            if let Some(x) = m.get_mut(k).filter(|x| !x.is_null()) {
                                *x = Value::from(PLACEHOLDER);
                            }
                        }
                    }
                    return unquoted_placeholder(super::state_text::show_value(&shown, 4 * depth));
                }
                let at = At {
                    col,
                    top: true,
                    hidden,
                };
                let text = match self.act {
                    Act::Create => value_text::whole(a, '+', at),
                    Act::Delete => format!(
                        "{}{}",
                        value_text::whole(b, '-', at),
                        opts.null_suffix(Act::Delete)
                    ),
                    Act::NoOp => value_text::whole(a, ' ', at),
                    Act::Update => value_text::diff(b, a, at),
                };
                with_note(text, note(self.replace))
            }
            Body::Object(attrs) => {
                let inner = Opts {
                    no_null_suffix: false,
                    ..opts
                };
                let mut s = format!("{{{}\n", note(self.replace));
                attribute_lines(&mut s, attrs, depth + 1, inner, opts.show_unchanged);
                close(&mut s, depth, opts, '}');
                s.push_str(opts.null_suffix(self.act));
                s
            }
            Body::Seq(items) if items.is_empty() => format!("[]{}", opts.null_suffix(self.act)),
            Body::Seq(items) => {
                let el = Opts {
                    no_null_suffix: true,
                    ..opts
                };
                let mut s = format!("[{}\n", note(self.replace));
                let mut unchanged = 0;
                for d in items {
                    if d.act == Act::NoOp && !opts.show_unchanged {
                        unchanged += 1;
                        continue;
                    }
                    let _ = writeln!(
                        s,
                        "{}{},",
                        el.prefix(depth + 1, d.act),
                        d.render(depth + 1, el)
                    );
                }
                hidden_line(&mut s, depth + 1, opts, unchanged, "element");
                close(&mut s, depth, opts, ']');
                s.push_str(opts.null_suffix(self.act));
                s
            }
            Body::Map(items) if items.is_empty() => format!("{{}}{}", opts.null_suffix(self.act)),
            Body::Map(items) => {
                let el = Opts {
                    no_null_suffix: true,
                    ..opts
                };
                let mut s = format!("{{{}\n", note(self.replace));
                let mut unchanged = 0;
                for (k, d) in items {
                    if d.act == Act::NoOp && !opts.show_unchanged {
                        unchanged += 1;
                        continue;
                    }
                    let _ = writeln!(
                        s,
                        "{}{} = {},",
                        el.prefix(depth + 1, d.act),
                        quote(k),
                        d.render(depth + 1, el)
                    );
                }
                hidden_line(&mut s, depth + 1, opts, unchanged, "element");
                close(&mut s, depth, opts, '}');
                s.push_str(opts.null_suffix(self.act));
                s
            }
            Body::Block(bd) => {
                if bd.attrs.is_empty() && bd.groups.is_empty() {
                    return format!("{{}}{}", note(self.replace));
                }
                let mut s = format!("{{{}\n", note(self.replace));
                attribute_lines(&mut s, &bd.attrs, depth + 1, opts, opts.show_unchanged);
                block_lines(&mut s, &bd.groups, !bd.attrs.is_empty(), depth + 1, opts);
                close(&mut s, depth, opts, '}');
                s
            }
        }
    }
}

/// The parts of a diff that an unknown value draws as what it was.
fn clone_shallow(d: &Diff) -> Diff {
    let body = match &d.body {
        Body::Plain { b, a, hidden } => Body::Plain {
            b: b.clone(),
            a: a.clone(),
            hidden: hidden.clone(),
        },
        _ => Body::Sensitive,
    };
    Diff {
        act: d.act,
        replace: d.replace,
        body,
    }
}

fn close(s: &mut String, depth: usize, opts: Opts, bracket: char) {
    s.push_str(&opts.prefix(depth, Act::NoOp));
    s.push(bracket);
}

fn hidden_line(s: &mut String, depth: usize, opts: Opts, n: usize, noun: &str) {
    if n > 0 {
        let plural = if n == 1 { "" } else { "s" };
        let _ = writeln!(
            s,
            "{}# ({n} unchanged {noun}{plural} hidden)",
            opts.prefix(depth, Act::NoOp)
        );
    }
}

fn with_note(body: String, note: &str) -> String {
    if note.is_empty() {
        return body;
    }
    match body.find('\n') {
        Some(open) => format!("{}{note}{}", &body[..open], &body[open..]),
        None => body + note,
    }
}

/// The attribute lines of a block or object at `depth`, aligned on all of
/// its attributes (shown or not, as Terraform aligns them), unchanged ones
/// counted unless they are important or `show_unchanged`.
pub fn attribute_lines(
    s: &mut String,
    attrs: &[(String, Diff)],
    depth: usize,
    opts: Opts,
    show_unchanged: bool,
) {
    let width = attrs
        .iter()
        .map(|(k, _)| name_text(k).len())
        .max()
        .unwrap_or(0);
    let mut unchanged = 0;
    for (k, d) in attrs {
        let important = IMPORTANT.contains(&k.as_str());
        if d.act == Act::NoOp && !show_unchanged && !important {
            unchanged += 1;
            continue;
        }
        let o = Opts {
            show_unchanged: opts.show_unchanged || important,
            ..opts
        };
        let _ = writeln!(
            s,
            "{}{:<width$} = {}",
            o.prefix(depth, d.act),
            name_text(k),
            d.render(depth, o)
        );
    }
    hidden_line(s, depth, opts, unchanged, "attribute");
}

/// The nested blocks of a block at `depth`: a blank line before each
/// type's blocks (after attributes, or another type's), unchanged ones
/// counted after all of them.
pub fn block_lines(
    s: &mut String,
    groups: &[(String, Vec<(String, Diff)>)],
    has_attrs: bool,
    depth: usize,
    opts: Opts,
) {
    let mut unchanged = 0;
    for (name, items) in groups {
        let mut opened = false;
        for (label, d) in items {
            if d.act == Act::NoOp && !opts.show_unchanged {
                unchanged += 1;
                continue;
            }
            if !opened && has_attrs {
                s.push('\n');
            }
            opened = true;
            let _ = writeln!(
                s,
                "{}{}{label} {}",
                opts.prefix(depth, d.act),
                name_text(name),
                d.render(depth, opts)
            );
        }
    }
    if unchanged > 0 {
        s.push('\n');
        hidden_line(s, depth, opts, unchanged, "block");
    }
}

/// A whole object as `show` draws it from a state: every attribute and
/// block that is not null, no symbols, the body of its resource block.
pub fn object_body(value: &Value, shape: &BlockShape, marks: &Marks) -> String {
    let cx = Cx {
        before: marks,
        after: marks,
        replace: &[],
    };
    let opts = Opts {
        show_unchanged: true,
        no_null_suffix: true,
        plain: true,
    };
    match block(&[], value, value, shape, &cx) {
        Some(d) => d.render(0, opts),
        None => "{}".into(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use fleetform_shared::plan::shape::NestedBlockShape;
    use fleetform_shared::types::Type;

    fn plain(ty: Type) -> AttrShape {
        AttrShape {
            ty,
            sensitive: false,
            nested: None,
        }
    }

    fn nested_block(nesting: Nesting, attrs: &[(&str, Type)]) -> NestedBlockShape {
        NestedBlockShape {
            nesting,
            block: BlockShape {
                attributes: attrs
                    .iter()
                    .map(|(k, t)| (k.to_string(), plain(t.clone())))
                    .collect(),
                blocks: Default::default(),
            },
        }
    }

    /// `sim_server`'s shape: a block of each nesting mode, a nested
    /// attribute and a sensitive one.
    pub fn server_shape() -> BlockShape {
        let mut s = BlockShape::default();
        for k in ["id", "name"] {
            s.attributes.insert(k.into(), plain(Type::String));
        }
        s.attributes.insert(
            "token".into(),
            AttrShape {
                sensitive: true,
                ..plain(Type::String)
            },
        );
        let endpoint = [
            ("host".to_string(), plain(Type::String)),
            ("port".to_string(), plain(Type::Number)),
        ];
        s.attributes.insert(
            "endpoints".into(),
            AttrShape {
                ty: Type::Dynamic,
                sensitive: false,
                nested: Some(NestedAttrsShape {
                    nesting: Nesting::List,
                    attributes: endpoint.into_iter().collect(),
                }),
            },
        );
        let b = &mut s.blocks;
        b.insert(
            "boot".into(),
            nested_block(Nesting::Single, &[("image", Type::String)]),
        );
        let disk = [("size", Type::Number), ("kind", Type::String)];
        b.insert("disk".into(), nested_block(Nesting::List, &disk));
        let rule = [("port", Type::Number), ("protocol", Type::String)];
        b.insert("rule".into(), nested_block(Nesting::Set, &rule));
        b.insert(
            "label".into(),
            nested_block(Nesting::Map, &[("value", Type::String)]),
        );
        s
    }

    fn obj(items: &[(&str, Value)]) -> Value {
        Value::object(items.iter().map(|(k, v)| (*k, v.clone())))
    }

    /// A `sim_server` object: disks of these sizes (the first `ssd`), rules
    /// on these ports (80 with `tcp`), labels with these keys.
    pub fn server(disks: &[i64], ports: &[i64], labels: &[(&str, &str)]) -> Value {
        let disk = |(i, n): (usize, &i64)| {
            let kind = if i == 0 {
                Value::from("ssd")
            } else {
                Value::null()
            };
            obj(&[("size", Value::int(*n)), ("kind", kind)])
        };
        let rule = |p: &i64| {
            let protocol = if *p == 80 {
                Value::from("tcp")
            } else {
                Value::null()
            };
            obj(&[("port", Value::int(*p)), ("protocol", protocol)])
        };
        let label = labels
            .iter()
            .map(|(k, v)| (k.to_string(), obj(&[("value", Value::from(*v))])));
        obj(&[
            ("id", Value::from("s1")),
            ("name", Value::from("web")),
            ("token", Value::from("hunter2")),
            (
                "endpoints",
                Value::tuple(vec![obj(&[
                    ("host", Value::from("a.example")),
                    ("port", Value::int(80)),
                ])]),
            ),
            ("boot", obj(&[("image", Value::from("debian"))])),
            (
                "disk",
                Value::tuple(disks.iter().enumerate().map(disk).collect()),
            ),
            ("rule", Value::tuple(ports.iter().map(rule).collect())),
            ("label", Value::object(label)),
        ])
    }

    /// A sensitive entry of a map attribute, and a sensitive part deeper
    /// inside one, are never printed: not by `state show`, not in a plan.
    #[test]
    fn sensitive_parts_of_plain_attributes_are_never_printed() {
        let mut shape = BlockShape::default();
        shape
            .attributes
            .insert("triggers".into(), plain(Type::map(Type::String)));
        shape.attributes.insert("cfg".into(), plain(Type::Dynamic));
        let v = Value::object([
            (
                "triggers",
                Value::object([("pw", Value::from("hunter2")), ("id", Value::from("none"))]),
            ),
            (
                "cfg",
                Value::object([(
                    "inner",
                    Value::object([("secret", Value::from("s3cr3t")), ("n", Value::int(1))]),
                )]),
            ),
        ]);
        let key = |k: &str| PathStep::Key(k.into());
        let marks = Marks::from_paths([
            vec![key("triggers"), key("pw")],
            vec![key("cfg"), key("inner"), key("secret")],
        ]);
        let shown = object_body(&v, &shape, &marks);
        assert!(
            !shown.contains("hunter2") && !shown.contains("s3cr3t"),
            "{shown}"
        );
        assert!(shown.contains("\"pw\" = (sensitive value)"), "{shown}");
        let cx = Cx {
            before: &marks,
            after: &marks,
            replace: &[],
        };
        for name in ["triggers", "cfg"] {
            let a = v.get_attr(name).clone();
            let created = attribute(
                &[key(name)],
                &Value::null(),
                &a,
                shape.attributes.get(name),
                &cx,
            )
            .expect("a change")
            .render(0, Opts::default());
            assert!(
                !created.contains("hunter2") && !created.contains("s3cr3t"),
                "{created}"
            );
        }
    }

    #[test]
    fn a_state_object_shows_every_block_without_symbols() {
        let marks = Marks::from_paths([vec![PathStep::Key("token".into())]]);
        let v = server(&[10, 20], &[80, 2222], &[("env", "prod")]);
        assert_eq!(
            object_body(&v, &server_shape(), &marks),
            concat!(
                "{\n",
                "    endpoints = [\n",
                "        {\n",
                "            host = \"a.example\"\n",
                "            port = 80\n",
                "        },\n",
                "    ]\n",
                "    id        = \"s1\"\n",
                "    name      = \"web\"\n",
                "    token     = (sensitive value)\n",
                "\n",
                "    boot {\n",
                "        image = \"debian\"\n",
                "    }\n",
                "\n",
                "    disk {\n",
                "        kind = \"ssd\"\n",
                "        size = 10\n",
                "    }\n",
                "    disk {\n",
                "        size = 20\n",
                "    }\n",
                "\n",
                "    label \"env\" {\n",
                "        value = \"prod\"\n",
                "    }\n",
                "\n",
                "    rule {\n",
                "        port = 2222\n",
                "    }\n",
                "    rule {\n",
                "        port     = 80\n",
                "        protocol = \"tcp\"\n",
                "    }\n",
                "}",
            )
        );
    }

    #[test]
    fn a_set_block_pairs_equal_elements_and_shows_the_rest_removed_then_added() {
        let empty = Marks::none();
        let cx = Cx {
            before: &empty,
            after: &empty,
            replace: &[],
        };
        let shape = server_shape();
        let b = server(&[10], &[22, 80], &[]);
        let a = server(&[10], &[80, 2222], &[]);
        let mut act = Act::NoOp;
        let groups = block_groups(&[], &b, &a, &shape, &cx, &mut act);
        let mut s = String::new();
        block_lines(&mut s, &groups, true, 1, Opts::default());
        assert_eq!(act, Act::Update);
        assert_eq!(
            s,
            concat!(
                "\n",
                "      - rule {\n",
                "          - port = 22 -> null\n",
                "        }\n",
                "      + rule {\n",
                "          + port = 2222\n",
                "        }\n",
                "\n",
                "        # (3 unchanged blocks hidden)\n",
            )
        );
    }
}
