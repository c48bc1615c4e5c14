//! Schema-less block bodies: the arguments and nested blocks of a block as
//! written, kept as expressions until a schema decodes them. A body from a
//! `.tf.json` file may also hold properties whose kind (argument or nested
//! block) only the schema that decodes it can tell.

use super::json_parse::JsonValue;
use crate::eval::{Expr, InstanceReference, Lowerer, Reference, ReferencePath};
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use hcl_edit::Span;
use hcl_edit::structure::{Block as HclBlock, Body as HclBody, Structure};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A property of a JSON body that only a schema can tell the meaning of.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonProperty {
    pub name: String,
    pub name_range: SourceRange,
    pub value: JsonValue,
}

impl JsonProperty {
    /// "Extraneous JSON object property", HCL's report of a property that
    /// is neither an argument nor a block type, with a suggestion when one
    /// of `names` is close.
    pub(super) fn extraneous(&self, names: &[&str]) -> Diagnostic {
        let hint = super::json_parse::suggestion(&self.name, names)
            .map(|s| format!(" Did you mean {s:?}?"))
            .unwrap_or_default();
        Diagnostic::error(
            "Extraneous JSON object property",
            format!("No argument or block type is named {:?}.{hint}", self.name),
        )
        .at(self.name_range.clone())
    }
}

/// `file:line,column` of a range, as Terraform cites earlier declarations.
pub(super) fn at(r: &SourceRange) -> String {
    format!("{}:{},{}", r.filename, r.start.line, r.start.column)
}

/// The contents of a block: arguments by name and nested blocks in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Body {
    pub attributes: BTreeMap<String, Attribute>,
    pub blocks: Vec<NestedBlockSyntax>,
    /// The whole enclosing block (or file, for a file's top-level body).
    pub range: SourceRange,
    /// Where a missing argument or block is reported: the closing brace.
    pub missing_item_range: SourceRange,
    /// JSON properties waiting for a schema, in source order (names may
    /// repeat: several blocks of one type). Always empty for HCL bodies.
    pub json: Vec<JsonProperty>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: String,
    pub expr: Expr,
    /// The whole `name = expr` line.
    pub range: SourceRange,
    /// Just the name.
    pub name_range: SourceRange,
}

/// A nested block as written: `type "label" { ... }`.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBlockSyntax {
    pub type_name: String,
    pub labels: Vec<String>,
    pub body: Body,
    /// The whole block.
    pub range: SourceRange,
    /// The type name and labels.
    pub decl_range: SourceRange,
    pub label_ranges: Vec<SourceRange>,
}

impl NestedBlockSyntax {
    /// The iterator name of a `dynamic` block: `iterator = x`, else its
    /// label (expanding it is `dynamic.rs`'s work).
    pub(super) fn dynamic_iterator_name(&self) -> String {
        self.body
            .attributes
            .get("iterator")
            .and_then(|a| a.expr.as_keyword().map(str::to_string))
            .or_else(|| self.labels.first().cloned())
            .unwrap_or_default()
    }

    /// References of a `dynamic` block, without those to its own iterator.
    fn dynamic_references(&self) -> Vec<(Reference, SourceRange)> {
        let name = self.dynamic_iterator_name();
        self.body
            .references()
            .into_iter()
            .filter(|(r, _)| !matches!(r, Reference::Resource(res) if res.mode == ResourceMode::Managed && res.type_name == name))
            .collect()
    }

    /// The references of the block's body ([`Body::reference_paths`]); for
    /// a `dynamic` block, of its `for_each` and content, without those to
    /// its own iterator.
    pub fn reference_paths(&self) -> Vec<ReferencePath> {
        if self.type_name != "dynamic" {
            return self.body.reference_paths();
        }
        let iterator = self.dynamic_iterator_name();
        self.body
            .reference_paths()
            .into_iter()
            .filter(|r| !matches!(&r.reference, Reference::Resource(res) if res.mode == ResourceMode::Managed && res.type_name == iterator))
            .collect()
    }

