//! Terraform's JSON representations of plans and state (`show -json`), the
//! formats that policy and cost tools (OPA, Infracost, checkov...) already read.
//!
//! The shapes follow Terraform's `jsonplan`/`jsonstate` packages: unknown
//! values are omitted from `after` and flagged in `after_unknown`, known
//! leaves are left out of `after_unknown`/`*_sensitive` objects, keys that
//! Terraform marks `omitempty` are omitted when empty. Values are written
//! with all the digits of their numbers ([`fleetform_shared::json`]).

use fleetform_shared::addr::{AbsResourceInstance, InstanceKey, ModuleInstance, ResourceMode};
use fleetform_shared::json::{Json, Map};
use fleetform_shared::plan::{Action, ActionReason, Plan, PlanMode, ResourceChange};
use fleetform_shared::state::{DependencyClosure, ObjectState, ObjectStatus, OutputState, State};
use fleetform_shared::value::{PathStep, Value};
use std::collections::{BTreeMap, BTreeSet};

/// `format_version` of the plan representation.
pub const PLAN_FORMAT_VERSION: &str = "1.2";
/// `format_version` of the state (values) representation.
pub const STATE_FORMAT_VERSION: &str = "1.0";
/// What we report as `terraform_version`: tools parse it as a version and
/// gate features on it, so it must look like the Terraform release whose
/// formats we follow; the pre-release part says who wrote it.
pub const TERRAFORM_VERSION: &str = fleetform_shared::statefile::TERRAFORM_VERSION;

/// The JSON plan representation (`terraform show -json PLANFILE`).
pub fn plan_json(plan: &Plan) -> Json {
    let mut out = Map::new();
    out.insert("format_version".into(), PLAN_FORMAT_VERSION.into());
    out.insert("terraform_version".into(), TERRAFORM_VERSION.into());
    if !plan.variables.is_empty() {
        let vars: Map = plan
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), Json::object([("value", value_json(v))])))
            .collect();
        out.insert("variables".into(), vars.into());
    }
    out.insert("planned_values".into(), planned_values(plan));
    let moved_from = plan.previous_addresses();
    let entry = |c: &ResourceChange| {
        let current = c.deposed.is_none();
        let change = Moves {
            previous: moved_from.get(&c.addr).filter(|_| current).copied(),
            importing: plan.imports.get(&c.addr).filter(|_| current),
        };
        resource_change(c, change)
    };
    let drift = if plan.mode == PlanMode::RefreshOnly {
        plan.drift.iter().collect::<Vec<_>>()
    } else {
        // Objects that only moved are in `resource_changes`.
        plan.drift
            .iter()
            .filter(|d| d.action != Action::NoOp)
            .collect()
    };
    if !drift.is_empty() {
        let drift: Vec<Json> = by_address(drift).into_iter().map(entry).collect();
        out.insert("resource_drift".into(), drift.into());
    }
    // A refresh-only plan changes nothing: its objects are only in
    // `resource_drift` (and `prior_state`), as Terraform writes it.
    if plan.mode != PlanMode::RefreshOnly {
        let changes = by_address(plan.changes.iter().collect());
        out.insert(
            "resource_changes".into(),
            changes.into_iter().map(entry).collect(),
        );
    }
    let outputs: Map = plan
        .outputs
        .iter()
        .map(|(name, o)| {
            let after = if o.action == Action::Delete {
                Value::null()
            } else {
                o.after.clone()
            };
            let mut change = Json::object([
                ("actions", o.action.json_actions().into()),
                ("before", o.before.as_ref().map(value_json).into()),
                ("after", known_json(&after)),
                ("after_unknown", unknown_as_bool(&after)),
                ("before_sensitive", o.sensitive.into()),
                ("after_sensitive", o.sensitive.into()),
            ]);
            // Terraform leaves `after` out when nothing of it is known yet.
            if after.is_unknown()
                && let Json::Object(fields) = &mut change
            {
                fields.remove("after");
            }
            (name.clone(), change)
        })
        .collect();
    out.insert("output_changes".into(), outputs.into());
    if !plan.relevant_attributes.is_empty() {
        let relevant: Vec<Json> = plan
            .relevant_attributes
            .iter()
            .map(|r| {
                Json::object([
                    ("resource", r.resource.to_string().into()),
                    ("attribute", path_json(&r.attribute)),
                ])
            })
            .collect();
        out.insert("relevant_attributes".into(), relevant.into());
    }
    if let Some(prior) = prior_state(plan) {
        out.insert("prior_state".into(), prior);
    }
    if let Some(t) = &plan.timestamp {
        out.insert("timestamp".into(), t.clone().into());
    }
    out.insert("applyable".into(), plan.has_changes().into());
    out.insert("complete".into(), true.into());
    out.insert("errored".into(), false.into());
    out.into()
}

