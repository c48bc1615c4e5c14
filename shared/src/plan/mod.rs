//! Plans as data: the proposed change of every resource instance and output,
//! serialisable so a plan can be stored, shown, approved and applied later.

mod action;
mod file;
mod generate;
mod inline;
mod proposed;
mod relevance;
pub mod shape;

pub use file::{
    PLAN_FILE_FORMAT, PLAN_FILE_FORMAT_COMPRESSED, PLAN_FILE_FORMAT_V1, PLAN_FILE_SNIFF_BYTES,
    SavedPlan, open_sealed, sealed,
};

pub use action::{ActionInputs, select_action};
pub use generate::{generated_block, generated_config};
pub use inline::inline as render_value;
pub use proposed::proposed_new_state;

use crate::addr::{AbsResource, AbsResourceInstance, InstanceKey, ProviderAddr};
use crate::provider::AttrPath;
use crate::state::{ObjectState, StateDelta};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use thin_vec::ThinVec;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    NoOp,
    Create,
    Read,
    Update,
    DeleteThenCreate,
    CreateThenDelete,
    Delete,
    /// Removed from state without destroying the object (a `removed`
    /// block with `destroy = false`): Terraform's "Forget".
    Forget,
}

impl Action {
    pub fn is_replace(self) -> bool {
        matches!(self, Action::DeleteThenCreate | Action::CreateThenDelete)
    }

    /// Terraform's JSON `change.actions` list.
    pub fn json_actions(self) -> &'static [&'static str] {
        match self {
            Action::NoOp => &["no-op"],
            Action::Create => &["create"],
            Action::Read => &["read"],
            Action::Update => &["update"],
            Action::DeleteThenCreate => &["delete", "create"],
            Action::CreateThenDelete => &["create", "delete"],
            Action::Delete => &["delete"],
            Action::Forget => &["forget"],
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Action::NoOp => "no-op",
            Action::Create => "create",
            Action::Read => "read",
            Action::Update => "update",
            Action::DeleteThenCreate => "replace (delete then create)",
            Action::CreateThenDelete => "replace (create then delete)",
            Action::Delete => "delete",
            Action::Forget => "forget",
        };
        f.write_str(s)
    }
}

/// Why an action was chosen when the action alone does not say (Terraform's
/// `action_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum ActionReason {
    #[default]
    None,
    ReplaceBecauseTainted,
    ReplaceByRequest,
    ReplaceBecauseCannotUpdate,
    ReplaceByTriggers,
    DeleteBecauseNoResourceConfig,
    DeleteBecauseCountIndex,
    DeleteBecauseEachKey,
    DeleteBecauseNoRepetition,
    /// The module instance it is in is no longer in the configuration.
    DeleteBecauseNoModule,
    /// A data source read waits for apply: its configuration has values
    /// known only then.
    ReadBecauseConfigUnknown,
    /// A data source read waits for apply: something it depends on has
    /// changes planned.
    ReadBecauseDependencyPending,
}

/// The planned change of one resource instance object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceChange {
    pub addr: AbsResourceInstance,
    /// Set when the change concerns a deposed object rather than the current one.
    pub deposed: Option<String>,
    pub provider: ProviderAddr,
    pub action: Action,
    pub reason: ActionReason,
    /// The prior (refreshed) object; `Null` for a create.
    pub before: Value,
    /// The planned new object, possibly with unknowns; `Null` for a delete.
    pub after: Value,
    pub requires_replace: ThinVec<AttrPath>,
    pub prior_private: ThinVec<u8>,
    pub planned_private: ThinVec<u8>,
    pub schema_version: i64,
    /// Resources this instance depends on (from configuration, or from state
    /// when its configuration is gone): the nearest managed ones on each
    /// path, not Terraform's transitive set, so a chain of n resources costs
    /// n addresses instead of n²/2. The apply graph orders by their closure
    /// (`graph::apply::edges`).
    pub dependencies: Vec<AbsResource>,
    pub create_before_destroy: bool,
    /// Sensitive parts of `after`: attributes the provider schema marks
    /// sensitive and arguments given sensitive values. Shown as
    /// "(sensitive value)", flagged in JSON output, and recorded in state
    /// with the new object.
    #[serde(default)]
    pub sensitive_paths: ThinVec<AttrPath>,
    /// Sensitive parts of `before`, from the prior object's state and the
    /// schema: a value once sensitive stays hidden in the diff even when the
    /// new one is not.
    #[serde(default)]
    pub before_sensitive_paths: ThinVec<AttrPath>,
    /// Of `sensitive_paths`, those the configuration marked (recorded in
    /// state apart, see `ObjectState::value_sensitive_paths`).
    #[serde(default)]
    pub value_sensitive_paths: ThinVec<AttrPath>,
    /// Write-only attributes of the resource type (Terraform 1.11): null in
    /// `before` and `after` whatever was configured, shown as
    /// "(write-only attribute)".
    #[serde(default, skip_serializing_if = "ThinVec::is_empty")]
    pub write_only_paths: ThinVec<AttrPath>,
}

