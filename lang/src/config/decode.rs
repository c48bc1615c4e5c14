//! Schema-directed decoding of a body into an object value, with Terraform's
//! diagnostics for unsupported, missing and mistyped arguments and blocks,
//! and the sensitivity marks of the arguments' values.

use super::args::at;
use super::body::Body;
use super::dynamic;
use crate::eval::{Iteration, Overlay};
use crate::eval::{Marks, Scope, convert, evaluate_marked};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::schema::{Block, Nesting};
use fleetform_shared::value::{PathStep, Value};

impl Body {
    /// Decodes the body against `schema`: the result is an object with every
    /// schema attribute and block type present (null / empty when unset).
    pub fn decode(&self, schema: &Block, ctx: &dyn Scope) -> (Value, Diagnostics) {
        let (v, _, diags) = self.decode_marked(schema, ctx);
        (v, diags)
    }

    /// [`Body::decode`], with the paths of the result that came from
    /// sensitive values (a sensitive variable given to an argument).
    pub fn decode_marked(&self, schema: &Block, ctx: &dyn Scope) -> (Value, Marks, Diagnostics) {
        let mut diags = Diagnostics::new();
        if !self.json.is_empty() {
            // JSON: the schema says which properties are arguments and which blocks.
            let resolved = self.resolve_json(schema, &mut diags);
            let (v, marks, d) = resolved.decode_marked(schema, ctx);
            diags.extend(d);
            return (v, marks, diags);
        }
        let mut out = fleetform_shared::value::ValueMap::new();
        let mut marks = Marks::none();
        self.decode_attributes(schema, ctx, &mut out, &mut marks, &mut diags);
        for b in &self.blocks {
            if b.type_name == "dynamic"
                && b.labels.len() == 1
                && schema.block_types.contains_key(&b.labels[0])
            {
                continue;
            }
            if !schema.block_types.contains_key(&b.type_name) {
                let detail = if schema.attributes.contains_key(&b.type_name) {
                    format!(
                        "Blocks of type \"{0}\" are not expected here. Did you mean to define argument \"{0}\"? If so, use the equals sign to assign it a value.",
                        b.type_name
                    )
                } else {
                    format!("Blocks of type \"{}\" are not expected here.", b.type_name)
                };
                diags.push(
                    Diagnostic::error("Unsupported block type", detail).at(b.decl_range.clone()),
                );
            }
        }
        for (name, nb) in &schema.block_types {
            let Some(blocks) = self.instances(name, ctx, &mut diags) else {
                out.insert(name.clone(), Value::unknown());
                continue;
            };
            let (v, m) = self.decode_nested(
                name,
                nb.nesting,
                &nb.block,
                nb.min_items,
                nb.max_items,
                &blocks,
                ctx,
                &mut diags,
            );
            marks.extend(m.nest(PathStep::Key(name.clone())));
            out.insert(name.clone(), v);
        }
        (Value::Map(out), marks, diags)
    }

    fn decode_attributes(
        &self,
        schema: &Block,
        ctx: &dyn Scope,
        out: &mut fleetform_shared::value::ValueMap,
        marks: &mut Marks,
        diags: &mut Diagnostics,
    ) {
        for (name, attr) in &self.attributes {
            let Some(sa) = schema.attributes.get(name) else {
                let detail = if schema.block_types.contains_key(name) {
                    format!(
                        "An argument named \"{name}\" is not expected here. Did you mean to define a block of type \"{name}\"?"
                    )
                } else {
                    format!("An argument named \"{name}\" is not expected here.")
                };
                diags.push(
                    Diagnostic::error("Unsupported argument", detail).at(attr.name_range.clone()),
                );
                continue;
            };
            if sa.computed && !sa.optional && !sa.required {
                diags.push(
                    Diagnostic::error(
                        "Value for unconfigurable attribute",
                        format!("Can't configure a value for \"{name}\": its value will be decided automatically based on the result of applying this configuration."),
                    )
                    .at(attr.name_range.clone()),
                );
                continue;
            }
            if sa.has_write_only() && !sa.write_only {
                // Write-only attributes inside a nested attribute type are
                // not carried out: refused rather than written to plans and
                // state.
                diags.push(
                    Diagnostic::error(
                        "Unsupported feature: nested write-only attributes",
                        format!("The argument \"{name}\" holds write-only attributes inside its nested type: fleetform carries out write-only attributes at the top level of a block only, so it will not run a configuration that sets this one rather than record the value."),
                    )
                    .at(attr.range.clone()),
                );
                continue;
            }
            match evaluate_marked(&attr.expr, ctx) {
                Ok((v, m)) => match convert(v, &sa.ty) {
                    Ok(v) => {
                        marks.extend(m.conform(&sa.ty).nest(PathStep::Key(name.clone())));
                        out.insert(name.clone(), v);
                    }
                    Err(e) => diags.push(
                        Diagnostic::error(
                            "Incorrect attribute value type",
                            format!("Inappropriate value for attribute \"{name}\": {e}."),
                        )
                        .at(attr.expr.range.clone()),
                    ),
                },
                Err(d) => diags.extend(d),
            }
        }
        for (name, sa) in &schema.attributes {
            if out.contains_key(name) {
                continue;
            }
            if sa.required && !self.attributes.contains_key(name) {
                diags.push(
                    Diagnostic::error(
                        "Missing required argument",
                        format!(
                            "The argument \"{name}\" is required, but no definition was found."
                        ),
                    )
                    .at(self.missing_item_range.clone()),
                );
            }
            out.insert(name.clone(), Value::null());
        }
    }