/// The JSON state representation (`terraform show -json` without a plan).
pub fn state_json(state: &State) -> Json {
    let mut out = Map::new();
    out.insert("format_version".into(), STATE_FORMAT_VERSION.into());
    if state.resources.is_empty() && state.outputs.is_empty() {
        return out.into();
    }
    out.insert("terraform_version".into(), TERRAFORM_VERSION.into());
    let mut resources = Vec::new();
    let closure = DependencyClosure::of_state(state);
    for (addr, inst) in &state.resources {
        let provider = inst.provider.to_string();
        let objects = inst
            .current
            .iter()
            .map(|o| (None, o))
            .chain(inst.deposed.iter().map(|(k, o)| (Some(k.as_str()), o)));
        for (deposed, obj) in objects {
            resources.push((
                addr.module.clone(),
                state_resource(addr, &provider, obj, deposed, &closure),
            ));
        }
    }
    out.insert("values".into(), values_json(&state.outputs, resources));
    out.into()
}

/// A known value as JSON; unknowns (never in state) become `null`.
pub fn value_json(v: &Value) -> Json {
    Json::from(v)
}

/// A planned value with its unknowns left out: object attributes that are
/// unknown are omitted, unknown list elements become `null` (their position
/// is how `after_unknown` correlates).
pub fn known_json(v: &Value) -> Json {
    match v {
        Value::List(items) => items.iter().map(known_json).collect(),
        Value::Map(m) => m
            .iter()
            .filter(|(_, x)| !x.is_unknown())
            .map(|(k, x)| (k.to_string(), known_json(x)))
            .collect::<Map>()
            .into(),
        other => value_json(other),
    }
}

/// Terraform's `after_unknown`: `true` where the value is unknown; objects
/// keep only entries that are not `false`, lists keep every position.
pub fn unknown_as_bool(v: &Value) -> Json {
    match v {
        Value::Unknown(_) => true.into(),
        Value::List(items) => items.iter().map(unknown_as_bool).collect(),
        Value::Map(m) => m
            .iter()
            .map(|(k, x)| (k.to_string(), unknown_as_bool(x)))
            .filter(|(_, b)| *b != Json::Bool(false))
            .collect::<Map>()
            .into(),
        _ => false.into(),
    }
}

/// Terraform's `*_sensitive` shape for a value without sensitive marks:
/// `false` for leaves, collections mirrored with their `false`s dropped from
/// objects (values carry no marks yet, so nothing is ever `true`).
pub fn sensitive_as_bool(v: &Value) -> Json {
    match v {
        Value::List(items) => items.iter().map(sensitive_as_bool).collect(),
        Value::Map(m) => m
            .iter()
            .map(|(k, x)| (k.to_string(), sensitive_as_bool(x)))
            .filter(|(_, b)| *b != Json::Bool(false))
            .collect::<Map>()
            .into(),
        _ => false.into(),
    }
}

/// Sets `true` at every sensitive path present in `value`, in a
/// `*_sensitive` shape built by [`sensitive_as_bool`].
pub fn mark_sensitive(
    mut shape: Json,
    value: &Value,
    paths: &[fleetform_shared::provider::AttrPath],
) -> Json {
    for path in paths {
        if value.at_path(path).is_none_or(Value::is_null) {
            continue;
        }
        let mut cur = &mut shape;
        for (i, step) in path.iter().enumerate() {
            let last = i + 1 == path.len();
            cur = match (step, cur) {
                (PathStep::Key(k), Json::Object(m)) => {
                    if last {
                        m.insert(k.clone(), Json::Bool(true));
                        break;
                    }
                    m.entry(k.clone())
                        .or_insert_with(|| Json::Object(Map::new()))
                }
                (PathStep::Index(n), Json::Array(items)) => {
                    let Some(slot) = usize::try_from(*n).ok().and_then(|n| items.get_mut(n)) else {
                        break;
                    };
                    if last {
                        *slot = Json::Bool(true);
                        break;
                    }
                    slot
                }
                _ => break,
            };
        }
    }
    shape
}