    /// `resource "null_resource" "a"`, as Terraform names blocks in diagnostics.
    pub fn header(&self) -> String {
        let mut out = self.type_name.clone();
        for l in &self.labels {
            out.push_str(&format!(" {l:?}"));
        }
        out
    }
}

impl Body {
    /// Every reference in the body's expressions, nested blocks included.
    pub fn references(&self) -> Vec<(Reference, SourceRange)> {
        let mut out = Vec::new();
        for a in self.attributes.values() {
            out.extend(a.expr.references());
        }
        for b in &self.blocks {
            if b.type_name == "dynamic" {
                out.extend(b.dynamic_references());
            } else {
                out.extend(b.body.references());
            }
        }
        out.extend(self.json_references());
        out
    }

    /// [`Body::references`] with the index expression right after each
    /// resource or module call ([`Expr::instance_references`]); inside a
    /// `dynamic` block or a JSON body none is given (the reference counts
    /// as one to every instance).
    pub fn instance_references(&self) -> Vec<InstanceReference> {
        let mut out = Vec::new();
        for a in self.attributes.values() {
            out.extend(a.expr.instance_references());
        }
        for b in &self.blocks {
            if b.type_name == "dynamic" {
                out.extend(
                    b.dynamic_references()
                        .into_iter()
                        .map(|(r, _)| InstanceReference::whole(r)),
                );
            } else {
                out.extend(b.body.instance_references());
            }
        }
        out.extend(
            self.json_references()
                .into_iter()
                .map(|(r, _)| InstanceReference::whole(r)),
        );
        out
    }

    /// [`Body::references`] with the part of its object each reads
    /// ([`ReferencePath`]); a JSON body's properties waiting for a schema
    /// are read as templates, as [`Body::references`] reads them.
    pub fn reference_paths(&self) -> Vec<ReferencePath> {
        let mut out = Vec::new();
        for a in self.attributes.values() {
            out.extend(a.expr.reference_paths());
        }
        for b in &self.blocks {
            out.extend(b.reference_paths());
        }
        out.extend(self.json_reference_paths(None));
        out
    }

    /// Nested blocks of one type.
    pub fn blocks_of<'a>(
        &'a self,
        type_name: &'a str,
    ) -> impl Iterator<Item = &'a NestedBlockSyntax> + 'a {
        self.blocks.iter().filter(move |b| b.type_name == type_name)
    }

    /// Removes and returns an argument (meta-arguments are taken out before schema decoding).
    pub fn take_attribute(&mut self, name: &str) -> Option<Attribute> {
        self.attributes.remove(name)
    }

    /// Removes and returns all nested blocks of one type.
    pub fn take_blocks(&mut self, type_name: &str) -> Vec<NestedBlockSyntax> {
        let (taken, kept) = std::mem::take(&mut self.blocks)
            .into_iter()
            .partition(|b| b.type_name == type_name);
        self.blocks = kept;
        taken
    }
}

impl Lowerer<'_> {
    /// Lowers an hcl-edit body; `outer` is the span of the enclosing block.
    pub fn body(
        &self,
        body: &HclBody,
        outer: Option<std::ops::Range<usize>>,
        diags: &mut Diagnostics,
    ) -> Body {
        let range = self.range(outer.clone());
        let end = range.end.byte;
        let missing_item_range = self.bytes(end.saturating_sub(1), end);
        let mut out = Body {
            range,
            missing_item_range,
            ..Body::default()
        };
        for s in body.iter() {
            match s {
                Structure::Attribute(a) => {
                    let name = a.key.value().to_string();
                    let attr = Attribute {
                        name: name.clone(),
                        expr: self.expr(&a.value),
                        range: self.range(a.span()),
                        name_range: self.range(a.key.span()),
                    };
                    if let Some(prev) = out.attributes.get(&name) {
                        diags.push(
                            Diagnostic::error(
                                "Attribute redefined",
                                format!(
                                    "The argument \"{name}\" was already set at {}:{},{}. Each argument may be set only once.",
                                    prev.range.filename, prev.range.start.line, prev.range.start.column
                                ),
                            )
                            .at(attr.name_range.clone()),
                        );
                        continue;
                    }
                    out.attributes.insert(name, attr);
                }
                Structure::Block(b) => out.blocks.push(self.block(b, diags)),
            }
        }
        out
    }

    pub fn block(&self, b: &HclBlock, diags: &mut Diagnostics) -> NestedBlockSyntax {
        let label_ranges: Vec<SourceRange> =
            b.labels.iter().map(|l| self.range(l.span())).collect();
        let ident = self.range(b.ident.span());
        let decl_range = match label_ranges.last() {
            Some(last) => self.bytes(ident.start.byte, last.end.byte),
            None => ident,
        };
        NestedBlockSyntax {
            type_name: b.ident.value().to_string(),
            labels: b.labels.iter().map(|l| l.as_str().to_string()).collect(),
            body: self.body(&b.body, b.span(), diags),
            range: self.range(b.span()),
            decl_range,
            label_ranges,
        }
    }
}