// A plan holds one change per instance: its rarely filled lists are one
// pointer each (`ThinVec`: an empty one allocates nothing, a filled one
// keeps its length beside its items), 320 bytes a change instead of 432.
const _: () = assert!(std::mem::size_of::<ResourceChange>() <= 320);

impl ResourceChange {
    /// A change with no values, reason, dependencies or replace paths; the
    /// callers that need more set those fields.
    pub fn new(
        addr: AbsResourceInstance,
        provider: ProviderAddr,
        action: Action,
    ) -> ResourceChange {
        ResourceChange {
            addr,
            deposed: None,
            provider,
            action,
            reason: ActionReason::None,
            before: Value::null(),
            after: Value::null(),
            requires_replace: Default::default(),
            prior_private: Default::default(),
            planned_private: Default::default(),
            schema_version: 0,
            dependencies: vec![],
            create_before_destroy: false,
            sensitive_paths: Default::default(),
            before_sensitive_paths: Default::default(),
            value_sensitive_paths: Default::default(),
            write_only_paths: Default::default(),
        }
    }

    /// Attribute names whose planned value differs from the prior one.
    pub fn changed_attributes(&self) -> Vec<String> {
        let (Some(before), Some(after)) = (self.before.as_map(), self.after.as_map()) else {
            return Vec::new();
        };
        after
            .iter()
            .filter(|(k, v)| before.get(k) != Some(v))
            .map(|(k, _)| k.to_string())
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputChange {
    pub action: Action,
    pub before: Option<Value>,
    pub after: Value,
    pub sensitive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PlanMode {
    #[default]
    Normal,
    Destroy,
    RefreshOnly,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Plan {
    pub mode: PlanMode,
    /// Every considered instance object, ordered by address.
    pub changes: Vec<ResourceChange>,
    pub outputs: BTreeMap<String, OutputChange>,
    /// The state this plan was made against; applying refuses a newer state.
    pub prior_lineage: String,
    pub prior_serial: u64,
    /// The root input variables, ephemeral ones left out.
    pub variables: BTreeMap<String, Value>,
    /// Ephemeral root variables set while planning: their values are not
    /// in the plan, so applying it needs them given again (Terraform's
    /// apply-time variables).
    #[serde(default)]
    pub apply_time_variables: Vec<String>,
    /// Data source values read while planning, in scope during apply.
    #[serde(default)]
    pub data_values: BTreeMap<AbsResourceInstance, Value>,
    /// Objects `moved` blocks rebound to new addresses (from, to).
    #[serde(default)]
    pub moved: Vec<(AbsResourceInstance, AbsResourceInstance)>,
    /// `-target` / `-exclude` limited this plan; applying it may leave the
    /// configuration partly unapplied.
    #[serde(default)]
    pub partial: bool,
    /// Instances brought under management by this plan (import id by
    /// address); the imported object is the change's `before`.
    #[serde(default)]
    pub imports: BTreeMap<AbsResourceInstance, String>,
    /// When the plan was made, RFC 3339 (`plantimestamp()`): applying it
    /// later evaluates with the same time.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Objects that changed outside fleetform, found by refreshing
    /// (Terraform's `resource_drift`): the state's object as `before`, the
    /// refreshed one as `after`, `Null` when it is gone. The action is
    /// `Update` or `Delete`; in a refresh-only plan also `NoOp` for an
    /// object that only a `moved` block rebound. Values and their
    /// sensitivity only: nothing here is applied.
    #[serde(default)]
    pub drift: Vec<ResourceChange>,
    /// The resource attributes this plan's changes may depend on, drifted
    /// or not (Terraform's `relevant_attributes`): a normal plan shows only
    /// their drift ([`Plan::drift_shown`]).
    #[serde(default)]
    pub relevant_attributes: Vec<RelevantAttribute>,
    /// Resource blocks this plan wrote for import targets that had none
    /// (`plan -generate-config-out`), in HCL, by the instance they import.
    #[serde(default)]
    pub generated_config: BTreeMap<AbsResourceInstance, String>,
    /// The schema shapes of the resource types in `changes` and `drift`,
    /// once per type, for drawing their values (see [`shape`]). Empty in
    /// plans of plan files before `fleetform-plan/3`.
    #[serde(default)]
    pub shapes: shape::Shapes,
    /// Planning stopped at errors: these are the changes planned before
    /// them, shown as Terraform shows them ("planned the following
    /// actions, but then encountered a problem"), never applied or saved.
    #[serde(default)]
    pub errored: bool,
    /// What each instance's configuration reads of other resources, where
    /// all of it could be followed (`sim_object.a[count.index]` reads one
    /// instance): when an instance it does not read fails, this one still
    /// applies (failure isolation, docs/planning/failures.md). An instance
    /// not here is held back by any failure before it, as in Terraform.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub instance_refs: BTreeMap<AbsResourceInstance, InstanceRefs>,
    /// Data source instances in state that the configuration no longer
    /// declares (every one, in a destroy), with their providers: applying
    /// the plan drops them from state. A data source's object in state is
    /// only the record of a read (Terraform 1.11 keeps them, and `state
    /// push` brings them): no provider is called for it and nothing is
    /// shown, as in Terraform. Planned as deletes, they had the provider
    /// delete the object the data source had read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_removed: Vec<(AbsResourceInstance, ProviderAddr)>,
    /// How each data source read while planning (its value is in
    /// [`Plan::data_values`]) is recorded in state when the plan is
    /// applied: Terraform 1.11 keeps every data source's latest read in
    /// its state. A plan made before this was kept records none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data_records: BTreeMap<AbsResourceInstance, DataRecord>,
}

/// What the state records beside a data source's read value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataRecord {
    pub provider: ProviderAddr,
    /// The data source's schema version.
    pub schema_version: i64,
    /// Attributes that are sensitive (by the schema or the configuration).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive_paths: Vec<AttrPath>,
    /// Of those, the ones the configuration's values marked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value_sensitive_paths: Vec<AttrPath>,
}

impl DataRecord {
    /// The state change that records `value` as the latest read of the
    /// data source instance `addr`: a ready object, with no dependencies
    /// and no private data (Terraform 1.11 records neither for a read).
    pub fn delta(&self, addr: &AbsResourceInstance, value: Value) -> StateDelta {
        StateDelta::SetCurrent {
            addr: addr.clone(),
            provider: self.provider.clone(),
            object: Some(ObjectState {
                schema_version: self.schema_version,
                sensitive_paths: self.sensitive_paths.clone(),
                value_sensitive_paths: Some(self.value_sensitive_paths.clone()),
                ..ObjectState::new(value)
            }),
        }
    }
}

/// Everything of other resources that one instance's configuration reads
/// (see [`Plan::instance_refs`]), directly or through locals, module
/// inputs and module outputs: nothing else it reads can fail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceRefs {
    /// Instances read one by one, by resource (a resource without `count`
    /// or `for_each` has the one instance without a key).
    pub instances: BTreeMap<AbsResource, BTreeSet<InstanceKey>>,
    /// Resources read as a whole (a splat, a `for` over it, `depends_on`,
    /// an index not known while planning): every instance counts.
    pub whole: BTreeSet<AbsResource>,
}

/// A part of an object that a plan's changes may depend on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RelevantAttribute {
    pub resource: AbsResourceInstance,
    /// The attribute path as the configuration's reference spells it
    /// statically (`tags["env"]`), or empty for the whole object.
    pub attribute: AttrPath,
}

/// Counts for "Plan: X to add, Y to change, Z to destroy."
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSummary {
    #[serde(default)]
    pub import: usize,
    pub add: usize,
    pub change: usize,
    pub destroy: usize,
    /// Objects forgotten from state, not destroyed.
    #[serde(default)]
    pub forget: usize,
}

impl fmt::Display for ChangeSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.import > 0 {
            write!(f, "{} to import, ", self.import)?;
        }
        write!(
            f,
            "{} to add, {} to change, {} to destroy",
            self.add, self.change, self.destroy
        )?;
        if self.forget > 0 {
            write!(f, ", {} to forget", self.forget)?;
        }
        f.write_str(".")
    }
}