/// The cty type (JSON type syntax) of a value, inferred from its shape:
/// lists are tuples and maps objects, as HCL expressions produce them.
pub fn type_json(v: &Value) -> Json {
    match v {
        Value::Null(_) | Value::Unknown(_) => "dynamic".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::List(items) => {
            Json::Array(vec!["tuple".into(), items.iter().map(type_json).collect()])
        }
        Value::Map(m) => {
            let attrs: Json = m
                .iter()
                .map(|(k, x)| (k.to_string(), type_json(x)))
                .collect();
            Json::Array(vec!["object".into(), attrs])
        }
    }
}

/// An instance key as Terraform's `index`: a number, a string, or absent.
pub fn index_json(key: &InstanceKey) -> Option<Json> {
    match key {
        InstanceKey::None => None,
        InstanceKey::Int(i) => Some((*i).into()),
        InstanceKey::Str(s) => Some(s.clone().into()),
    }
}

/// Terraform's `action_reason` string; `None` when there is no reason.
pub fn action_reason(reason: ActionReason) -> Option<&'static str> {
    Some(match reason {
        ActionReason::None => return None,
        ActionReason::ReplaceBecauseTainted => "replace_because_tainted",
        ActionReason::ReplaceByRequest => "replace_by_request",
        ActionReason::ReplaceBecauseCannotUpdate => "replace_because_cannot_update",
        ActionReason::ReplaceByTriggers => "replace_by_triggers",
        ActionReason::DeleteBecauseNoResourceConfig => "delete_because_no_resource_config",
        ActionReason::DeleteBecauseCountIndex => "delete_because_count_index",
        ActionReason::DeleteBecauseEachKey => "delete_because_each_key",
        ActionReason::DeleteBecauseNoRepetition => "delete_because_no_repetition",
        ActionReason::DeleteBecauseNoModule => "delete_because_no_module",
        ActionReason::ReadBecauseConfigUnknown => "read_because_config_unknown",
        ActionReason::ReadBecauseDependencyPending => "read_because_dependency_pending",
    })
}

/// The address fields every resource entry starts with.
fn address_fields(addr: &AbsResourceInstance) -> Map {
    let r = &addr.resource.resource;
    let mut m = Map::new();
    m.insert("address".into(), addr.to_string().into());
    if !addr.module.is_root() {
        m.insert("module_address".into(), addr.module.to_string().into());
    }
    let mode = match r.mode {
        ResourceMode::Managed => "managed",
        ResourceMode::Data => "data",
        ResourceMode::Ephemeral => "ephemeral",
    };
    m.insert("mode".into(), mode.into());
    m.insert("type".into(), r.type_name.as_str().into());
    m.insert("name".into(), r.name.as_str().into());
    if let Some(i) = index_json(addr.key()) {
        m.insert("index".into(), i);
    }
    m
}

/// Terraform's order of resource entries: by the address string (so
/// `a[10]` before `a[2]`), then deposed key.
fn by_address(mut changes: Vec<&ResourceChange>) -> Vec<&ResourceChange> {
    changes.sort_by_cached_key(|c| (c.addr.to_string(), c.deposed.clone()));
    changes
}

/// Where a change's object comes from besides its address.
#[derive(Default)]
struct Moves<'p> {
    /// Its address before a `moved` block rebound it.
    previous: Option<&'p AbsResourceInstance>,
    /// The id it is imported from.
    importing: Option<&'p String>,
}

fn resource_change(c: &ResourceChange, moves: Moves<'_>) -> Json {
    let importing = moves.importing;
    let mut m = address_fields(&c.addr);
    if let Some(from) = moves.previous {
        m.insert("previous_address".into(), from.to_string().into());
    }
    m.insert("provider_name".into(), c.provider.to_string().into());
    if let Some(d) = &c.deposed {
        m.insert("deposed".into(), d.clone().into());
    }
    let mut change = Map::new();
    change.insert("actions".into(), c.action.json_actions().into());
    change.insert("before".into(), value_json(&c.before));
    change.insert("after".into(), known_json(&c.after));
    change.insert("after_unknown".into(), unknown_as_bool(&c.after));
    change.insert(
        "before_sensitive".into(),
        mark_sensitive(
            sensitive_as_bool(&c.before),
            &c.before,
            &c.before_sensitive_paths,
        ),
    );
    change.insert(
        "after_sensitive".into(),
        mark_sensitive(sensitive_as_bool(&c.after), &c.after, &c.sensitive_paths),
    );
    if c.action.is_replace() && !c.requires_replace.is_empty() {
        let paths: Vec<Json> = c.requires_replace.iter().map(|p| path_json(p)).collect();
        change.insert("replace_paths".into(), paths.into());
    }
    if let Some(id) = importing {
        change.insert(
            "importing".into(),
            Json::object([("id", id.as_str().into())]),
        );
    }
    m.insert("change".into(), change.into());
    if let Some(r) = action_reason(c.reason) {
        m.insert("action_reason".into(), r.into());
    }
    m.into()
}

