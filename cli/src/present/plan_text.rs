//! Renders a plan the way `terraform plan` prints it.

use super::change_text::{quote, render_entry, symbol, value_block};
use super::value_text::HIDDEN;
use fleetform_shared::addr::{InstanceKey, ResourceMode};
use fleetform_shared::marks::Marks;
use fleetform_shared::plan::{Action, ActionReason, Plan, PlanMode, ResourceChange};
use fleetform_shared::value::PathStep;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The human-readable plan: the legend, one block per changed instance,
/// output changes and the summary line.
pub fn render_plan(plan: &Plan) -> String {
    let mut text = String::new();
    write_plan(plan, &mut |part: &mut String| {
        text.push_str(part);
        part.clear();
    });
    text
}

/// [`render_plan`], handed to `sink` a part at a time (each part about
/// 64 KB or less; `sink` empties it): a plan of 100,000 creates is about
/// 60 MB of text, which need not be held whole to be printed.
pub fn write_plan(plan: &Plan, sink: &mut dyn FnMut(&mut String)) {
    const PART: usize = 64 * 1024;
    let mut out = String::new();
    let moved_from = plan.previous_addresses();
    let refresh_only = plan.mode == PlanMode::RefreshOnly;
    // Objects that moved, were imported or had their configuration
    // written are shown even when nothing else about them changes.
    let shown_anyway = |c: &ResourceChange| {
        c.deposed.is_none()
            && !refresh_only
            && (plan.imports.contains_key(&c.addr) || moved_from.contains_key(&c.addr))
    };
    let mut changed: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp || shown_anyway(c))
        .collect();
    // Terraform lists a module's data sources before its managed
    // resources; the plan keeps them in address order otherwise.
    changed.sort_by_key(|c| {
        let m = &c.addr.module;
        (
            m.0.len(),
            m,
            c.addr.resource.resource.mode != ResourceMode::Data,
        )
    });
    let outputs_change = plan.outputs.values().any(|o| o.action != Action::NoOp);
    let empty = changed.is_empty() && !outputs_change;
    // Drift is shown with changes it may explain, and on its own in a
    // refresh-only plan, which is about nothing else.
    let drift = plan.drift_shown();
    let drift_shown = !drift.is_empty() && (refresh_only || !empty);
    if drift_shown {
        super::drift_text::write_drift(&mut out, plan, &drift, &moved_from);
        if out.len() >= PART {
            sink(&mut out);
        }
    }
    if empty {
        if refresh_only && drift_shown {
            // What applying it does was said with the drift.
        } else if plan.mode == PlanMode::Destroy {
            out.push_str("No changes. No objects need to be destroyed.\n\n");
            out.push_str(
                "Either you have not created any objects yet or the existing objects were\nalready deleted outside of fleetform.\n",
            );
        } else if refresh_only {
            out.push_str("No changes. Your infrastructure still matches the configuration.\n\n");
            out.push_str(
                "fleetform has checked that the real remote objects still match the result of\nyour most recent changes, and found no differences.\n",
            );
        } else {
            out.push_str("No changes. Your infrastructure matches the configuration.\n\n");
            out.push_str(
                "fleetform has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n",
            );
        }
        sink(&mut out);
        return;
    }
    if drift_shown {
        let _ = write!(out, "\n{}\n\n", "─".repeat(77));
    }
    let symbols: BTreeSet<Action> = changed
        .iter()
        .map(|c| c.action)
        .filter(|a| *a != Action::NoOp)
        .collect();
    if !changed.is_empty() {
        // Moves and imports alone have no symbol, and no legend.
        if !symbols.is_empty() {
            out.push_str(
                "fleetform used the selected providers to generate the following execution\n",
            );
            out.push_str("plan. Resource actions are indicated with the following symbols:\n");
            for a in LEGEND_ORDER.iter().filter(|a| symbols.contains(a)) {
                let _ = writeln!(out, "{} {}", symbol(*a), legend(*a));
            }
            out.push('\n');
        }
        out.push_str(if plan.errored {
            "fleetform planned the following actions, but then encountered a problem:\n"
        } else {
            "fleetform will perform the following actions:\n"
        });
        for c in &changed {
            out.push('\n');
            let from = moved_from.get(&c.addr).filter(|_| c.deposed.is_none());
            let import = plan.imports.get(&c.addr).filter(|_| c.deposed.is_none());
            let generated = c.deposed.is_none() && plan.generated_config.contains_key(&c.addr);
            match (c.action, from, import) {
                (Action::NoOp, _, Some(_)) => render_import(&mut out, c, generated),
                (Action::NoOp, Some(from), None) => {
                    let head = format!("  # {from} has moved to {}", c.addr);
                    render_entry(&mut out, c, &head, &plan.shapes);
                }
                (Action::Forget, _, _) => render_forget(&mut out, c),
                _ => {
                    let mut head = headline(c);
                    if let Some(from) = from {
                        let _ = write!(head, "\n  # (moved from {from})");
                    }
                    if let Some(id) = import {
                        let _ = write!(head, "\n  # (imported from {})", quote(id));
                    }
                    if generated {
                        head.push_str("\n  # (config will be generated)");
                    }
                    render_entry(&mut out, c, &head, &plan.shapes);
                }
            }
            if out.len() >= PART {
                sink(&mut out);
            }
        }
        let _ = writeln!(out, "\nPlan: {}", plan.summary());
    }
    let outputs: Vec<_> = plan
        .outputs
        .iter()
        .filter(|(_, o)| o.action != Action::NoOp)
        .collect();
    super::output_text::write_output_changes(&mut out, &outputs);
    sink(&mut out);
}

