//! Tests of the `-json` messages (Terraform's machine-readable UI format).

use super::*;
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::diag::SourceRange;
use fleetform_shared::plan::ResourceChange;
use fleetform_shared::value::Value;
use std::time::Duration;

fn change(addr: &str, action: Action, before: Value) -> ResourceChange {
    ResourceChange {
        before,
        after: Value::unknown(),
        ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
    }
}

fn types(ms: &[Json]) -> Vec<&str> {
    ms.iter().map(|m| m["type"].as_str().unwrap()).collect()
}

#[test]
fn timestamps_are_rfc3339_utc_with_microseconds() {
    let t = UNIX_EPOCH + Duration::from_micros(951_782_400_000_000 + 3_723_000_042);
    assert_eq!(timestamp(t), "2000-02-29T01:02:03.000042Z");
    assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
}

#[test]
fn an_apply_reports_plan_hooks_summary_then_outputs() {
    let old = Value::object([("id", Value::from("42"))]);
    let mut replaced = change("null_resource.b[\"k\"]", Action::DeleteThenCreate, old);
    replaced.reason = ActionReason::ReplaceBecauseTainted;
    let plan = Plan {
        changes: vec![
            change("null_resource.a", Action::Create, Value::null()),
            replaced,
            change("null_resource.c", Action::NoOp, Value::null()),
        ],
        ..Plan::default()
    };
    let mut view = JsonView::new(BTreeMap::new(), Operation::Apply, false, true);
    let ms = view.messages(&RunEvent::Planned(std::sync::Arc::new(plan)));
    assert_eq!(
        types(&ms),
        ["planned_change", "planned_change", "change_summary"]
    );
    assert_eq!(ms[0]["@message"], "null_resource.a: Plan to create");
    assert_eq!(ms[0]["@module"], "terraform.ui");
    assert_eq!(ms[0]["@level"], "info");
    let b = &ms[1]["change"];
    assert_eq!(b["action"], "replace");
    assert_eq!(b["reason"], "tainted");
    assert_eq!(
        b["resource"],
        json!({
            "addr": "null_resource.b[\"k\"]",
            "module": "",
            "resource": "null_resource.b[\"k\"]",
            "implied_provider": "null",
            "resource_type": "null_resource",
            "resource_name": "b",
            "resource_key": "k",
        })
    );
    assert_eq!(
        ms[2]["changes"],
        json!({"add": 2, "change": 0, "import": 0, "remove": 1, "operation": "plan"})
    );
    assert_eq!(
        ms[2]["@message"],
        "Plan: 2 to add, 0 to change, 1 to destroy."
    );

    let b_addr: AbsResourceInstance = "null_resource.b[\"k\"]".parse().unwrap();
    let ms = view.messages(&RunEvent::ApplyStart {
        addr: b_addr.clone(),
        deposed: None,
        action: Action::DeleteThenCreate,
        op: ApplyOp::Delete,
    });
    assert_eq!(ms[0]["hook"]["action"], "delete", "the half carried out");
    assert_eq!(ms[0]["hook"]["id_value"], "42");
    assert_eq!(
        ms[0]["@message"],
        "null_resource.b[\"k\"]: Destroying... [id=42]"
    );
    let ms = view.messages(&RunEvent::ApplyComplete {
        addr: b_addr,
        deposed: None,
        action: Action::DeleteThenCreate,
        op: ApplyOp::Create,
        id: Some("43".into()),
        elapsed_ms: 2500,
        worker: "w".into(),
    });
    assert_eq!(
        ms[0]["@message"],
        "null_resource.b[\"k\"]: Creation complete after 2s [id=43]"
    );
    assert_eq!(ms[0]["hook"]["elapsed_seconds"], 2);
    assert_eq!(ms[0]["hook"]["id_key"], "id");

    let outputs = BTreeMap::from([
        (
            "a".to_string(),
            OutputState {
                value: Value::from("x"),
                sensitive: false,
            },
        ),
        (
            "s".to_string(),
            OutputState {
                value: Value::from("y"),
                sensitive: true,
            },
        ),
    ]);
    assert!(view.messages(&RunEvent::Outputs(outputs)).is_empty());
    let summary = ChangeSummary {
        import: 0,
        add: 2,
        change: 0,
        destroy: 1,
        forget: 0,
    };
    let ms = view.messages(&RunEvent::Finished {
        status: RunStatus::Succeeded,
        summary,
    });
    assert_eq!(types(&ms), ["change_summary", "outputs"]);
    assert_eq!(
        ms[0]["@message"],
        "Apply complete! Resources: 2 added, 0 changed, 1 destroyed."
    );
    assert_eq!(ms[0]["changes"]["operation"], "apply");
    assert_eq!(
        ms[1]["outputs"],
        json!({"a": {"sensitive": false, "type": "string", "value": "x"},
               "s": {"sensitive": true, "type": "string"}})
    );
}