fn path_json(path: &[PathStep]) -> Json {
    path.iter()
        .map(|s| match s {
            PathStep::Key(k) => Json::from(k.clone()),
            PathStep::Index(i) => Json::from(*i),
        })
        .collect()
}

/// What will exist after apply: every current object not being deleted.
fn planned_values(plan: &Plan) -> Json {
    let resources = plan
        .changes
        .iter()
        .filter(|c| c.deposed.is_none() && c.action != Action::Delete && !c.after.is_null())
        .map(|c| {
            let mut m = address_fields(&c.addr);
            m.insert("provider_name".into(), c.provider.to_string().into());
            m.insert("schema_version".into(), c.schema_version.into());
            m.insert("values".into(), known_json(&c.after));
            m.insert(
                "sensitive_values".into(),
                mark_sensitive(sensitive_as_bool(&c.after), &c.after, &c.sensitive_paths),
            );
            (c.addr.module.clone(), m.into())
        })
        .collect();
    let mut out = Map::new();
    let outputs: Map = plan
        .outputs
        .iter()
        .filter(|(_, o)| o.action != Action::Delete)
        .map(|(name, o)| {
            let mut m = Map::new();
            m.insert("sensitive".into(), o.sensitive.into());
            if o.after.is_wholly_known() {
                m.insert("type".into(), type_json(&o.after));
                m.insert("value".into(), value_json(&o.after));
            }
            (name.clone(), m.into())
        })
        .collect();
    if !outputs.is_empty() {
        out.insert("outputs".into(), outputs.into());
    }
    out.insert("root_module".into(), module_tree(resources));
    out.into()
}

/// The state the plan was made against, rebuilt from the prior objects of
/// its changes (the plan considers every instance in state).
fn prior_state(plan: &Plan) -> Option<Json> {
    let closure = DependencyClosure::new(
        plan.changes
            .iter()
            .map(|c| (c.addr.containing_resource(), c.dependencies.as_slice())),
    );
    // A refresh-only plan's changes go from the state's objects to the
    // refreshed ones, which are the state it would be applied to.
    let refreshed = plan.mode == PlanMode::RefreshOnly;
    let prior_value = |c: &ResourceChange| {
        if refreshed {
            c.after.clone()
        } else {
            c.before.clone()
        }
    };
    let resources: Vec<(ModuleInstance, Json)> = plan
        .changes
        .iter()
        .filter(|c| !prior_value(c).is_null())
        .map(|c| {
            let obj = ObjectState {
                value: prior_value(c),
                private: vec![],
                schema_version: c.schema_version,
                status: if c.reason == ActionReason::ReplaceBecauseTainted {
                    ObjectStatus::Tainted
                } else {
                    ObjectStatus::Ready
                },
                dependencies: c.dependencies.clone(),
                create_before_destroy: c.create_before_destroy,
                sensitive_paths: c.before_sensitive_paths.to_vec(),
                value_sensitive_paths: None,
                undecoded: false,
            };
            let provider = c.provider.to_string();
            let r = state_resource(&c.addr, &provider, &obj, c.deposed.as_deref(), &closure);
            (c.addr.module.clone(), r)
        })
        .collect();
    let outputs: BTreeMap<String, OutputState> = plan
        .outputs
        .iter()
        .filter_map(|(k, o)| {
            let value = o.before.clone()?;
            Some((
                k.clone(),
                OutputState {
                    value,
                    sensitive: o.sensitive,
                },
            ))
        })
        .collect();
    if resources.is_empty() && outputs.is_empty() {
        return None;
    }
    Some(Json::object([
        ("format_version", STATE_FORMAT_VERSION.into()),
        ("terraform_version", TERRAFORM_VERSION.into()),
        ("values", values_json(&outputs, resources)),
    ]))
}