/// A syntax error as specific as Terraform's ("Unclosed configuration
/// block", "Missing item separator"...), from the canonical formatter's
/// parser, which names the problem where hcl-edit only says what token it
/// expected; None when that parser finds nothing (then hcl-edit's error
/// stands).
fn specific_syntax_error(filename: &str, source: &str) -> Option<Diagnostic> {
    let e = crate::fmt::format(source).err()?;
    let (summary, detail) = match e.message.split_once(": ") {
        Some((s, d)) => (
            s.to_string(),
            format!("{}{}.", d[..1].to_uppercase(), &d[1..]),
        ),
        None => {
            let detail = match e.message.as_str() {
                "Unclosed configuration block" => {
                    "There is no closing brace for this block before the end of the file: a brace is missing here, or one nested elsewhere in the file does not match."
                }
                "Missing item separator" => "Items of a list or tuple are separated by commas.",
                "Missing attribute separator" => {
                    "Attributes of an object are separated by commas or line breaks."
                }
                "Invalid multi-line string" => {
                    "A quoted string cannot span lines: write a heredoc (<<EOT ... EOT) for text of several lines, or \\n for a line break."
                }
                _ => "",
            };
            (e.message.clone(), detail.to_string())
        }
    };
    // Line and column (in characters) to a byte offset.
    let line_start: usize = source
        .split_inclusive('\n')
        .take(e.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = source[line_start.min(source.len())..]
        .char_indices()
        .nth(e.column.saturating_sub(1))
        .map_or(source.len(), |(i, _)| line_start + i);
    let range = SourceRange::from_bytes(filename, source, offset, (offset + 1).min(source.len()));
    Some(Diagnostic::error(summary, detail).at(range))
}

/// Parses one file into its top-level body; None on a syntax error.
pub fn parse_file(filename: &str, source: &str) -> (Option<Body>, Diagnostics) {
    use super::repeated_keys::parse_allowing_repeated_keys;
    use hcl_edit::parser::parse_body;
    // `rewritten`: the text parsed when repeated keys were rewritten in it
    // (repeated_keys.rs); spans refer to it.
    let (parsed, rewritten) = match parse_allowing_repeated_keys(source, parse_body) {
        Ok((p, t)) => (p, matches!(t, Cow::Owned(_)).then(|| t.into_owned())),
        // hcl-edit stops at line breaks inside object `for` expressions,
        // which HCL allows: try once more without them (same offsets, so
        // the source itself stays the text spans refer to).
        Err(e) => match super::newlines::join_object_for_lines(source).and_then(|joined| {
            parse_allowing_repeated_keys(&joined, parse_body)
                .ok()
                .map(|(p, t)| (p, matches!(t, Cow::Owned(_)).then(|| t.into_owned())))
        }) {
            Some(p) => p,
            None => {
                let d = specific_syntax_error(filename, source)
                    .unwrap_or_else(|| crate::eval::syntax_error(filename, source, &e));
                return (None, d.into());
            }
        },
    };
    let text = rewritten.as_deref().unwrap_or(source);
    let mut diags = Diagnostics::new();
    let body = Lowerer::new(filename, text).body(&parsed, Some(0..text.len()), &mut diags);
    (Some(body), diags)
}
