//! `provisioner "local-exec"` blocks: decoding and Terraform 1.9's
//! validation diagnostics, and evaluation with `self`.

use crate::config::{Module, ProvisionerOnFailure, ProvisionerWhen, load_module};
use crate::eval::{MapScope, Marks, Overlay, Reference, evaluate, parse_expression};
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::{Diagnostics, Severity};
use fleetform_shared::value::Value;
use fleetform_shared::wire::OnFailure;
use std::collections::BTreeMap;

/// A scope with nothing in it, for `self` alone.
static EMPTY: crate::eval::EmptyScope = crate::eval::EmptyScope;

fn load(src: &str) -> (Module, Diagnostics) {
    let files = BTreeMap::from([("main.tf".to_string(), src.to_string())]);
    let (m, d) = load_module(&files);
    (m.expect("no syntax errors"), d)
}

fn resource(body: &str) -> String {
    format!("resource \"null_resource\" \"a\" {{\n{body}}}\n")
}

/// The errors (and warnings) as (summary, line of their range).
fn problems(d: &Diagnostics) -> Vec<(String, usize)> {
    d.iter()
        .map(|d| {
            let line = d.range.as_ref().map_or(0, |r| r.start.line);
            (d.summary.clone(), line)
        })
        .collect()
}

#[test]
fn a_local_exec_block_is_decoded_with_its_defaults() {
    let (m, d) = load(&resource(
        "  provisioner \"local-exec\" {\n    command     = \"echo ${self.id}\"\n    interpreter = [\"bash\", \"-c\"]\n    working_dir = \"/tmp\"\n    environment = { A = \"1\" }\n    quiet       = true\n  }\n  provisioner \"local-exec\" {\n    when       = destroy\n    on_failure = continue\n    command    = \"echo bye\"\n  }\n",
    ));
    assert!(d.is_empty(), "{d}");
    let r = m.resources.values().next().unwrap();
    assert!(r.body.blocks.is_empty(), "provisioners leave the body");
    let [first, second] = r.provisioners.as_slice() else {
        panic!("two provisioners: {:?}", r.provisioners);
    };
    assert_eq!(first.kind, "local-exec");
    assert_eq!(first.when, ProvisionerWhen::Create);
    assert_eq!(first.on_failure, ProvisionerOnFailure::Fail);
    let names: Vec<&str> = first.arguments().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "command",
            "interpreter",
            "working_dir",
            "environment",
            "quiet"
        ]
    );
    assert_eq!(first.decl_range.start.line, 2);
    assert_eq!(second.when, ProvisionerWhen::Destroy);
    assert_eq!(second.on_failure, ProvisionerOnFailure::Continue);
    assert!(second.interpreter.is_none() && second.quiet.is_none());
}

#[test]
fn quoted_keywords_are_accepted_with_terraforms_warning() {
    let (m, d) = load(&resource(
        "  provisioner \"local-exec\" {\n    when    = \"destroy\"\n    command = \"x\"\n  }\n",
    ));
    assert!(!d.has_errors(), "{d}");
    assert_eq!(
        problems(&d),
        [("Quoted keywords are deprecated".to_string(), 3)]
    );
    assert_eq!(d.0[0].severity, Severity::Warning);
    let r = m.resources.values().next().unwrap();
    assert_eq!(r.provisioners[0].when, ProvisionerWhen::Destroy);
}

#[test]
fn bad_keywords_unknown_arguments_and_a_missing_command_are_errors_at_their_place() {
    let (_, d) = load(&resource(
        "  provisioner \"local-exec\" {\n    when       = later\n    on_failure = ignore\n    comand     = \"x\"\n  }\n",
    ));
    let mut got = problems(&d);
    got.sort();
    assert_eq!(
        got,
        [
            ("Invalid \"on_failure\" keyword".to_string(), 4),
            ("Invalid \"when\" keyword".to_string(), 3),
            ("Missing required argument".to_string(), 6),
            ("Unsupported argument".to_string(), 5),
        ]
    );
    let when = d.iter().find(|d| d.summary.contains("when")).unwrap();
    assert_eq!(
        when.detail,
        "The \"when\" argument requires one of the following keywords: create or destroy."
    );
    let on_failure = d.iter().find(|d| d.summary.contains("on_failure")).unwrap();
    assert_eq!(
        on_failure.detail,
        "The \"on_failure\" argument requires one of the following keywords: continue or fail."
    );
    let missing = d.iter().find(|d| d.summary.starts_with("Missing")).unwrap();
    assert_eq!(
        missing.detail,
        "The argument \"command\" is required, but no definition was found."
    );
    let unsupported = d
        .iter()
        .find(|d| d.summary.starts_with("Unsupported"))
        .unwrap();
    assert_eq!(
        unsupported.detail,
        "An argument named \"comand\" is not expected here."
    );
}

