//! `.tf.json` files into [`Body`]: HCL's JSON structure (a block is a
//! property holding one object per label level, then an object or an array
//! of objects for the bodies) read with the schema Terraform's own
//! configuration loader gives each block type. Properties no such schema
//! names stay in [`Body::json`] until a provider schema decodes the body
//! and says whether each is an argument or a nested block.

use super::body::{Attribute, Body, JsonProperty, NestedBlockSyntax};
use super::json_expr::{Mode, lower};
use super::json_parse::{self, JsonKind, JsonMember, JsonValue};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::schema::{Block, Nesting};

impl JsonProperty {
    /// The property read as an argument (`"name": expression`).
    pub fn to_attribute(&self, mode: Mode, diags: &mut Diagnostics) -> Attribute {
        Attribute {
            name: self.name.clone(),
            expr: lower(&self.value, mode, diags),
            range: self.name_range.to(&self.value.range),
            name_range: self.name_range.clone(),
        }
    }
}

/// What Terraform's configuration loader knows about one kind of body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Resource,
    Data,
    Lifecycle,
    CheckRule,
    Provisioner,
    Connection,
    Variable,
    Output,
    Locals,
    Module,
    Provider,
    Terraform,
    RequiredProviders,
    Moved,
    Import,
    /// Decoded later against a provider's schema.
    Schema,
    Dynamic,
    /// Settings fleetform does not read (`backend`, `check`, `removed`).
    Opaque,
}

/// How one property name of a body is read.
enum Item {
    Attr(Mode),
    Block(&'static [&'static str], Kind),
}

/// What happens to properties the body's schema does not name.
enum Rest {
    /// Kept for a later schema: a provider's, for resources and providers.
    Pending,
    /// Every property is an argument (`locals`, module call inputs).
    Attributes(Mode),
    /// The schema is complete: anything else is an error.
    Reject,
}

/// Every name [`item`] knows, to suggest the nearest for a mistyped one.
#[rustfmt::skip]
const KNOWN_NAMES: &[&str] = &[
    "terraform", "provider", "variable", "locals", "output", "module", "resource", "data",
    "moved", "import", "check", "removed", "count", "for_each", "depends_on", "lifecycle",
    "provisioner", "connection", "dynamic", "when", "on_failure", "type",
    "create_before_destroy", "prevent_destroy", "ignore_changes", "replace_triggered_by",
    "precondition", "postcondition", "condition", "error_message", "default", "description",
    "sensitive", "nullable", "ephemeral", "validation", "value", "source", "version",
    "providers", "alias", "required_version", "experiments", "language", "required_providers",
    "backend", "provider_meta", "cloud", "from", "to", "id", "labels", "iterator", "content",
];

