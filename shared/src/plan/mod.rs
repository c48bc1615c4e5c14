//! Plans as data: the proposed change of every resource instance and output,
//! serialisable so a plan can be stored, shown, approved and applied later.

mod action;
mod generate;
mod inline;
mod proposed;
mod relevance;
pub mod shape;

pub use action::{ActionInputs, select_action};
pub use generate::{generated_block, generated_config};
pub use inline::inline as render_value;
pub use proposed::proposed_new_state;

use crate::addr::{AbsResource, AbsResourceInstance, ProviderAddr};
use crate::provider::AttrPath;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

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
    pub requires_replace: Vec<AttrPath>,
    pub prior_private: Vec<u8>,
    pub planned_private: Vec<u8>,
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
    pub sensitive_paths: Vec<AttrPath>,
    /// Sensitive parts of `before`, from the prior object's state and the
    /// schema: a value once sensitive stays hidden in the diff even when the
    /// new one is not.
    #[serde(default)]
    pub before_sensitive_paths: Vec<AttrPath>,
    /// Of `sensitive_paths`, those the configuration marked (recorded in
    /// state apart, see `ObjectState::value_sensitive_paths`).
    #[serde(default)]
    pub value_sensitive_paths: Vec<AttrPath>,
    /// Write-only attributes of the resource type (Terraform 1.11): null in
    /// `before` and `after` whatever was configured, shown as
    /// "(write-only attribute)".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_only_paths: Vec<AttrPath>,
}

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
            requires_replace: vec![],
            prior_private: vec![],
            planned_private: vec![],
            schema_version: 0,
            dependencies: vec![],
            create_before_destroy: false,
            sensitive_paths: vec![],
            before_sensitive_paths: vec![],
            value_sensitive_paths: vec![],
            write_only_paths: vec![],
        }
    }

    /// Attribute names whose planned value differs from the prior one.
    pub fn changed_attributes(&self) -> Vec<String> {
        let (Some(before), Some(after)) = (self.before.as_map(), self.after.as_map()) else {
            return Vec::new();
        };
        after
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
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
}

/// A part of an object that a plan's changes may depend on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RelevantAttribute {
    pub resource: AbsResourceInstance,
    /// The attribute path as the configuration's reference spells it
    /// statically (`tags["env"]`), or empty for the whole object.
    pub attribute: AttrPath,
}

/// A plan file (`plan -out=FILE`): the plan with the configuration it was
/// made from, so `apply FILE` applies exactly it. The final variable values
/// are in the plan ([`Plan::variables`]); however they were given (files,
/// environment, `-var`), applying uses those.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    pub format: String,
    pub workspace: String,
    pub plan: Plan,
    pub files: BTreeMap<String, String>,
    /// The module directories' other files (see `RunRequest::data_files`).
    #[serde(default)]
    pub data_files: BTreeMap<String, crate::wire::Blob>,
}

/// Marks plan files so other files are refused with a clear message, and
/// names the plan's own encoding: `fleetform-plan/3` added the schema
/// shapes ([`Plan::shapes`]).
pub const PLAN_FILE_FORMAT: &str = "fleetform-plan/3";

/// The plan's encoding before it carried shapes: still read, its plans
/// drawn without them.
pub const PLAN_FILE_FORMAT_V1: &str = "fleetform-plan/1";

/// The bytes a file must start with to be told a plan file by
/// [`SavedPlan::is_plan_file`]: enough for the map's header, its first key
/// and the format's family.
pub const PLAN_FILE_SNIFF_BYTES: usize = 32;

impl SavedPlan {
    /// Whether `prefix` (a file's first [`PLAN_FILE_SNIFF_BYTES`] or more)
    /// is the start of a fleetform plan file of any format version: a
    /// MessagePack map whose first entry is `format` with a value in the
    /// `fleetform-plan/` family ([`SavedPlan::encode`] writes the fields by
    /// name, `format` first). Only the prefix is read, so a large file is
    /// told without reading it all.
    pub fn is_plan_file(prefix: &[u8]) -> bool {
        plan_file_format(prefix).is_some_and(|f| f.starts_with("fleetform-plan/"))
    }

    pub fn new(workspace: &str, plan: Plan, files: BTreeMap<String, String>) -> SavedPlan {
        SavedPlan {
            format: PLAN_FILE_FORMAT.to_string(),
            workspace: workspace.to_string(),
            plan,
            files,
            data_files: BTreeMap::new(),
        }
    }

    /// The plan file's bytes: a [`PLAN_FILE_FORMAT_COMPRESSED`] envelope
    /// around the plan's own encoding ([`PLAN_FILE_FORMAT`]).
    pub fn encode(&self) -> Vec<u8> {
        let body = rmp_serde::to_vec_named(self).expect("plans are always serialisable");
        let envelope = Envelope {
            format: PLAN_FILE_FORMAT_COMPRESSED.to_string(),
            body: crate::wire::Blob(lz4_flex::compress_prepend_size(&body)),
        };
        rmp_serde::to_vec_named(&envelope).expect("an envelope is always serialisable")
    }