impl Plan {
    pub fn summary(&self) -> ChangeSummary {
        let mut s = ChangeSummary {
            import: self.imports.len(),
            ..ChangeSummary::default()
        };
        for c in &self.changes {
            match c.action {
                Action::Create => s.add += 1,
                Action::Update => s.change += 1,
                Action::Delete => s.destroy += 1,
                Action::DeleteThenCreate | Action::CreateThenDelete => {
                    s.add += 1;
                    s.destroy += 1;
                }
                Action::Forget => s.forget += 1,
                Action::NoOp | Action::Read => {}
            }
        }
        s
    }

    /// The address each object a `moved` block rebound had before, by
    /// its new address.
    pub fn previous_addresses(
        &self,
    ) -> std::collections::HashMap<&AbsResourceInstance, &AbsResourceInstance> {
        self.moved.iter().map(|(from, to)| (to, from)).collect()
    }

    /// True when applying would change any resource or output.
    pub fn has_changes(&self) -> bool {
        if self.mode == PlanMode::RefreshOnly {
            return self.changes.iter().any(|c| c.before != c.after) || !self.moved.is_empty();
        }
        !self.moved.is_empty()
            || !self.imports.is_empty()
            || self.changes.iter().any(|c| c.action != Action::NoOp)
            || self.outputs.values().any(|o| o.action != Action::NoOp)
    }