/// The order Terraform 1.11 lists the symbols in.
const LEGEND_ORDER: [Action; 7] = [
    Action::Create,
    Action::Update,
    Action::Delete,
    Action::DeleteThenCreate,
    Action::CreateThenDelete,
    Action::Read,
    Action::Forget,
];

fn legend(a: Action) -> &'static str {
    match a {
        Action::Create => "create",
        Action::Delete => "destroy",
        Action::Update => "update in-place",
        Action::DeleteThenCreate => "destroy and then create replacement",
        Action::CreateThenDelete => "create replacement and then destroy",
        Action::Read => "read (data resources)",
        Action::NoOp => "no-op",
        Action::Forget => "forget",
    }
}

/// An object imported with no change: shown whole, without symbols.
fn render_import(out: &mut String, c: &ResourceChange, generated: bool) {
    let r = &c.addr.resource.resource;
    let _ = writeln!(out, "  # {} will be imported", c.addr);
    if generated {
        out.push_str("  # (config will be generated)\n");
    }
    let _ = writeln!(out, "    resource \"{}\" \"{}\" {{", r.type_name, r.name);
    render_object(out, c);
}

/// An object forgotten from state (`removed` with `destroy = false`):
/// shown as it is, untouched.
fn render_forget(out: &mut String, c: &ResourceChange) {
    let r = &c.addr.resource.resource;
    let _ = writeln!(out, "{}", headline(c));
    let _ = writeln!(
        out,
        "{} resource \"{}\" \"{}\" {{",
        symbol(c.action),
        r.type_name,
        r.name
    );
    render_object(out, c);
}

/// The prior object's attributes without change markers.
fn render_object(out: &mut String, c: &ResourceChange) {
    if let Some(m) = c.before.as_map() {
        let width = m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0);
        let marks = Marks::from_paths(c.before_sensitive_paths.iter().cloned());
        for (k, v) in m.iter().filter(|(_, v)| !v.is_null()) {
            let shown = if marks.touches(&[PathStep::Key(k.to_string())]) {
                HIDDEN.to_string()
            } else {
                value_block(v, 6, ' ', "", &BTreeSet::new())
            };
            let _ = writeln!(out, "        {k:<width$} = {shown}");
        }
    }
    out.push_str("    }\n");
}

