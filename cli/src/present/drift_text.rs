//! Drift as `terraform plan` shows it: "Objects have changed outside of
//! Terraform", each changed object with its diff, and what the plan does
//! about them.

use super::change_text::render_entry;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::plan::{Action, Plan, PlanMode, ResourceChange};
use std::collections::HashMap;
use std::fmt::Write;

/// "Objects have changed outside of fleetform", each changed object with
/// its diff, and what the plan does about them (Terraform 1.11's text,
/// "fleetform" for "Terraform").
pub(super) fn write_drift(
    out: &mut String,
    plan: &Plan,
    drift: &[ResourceChange],
    moved_from: &HashMap<&AbsResourceInstance, &AbsResourceInstance>,
) {
    out.push_str("Note: Objects have changed outside of fleetform\n\n");
    out.push_str(
        "fleetform detected the following changes made outside of fleetform since the\nlast \"fleetform apply\" which may have affected this plan:\n",
    );
    for d in drift {
        out.push('\n');
        let from = moved_from.get(&d.addr);
        let mut head = match (d.action, from) {
            (Action::NoOp, Some(from)) => format!("  # {from} has moved to {}", d.addr),
            (Action::Delete, _) => format!("  # {} has been deleted", d.addr),
            _ => format!("  # {} has changed", d.addr),
        };
        if let (Some(from), false) = (from, d.action == Action::NoOp) {
            let _ = write!(head, "\n  # (moved from {from})");
        }
        render_entry(out, d, &head, &plan.shapes);
    }
    if plan.mode == PlanMode::RefreshOnly {
        out.push_str(
            "\n\nThis is a refresh-only plan, so fleetform will not take any actions to undo\nthese. If you were expecting these changes then you can apply this plan to\nrecord the updated values in the fleetform state without changing any remote\nobjects.\n",
        );
    } else {
        out.push_str(
            "\n\nUnless you have made equivalent changes to your configuration, or ignored the\nrelevant attributes using ignore_changes, the following plan may include\nactions to undo or respond to these changes.\n",
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::present::plan_text::render_plan;
    use fleetform_shared::addr::ProviderAddr;
    use fleetform_shared::plan::{Action, Plan, PlanMode, RelevantAttribute, ResourceChange};
    use fleetform_shared::value::Value;

    fn object(id: &str, size: i64, env: &str) -> Value {
        Value::object([
            ("id", Value::from(id)),
            ("name", Value::from("a")),
            ("size", Value::int(size)),
            // As the sim's schema types it: a map of strings.
            (
                "tags",
                Value::Map(
                    [("env".to_string(), Value::from(env))]
                        .into_iter()
                        .collect::<fleetform_shared::value::ValueMap>()
                        .typed(fleetform_shared::types::Type::map(
                            fleetform_shared::types::Type::String,
                        )),
                ),
            ),
        ])
    }

    fn drift(addr: &str, action: Action, before: Value, after: Value) -> ResourceChange {
        ResourceChange {
            before,
            after,
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("sim"), action)
        }
    }

    /// The text Terraform 1.11.4 printed for `plan -refresh-only` after a
    /// `sim_object`'s size and tag were changed in its store and a
    /// `local_file` deleted (the id and the file's attributes written
    /// here), with "fleetform" for "Terraform".
    #[test]
    fn a_refresh_only_plan_shows_each_changed_and_deleted_object() {
        let file = Value::object([
            ("filename", Value::from("./f.txt")),
            ("content", Value::from("hello")),
            ("id", Value::from("aaf4")),
            ("source", Value::null()),
        ]);
        let plan = Plan {
            mode: PlanMode::RefreshOnly,
            drift: vec![
                drift("local_file.f", Action::Delete, file, Value::null()),
                drift(
                    "sim_object.a",
                    Action::Update,
                    object("c9e4", 3, "test"),
                    object("c9e4", 7, "prod"),
                ),
            ],
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&plan),
            concat!(
                "Note: Objects have changed outside of fleetform\n",
                "\n",
                "fleetform detected the following changes made outside of fleetform since the\n",
                "last \"fleetform apply\" which may have affected this plan:\n",
                "\n",
                "  # local_file.f has been deleted\n",
                "  - resource \"local_file\" \"f\" {\n",
                "      - content  = \"hello\" -> null\n",
                "      - filename = \"./f.txt\" -> null\n",
                "      - id       = \"aaf4\" -> null\n",
                "    }\n",
                "\n",
                "  # sim_object.a has changed\n",
                "  ~ resource \"sim_object\" \"a\" {\n",
                "        id   = \"c9e4\"\n",
                "        name = \"a\"\n",
                "      ~ size = 3 -> 7\n",
                "      ~ tags = {\n",
                "          ~ \"env\" = \"test\" -> \"prod\"\n",
                "        }\n",
                "    }\n",
                "\n",
                "\n",
                "This is a refresh-only plan, so fleetform will not take any actions to undo\n",
                "these. If you were expecting these changes then you can apply this plan to\n",
                "record the updated values in the fleetform state without changing any remote\n",
                "objects.\n",
            )
        );
        let quiet = Plan {
            mode: PlanMode::RefreshOnly,
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&quiet),
            "No changes. Your infrastructure still matches the configuration.\n\nfleetform has checked that the real remote objects still match the result of\nyour most recent changes, and found no differences.\n"
        );
    }

    /// A normal plan shows the drift of objects its changes may depend on,
    /// before them and a rule, and nothing of other drift.
    #[test]
    fn a_normal_plan_shows_only_drift_its_changes_may_depend_on() {
        let update = ResourceChange {
            before: object("b1", 1, "x"),
            after: object("b1", 2, "x"),
            ..ResourceChange::new(
                "sim_object.b".parse().unwrap(),
                ProviderAddr::implied("sim"),
                Action::Update,
            )
        };
        let mut plan = Plan {
            changes: vec![update],
            drift: vec![drift(
                "sim_object.a",
                Action::Update,
                object("c9e4", 3, "test"),
                object("c9e4", 7, "test"),
            )],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(
            text.starts_with("fleetform used the selected providers"),
            "{text}"
        );
        assert!(!text.contains("changed outside"), "{text}");
        plan.relevant_attributes = vec![RelevantAttribute {
            resource: "sim_object.a".parse().unwrap(),
            attribute: vec![],
        }];
        let text = render_plan(&plan);
        assert!(
            text.starts_with("Note: Objects have changed outside of fleetform\n"),
            "{text}"
        );
        assert!(
            text.contains(concat!(
                "      ~ size = 3 -> 7\n",
                "        tags = {\n",
                "            \"env\" = \"test\"\n",
                "        }\n",
                "    }\n",
                "\n",
                "\n",
                "Unless you have made equivalent changes to your configuration, or ignored the\n",
                "relevant attributes using ignore_changes, the following plan may include\n",
                "actions to undo or respond to these changes.\n",
                "\n",
                "─────────────────────────────────────────────────────────────────────────────\n",
                "\n",
                "fleetform used the selected providers to generate the following execution\n",
            )),
            "{text}"
        );
        // With nothing to change, the drift is not shown either.
        plan.changes.clear();
        assert!(render_plan(&plan).starts_with("No changes."));
    }

    /// In a refresh-only plan an object a `moved` block rebound is drift
    /// too, shown as Terraform shows it.
    #[test]
    fn a_refresh_only_plan_shows_moves_as_drift() {
        let v = object("c9e4", 3, "test");
        let plan = Plan {
            mode: PlanMode::RefreshOnly,
            drift: vec![drift("sim_object.a1", Action::NoOp, v.clone(), v)],
            moved: vec![(
                "sim_object.a".parse().unwrap(),
                "sim_object.a1".parse().unwrap(),
            )],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(
            text.contains(concat!(
                "  # sim_object.a has moved to sim_object.a1\n",
                "    resource \"sim_object\" \"a1\" {\n",
                "        id   = \"c9e4\"\n",
                "        name = \"a\"\n",
                "        tags = {\n",
                "            \"env\" = \"test\"\n",
                "        }\n",
                "        # (1 unchanged attribute hidden)\n",
                "    }\n",
            )),
            "{text}"
        );
    }
}