fn item(kind: Kind, name: &str) -> Option<Item> {
    use Item::{Attr, Block as B};
    use Mode::{Literal, Static, Template};
    Some(match (kind, name) {
        (Kind::File, "resource" | "data" | "ephemeral") => B(&["type", "name"], file_kind(name)),
        (Kind::File, "variable" | "output" | "module" | "provider" | "check") => {
            B(&["name"], file_kind(name))
        }
        (Kind::File, "locals" | "terraform" | "moved" | "import" | "removed") => {
            B(&[], file_kind(name))
        }
        (Kind::Resource | Kind::Data | Kind::Module, "count" | "for_each") => Attr(Template),
        (Kind::Resource | Kind::Data | Kind::Module | Kind::Output, "depends_on") => Attr(Static),
        (Kind::Resource | Kind::Data, "provider") => Attr(Static),
        (Kind::Resource | Kind::Data, "lifecycle") => B(&[], Kind::Lifecycle),
        (Kind::Resource, "provisioner") => B(&["type"], Kind::Provisioner),
        (Kind::Resource | Kind::Provisioner, "connection") => B(&[], Kind::Connection),
        (Kind::Resource | Kind::Data | Kind::Provider | Kind::Schema, "dynamic") => {
            B(&["type"], Kind::Dynamic)
        }
        (Kind::Provisioner, "when" | "on_failure") => Attr(Static),
        (Kind::Connection, "type") => Attr(Literal),
        (Kind::Lifecycle, "create_before_destroy" | "prevent_destroy") => Attr(Literal),
        (Kind::Lifecycle, "ignore_changes" | "replace_triggered_by") => Attr(Static),
        (Kind::Lifecycle | Kind::Output, "precondition") => B(&[], Kind::CheckRule),
        (Kind::Lifecycle, "postcondition") => B(&[], Kind::CheckRule),
        (Kind::CheckRule, "condition" | "error_message") => Attr(Template),
        (Kind::Variable, "type") => Attr(Static),
        (Kind::Variable, "default" | "description" | "sensitive" | "nullable" | "ephemeral") => {
            Attr(Literal)
        }
        (Kind::Variable, "validation") => B(&[], Kind::CheckRule),
        (Kind::Output, "value") => Attr(Template),
        (Kind::Output, "description" | "sensitive" | "ephemeral") => Attr(Literal),
        (Kind::Module, "source" | "version") => Attr(Literal),
        (Kind::Module, "providers") => Attr(Static),
        (Kind::Provider, "alias" | "version") => Attr(Literal),
        (Kind::Terraform, "required_version") => Attr(Literal),
        (Kind::Terraform, "experiments" | "language") => Attr(Static),
        (Kind::Terraform, "required_providers") => B(&[], Kind::RequiredProviders),
        (Kind::Terraform, "backend") => B(&["type"], Kind::Opaque),
        (Kind::Terraform, "provider_meta") => B(&["provider"], Kind::Opaque),
        (Kind::Terraform, "cloud") => B(&[], Kind::Opaque),
        (Kind::Moved, "from" | "to") => Attr(Static),
        (Kind::Import, "to" | "provider") => Attr(Static),
        (Kind::Import, "id" | "for_each") => Attr(Template),
        (Kind::Dynamic, "for_each" | "labels") => Attr(Template),
        (Kind::Dynamic, "iterator") => Attr(Static),
        (Kind::Dynamic, "content") => B(&[], Kind::Schema),
        _ => return None,
    })
}

fn file_kind(name: &str) -> Kind {
    match name {
        "resource" => Kind::Resource,
        "data" => Kind::Data,
        "variable" => Kind::Variable,
        "output" => Kind::Output,
        "module" => Kind::Module,
        "provider" => Kind::Provider,
        "locals" => Kind::Locals,
        "terraform" => Kind::Terraform,
        "moved" => Kind::Moved,
        "import" => Kind::Import,
        _ => Kind::Opaque,
    }
}

fn rest(kind: Kind) -> Rest {
    match kind {
        Kind::Locals | Kind::Module => Rest::Attributes(Mode::Template),
        Kind::RequiredProviders => Rest::Attributes(Mode::Literal),
        Kind::File
        | Kind::Variable
        | Kind::Output
        | Kind::Lifecycle
        | Kind::CheckRule
        | Kind::Terraform
        | Kind::Moved
        | Kind::Import
        | Kind::Dynamic => Rest::Reject,
        Kind::Resource
        | Kind::Data
        | Kind::Provisioner
        | Kind::Connection
        | Kind::Provider
        | Kind::Schema
        | Kind::Opaque => Rest::Pending,
    }
}

/// Parses a `.tf.json` file into its top-level body; None on a syntax error.
pub fn parse_json_file(filename: &str, source: &str) -> (Option<Body>, Diagnostics) {
    let root = match json_parse::parse(filename, source) {
        Ok(v) => v,
        Err(d) => return (None, d.into()),
    };
    let mut diags = Diagnostics::new();
    if !matches!(root.kind, JsonKind::Object { .. } | JsonKind::Array(_)) {
        diags.push(
            Diagnostic::error(
                "Root value must be object",
                "The root value in a JSON-based configuration must be either a JSON object or a JSON array of objects.",
            )
            .at(root.start_range()),
        );
        return (None, diags);
    }
    let body = body(&root, Kind::File, &mut diags);
    (Some(body), diags)
}