fn headline(c: &ResourceChange) -> String {
    let deposed = c
        .deposed
        .as_ref()
        .map(|d| format!(" (deposed object {d})"))
        .unwrap_or_default();
    let what = match (c.action, c.reason) {
        (Action::Create, _) => "will be created",
        (Action::Delete, _) => "will be destroyed",
        (Action::Update, _) => "will be updated in-place",
        (Action::DeleteThenCreate | Action::CreateThenDelete, reason) => match reason {
            ActionReason::ReplaceBecauseTainted => "is tainted, so must be replaced",
            ActionReason::ReplaceByRequest => "will be replaced, as requested",
            ActionReason::ReplaceByTriggers => {
                "will be replaced due to changes in replace_triggered_by"
            }
            _ => "must be replaced",
        },
        (Action::Read, _) => "will be read during apply",
        (Action::NoOp, _) => "has no changes",
        (Action::Forget, _) => {
            "will no longer be managed by fleetform, but will not be destroyed\n  # (destroy = false is set in the configuration)"
        }
    };
    let mut head = format!("  # {}{deposed} {what}", c.addr);
    if c.deposed.is_some() && c.action == Action::Delete {
        // Terraform says why a deposed object goes.
        head.push_str("\n  # (left over from a partially-failed replacement of this instance)");
    } else if let Some(why) = reason_line(c) {
        let _ = write!(head, "\n  # ({why})");
    }
    head
}