fn state_resource(
    addr: &AbsResourceInstance,
    provider: &str,
    obj: &ObjectState,
    deposed: Option<&str>,
    closure: &DependencyClosure,
) -> Json {
    let mut m = address_fields(addr);
    m.insert("provider_name".into(), provider.into());
    m.insert("schema_version".into(), obj.schema_version.into());
    m.insert("values".into(), value_json(&obj.value));
    m.insert(
        "sensitive_values".into(),
        mark_sensitive(
            sensitive_as_bool(&obj.value),
            &obj.value,
            &obj.sensitive_paths,
        ),
    );
    if !obj.dependencies.is_empty() {
        // Terraform lists transitive dependencies; ours are the nearest.
        let deps: BTreeSet<String> = closure
            .of(&obj.dependencies)
            .iter()
            .map(|d| d.to_string())
            .collect();
        m.insert(
            "depends_on".into(),
            deps.into_iter().map(Json::from).collect(),
        );
    }
    if obj.status == ObjectStatus::Tainted {
        m.insert("tainted".into(), true.into());
    }
    if let Some(d) = deposed {
        m.insert("deposed_key".into(), d.into());
    }
    m.into()
}

fn values_json(
    outputs: &BTreeMap<String, OutputState>,
    resources: Vec<(ModuleInstance, Json)>,
) -> Json {
    let mut values = Map::new();
    if !outputs.is_empty() {
        let outs: Map = outputs
            .iter()
            .map(|(k, o)| {
                let v = Json::object([
                    ("sensitive", o.sensitive.into()),
                    ("value", value_json(&o.value)),
                    ("type", type_json(&o.value)),
                ]);
                (k.clone(), v)
            })
            .collect();
        values.insert("outputs".into(), outs.into());
    }
    values.insert("root_module".into(), module_tree(resources));
    values.into()
}

/// Nests resources into Terraform's module tree: `root_module` with its
/// `resources` and `child_modules`, each child with its `address`.
fn module_tree(resources: Vec<(ModuleInstance, Json)>) -> Json {
    let mut by_module: BTreeMap<ModuleInstance, Vec<Json>> = BTreeMap::new();
    for (m, r) in resources {
        by_module.entry(m).or_default().push(r);
    }
    module_json(&ModuleInstance::root(), &by_module)
}

