//! Test files (`*.tftest.hcl`) for `fleetform test`: file-level
//! `variables`, `provider` blocks and `run` blocks with their `assert`s,
//! `expect_failures`, `plan_options`, `module` and `providers`, decoded
//! from the same schema-less bodies as configuration files.
//!
//! What Terraform's test language has and fleetform does not run yet
//! (`mock_provider`, `override_*`, `state_key`, `parallel`, the `test`
//! block, remote `module` sources) is an error at its source, as is any
//! other unknown argument or block: a test that silently skips part of
//! what it says would pass for the wrong reason.

use super::args::{
    address_text, at, check_rules, const_bool, const_string, labels, missing_argument, reject_rest,
};
use super::body::{Attribute, NestedBlockSyntax, parse_file};
use super::model::CheckRule;
use crate::eval::ExprKind;
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};

/// Whether a file name is a test file `fleetform test` runs.
pub fn is_test_file(path: &str) -> bool {
    path.ends_with(".tftest.hcl")
}

/// One test file, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct TestFile {
    pub filename: String,
    /// File-level `variables { name = expr }`, in name order.
    pub variables: Vec<Attribute>,
    pub providers: Vec<TestProvider>,
    pub runs: Vec<TestRun>,
}

/// A `provider` block of a test file: the configuration the file's runs
/// give that provider instead of the module's own.
#[derive(Clone, Debug, PartialEq)]
pub struct TestProvider {
    pub name: String,
    pub alias: Option<String>,
    /// The block's arguments and nested blocks as written (without
    /// `alias`), to be placed in a configuration as HCL.
    pub body_text: String,
    pub range: SourceRange,
}

impl TestProvider {
    /// `name` or `name.alias`, as a run's `providers` map names it.
    pub fn key(&self) -> String {
        match &self.alias {
            Some(a) => format!("{}.{a}", self.name),
            None => self.name.clone(),
        }
    }
}

/// `command` of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestCommand {
    Apply,
    Plan,
}

/// `plan_options` of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestPlanOptions {
    pub refresh_only: bool,
    /// `refresh = false` turns refreshing off.
    pub refresh: Option<bool>,
    pub replace: Vec<String>,
    pub target: Vec<String>,
}

/// A checkable object a run expects to fail: `var.x`, `output.y`, a
/// resource or `check.c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedFailure {
    pub address: String,
    pub range: SourceRange,
}