    /// Reads a plan file of either format: [`PLAN_FILE_FORMAT`] as written
    /// before plan files were compressed, or its compressed envelope.
    pub fn decode(bytes: &[u8]) -> Result<SavedPlan, String> {
        let not_plan = || "the file is not a fleetform plan file".to_string();
        let format = plan_file_format(bytes).ok_or_else(not_plan)?;
        let body: std::borrow::Cow<'_, [u8]> = match format {
            PLAN_FILE_FORMAT | PLAN_FILE_FORMAT_V1 => bytes.into(),
            PLAN_FILE_FORMAT_COMPRESSED => {
                let envelope: Envelope = rmp_serde::from_slice(bytes).map_err(|_| not_plan())?;
                decompress(&envelope.body.0)?.into()
            }
            other => {
                return Err(format!(
                    "unsupported plan file format {other:?} (this fleetform reads {PLAN_FILE_FORMAT_V1:?}, {PLAN_FILE_FORMAT_COMPRESSED:?} and {PLAN_FILE_FORMAT:?})"
                ));
            }
        };
        let p: SavedPlan = rmp_serde::from_slice(&body).map_err(|_| not_plan())?;
        if p.format != PLAN_FILE_FORMAT && p.format != PLAN_FILE_FORMAT_V1 {
            return Err(format!(
                "unsupported plan format {:?} inside a {format:?} plan file",
                p.format
            ));
        }
        Ok(p)
    }
}

/// The plan file format written: the plan's own encoding
/// ([`PLAN_FILE_FORMAT`]) compressed with LZ4 in an envelope that says so.
/// A plan repeats its field names and addresses for every instance: 441
/// bytes an instance of the bench's four-attribute resource uncompressed,
/// 12 compressed (1,000 instances; 1.1 MB for 100,000).
pub const PLAN_FILE_FORMAT_COMPRESSED: &str = "fleetform-plan/2";

/// A plan file of [`PLAN_FILE_FORMAT_COMPRESSED`].
#[derive(Serialize, Deserialize)]
struct Envelope {
    format: String,
    /// An LZ4 block of the plan's encoding, its length first (4 bytes,
    /// little-endian).
    body: crate::wire::Blob,
}

/// LZ4 writes no more than this many bytes for one it reads (its longest
/// match run): a longer length in front of a block is damage, refused
/// before anything is allocated for it.
const LZ4_MAX_RATIO: usize = 255;

fn decompress(block: &[u8]) -> Result<Vec<u8>, String> {
    let damaged = |why: &str| format!("the plan file is damaged ({why})");
    let claimed = block
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| damaged("its compressed body is cut short"))?;
    if claimed > block.len().saturating_mul(LZ4_MAX_RATIO) {
        return Err(damaged("its compressed body claims more than it can hold"));
    }
    lz4_flex::decompress_size_prepended(block).map_err(|e| damaged(&e.to_string()))
}