fn module_json(path: &ModuleInstance, all: &BTreeMap<ModuleInstance, Vec<Json>>) -> Json {
    let mut m = Map::new();
    if !path.is_root() {
        m.insert("address".into(), path.to_string().into());
    }
    if let Some(rs) = all.get(path).filter(|rs| !rs.is_empty()) {
        m.insert("resources".into(), rs.clone().into());
    }
    let depth = path.0.len();
    let children: BTreeSet<ModuleInstance> = all
        .keys()
        .filter(|k| k.0.len() > depth && k.0.starts_with(&path.0))
        .map(|k| ModuleInstance(k.0[..=depth].to_vec()))
        .collect();
    if !children.is_empty() {
        let kids: Vec<Json> = children.iter().map(|c| module_json(c, all)).collect();
        m.insert("child_modules".into(), kids.into());
    }
    m.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::{AbsResource, ProviderAddr};
    use fleetform_shared::plan::OutputChange;
    use serde_json::json;

    fn change(addr: &str, action: Action, before: Value, after: Value) -> ResourceChange {
        ResourceChange {
            before,
            after,
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
        }
    }

    fn obj(id: Value, triggers: Value) -> Value {
        Value::object([("id", id), ("triggers", triggers)])
    }

    #[test]
    fn create_omits_unknowns_from_after_and_flags_them() {
        let after = obj(
            Value::unknown(),
            Value::object([("a", Value::from("x")), ("b", Value::unknown())]),
        );
        let plan = Plan {
            changes: vec![change(
                "null_resource.a[0]",
                Action::Create,
                Value::null(),
                after,
            )],
            ..Plan::default()
        };
        let j = plan_json(&plan);
        assert_eq!(j["format_version"], "1.2");
        assert_eq!(j["errored"], false);
        assert!(j.get("prior_state").is_none(), "nothing was prior");
        let rc = &j["resource_changes"][0];
        assert_eq!(rc["address"], "null_resource.a[0]");
        assert_eq!(rc["index"], 0);
        assert_eq!(rc["mode"], "managed");
        assert_eq!(rc["provider_name"], "registry.terraform.io/hashicorp/null");
        assert!(rc.get("action_reason").is_none());
        assert_eq!(
            rc["change"],
            json!({
                "actions": ["create"],
                "before": null,
                "after": {"triggers": {"a": "x"}},
                "after_unknown": {"id": true, "triggers": {"b": true}},
                "before_sensitive": false,
                "after_sensitive": {"triggers": {}},
            })
        );
        let pv = &j["planned_values"]["root_module"]["resources"][0];
        assert_eq!(pv["values"], json!({"triggers": {"a": "x"}}));
        assert_eq!(pv["schema_version"], 0);
    }

    /// As Terraform 1.11.4 writes them: a moved object names its previous
    /// address, drift is in `resource_drift` with the objects it is
    /// relevant to, and a refresh-only plan has no `resource_changes`.
    #[test]
    fn moves_drift_and_relevance_are_written_as_terraform_writes_them() {
        let v = obj(Value::from("1"), Value::null());
        let mut plan = Plan {
            changes: vec![change(
                "null_resource.a3",
                Action::NoOp,
                v.clone(),
                v.clone(),
            )],
            moved: vec![(
                "null_resource.a2".parse().unwrap(),
                "null_resource.a3".parse().unwrap(),
            )],
            drift: vec![change(
                "null_resource.d",
                Action::Delete,
                v.clone(),
                Value::null(),
            )],
            relevant_attributes: vec![fleetform_shared::plan::RelevantAttribute {
                resource: "null_resource.d".parse().unwrap(),
                attribute: vec![],
            }],
            ..Plan::default()
        };
        let j = plan_json(&plan).to_serde();
        assert_eq!(
            j["resource_changes"][0]["previous_address"],
            "null_resource.a2"
        );
        assert_eq!(j["resource_drift"][0]["address"], "null_resource.d");
        assert_eq!(
            j["resource_drift"][0]["change"]["actions"],
            json!(["delete"])
        );
        assert_eq!(j["resource_drift"][0]["change"]["after"], json!(null));
        assert_eq!(
            j["relevant_attributes"],
            json!([{"resource": "null_resource.d", "attribute": []}])
        );
        plan.mode = PlanMode::RefreshOnly;
        plan.relevant_attributes.clear();
        let j = plan_json(&plan).to_serde();
        assert!(j.get("resource_changes").is_none(), "{j}");
        assert!(j.get("relevant_attributes").is_none(), "{j}");
        assert_eq!(j["resource_drift"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn before_and_after_sensitivity_are_flagged_separately_down_to_list_elements() {
        let key = |k: &str| PathStep::Key(k.into());
        let v = |pw: &str| {
            Value::object([
                (
                    "list",
                    Value::tuple(vec![Value::from("a"), Value::from(pw)]),
                ),
                ("name", Value::from("n")),
            ])
        };
        let mut c = change("null_resource.a", Action::Update, v("old"), v("new"));
        c.before_sensitive_paths = vec![vec![key("name")]].into();
        c.sensitive_paths = vec![vec![key("list"), PathStep::Index(1)]].into();
        let j = resource_change(&c, Moves::default());
        assert_eq!(
            j["change"]["before_sensitive"],
            json!({"list": [false, false], "name": true})
        );
        assert_eq!(
            j["change"]["after_sensitive"],
            json!({"list": [false, true]})
        );
    }

    #[test]
    fn unknowns_in_lists_keep_their_position() {
        let v = Value::tuple(vec![
            Value::from("a"),
            Value::unknown(),
            Value::tuple(vec![]),
        ]);
        assert_eq!(known_json(&v), json!(["a", null, []]));
        assert_eq!(unknown_as_bool(&v), json!([false, true, []]));
        assert_eq!(unknown_as_bool(&Value::unknown()), json!(true));
        assert_eq!(unknown_as_bool(&Value::null()), json!(false));
    }

    #[test]
    fn replace_and_deposed_delete_carry_reason_paths_and_key() {
        let before = obj(Value::from("1"), Value::object([("v", Value::from("one"))]));
        let mut replace = change(
            "null_resource.b[\"k\"]",
            Action::DeleteThenCreate,
            before.clone(),
            obj(Value::unknown(), Value::object([("v", Value::from("two"))])),
        );
        replace.reason = ActionReason::ReplaceBecauseCannotUpdate;
        replace.requires_replace = vec![vec![PathStep::Key("triggers".into())]].into();
        replace.dependencies = vec![AbsResource::root(
            fleetform_shared::addr::Resource::managed("null_resource", "a"),
        )];
        let mut deposed = change("null_resource.c", Action::Delete, before, Value::null());
        deposed.deposed = Some("00000001".into());
        deposed.reason = ActionReason::DeleteBecauseNoResourceConfig;
        let plan = Plan {
            changes: vec![deposed, replace],
            ..Plan::default()
        };
        let j = plan_json(&plan);
        let rcs = j["resource_changes"].as_array().unwrap();
        assert_eq!(
            rcs[0]["address"], "null_resource.b[\"k\"]",
            "sorted by address"
        );
        assert_eq!(rcs[0]["index"], "k");
        assert_eq!(rcs[0]["action_reason"], "replace_because_cannot_update");
        assert_eq!(rcs[0]["change"]["actions"], json!(["delete", "create"]));
        assert_eq!(rcs[0]["change"]["replace_paths"], json!([["triggers"]]));
        assert_eq!(rcs[1]["deposed"], "00000001");
        assert_eq!(rcs[1]["action_reason"], "delete_because_no_resource_config");
        assert_eq!(rcs[1]["change"]["after"], Json::Null);
        assert_eq!(rcs[1]["change"]["after_unknown"], false);
        let planned = j["planned_values"]["root_module"]["resources"]
            .as_array()
            .unwrap();
        assert_eq!(planned.len(), 1, "the deleted object is not planned");
        let prior = j["prior_state"]["values"]["root_module"]["resources"]
            .as_array()
            .unwrap();
        assert_eq!(prior.len(), 2);
        assert_eq!(prior[0]["deposed_key"], "00000001");
        assert_eq!(prior[1]["depends_on"], json!(["null_resource.a"]));
    }

    #[test]
    fn outputs_and_child_modules() {
        let mut plan = Plan {
            changes: vec![change(
                "module.m.module.n.null_resource.x",
                Action::Create,
                Value::null(),
                obj(Value::unknown(), Value::null()),
            )],
            ..Plan::default()
        };
        plan.outputs.insert(
            "ids".into(),
            OutputChange {
                action: Action::Create,
                before: None,
                after: Value::tuple(vec![Value::unknown()]),
                sensitive: false,
            },
        );
        let j = plan_json(&plan);
        let m = &j["planned_values"]["root_module"]["child_modules"][0];
        assert_eq!(m["address"], "module.m");
        assert!(m.get("resources").is_none());
        let n = &m["child_modules"][0];
        assert_eq!(n["address"], "module.m.module.n");
        assert_eq!(
            n["resources"][0]["address"],
            "module.m.module.n.null_resource.x"
        );
        assert_eq!(n["resources"][0]["module_address"], "module.m.module.n");
        assert_eq!(
            j["planned_values"]["outputs"]["ids"],
            json!({"sensitive": false})
        );
        assert_eq!(j["output_changes"]["ids"]["after_unknown"], json!([true]));
        assert_eq!(j["output_changes"]["ids"]["actions"], json!(["create"]));
    }

    #[test]
    fn state_representation() {
        assert_eq!(
            state_json(&State::default()),
            json!({"format_version": "1.0"})
        );
        let mut state = State::new("l");
        let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
        state.resources.insert(
            addr,
            fleetform_shared::state::InstanceState {
                provider: ProviderAddr::implied("null"),
                current: Some(ObjectState {
                    value: obj(Value::from("7"), Value::null()),
                    private: vec![],
                    schema_version: 0,
                    status: ObjectStatus::Tainted,
                    dependencies: vec![],
                    create_before_destroy: false,
                    sensitive_paths: vec![],
                    value_sensitive_paths: None,
                    undecoded: false,
                }),
                deposed: BTreeMap::new(),
            },
        );
        state.outputs.insert(
            "id".into(),
            OutputState {
                value: Value::from("7"),
                sensitive: false,
            },
        );
        let j = state_json(&state);
        assert_eq!(
            j["values"]["outputs"]["id"],
            json!({"sensitive": false, "type": "string", "value": "7"})
        );
        let r = &j["values"]["root_module"]["resources"][0];
        assert_eq!(r["values"], json!({"id": "7", "triggers": null}));
        assert_eq!(r["tainted"], true);
        assert!(r.get("index").is_none());
    }
}