/// The line Terraform 1.11 adds under a headline to say why a delete or a
/// deferred read happens (a replacement says it in the headline itself).
fn reason_line(c: &ResourceChange) -> Option<String> {
    let r = &c.addr.resource;
    Some(match (c.action, c.reason) {
        (Action::Delete, ActionReason::DeleteBecauseNoResourceConfig) => {
            format!("because {} is not in configuration", r.resource)
        }
        (Action::Delete, ActionReason::DeleteBecauseNoModule) => {
            format!("because {} is not in configuration", c.addr.module)
        }
        (Action::Delete, ActionReason::DeleteBecauseCountIndex) => {
            format!("because index {} is out of range for count", r.key)
        }
        (Action::Delete, ActionReason::DeleteBecauseEachKey) => {
            format!("because key {} is not in for_each map", r.key)
        }
        (Action::Delete, ActionReason::DeleteBecauseNoRepetition) => match r.key {
            InstanceKey::None => "because resource uses count or for_each".into(),
            InstanceKey::Int(_) => "because resource does not use count".into(),
            InstanceKey::Str(_) => "because resource does not use for_each".into(),
        },
        (Action::Read, ActionReason::ReadBecauseConfigUnknown) => {
            "config refers to values not yet known".into()
        }
        (Action::Read, ActionReason::ReadBecauseDependencyPending) => {
            "depends on a resource or a module with changes pending".into()
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::ProviderAddr;
    use fleetform_shared::plan::ResourceChange;
    use fleetform_shared::plan::shape::Shapes;
    use fleetform_shared::value::Value;

    /// A map of strings, typed as a provider's schema types one.
    fn smap<K: Into<String>>(items: impl IntoIterator<Item = (K, Value)>) -> Value {
        let Value::Map(m) = Value::object(items) else {
            unreachable!("an object is a map")
        };
        Value::Map(m.typed(fleetform_shared::types::Type::map(
            fleetform_shared::types::Type::String,
        )))
    }

    fn change(addr: &str, action: Action, before: Value, after: Value) -> ResourceChange {
        ResourceChange {
            before,
            after,
            requires_replace: vec![vec![PathStep::Key("triggers".into())]].into(),
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
        }
    }

    #[test]
    fn a_large_plan_is_written_in_parts_that_make_the_whole_text() {
        let changes = (0..5000)
            .map(|i| {
                let after = Value::object([
                    ("id", Value::unknown()),
                    ("triggers", smap([("n", Value::from(format!("{i}")))])),
                ]);
                change(
                    &format!("null_resource.r[{i}]"),
                    Action::Create,
                    Value::null(),
                    after,
                )
            })
            .collect();
        let plan = Plan {
            changes,
            ..Plan::default()
        };
        let whole = render_plan(&plan);
        let mut parts = Vec::new();
        write_plan(&plan, &mut |part: &mut String| {
            parts.push(std::mem::take(part));
        });
        assert!(
            parts.len() > 5,
            "{} parts for {} bytes",
            parts.len(),
            whole.len()
        );
        // Each part is cut after the change that took it past 64 KB.
        assert!(parts.iter().all(|p| p.len() < 65 * 1024));
        assert_eq!(parts.concat(), whole);
        assert!(whole.contains("Plan: 5000 to add, 0 to change, 0 to destroy.\n"));
    }

    #[test]
    fn a_forgotten_object_is_shown_as_it_is() {
        let old = Value::object([("id", Value::from("1")), ("triggers", Value::null())]);
        let plan = Plan {
            changes: vec![change(
                "null_resource.f",
                Action::Forget,
                old,
                Value::null(),
            )],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(text.contains(" . forget\n"), "{text}");
        assert!(
            text.contains(
                "  # null_resource.f will no longer be managed by fleetform, but will not be destroyed\n  # (destroy = false is set in the configuration)\n . resource \"null_resource\" \"f\" {\n        id = \"1\"\n    }\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("Plan: 0 to add, 0 to change, 0 to destroy, 1 to forget.\n"),
            "{text}"
        );
    }

    #[test]
    fn renders_like_terraform() {
        let created = Value::object([
            ("id", Value::unknown()),
            ("triggers", smap([("a", Value::from("b"))])),
        ]);
        let old = Value::object([
            ("id", Value::from("1")),
            ("triggers", smap([("a", Value::from("x"))])),
        ]);
        let new = Value::object([
            ("id", Value::unknown()),
            ("triggers", smap([("a", Value::from("y"))])),
        ]);
        let plan = Plan {
            changes: vec![
                change("null_resource.a", Action::Create, Value::null(), created),
                change(
                    "null_resource.b",
                    Action::DeleteThenCreate,
                    old.clone(),
                    new,
                ),
                change("null_resource.c", Action::Delete, old, Value::null()),
            ],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(
            text.contains(
                "  # null_resource.a will be created\n  + resource \"null_resource\" \"a\" {\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("      + id       = (known after apply)\n"),
            "{text}"
        );
        assert!(
            text.contains("-/+ resource \"null_resource\" \"b\" {"),
            "{text}"
        );
        assert!(text.contains("      ~ triggers = { # forces replacement\n          ~ \"a\" = \"x\" -> \"y\"\n        }\n"), "{text}");
        assert!(
            text.contains("-/+ destroy and then create replacement\n"),
            "{text}"
        );
        assert!(
            text.contains("  # null_resource.c will be destroyed"),
            "{text}"
        );
        assert!(
            text.contains("Plan: 2 to add, 0 to change, 2 to destroy."),
            "{text}"
        );
    }

    #[test]
    fn sensitive_attributes_are_never_shown() {
        let mut c = change(
            "random_password.p",
            Action::Create,
            Value::null(),
            Value::object([
                ("result", Value::from("hunter2")),
                ("length", Value::int(8)),
            ]),
        );
        c.sensitive_paths = vec![vec![PathStep::Key("result".into())]].into();
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(text.contains("+ result = (sensitive value)"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn a_sensitive_map_entry_hides_only_that_entry() {
        let tags = |pw: &str| {
            Value::object([(
                "triggers",
                smap([("password", Value::from(pw)), ("env", Value::from("prod"))]),
            )])
        };
        let secret = vec![
            PathStep::Key("triggers".into()),
            PathStep::Key("password".into()),
        ];
        let mut created = change(
            "null_resource.a",
            Action::Create,
            Value::null(),
            tags("s3cret"),
        );
        created.sensitive_paths = vec![secret.clone()].into();
        let mut updated = change(
            "null_resource.b",
            Action::Update,
            tags("old-pw"),
            Value::object([(
                "triggers",
                smap([
                    ("password", Value::from("new-pw")),
                    ("env", Value::from("dev")),
                ]),
            )]),
        );
        // Sensitive before only: the old value stays hidden too.
        updated.before_sensitive_paths = vec![secret].into();
        let text = render_plan(&Plan {
            changes: vec![created, updated],
            ..Plan::default()
        });
        assert!(text.contains("\"password\" = (sensitive value)"), "{text}");
        assert!(text.contains("\"env\"      = \"prod\""), "{text}");
        assert!(
            text.contains("~ \"env\"      = \"prod\" -> \"dev\""),
            "{text}"
        );
        assert!(
            text.contains("~ \"password\" = (sensitive value)"),
            "{text}"
        );
        for secret in ["s3cret", "old-pw", "new-pw"] {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
    }

    #[test]
    fn an_update_of_sensitivity_alone_shows_the_attribute_hidden() {
        let v = Value::object([
            ("id", Value::from("1")),
            ("triggers", smap([("pw", Value::from("s3cret"))])),
        ]);
        let mut c = change("null_resource.a", Action::Update, v.clone(), v);
        c.before_sensitive_paths = vec![vec![
            PathStep::Key("triggers".into()),
            PathStep::Key("pw".into()),
        ]]
        .into();
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(text.contains("        id       = \"1\"\n      ~ triggers = (sensitive value)\n        # (the value is unchanged; only whether it is sensitive changes)\n    }"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    /// Terraform 1.11.4's text for this update of a `sim_object`, as it
    /// printed it (only the id written here): `id`, `name` and `tags` show
    /// unchanged, and so do the unchanged entries of a changed `tags`; an
    /// unset attribute is not counted as hidden.
    #[test]
    fn an_update_shows_the_identifying_attributes_as_terraform_does() {
        let tags = |env: &str, x: bool| {
            let mut m = vec![("env", Value::from(env)), ("team", Value::from("fleet"))];
            if x {
                m.push(("x", Value::from("1")));
            }
            smap(m)
        };
        let before = Value::object([
            ("id", Value::from("1d25")),
            ("name", Value::from("app")),
            ("size", Value::int(3)),
            ("tags", tags("test", false)),
            ("note", Value::null()),
        ]);
        let mut after = before.clone();
        if let Value::Map(m) = &mut after {
            m.insert("size", Value::int(5));
        }
        let c = change(
            "sim_object.app",
            Action::Update,
            before.clone(),
            after.clone(),
        );
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "  # sim_object.app will be updated in-place\n",
                "  ~ resource \"sim_object\" \"app\" {\n",
                "        id   = \"1d25\"\n",
                "        name = \"app\"\n",
                "      ~ size = 3 -> 5\n",
                "        tags = {\n",
                "            \"env\"  = \"test\"\n",
                "            \"team\" = \"fleet\"\n",
                "        }\n",
                "    }\n",
            )),
            "{text}"
        );
        if let Value::Map(m) = &mut after {
            m.insert("tags", tags("prod", true));
        }
        let c = change("sim_object.app", Action::Update, before, after);
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "      ~ tags = {\n",
                "          ~ \"env\"  = \"test\" -> \"prod\"\n",
                "            \"team\" = \"fleet\"\n",
                "          + \"x\"    = \"1\"\n",
                "        }\n",
            )),
            "{text}"
        );
    }

    /// Terraform 1.11.4's text for a plan whose only change is a `moved`
    /// block (`null_resource.a2` to `a3`): no legend, the object as it is.
    #[test]
    fn a_move_alone_is_shown_without_a_legend() {
        let v = Value::object([("id", Value::from("1347")), ("triggers", Value::null())]);
        let plan = Plan {
            changes: vec![change("null_resource.a3", Action::NoOp, v.clone(), v)],
            moved: vec![(
                "null_resource.a2".parse().unwrap(),
                "null_resource.a3".parse().unwrap(),
            )],
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&plan),
            concat!(
                "fleetform will perform the following actions:\n",
                "\n",
                "  # null_resource.a2 has moved to null_resource.a3\n",
                "    resource \"null_resource\" \"a3\" {\n",
                "        id = \"1347\"\n",
                "    }\n",
                "\n",
                "Plan: 0 to add, 0 to change, 0 to destroy.\n",
            )
        );
    }

    /// As Terraform 1.11.4 prints them: an import alone shows the object
    /// whole; an import or a move with a change says so under the headline.
    #[test]
    fn imports_and_moves_with_changes_say_where_the_object_comes_from() {
        let before = Value::object([("id", Value::from("abc")), ("input", Value::null())]);
        let after = Value::object([("id", Value::from("abc")), ("input", Value::from("v"))]);
        let imported = ResourceChange {
            provider: ProviderAddr::implied("terraform"),
            ..change(
                "terraform_data.x",
                Action::NoOp,
                before.clone(),
                before.clone(),
            )
        };
        let plan = Plan {
            changes: vec![imported.clone()],
            imports: [("terraform_data.x".parse().unwrap(), "abc".to_string())].into(),
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&plan),
            concat!(
                "fleetform will perform the following actions:\n",
                "\n",
                "  # terraform_data.x will be imported\n",
                "    resource \"terraform_data\" \"x\" {\n",
                "        id = \"abc\"\n",
                "    }\n",
                "\n",
                "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n",
            )
        );
        let updated = change(
            "terraform_data.x",
            Action::Update,
            before.clone(),
            after.clone(),
        );
        let plan = Plan {
            changes: vec![updated.clone()],
            ..plan
        };
        assert!(
            render_plan(&plan).contains(concat!(
                "  # terraform_data.x will be updated in-place\n",
                "  # (imported from \"abc\")\n",
                "  ~ resource \"terraform_data\" \"x\" {\n",
            )),
            "{}",
            render_plan(&plan)
        );
        let plan = Plan {
            changes: vec![change("terraform_data.y", Action::Update, before, after)],
            moved: vec![(
                "terraform_data.x".parse().unwrap(),
                "terraform_data.y".parse().unwrap(),
            )],
            ..Plan::default()
        };
        assert!(
            render_plan(&plan).contains(concat!(
                "  # terraform_data.y will be updated in-place\n",
                "  # (moved from terraform_data.x)\n",
                "  ~ resource \"terraform_data\" \"y\" {\n",
            )),
            "{}",
            render_plan(&plan)
        );
    }

    /// Terraform 1.11.4's text for this update of a `sim_server` (one
    /// disk resized, one rule's port changed, a label added): nested
    /// blocks drawn as blocks after the attributes, aligned on all of them.
    #[test]
    fn nested_blocks_are_drawn_as_blocks_by_their_shape() {
        use crate::present::block_text::tests::{server, server_shape};
        let before = server(&[10, 20, 30], &[22, 80], &[("env", "prod")]);
        let after = server(
            &[10, 25, 30],
            &[2222, 80],
            &[("env", "prod"), ("team", "fleet")],
        );
        let mut c = change("sim_server.s", Action::Update, before, after);
        c.provider = ProviderAddr::implied("sim");
        c.requires_replace.clear();
        let token = vec![PathStep::Key("token".into())];
        c.sensitive_paths = vec![token.clone()].into();
        c.before_sensitive_paths = vec![token].into();
        let mut shapes = Shapes::default();
        shapes
            .0
            .entry(ProviderAddr::implied("sim").to_string())
            .or_default()
            .resources
            .insert("sim_server".into(), server_shape());
        let text = render_plan(&Plan {
            changes: vec![c],
            shapes,
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "  ~ resource \"sim_server\" \"s\" {\n",
                "        id        = \"s1\"\n",
                "        name      = \"web\"\n",
                "        # (2 unchanged attributes hidden)\n",
                "\n",
                "      ~ disk {\n",
                "          ~ size = 20 -> 25\n",
                "        }\n",
                "\n",
                "      + label \"team\" {\n",
                "          + value = \"fleet\"\n",
                "        }\n",
                "\n",
                "      - rule {\n",
                "          - port = 22 -> null\n",
                "        }\n",
                "      + rule {\n",
                "          + port = 2222\n",
                "        }\n",
                "\n",
                "        # (5 unchanged blocks hidden)\n",
                "    }\n",
            )),
            "{text}"
        );
    }

    #[test]
    fn no_changes_message() {
        assert!(render_plan(&Plan::default()).starts_with("No changes."));
    }
}