#[test]
fn destroy_time_provisioners_may_refer_only_to_their_own_instance() {
    let (_, d) = load(&resource(
        "  count = 2\n  provisioner \"local-exec\" {\n    when        = destroy\n    command     = \"echo ${self.id} ${count.index} ${path.module} ${terraform.workspace}\"\n    environment = { A = var.a, B = null_resource.b.id }\n  }\n",
    ));
    let got = problems(&d);
    assert_eq!(
        got,
        [
            ("Invalid reference from destroy provisioner".to_string(), 6),
            ("Invalid reference from destroy provisioner".to_string(), 6),
        ],
        "one per invalid reference, at the argument: {d}"
    );
    assert_eq!(
        d.0[0].detail,
        "Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy."
    );
    // each.key is allowed, each.value is not.
    let (_, d) = load(
        "resource \"null_resource\" \"a\" {\n  for_each = toset([\"x\"])\n  provisioner \"local-exec\" {\n    when    = destroy\n    command = \"${each.key} ${each.value}\"\n  }\n}\n",
    );
    assert_eq!(
        problems(&d),
        [("Invalid reference from destroy provisioner".to_string(), 5)]
    );
    // A creation-time provisioner may refer to anything.
    let (_, d) = load(&resource(
        "  provisioner \"local-exec\" {\n    command = \"${var.a} ${null_resource.b.id}\"\n  }\n",
    ));
    assert!(d.is_empty(), "{d}");
}

#[test]
fn other_provisioners_and_connection_blocks_are_errors_at_their_source() {
    let (_, d) = load(&resource(
        "  connection {\n    host = \"h\"\n  }\n  provisioner \"remote-exec\" {\n    inline = [\"x\"]\n  }\n  provisioner \"local-exec\" {\n    command = \"x\"\n    connection {\n      host = \"h\"\n    }\n    lifecycle {\n    }\n  }\n  provisioner \"chef\" {\n  }\n  provisioner \"ansible\" {\n  }\n  provisioner {\n  }\n",
    ));
    let mut got = problems(&d);
    got.sort_by_key(|(_, line)| *line);
    assert_eq!(
        got,
        [
            ("Unsupported feature: connection blocks".to_string(), 2),
            (
                "Unsupported feature: \"remote-exec\" provisioners".to_string(),
                5
            ),
            ("Unsupported feature: connection blocks".to_string(), 10),
            (
                "Reserved block type name in provisioner block".to_string(),
                13
            ),
            ("The \"chef\" provisioner has been removed".to_string(), 16),
            ("Failed to obtain provisioner schema".to_string(), 18),
            ("Missing type for provisioner".to_string(), 20),
        ]
    );
    let unknown = d.iter().find(|d| d.summary.starts_with("Failed")).unwrap();
    assert_eq!(
        unknown.detail,
        "Could not load the schema for provisioner \"ansible\": unavailable provisioner \"ansible\"."
    );
}

#[test]
fn a_data_block_has_no_provisioners() {
    let (m, d) = load(
        "data \"null_data_source\" \"a\" {\n  provisioner \"local-exec\" {\n    command = \"x\"\n  }\n}\n",
    );
    assert!(d.is_empty(), "{d}");
    let r = m.resources.values().next().unwrap();
    assert!(r.provisioners.is_empty());
    assert_eq!(
        r.body.blocks.len(),
        1,
        "left for the data source's schema to reject"
    );
}

fn provisioner(body: &str) -> crate::config::Provisioner {
    let (m, d) = load(&resource(&format!(
        "  provisioner \"local-exec\" {{\n{body}  }}\n"
    )));
    assert!(!d.has_errors(), "{d}");
    m.resources.values().next().unwrap().provisioners[0].clone()
}

fn object(id: &str) -> Value {
    Value::object([("id", Value::from(id)), ("triggers", Value::null())])
}