/// The properties of a body written as an object or an array of objects
/// (HCL's flattening), with the errors for values of other types.
/// `label` names the block label being read, for the error text.
fn members<'a>(
    v: &'a JsonValue,
    label: Option<&str>,
    diags: &mut Diagnostics,
) -> Vec<&'a JsonMember> {
    let wrong = |whole: bool| {
        match (label, whole) {
        (Some(l), true) => format!(
            "Either a JSON object or JSON array of objects is required here, to specify {l} labels for this block."
        ),
        (Some(l), false) => {
            format!("A JSON object is required here, to specify {l} labels for this block.")
        }
        (None, true) => "Either a JSON object or JSON array of objects is required here, to define arguments and child blocks.".to_string(),
        (None, false) => {
            "A JSON object is required here, to define arguments and child blocks.".to_string()
        }
    }
    };
    match &v.kind {
        JsonKind::Null => Vec::new(),
        JsonKind::Object { members, .. } => members.iter().collect(),
        JsonKind::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                match &item.kind {
                    JsonKind::Object { members, .. } => out.extend(members.iter()),
                    _ => diags.push(
                        Diagnostic::error("Incorrect JSON value type", wrong(false))
                            .at(item.start_range()),
                    ),
                }
            }
            out
        }
        _ => {
            diags.push(
                Diagnostic::error("Incorrect JSON value type", wrong(true)).at(v.start_range()),
            );
            Vec::new()
        }
    }
}

/// Builds the body of one block of `kind` from its JSON value.
fn body(v: &JsonValue, kind: Kind, diags: &mut Diagnostics) -> Body {
    let missing_item_range = match &v.kind {
        JsonKind::Object { close, .. } => close.clone(),
        _ => v.start_range(),
    };
    let mut out = Body {
        range: v.range.clone(),
        missing_item_range,
        ..Body::default()
    };
    for m in members(v, None, diags) {
        if m.name == "//" {
            continue; // a comment
        }
        let p = JsonProperty {
            name: m.name.clone(),
            name_range: m.name_range.clone(),
            value: m.value.clone(),
        };
        match (item(kind, &m.name), rest(kind)) {
            (Some(Item::Attr(mode)), _) => add_attribute(&mut out, &p, mode, false, diags),
            (Some(Item::Block(labels, k)), _) => {
                for f in unpack(&p, labels, diags) {
                    let b = nested(&p, f, k, diags);
                    out.blocks.push(b);
                }
            }
            (None, Rest::Attributes(mode)) => add_attribute(&mut out, &p, mode, true, diags),
            (None, Rest::Pending) => out.json.push(p),
            (None, Rest::Reject) => {
                let names: Vec<&str> = KNOWN_NAMES
                    .iter()
                    .copied()
                    .filter(|n| item(kind, n).is_some())
                    .collect();
                diags.push(p.extraneous(&names));
            }
        }
    }
    out
}

/// Adds a property as an argument; a repeated name is an error (HCL words
/// it differently for bodies of arguments only).
fn add_attribute(
    out: &mut Body,
    p: &JsonProperty,
    mode: Mode,
    just_attributes: bool,
    diags: &mut Diagnostics,
) {
    if let Some(prev) = out.attributes.get(&p.name) {
        let summary = if just_attributes {
            "Duplicate attribute definition"
        } else {
            "Duplicate argument"
        };
        diags.push(
            Diagnostic::error(
                summary,
                format!(
                    "The argument {:?} was already set at {}.",
                    p.name,
                    super::args::at(&prev.range)
                ),
            )
            .at(p.name_range.clone()),
        );
        return;
    }
    out.attributes
        .insert(p.name.clone(), p.to_attribute(mode, diags));
}

/// One block body found under a block property, with its labels.
struct Found<'a> {
    value: &'a JsonValue,
    labels: Vec<String>,
    label_ranges: Vec<SourceRange>,
}