/// The `format` a plan file's bytes start with, if they start like one:
/// a MessagePack map whose first entry is `format` with a string value
/// ([`SavedPlan::encode`] writes the fields by name, `format` first).
fn plan_file_format(bytes: &[u8]) -> Option<&str> {
    let rest = match bytes.first() {
        Some(0x80..=0x8f) => &bytes[1..],
        Some(0xde) => bytes.get(3..)?,
        Some(0xdf) => bytes.get(5..)?,
        _ => return None,
    };
    let rest = rest.strip_prefix(b"\xa6format")?;
    let (len, value) = match *rest.first()? {
        b @ 0xa0..=0xbf => (usize::from(b & 0x1f), &rest[1..]),
        0xd9 => (usize::from(*rest.get(1)?), rest.get(2..)?),
        _ => return None,
    };
    std::str::from_utf8(value.get(..len)?).ok()
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

    fn change(addr: &str, action: Action) -> ResourceChange {
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

    /// A plan file is told from its first bytes, whatever it holds; other
    /// files are not taken for one.
    #[test]
    fn a_plan_file_is_told_from_its_first_bytes() {
        let mut saved = SavedPlan::new(
            "default",
            Plan {
                changes: vec![change("null_resource.a", Action::Create)],
                ..Plan::default()
            },
            BTreeMap::from([("main.tf".to_string(), "x".repeat(100_000))]),
        );
        saved
            .data_files
            .insert("blob.bin".to_string(), crate::wire::Blob(vec![7; 70_000]));
        let bytes = saved.encode();
        assert!(SavedPlan::is_plan_file(&bytes[..PLAN_FILE_SNIFF_BYTES]));
        assert!(SavedPlan::is_plan_file(&bytes));
        // A plan file written before they were compressed, and one of a
        // later version, are plan files too.
        let first = rmp_serde::to_vec_named(&saved).unwrap();
        assert!(SavedPlan::is_plan_file(&first[..PLAN_FILE_SNIFF_BYTES]));
        saved.format = "fleetform-plan/9".to_string();
        let later = rmp_serde::to_vec_named(&saved).unwrap();
        assert!(SavedPlan::is_plan_file(&later[..PLAN_FILE_SNIFF_BYTES]));
        // Cut short, or anything else: not one.
        assert!(!SavedPlan::is_plan_file(&bytes[..10]));
        assert!(!SavedPlan::is_plan_file(b""));
        assert!(!SavedPlan::is_plan_file(
            b"{\"format\": \"fleetform-plan/1\"}"
        ));
        assert!(!SavedPlan::is_plan_file(b"PK\x03\x04tfplan"));
        let other = rmp_serde::to_vec_named(&BTreeMap::from([("format", "zip")])).unwrap();
        assert!(!SavedPlan::is_plan_file(&other));
        let unnamed = rmp_serde::to_vec(&saved).unwrap();
        assert!(!SavedPlan::is_plan_file(&unnamed));
    }

    fn saved_plan(instances: usize) -> SavedPlan {
        let changes = (0..instances)
            .map(|i| change(&format!("null_resource.n[{i}]"), Action::Create))
            .collect();
        SavedPlan::new(
            "default",
            Plan {
                changes,
                ..Plan::default()
            },
            BTreeMap::from([("main.tf".to_string(), "resource {}".to_string())]),
        )
    }

    /// Plan files are written compressed and read back the same; one
    /// written before they were compressed still reads.
    #[test]
    fn plan_files_are_compressed_and_the_first_format_still_reads() {
        let saved = saved_plan(1000);
        let bytes = saved.encode();
        assert_eq!(SavedPlan::decode(&bytes).unwrap(), saved);
        let first = rmp_serde::to_vec_named(&saved).unwrap();
        assert_eq!(SavedPlan::decode(&first).unwrap(), saved);
        // A plan of the first format, which had no shapes.
        let v1 = SavedPlan {
            format: PLAN_FILE_FORMAT_V1.to_string(),
            ..saved.clone()
        };
        let read = SavedPlan::decode(&rmp_serde::to_vec_named(&v1).unwrap()).unwrap();
        assert!(read.plan.shapes.is_empty());
        assert!(
            bytes.len() * 8 < first.len(),
            "{} bytes compressed, {} not",
            bytes.len(),
            first.len()
        );
    }

    /// A damaged or foreign plan file is an error that says which, and a
    /// length in front of the compressed body that it cannot hold is
    /// refused before it is allocated.
    #[test]
    fn a_damaged_or_foreign_plan_file_is_refused() {
        let err = |bytes: &[u8]| SavedPlan::decode(bytes).unwrap_err();
        let envelope = |body: Vec<u8>| {
            rmp_serde::to_vec_named(&Envelope {
                format: PLAN_FILE_FORMAT_COMPRESSED.to_string(),
                body: crate::wire::Blob(body),
            })
            .unwrap()
        };
        let plain = rmp_serde::to_vec_named(&saved_plan(10)).unwrap();
        let block = lz4_flex::compress_prepend_size(&plain);
        // Cut short: LZ4 notices.
        let e = err(&envelope(block[..block.len() / 2].to_vec()));
        assert!(e.contains("the plan file is damaged"), "{e}");
        // A length of 4 GiB in front of 20 bytes.
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0; 16]);
        let e = err(&envelope(huge));
        assert!(e.contains("claims more than it can hold"), "{e}");
        let e = err(&envelope(vec![1, 2]));
        assert!(e.contains("cut short"), "{e}");
        // A compressed body that is not a plan.
        let e = err(&envelope(lz4_flex::compress_prepend_size(b"hello")));
        assert_eq!(e, "the file is not a fleetform plan file");
        // Not a plan file at all, or one of an unknown format.
        assert_eq!(
            err(b"{\"version\": 4}"),
            "the file is not a fleetform plan file"
        );
        let mut later = saved_plan(1);
        later.format = "fleetform-plan/9".to_string();
        let e = err(&rmp_serde::to_vec_named(&later).unwrap());
        assert!(
            e.contains("unsupported plan file format \"fleetform-plan/9\""),
            "{e}"
        );
        // A plan of another format inside the envelope.
        let e = err(&envelope(lz4_flex::compress_prepend_size(
            &rmp_serde::to_vec_named(&later).unwrap(),
        )));
        assert!(e.contains("unsupported plan format"), "{e}");
    }
}