/// A `run` block.
#[derive(Clone, Debug, PartialEq)]
pub struct TestRun {
    pub name: String,
    /// `run "name"`.
    pub decl_range: SourceRange,
    pub command: TestCommand,
    pub variables: Vec<Attribute>,
    pub asserts: Vec<CheckRule>,
    pub expect_failures: Vec<ExpectedFailure>,
    /// The whole `expect_failures = [...]` argument.
    pub expect_failures_range: Option<SourceRange>,
    pub plan_options: TestPlanOptions,
    /// `module { source = "./dir" }`: the run plans this local module
    /// instead of the configuration under test.
    pub module: Option<TestModule>,
    /// `providers = { name = test_name }`: (the module's name for the
    /// provider, the test file's provider key, where the run names it).
    pub providers: Option<Vec<(String, String, SourceRange)>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestModule {
    pub source: String,
    pub range: SourceRange,
}

/// Parses and decodes one test file.
pub fn load_test_file(filename: &str, source: &str) -> (Option<TestFile>, Diagnostics) {
    let (body, mut diags) = parse_file(filename, source);
    let Some(mut body) = body else {
        return (None, diags);
    };
    let mut file = TestFile {
        filename: filename.to_string(),
        variables: Vec::new(),
        providers: Vec::new(),
        runs: Vec::new(),
    };
    for b in std::mem::take(&mut body.blocks) {
        match b.type_name.as_str() {
            "variables" => file.variables.extend(variables(b, &mut diags)),
            "provider" => {
                if let Some(p) = provider(b, source, &mut diags) {
                    file.providers.push(p);
                }
            }
            "run" => {
                if let Some(r) = run(b, &mut diags) {
                    if let Some(prev) = file.runs.iter().find(|p| p.name == r.name) {
                        diags.push(
                            Diagnostic::error(
                                "Duplicate \"run\" block names",
                                format!(
                                    "This test file already has a run named {} block defined at {}.",
                                    r.name,
                                    at(&prev.decl_range)
                                ),
                            )
                            .at(r.decl_range.clone()),
                        );
                        continue;
                    }
                    file.runs.push(r);
                }
            }
            "mock_provider" => diags.push(unsupported("mock_provider blocks", &b.decl_range)),
            "override_resource" | "override_data" | "override_module" => diags.push(unsupported(
                &format!("{} blocks", b.type_name),
                &b.decl_range,
            )),
            "test" => diags.push(unsupported(
                "the test block (parallel runs, state keys)",
                &b.decl_range,
            )),
            _ => body.blocks.push(b),
        }
    }
    reject_rest(&body, &mut diags);
    (Some(file), diags)
}

/// Something of Terraform's test language `fleetform test` does not do yet.
fn unsupported(what: &str, range: &SourceRange) -> Diagnostic {
    Diagnostic::error(
        format!("Unsupported test feature: {what}"),
        format!(
            "fleetform test does not support {what} yet; it refuses the file rather than run it without them."
        ),
    )
    .at(range.clone())
}

fn variables(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> Vec<Attribute> {
    labels(&b, &[], diags);
    for nested in std::mem::take(&mut b.body.blocks) {
        diags.push(
            Diagnostic::error(
                "Unexpected block",
                format!(
                    "Blocks are not allowed in a variables block; found {:?}.",
                    nested.type_name
                ),
            )
            .at(nested.decl_range),
        );
    }
    std::mem::take(&mut b.body.attributes)
        .into_values()
        .collect()
}

fn provider(
    mut b: NestedBlockSyntax,
    source: &str,
    diags: &mut Diagnostics,
) -> Option<TestProvider> {
    if !labels(&b, &["name"], diags) {
        return None;
    }
    let alias_attr = b.body.take_attribute("alias");
    let alias = alias_attr.as_ref().and_then(|a| const_string(a, diags));
    // The body between the braces, the alias line cut out: the runs put
    // it back under the name the module uses.
    let (start, end) = (b.decl_range.end.byte, b.range.end.byte);
    let inner = source.get(start..end).unwrap_or_default();
    let open = inner.find('{').map_or(0, |i| i + 1);
    let close = inner.rfind('}').unwrap_or(inner.len());
    let mut text = inner.get(open..close).unwrap_or_default().to_string();
    if let Some(a) = &alias_attr {
        let (s, e) = (
            a.range.start.byte - start - open,
            a.range.end.byte - start - open,
        );
        if e <= text.len() {
            text.replace_range(s..e, "");
        }
    }
    Some(TestProvider {
        name: b.labels[0].clone(),
        alias,
        body_text: text,
        range: b.decl_range,
    })
}

fn run(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> Option<TestRun> {
    if !labels(&b, &["name"], diags) {
        return None;
    }
    let mut r = TestRun {
        name: b.labels[0].clone(),
        decl_range: b.decl_range.clone(),
        command: TestCommand::Apply,
        variables: Vec::new(),
        asserts: check_rules(b.body.take_blocks("assert"), diags),
        expect_failures: Vec::new(),
        expect_failures_range: None,
        plan_options: TestPlanOptions::default(),
        module: None,
        providers: None,
    };
    if let Some(a) = b.body.take_attribute("command") {
        match a.expr.as_traversal() {
            Some((c, steps)) if steps.is_empty() && c == "apply" => {}
            Some((c, steps)) if steps.is_empty() && c == "plan" => r.command = TestCommand::Plan,
            _ => diags.push(
                Diagnostic::error(
                    "Invalid \"command\" keyword",
                    "The \"command\" argument requires one of the following keywords without quotes: apply or plan.",
                )
                .at(a.expr.range.clone()),
            ),
        }
    }
    for v in b.body.take_blocks("variables") {
        r.variables.extend(variables(v, diags));
    }
    if let Some(a) = b.body.take_attribute("expect_failures") {
        r.expect_failures = expected_failures(&a, diags);
        r.expect_failures_range = Some(a.range);
    }
    for p in b.body.take_blocks("plan_options") {
        r.plan_options = plan_options(p, diags);
    }
    for m in b.body.take_blocks("module") {
        r.module = module(m, diags);
    }
    if let Some(a) = b.body.take_attribute("providers") {
        r.providers = Some(provider_map(&a, diags));
    }
    for (name, what) in [
        ("state_key", "state_key (runs sharing a named state)"),
        ("parallel", "parallel runs"),
    ] {
        if let Some(a) = b.body.take_attribute(name) {
            diags.push(unsupported(what, &a.name_range));
        }
    }
    for kind in ["override_resource", "override_data", "override_module"] {
        for o in b.body.take_blocks(kind) {
            diags.push(unsupported(&format!("{kind} blocks"), &o.decl_range));
        }
    }
    reject_rest(&b.body, diags);
    Some(r)
}

/// The elements of a list argument, or an error at it.
fn list_items<'a>(a: &'a Attribute, diags: &mut Diagnostics) -> &'a [crate::eval::Expr] {
    match &a.expr.kind {
        ExprKind::Tuple(items) => items,
        _ => {
            diags.push(
                Diagnostic::error(
                    "Invalid expression",
                    format!("The \"{}\" argument requires a list of references.", a.name),
                )
                .at(a.expr.range.clone()),
            );
            &[]
        }
    }
}

fn expected_failures(a: &Attribute, diags: &mut Diagnostics) -> Vec<ExpectedFailure> {
    let mut out = Vec::new();
    for e in list_items(a, diags) {
        let Some(address) = address_text(e, diags) else {
            continue;
        };
        out.push(ExpectedFailure {
            address,
            range: e.range.clone(),
        });
    }
    out
}

fn addresses(a: &Attribute, diags: &mut Diagnostics) -> Vec<String> {
    list_items(a, diags)
        .iter()
        .filter_map(|e| address_text(e, diags))
        .collect()
}

fn plan_options(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> TestPlanOptions {
    let mut o = TestPlanOptions::default();
    if let Some(a) = b.body.take_attribute("mode") {
        match a.expr.as_traversal() {
            Some((m, steps)) if steps.is_empty() && m == "normal" => {}
            Some((m, steps)) if steps.is_empty() && m == "refresh-only" => o.refresh_only = true,
            _ => diags.push(
                Diagnostic::error(
                    "Invalid \"mode\" keyword",
                    "The \"mode\" argument requires one of the following keywords without quotes: normal or refresh-only",
                )
                .at(a.expr.range.clone()),
            ),
        }
    }
    if let Some(a) = b.body.take_attribute("refresh") {
        o.refresh = const_bool(&a, diags);
    }
    if let Some(a) = b.body.take_attribute("replace") {
        o.replace = addresses(&a, diags);
    }
    if let Some(a) = b.body.take_attribute("target") {
        o.target = addresses(&a, diags);
    }
    reject_rest(&b.body, diags);
    o
}

fn module(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> Option<TestModule> {
    let Some(source_attr) = b.body.take_attribute("source") else {
        diags.push(missing_argument("source", &b.body.missing_item_range));
        return None;
    };
    let source = const_string(&source_attr, diags)?;
    if let Some(v) = b.body.take_attribute("version") {
        diags.push(unsupported(
            "modules from a registry in run blocks",
            &v.name_range,
        ));
    }
    reject_rest(&b.body, diags);
    if !(source.starts_with("./") || source.starts_with("../")) {
        diags.push(unsupported(
            "remote module sources in run blocks (only local paths, \"./...\" or \"../...\")",
            &source_attr.expr.range,
        ));
        return None;
    }
    Some(TestModule {
        source,
        range: source_attr.expr.range,
    })
}

/// `providers = { aws = aws.alt }`: both sides static names.
fn provider_map(a: &Attribute, diags: &mut Diagnostics) -> Vec<(String, String, SourceRange)> {
    let ExprKind::Object(items) = &a.expr.kind else {
        diags.push(
            Diagnostic::error(
                "Invalid expression",
                "The \"providers\" argument requires an object mapping provider names to provider configurations.",
            )
            .at(a.expr.range.clone()),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in items {
        let key = match &k.kind {
            ExprKind::Literal(fleetform_shared::value::Value::String(s)) => Some(s.clone()),
            _ => address_text(k, diags),
        };
        if let (Some(key), Some(value)) = (key, address_text(v, diags)) {
            out.push((key, value, v.range.clone()));
        }
    }
    out
}

#[cfg(test)]
#[path = "test_file_tests.rs"]
mod tests;