#[test]
fn arguments_are_evaluated_with_self_and_converted() {
    let p = provisioner(
        "    command     = \"echo ${self.id} > ${var.dir}/out\"\n    interpreter = [\"bash\", null, \"-c\"]\n    working_dir = var.dir\n    environment = { N = 1, GONE = null }\n    quiet       = \"true\"\n    on_failure  = continue\n",
    );
    let base = MapScope::new().with_variable("dir", Value::from("/tmp/x"));
    let scope = Overlay::with_self(&base, object("42"), Marks::none());
    let spec = p
        .evaluate(&scope, "resource \"null_resource\" \"a\"")
        .unwrap();
    assert_eq!(spec.kind, "local-exec");
    assert_eq!(spec.command, "echo 42 > /tmp/x/out");
    assert_eq!(
        spec.interpreter,
        ["bash", "-c"],
        "null elements are skipped"
    );
    assert_eq!(spec.working_dir.as_deref(), Some("/tmp/x"));
    assert_eq!(
        spec.environment,
        BTreeMap::from([("N".to_string(), "1".to_string())]),
        "numbers convert to strings, null entries are dropped"
    );
    assert!(spec.quiet);
    assert_eq!(spec.on_failure, OnFailure::Continue);
    assert!(!spec.suppress_output);
    assert_eq!(spec.range.as_ref().map(|r| r.start.line), Some(2));
    assert_eq!(
        spec.context.as_deref(),
        Some("resource \"null_resource\" \"a\"")
    );
}

#[test]
fn sensitive_arguments_suppress_the_output() {
    let p = provisioner("    command = \"echo ${var.secret}\"\n");
    let base = MapScope::new()
        .with_variable("secret", Value::from("s3cr3t"))
        .with_marks(Reference::Variable("secret".into()), Marks::whole());
    let scope = Overlay::with_self(&base, object("1"), Marks::none());
    assert!(p.evaluate(&scope, "r").unwrap().suppress_output);
    // A sensitive attribute of self too.
    let p = provisioner("    command = \"echo ${self.id}\"\n");
    let scope = Overlay::with_self(
        &EMPTY,
        object("1"),
        Marks::from_paths([vec![fleetform_shared::value::PathStep::Key("id".into())]]),
    );
    assert!(p.evaluate(&scope, "r").unwrap().suppress_output);
}

#[test]
fn wrong_types_null_commands_and_unknowns_are_errors_at_the_argument() {
    let self_scope =
        |v: Value| Overlay::with_self(Box::leak(Box::new(MapScope::new())), v, Marks::none());
    let p = provisioner("    command     = \"x\"\n    environment = [\"a\"]\n");
    let d = p.evaluate(&self_scope(object("1")), "r").unwrap_err();
    assert_eq!(
        problems(&d),
        [("Incorrect attribute value type".to_string(), 4)]
    );
    assert_eq!(
        d.0[0].detail,
        "Inappropriate value for attribute \"environment\": map of string required."
    );
    let p = provisioner("    command = self.triggers\n");
    let d = p.evaluate(&self_scope(object("1")), "r").unwrap_err();
    assert_eq!(
        d.0[0].summary,
        "Invalid local-exec provisioner configuration"
    );
    assert_eq!(d.0[0].detail, "attribute \"command\" is required");
    let p = provisioner("    command = self.id\n");
    let d = p
        .evaluate(&self_scope(Value::object([("id", Value::unknown())])), "r")
        .unwrap_err();
    assert_eq!(
        problems(&d),
        [("Invalid provisioner argument".to_string(), 3)]
    );
}

#[test]
fn self_is_only_available_where_a_scope_provides_it() {
    let e = parse_expression("t.tf", "self.id").unwrap();
    let d = evaluate(&e, &MapScope::new()).unwrap_err();
    assert_eq!(d.0[0].summary, "Invalid \"self\" reference");
    assert_eq!(
        d.0[0].detail,
        "The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks."
    );
    let base = MapScope::new().with_resource(Resource::managed("null_resource", "b"), object("b"));
    let scope = Overlay::with_self(&base, object("7"), Marks::none());
    let eval = |src: &str| evaluate(&parse_expression("t.tf", src).unwrap(), &scope);
    assert_eq!(eval("self.id").unwrap(), Value::from("7"));
    assert_eq!(eval("self[\"id\"]").unwrap(), Value::from("7"));
    assert_eq!(eval("self").unwrap(), object("7"));
    assert_eq!(eval("null_resource.b.id").unwrap(), Value::from("b"));
    let d = eval("self.nope").unwrap_err();
    assert_eq!(d.0[0].summary, "Unsupported attribute");
    // `self` is no graph reference.
    let e = parse_expression("t.tf", "\"${self.id}${var.x}\"").unwrap();
    let refs: Vec<Reference> = e.references().into_iter().map(|(r, _)| r).collect();
    assert_eq!(refs, [Reference::Variable("x".into())]);
}