    /// The blocks of one type, static and from `dynamic` blocks; None when a
    /// `dynamic` block's `for_each` is unknown.
    fn instances<'s>(
        &'s self,
        name: &str,
        ctx: &dyn Scope,
        diags: &mut Diagnostics,
    ) -> Option<Vec<Instance<'s>>> {
        let mut out: Vec<Instance<'s>> = self
            .blocks
            .iter()
            .filter(|b| b.type_name == name)
            .map(|b| Instance {
                body: &b.body,
                labels: b.labels.clone(),
                decl_range: &b.decl_range,
                iteration: None,
            })
            .collect();
        let mut known = true;
        for b in self
            .blocks
            .iter()
            .filter(|b| b.type_name == "dynamic")
            .filter(|b| b.labels.first().map(String::as_str) == Some(name))
        {
            match dynamic::expand(b, ctx, diags) {
                Some(items) => out.extend(items.into_iter().map(|e| Instance {
                    body: e.content,
                    labels: e.labels,
                    decl_range: e.decl_range,
                    iteration: Some(e.iteration),
                })),
                None => known = false,
            }
        }
        known.then_some(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn decode_nested(
        &self,
        name: &str,
        nesting: Nesting,
        schema: &Block,
        min: i64,
        max: i64,
        blocks: &[Instance<'_>],
        ctx: &dyn Scope,
        diags: &mut Diagnostics,
    ) -> (Value, Marks) {
        let labels = if nesting == Nesting::Map { 1 } else { 0 };
        let mut decoded = Vec::new();
        for b in blocks {
            if b.labels.len() != labels {
                let (summary, detail) = if b.labels.len() > labels {
                    (
                        format!("Extraneous label for {name}"),
                        format!("No labels are expected for {name} blocks."),
                    )
                } else {
                    (
                        format!("Missing key for {name}"),
                        format!("All {name} blocks must have 1 labels (key)."),
                    )
                };
                diags.push(Diagnostic::error(summary, detail).at(b.decl_range.clone()));
                continue;
            }
            let (v, m, d) = match &b.iteration {
                Some(iteration) => b
                    .body
                    .decode_marked(schema, &Overlay::with_iteration(ctx, iteration)),
                None => b.body.decode_marked(schema, ctx),
            };
            diags.extend(d);
            decoded.push((b, v, m));
        }
        let count = decoded.len() as i64;
        match nesting {
            Nesting::Single | Nesting::Group => {
                if let [first, second, ..] = decoded.as_slice() {
                    diags.push(
                        Diagnostic::error(
                            format!("Duplicate {name} block"),
                            format!(
                                "Only one {name:?} block is allowed. Another was defined at {}.",
                                at(first.0.decl_range)
                            ),
                        )
                        .at(second.0.decl_range.clone()),
                    );
                }
                match decoded.into_iter().next() {
                    Some((_, v, m)) => (v, m),
                    None if min > 0 => {
                        diags.push(missing_block(name, self));
                        (Value::null(), Marks::none())
                    }
                    // A group block is never null: its attributes are null instead.
                    None if nesting == Nesting::Group => (empty_object(schema), Marks::none()),
                    None => (Value::null(), Marks::none()),
                }
            }
            Nesting::List | Nesting::Set => {
                if count < min {
                    diags.push(insufficient(name, min, self));
                }
                if max > 0 && count > max {
                    diags.push(too_many(name, max, decoded[max as usize].0.decl_range));
                }
                let mut marks = Marks::none();
                let mut items = Vec::with_capacity(decoded.len());
                for (i, (_, v, m)) in decoded.into_iter().enumerate() {
                    marks.extend(m.nest(PathStep::Index(i as i64)));
                    items.push(v);
                }
                // Like cty, a set cannot mark its elements: the set is marked.
                if nesting == Nesting::Set {
                    marks = marks.collapse();
                }
                (Value::tuple(items), marks)
            }
            Nesting::Map => {
                let mut out = fleetform_shared::value::ValueMap::new();
                let mut marks = Marks::none();
                for (b, v, m) in decoded {
                    let key = b.labels[0].clone();
                    marks.set_child(&PathStep::Key(key.clone()), m);
                    if out.insert(key, v).is_some() {
                        diags.push(
                            Diagnostic::error(
                                format!("Duplicate {name} block"),
                                format!(
                                    "A {name} block with the key {:?} was already defined.",
                                    b.labels[0]
                                ),
                            )
                            .at(b.decl_range.clone()),
                        );
                    }
                }
                if (out.len() as i64) < min {
                    diags.push(insufficient(name, min, self));
                }
                (Value::Map(out), marks)
            }
        }
    }
}

/// One nested block to decode: written, or expanded from a `dynamic` block.
struct Instance<'a> {
    body: &'a Body,
    labels: Vec<String>,
    decl_range: &'a SourceRange,
    iteration: Option<Iteration>,
}

fn empty_object(schema: &Block) -> Value {
    schema.empty_value()
}

fn missing_block(name: &str, body: &Body) -> Diagnostic {
    Diagnostic::error(
        format!("Missing {name} block"),
        format!("A block of type \"{name}\" is required here."),
    )
    .at(body.missing_item_range.clone())
}

fn insufficient(name: &str, min: i64, body: &Body) -> Diagnostic {
    Diagnostic::error(
        format!("Insufficient {name} blocks"),
        format!("At least {min} \"{name}\" blocks are required."),
    )
    .at(body.missing_item_range.clone())
}

fn too_many(name: &str, max: i64, range: &fleetform_shared::diag::SourceRange) -> Diagnostic {
    Diagnostic::error(
        format!("Too many {name} blocks"),
        format!("No more than {max} \"{name}\" blocks are allowed."),
    )
    .at(range.clone())
}