#[test]
fn diagnostics_carry_range_and_snippet() {
    let src = "resource \"null_resource\" \"a\" {\n  trigers = {}\n}\n";
    let start = src.find("trigers").unwrap();
    let d = Diagnostic::warning("Unsupported argument", "no trigers here")
        .at(SourceRange::from_bytes("main.tf", src, start, start + 7))
        .in_context("resource \"null_resource\" \"a\"");
    let sources = BTreeMap::from([("main.tf".to_string(), src.to_string())]);
    let m = diagnostic(&d, &sources);
    assert_eq!(m["@level"], "warn");
    assert_eq!(m["@message"], "Warning: Unsupported argument");
    let diag = &m["diagnostic"];
    assert_eq!(diag["severity"], "warning");
    assert_eq!(
        diag["range"]["start"],
        json!({"line": 2, "column": 3, "byte": start})
    );
    assert_eq!(diag["snippet"]["code"], "  trigers = {}");
    assert_eq!(diag["snippet"]["highlight_start_offset"], 2);
    assert_eq!(diag["snippet"]["highlight_end_offset"], 9);
    assert_eq!(
        diag["snippet"]["context"],
        "resource \"null_resource\" \"a\""
    );
}

#[test]
fn output_values_keep_every_digit() {
    let big = "12345678901234567890123";
    let n = fleetform_shared::value::Number::parse(big).unwrap();
    let outputs = BTreeMap::from([(
        "n".to_string(),
        OutputState {
            value: Value::Number(n),
            sensitive: false,
        },
    )]);
    let line = applied_outputs(&outputs).to_string();
    assert!(
        line.contains(&format!(
            r#""outputs":{{"n":{{"sensitive":false,"type":"number","value":{big}}}}}"#
        )),
        "{line}"
    );
}