    /// The state changes an apply of this plan makes for data sources
    /// without calling a provider: the records of those it no longer
    /// declares dropped, and the reads made while planning recorded.
    pub fn data_deltas(&self) -> Vec<StateDelta> {
        let dropped = self
            .data_removed
            .iter()
            .map(|(addr, provider)| StateDelta::SetCurrent {
                addr: addr.clone(),
                provider: provider.clone(),
                object: None,
            });
        let read = self.data_records.iter().filter_map(|(addr, record)| {
            let value = self.data_values.get(addr)?;
            Some(record.delta(addr, value.clone()))
        });
        dropped.chain(read).collect()
    }

    /// A compact, stable text form for golden tests: one line per change.
    pub fn debug_repr(&self) -> String {
        let mut out = String::new();
        for c in &self.changes {
            let deposed = c
                .deposed
                .as_ref()
                .map(|d| format!(" (deposed {d})"))
                .unwrap_or_default();
            out.push_str(&format!("{}{deposed}: {}", c.addr, c.action));
            if c.reason != ActionReason::None {
                out.push_str(&format!(" [{:?}]", c.reason));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn change(addr: &str, action: Action) -> ResourceChange {
        ResourceChange {
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
        }
    }

    #[test]
    fn summary_counts_replace_as_add_and_destroy() {
        let plan = Plan {
            changes: vec![
                change("null_resource.a", Action::Create),
                change("null_resource.b", Action::DeleteThenCreate),
                change("null_resource.c", Action::Update),
                change("null_resource.d", Action::NoOp),
                change("null_resource.e", Action::Delete),
            ],
            ..Plan::default()
        };
        assert_eq!(
            plan.summary().to_string(),
            "2 to add, 1 to change, 2 to destroy."
        );
        assert!(plan.has_changes());
        let forget = Plan {
            changes: vec![change("null_resource.f", Action::Forget)],
            ..Plan::default()
        };
        assert!(forget.has_changes());
        assert_eq!(
            forget.summary().to_string(),
            "0 to add, 0 to change, 0 to destroy, 1 to forget."
        );
        assert_eq!(Action::Forget.json_actions(), &["forget"]);
        assert!(
            plan.debug_repr()
                .contains("null_resource.b: replace (delete then create)\n")
        );
    }
}