/// Walks a block property's label levels to the block bodies under them.
fn unpack<'a>(
    p: &'a JsonProperty,
    label_names: &[&str],
    diags: &mut Diagnostics,
) -> Vec<Found<'a>> {
    fn walk<'a>(
        p: &JsonProperty,
        v: &'a JsonValue,
        left: &[&str],
        labels: &mut Vec<(String, SourceRange)>,
        out: &mut Vec<Found<'a>>,
        diags: &mut Diagnostics,
    ) {
        if let Some((label, rest)) = left.split_first() {
            let ms = members(v, Some(label), diags);
            if ms.is_empty() {
                diags.push(
                    Diagnostic::error(
                        "Missing block label",
                        format!(
                            "At least one object property is required, whose name represents the {} block's {label}.",
                            p.name
                        ),
                    )
                    .at(v.start_range()),
                );
                return;
            }
            for m in ms {
                labels.push((m.name.clone(), m.name_range.clone()));
                walk(p, &m.value, rest, labels, out, diags);
                labels.pop();
            }
            return;
        }
        let found = |value| {
            let (labels, label_ranges) = labels.iter().cloned().unzip();
            Found {
                value,
                labels,
                label_ranges,
            }
        };
        match &v.kind {
            JsonKind::Null => {}
            JsonKind::Object { .. } => out.push(found(v)),
            JsonKind::Array(items) => out.extend(items.iter().map(found)),
            _ => diags.push(
                Diagnostic::error(
                    "Incorrect JSON value type",
                    format!(
                        "Either a JSON object or a JSON array is required, representing the contents of one or more {:?} blocks.",
                        p.name
                    ),
                )
                .at(v.start_range()),
            ),
        }
    }
    let mut out = Vec::new();
    walk(p, &p.value, label_names, &mut Vec::new(), &mut out, diags);
    out
}

fn nested(
    p: &JsonProperty,
    f: Found<'_>,
    kind: Kind,
    diags: &mut Diagnostics,
) -> NestedBlockSyntax {
    NestedBlockSyntax {
        type_name: p.name.clone(),
        labels: f.labels,
        body: body(f.value, kind, diags),
        // From the innermost name (last label, or the type) to the body's end.
        range: f
            .label_ranges
            .last()
            .unwrap_or(&p.name_range)
            .to(&f.value.range),
        // Terraform's declaration range of a JSON block: its body's opening brace.
        decl_range: f.value.start_range(),
        label_ranges: f.label_ranges,
    }
}

impl Body {
    /// This body with its JSON properties read against `schema`: arguments
    /// become attributes, block types nested blocks (their bodies again
    /// waiting for their own schema); anything else is an error.
    pub(super) fn resolve_json(&self, schema: &Block, diags: &mut Diagnostics) -> Body {
        let mut out = Body {
            json: Vec::new(),
            ..self.clone()
        };
        let mut names: Vec<&str> = schema.attributes.keys().map(String::as_str).collect();
        names.extend(schema.block_types.keys().map(String::as_str));
        for p in &self.json {
            if schema.attributes.contains_key(&p.name) {
                add_attribute(&mut out, p, Mode::Template, false, diags);
            } else if let Some(nb) = schema.block_types.get(&p.name) {
                let labels: &[&str] = if nb.nesting == Nesting::Map {
                    &["key"]
                } else {
                    &[]
                };
                for f in unpack(p, labels, diags) {
                    let b = nested(p, f, Kind::Schema, diags);
                    out.blocks.push(b);
                }
            } else {
                diags.push(p.extraneous(&names));
            }
        }
        out
    }

    /// References in the JSON properties no schema has read yet: each is
    /// read as an expression, which finds the references of a nested block's
    /// arguments too.
    /// The JSON properties no schema has read yet, each read as an
    /// expression (strings as templates): what a walk over every
    /// expression of a body sees of them.
    pub fn json_expressions(&self) -> Vec<crate::eval::Expr> {
        let mut ignored = Diagnostics::new();
        self.json
            .iter()
            .map(|p| lower(&p.value, Mode::Template, &mut ignored))
            .collect()
    }

    /// The references of the JSON properties named `name` (all of them
    /// when None) with the part of its object each reads.
    pub(super) fn json_reference_paths(
        &self,
        name: Option<&str>,
    ) -> Vec<crate::eval::ReferencePath> {
        let mut ignored = Diagnostics::new();
        self.json
            .iter()
            .filter(|p| name.is_none_or(|n| p.name == n))
            .flat_map(|p| lower(&p.value, Mode::Template, &mut ignored).reference_paths())
            .collect()
    }

    pub(super) fn json_references(&self) -> Vec<(crate::eval::Reference, SourceRange)> {
        let mut ignored = Diagnostics::new();
        self.json
            .iter()
            .flat_map(|p| lower(&p.value, Mode::Template, &mut ignored).references())
            .collect()
    }
}