#[test]
fn provisioner_hooks_are_terraforms_provision_messages() {
    let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
    let mut view = JsonView::new(BTreeMap::new(), Operation::Apply, false, true);
    let p = || "local-exec".to_string();
    let mut ms = view.messages(&RunEvent::ProvisionStart {
        addr: addr.clone(),
        provisioner: p(),
    });
    for line in ["Executing: [\"/bin/sh\" \"-c\" \"echo hi\"]", "hi  ", "   "] {
        ms.extend(view.messages(&RunEvent::ProvisionOutput {
            addr: addr.clone(),
            provisioner: p(),
            line: line.into(),
        }));
    }
    for errored in [false, true] {
        ms.extend(view.messages(&RunEvent::ProvisionDone {
            addr: addr.clone(),
            provisioner: p(),
            errored,
        }));
    }
    assert_eq!(
        types(&ms),
        [
            "provision_start",
            "provision_progress",
            "provision_progress",
            "provision_complete",
            "provision_errored"
        ],
        "no message for a blank line"
    );
    let texts: Vec<&str> = ms.iter().map(|m| m["@message"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        [
            "null_resource.a: Provisioning with 'local-exec'...",
            "null_resource.a: (local-exec): Executing: [\"/bin/sh\" \"-c\" \"echo hi\"]",
            "null_resource.a: (local-exec): hi",
            "null_resource.a: (local-exec) Provisioning complete",
            "null_resource.a: (local-exec) Provisioning errored",
        ]
    );
    assert_eq!(ms[0]["hook"]["provisioner"], "local-exec");
    assert_eq!(ms[0]["hook"]["resource"]["addr"], "null_resource.a");
    assert_eq!(ms[2]["hook"]["output"], "hi");
    assert!(ms.iter().all(|m| m["@level"] == "info"));
}

#[test]
fn long_operations_report_apply_progress_every_ten_seconds() {
    let mut view = JsonView::new(BTreeMap::new(), Operation::Apply, false, true);
    let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
    view.messages(&RunEvent::ApplyStart {
        addr: addr.clone(),
        deposed: None,
        action: Action::Create,
        op: ApplyOp::Create,
    });
    let t0 = Instant::now();
    assert!(
        view.progress_messages(t0 + Duration::from_secs(9))
            .is_empty()
    );
    let ms = view.progress_messages(t0 + Duration::from_millis(10_200));
    assert_eq!(types(&ms), ["apply_progress"]);
    assert_eq!(
        ms[0]["@message"],
        "null_resource.a: Still creating... [10s elapsed]"
    );
    assert_eq!(ms[0]["hook"]["elapsed_seconds"], 10);
    assert_eq!(ms[0]["hook"]["action"], "create");
    assert!(
        view.progress_messages(t0 + Duration::from_secs(15))
            .is_empty()
    );
    view.messages(&RunEvent::ApplyComplete {
        addr,
        deposed: None,
        action: Action::Create,
        op: ApplyOp::Create,
        id: None,
        elapsed_ms: 16_000,
        worker: String::new(),
    });
    assert!(
        view.progress_messages(t0 + Duration::from_secs(30))
            .is_empty()
    );
}

/// As Terraform 1.11.4 sends them: drift first, a move or an import alone
/// as its own action, the import counted, and the apply's summary saying
/// what was imported.
#[test]
fn moves_imports_and_drift_are_reported_as_terraform_reports_them() {
    let v = Value::object([("id", Value::from("abc"))]);
    let noop = |addr: &str| ResourceChange {
        after: v.clone(),
        ..change(addr, Action::NoOp, v.clone())
    };
    let plan = Plan {
        changes: vec![noop("null_resource.a3"), noop("terraform_data.x")],
        moved: vec![(
            "null_resource.a2".parse().unwrap(),
            "null_resource.a3".parse().unwrap(),
        )],
        imports: [("terraform_data.x".parse().unwrap(), "abc".to_string())].into(),
        drift: vec![ResourceChange {
            after: Value::null(),
            ..change("local_file.f", Action::Delete, v.clone())
        }],
        ..Plan::default()
    };
    let mut view = JsonView::new(BTreeMap::new(), Operation::Apply, false, true);
    let ms = view.messages(&RunEvent::Planned(std::sync::Arc::new(plan)));
    assert_eq!(
        types(&ms),
        [
            "resource_drift",
            "planned_change",
            "planned_change",
            "change_summary"
        ]
    );
    assert_eq!(ms[0]["@message"], "local_file.f: Drift detected (delete)");
    assert_eq!(ms[0]["change"]["action"], "delete");
    assert_eq!(ms[1]["@message"], "null_resource.a3: Plan to move");
    assert_eq!(
        ms[1]["change"]["previous_resource"]["addr"],
        "null_resource.a2"
    );
    assert_eq!(ms[2]["@message"], "terraform_data.x: Plan to import");
    assert_eq!(ms[2]["change"]["importing"], json!({"id": "abc"}));
    assert_eq!(
        ms[3]["@message"],
        "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."
    );
    assert_eq!(ms[3]["changes"]["import"], 1);
    let summary = ChangeSummary {
        import: 1,
        ..ChangeSummary::default()
    };
    let ms = view.messages(&RunEvent::Finished {
        status: RunStatus::Succeeded,
        summary,
    });
    assert_eq!(
        ms[0]["@message"],
        "Apply complete! Resources: 1 imported, 0 added, 0 changed, 0 destroyed."
    );
    assert_eq!(ms[0]["changes"]["import"], 1);
}
