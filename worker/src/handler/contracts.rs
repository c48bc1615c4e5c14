//! The provider contracts Terraform core enforces on the worker's side of a
//! task (docs/planning/change-lifecycle.md): a plan must honour
//! the configuration, the final plan must keep the first plan's promises,
//! an applied or read object must be wholly known, and a data source must
//! echo its configuration. Each problem is one error diagnostic in
//! Terraform's wording, naming the provider, the instance and the attribute.

use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::render_value;
use fleetform_shared::schema::{Attribute, Block, Nesting};
use fleetform_shared::value::{PathStep, Value, path_string};

const BUG: &str =
    "This is a bug in the provider, which should be reported in the provider's own issue tracker.";

/// Who answered about what: the provider and the instance address.
pub(super) struct Subject<'a> {
    pub provider: &'a ProviderAddr,
    pub addr: String,
}

impl Subject<'_> {
    fn error(&self, summary: &str, detail: String) -> Diagnostic {
        Diagnostic::error(summary, detail).for_address(&self.addr)
    }
}

/// `.name.inner[0]`, the way Terraform appends a path to an address.
fn suffix(path: &[PathStep]) -> String {
    match path.first() {
        None => String::new(),
        Some(PathStep::Index(_)) => path_string(path),
        Some(PathStep::Key(_)) => format!(".{}", path_string(path)),
    }
}

fn child(path: &[PathStep], step: PathStep) -> Vec<PathStep> {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// Terraform's `ValidateWriteOnlyAttributes`: a write-only attribute is
/// null in whatever the provider answers (`when`: "during planning",
/// "after apply"); the configured value never comes back.
pub(super) fn write_only_null(
    s: &Subject<'_>,
    block: &Block,
    value: &Value,
    summary: &str,
    when: &str,
) -> Diagnostics {
    block
        .attributes
        .iter()
        .filter(|(name, a)| a.write_only && !value.get_attr(name).is_null())
        .map(|(name, _)| {
            s.error(
                summary,
                format!(
                    "Provider \"provider[\\\"{}\\\"]\" returned a value for the write-only attribute \"{}.{name}\" {when}. Write-only attributes cannot be read back from the provider. {BUG}",
                    s.provider, s.addr
                ),
            )
        })
        .collect()
}

/// "Provider produced invalid plan": Terraform's `AssertPlanValid`.
pub(super) fn plan_valid(
    s: &Subject<'_>,
    block: &Block,
    config: &Value,
    prior: &Value,
    planned: &Value,
) -> Diagnostics {
    let summary = "Provider produced invalid plan";
    let mut problems = Vec::new();
    match (config.is_null(), planned.is_null()) {
        (true, false) => {
            let d = format!(
                "Provider \"{}\" planned a non-null destroy value for {}.\n\n{BUG}",
                s.provider, s.addr
            );
            return s.error(summary, d).into();
        }
        (true, true) => {}
        (false, true) => problems.push((
            Vec::new(),
            "planned for absence but config wants existence".to_string(),
        )),
        (false, false) => block_valid(block, prior, config, planned, &[], &mut problems),
    }
    problems
        .into_iter()
        .map(|(path, msg)| {
            let d = format!(
                "Provider \"{}\" planned an invalid value for {}{}: {msg}.\n\n{BUG}",
                s.provider,
                s.addr,
                suffix(&path)
            );
            s.error(summary, d)
        })
        .collect()
}

type Problems = Vec<(Vec<PathStep>, String)>;

fn block_valid(
    block: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &[PathStep],
    problems: &mut Problems,
) {
    // Write-only attributes are planned null whatever the configuration
    // says (see `write_only_null`).
    for (name, attr) in block.attributes.iter().filter(|(_, a)| !a.write_only) {
        let path = child(path, PathStep::Key(name.clone()));
        if let Some(msg) = attr_valid(
            attr,
            prior.get_attr(name),
            config.get_attr(name),
            planned.get_attr(name),
        ) {
            problems.push((path, msg));
        }
    }
    for (name, nb) in &block.block_types {
        let path = child(path, PathStep::Key(name.clone()));
        let (pr, c, p) = (
            prior.get_attr(name),
            config.get_attr(name),
            planned.get_attr(name),
        );
        match (nb.nesting, c, p) {
            (Nesting::Single | Nesting::Group, Value::Map(_), Value::Map(_)) => {
                block_valid(&nb.block, pr, c, p, &path, problems)
            }
            (Nesting::Single, Value::Null(_), Value::Null(_)) | (Nesting::Set, _, _) => {}
            (Nesting::Single | Nesting::Group, _, _) if c.is_unknown() => {}
            (Nesting::Single | Nesting::Group, _, _) => problems.push((
                path,
                format!(
                    "planned block {} does not match config block {}",
                    render_value(p),
                    render_value(c)
                ),
            )),
            (Nesting::List, Value::List(cs), Value::List(ps)) => {
                if cs.len() != ps.len() {
                    let msg = format!(
                        "block count in plan ({}) disagrees with count in config ({})",
                        ps.len(),
                        cs.len()
                    );
                    problems.push((path, msg));
                    continue;
                }
                let prs = match pr {
                    Value::List(v) => v.as_slice(),
                    _ => &[],
                };
                for (i, (c, p)) in cs.iter().zip(ps).enumerate() {
                    let pr = prs.get(i).unwrap_or(&fleetform_shared::value::NULL);
                    let path = child(&path, PathStep::Index(i as i64));
                    block_valid(&nb.block, pr, c, p, &path, problems);
                }
            }
            (Nesting::Map, Value::Map(cs), Value::Map(ps)) => {
                for (k, c) in cs {
                    let path = child(&path, PathStep::Key(k.to_string()));
                    match ps.get(k) {
                        Some(p) => block_valid(&nb.block, pr.get_attr(k), c, p, &path, problems),
                        None => problems.push((path, "block key missing from plan".into())),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Terraform's `assertPlannedValueValid` for one attribute.
fn attr_valid(attr: &Attribute, prior: &Value, config: &Value, planned: &Value) -> Option<String> {
    if planned == config || (planned == prior && !prior.is_null() && !config.is_null()) {
        return None;
    }
    if attr.computed && !attr.optional {
        return None;
    }
    if config.is_null() {
        if attr.computed || planned.is_null() {
            return None;
        }
        return Some(if attr.sensitive {
            "planned value for a non-computed attribute".into()
        } else {
            format!(
                "planned value {} for a non-computed attribute",
                render_value(planned)
            )
        });
    }
    Some(match (attr.sensitive, prior.is_null()) {
        (true, true) => "sensitive planned value does not match config value".into(),
        (true, false) => {
            "sensitive planned value does not match config value nor prior value".into()
        }
        (false, true) => format!(
            "planned value {} does not match config value {}",
            render_value(planned),
            render_value(config)
        ),
        (false, false) => format!(
            "planned value {} does not match config value {} nor prior value {}",
            render_value(planned),
            render_value(config),
            render_value(prior)
        ),
    })
}

/// "Provider produced inconsistent final plan": a value known in the first
/// plan must be identical in the second. As Terraform 1.11 reports it: at
/// each primitive that differs (`.triggers["exists"]`: a map's element in
/// brackets, an object's attribute after a dot), with both values in cty's
/// Go syntax (`cty.StringVal("false")`); a collection whose length changed
/// is reported whole.
pub(super) fn final_plan_consistent(s: &Subject<'_>, first: &Value, second: &Value) -> Diagnostics {
    let mut problems = Vec::new();
    if !first.is_null() && second.is_null() {
        problems.push(Vec::new());
    }
    first.walk(&mut Vec::new(), &mut |path: &[PathStep], v: &Value| {
        if v.is_wholly_known()
            && !path.is_empty()
            && second.at_path(path) != Some(v)
            && reported_here(first, second, path)
        {
            problems.push(path.to_vec());
        }
    });
    problems
        .into_iter()
        .map(|p| {
            let was = first.at_path(&p).unwrap_or(&fleetform_shared::value::NULL);
            let now = second.at_path(&p).unwrap_or(&fleetform_shared::value::NULL);
            let d = format!(
                "When expanding the plan for {} to include new values learned so far during apply, provider \"{}\" produced an invalid new value for {}: was {}, but now {}.\n\n{BUG}",
                s.addr,
                s.provider,
                if p.is_empty() { "the object".to_string() } else { typed_suffix(first, &p) },
                go_syntax(was),
                go_syntax(now),
            );
            s.error("Provider produced inconsistent final plan", d)
        })
        .collect()
}

/// Whether a difference at `path` is reported there rather than deeper
/// (a primitive, or a collection whose shape changed) or higher (inside a
/// parent already reported whole).
fn reported_here(first: &Value, second: &Value, path: &[PathStep]) -> bool {
    let parent_whole = |p: &[PathStep]| {
        !p.is_empty()
            && first.at_path(p) != second.at_path(p)
            && !same_shape(first.at_path(p), second.at_path(p))
    };
    // An ancestor reported whole covers this one.
    if (1..path.len()).any(|n| parent_whole(&path[..n])) {
        return false;
    }
    !same_shape(first.at_path(path), second.at_path(path))
}

/// Two containers of the same kind and keys (or length): their difference
/// is reported element by element.
fn same_shape(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::List(x)), Some(Value::List(y))) => x.len() == y.len(),
        (Some(Value::Map(x)), Some(Value::Map(y))) => x.keys().eq(y.keys()),
        _ => false,
    }
}

/// A path after an address as Terraform writes it: attributes of objects
/// after a dot, elements of maps (typed so by the schema) and lists in
/// brackets.
fn typed_suffix(root: &Value, path: &[PathStep]) -> String {
    let mut out = String::new();
    let mut cur = Some(root);
    for step in path {
        match step {
            PathStep::Key(k) => {
                let map = matches!(cur, Some(Value::Map(m)) if matches!(m.ty(), Some(fleetform_shared::types::Type::Map(_))));
                if map {
                    out.push_str(&format!("[{k:?}]"));
                } else {
                    out.push('.');
                    out.push_str(k);
                }
            }
            PathStep::Index(i) => out.push_str(&format!("[{i}]")),
        }
        cur = cur.and_then(|v| v.at_path(std::slice::from_ref(step)));
    }
    out
}

/// A value in cty's Go syntax, as Terraform's messages print it.
fn go_syntax(v: &Value) -> String {
    match v {
        Value::String(s) => format!("cty.StringVal({s:?})"),
        Value::Bool(true) => "cty.True".into(),
        Value::Bool(false) => "cty.False".into(),
        Value::Number(n) => match n {
            fleetform_shared::value::Number::Int(i) => format!("cty.NumberIntVal({i})"),
            n => format!("cty.NumberFloatVal({n})"),
        },
        Value::Null(_) => "cty.NullVal(cty.DynamicPseudoType)".into(),
        Value::Unknown(_) => "cty.DynamicVal".into(),
        other => render_value(other),
    }
}

/// The paths of the unknown values left in `v`.
fn unknown_paths(v: &Value) -> Vec<Vec<PathStep>> {
    let mut paths = Vec::new();
    v.walk(&mut Vec::new(), &mut |path: &[PathStep], v: &Value| {
        if v.is_unknown() {
            paths.push(path.to_vec());
        }
    });
    paths
}

/// `v` with every unknown replaced by null (cty's `UnknownAsNull`): state
/// cannot hold unknowns, and the known part of a broken result is still
/// worth keeping.
pub(super) fn unknown_as_null(v: Value) -> Value {
    match v {
        Value::Unknown(_) => Value::null(),
        Value::List(items) => Value::List(items.into_iter().map(unknown_as_null).collect()),
        Value::Map(m) => Value::Map(
            m.into_iter()
                .map(|(k, v)| (k, unknown_as_null(v)))
                .collect(),
        ),
        other => other,
    }
}

/// "Provider returned invalid result object after apply": nothing may be
/// left unknown. Returns the object with unknowns nulled, and the errors.
pub(super) fn applied_known(s: &Subject<'_>, new_state: Value) -> (Value, Diagnostics) {
    let diags = unknown_paths(&new_state)
        .into_iter()
        .map(|p| {
            let d = format!(
                "After the apply operation, the provider \"{}\" still indicated an unknown value for {}{}. All values must be known after apply, so this is always a bug in the provider and should be reported in the provider's own repository. fleetform will still save the other known object values in the state.",
                s.provider,
                s.addr,
                suffix(&p)
            );
            s.error("Provider returned invalid result object after apply", d)
        })
        .collect::<Diagnostics>();
    if diags.has_errors() {
        (unknown_as_null(new_state), diags)
    } else {
        (new_state, diags)
    }
}

/// "Provider produced invalid object" / "Provider produced null object":
/// a data source's result must exist, be wholly known, and keep every
/// configured argument as configured.
pub(super) fn read_valid(
    s: &Subject<'_>,
    block: &Block,
    config: &Value,
    state: &Value,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if state.is_null() {
        let d = format!(
            "Provider \"{}\" produced a null value for {}.\n\n{BUG}",
            s.provider, s.addr
        );
        diags.push(s.error("Provider produced null object", d));
        return diags;
    }
    if !state.is_wholly_known() {
        let paths: Vec<String> = unknown_paths(state)
            .iter()
            .map(|p| format!("{}{}", s.addr, suffix(p)))
            .collect();
        let d = format!(
            "Provider \"{}\" produced a value for {} that is not wholly known (unknown: {}).\n\n{BUG}",
            s.provider,
            s.addr,
            paths.join(", ")
        );
        diags.push(s.error("Provider produced invalid object", d));
    }
    for (name, attr) in &block.attributes {
        let (c, v) = (config.get_attr(name), state.get_attr(name));
        let may_differ = attr.computed && (!attr.optional || c.is_null());
        if may_differ || c == v {
            continue;
        }
        let d = format!(
            "Provider \"{}\" produced an invalid value for {}.{name}: the configuration says {}, but the provider returned {}.\n\n{BUG}",
            s.provider,
            s.addr,
            render_value(c),
            render_value(v)
        );
        diags.push(s.error("Provider produced invalid object", d));
    }
    diags
}
