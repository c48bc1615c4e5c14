//! State snapshots: every resource instance object fleetform manages, with
//! the outputs of the root module.

use crate::addr::{
    AbsProviderConfig, AbsResource, AbsResourceInstance, ConfigResource, ProviderAddr,
};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum ObjectStatus {
    #[default]
    Ready,
    /// Creation failed partway; the object is replaced by the next plan.
    Tainted,
}

/// One remote object bound to an instance address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectState {
    pub value: Value,
    pub private: Vec<u8>,
    pub schema_version: i64,
    pub status: ObjectStatus,
    /// Resources this object depended on when it was last applied, so it can
    /// be destroyed in the right order after its configuration is gone. The
    /// nearest ones (what Terraform records is their closure through the
    /// other objects'; a state file written for Terraform gets that,
    /// [`State::dependency_closure`]); lists read from Terraform's state
    /// files are transitive already, which orders the same.
    pub dependencies: Vec<AbsResource>,
    pub create_before_destroy: bool,
    /// Attributes the provider schema marks sensitive.
    #[serde(default)]
    pub sensitive_paths: Vec<crate::provider::AttrPath>,
    /// Of `sensitive_paths`, those the configuration's values marked (a
    /// sensitive variable, `sensitive()`), without the schema's: what
    /// Terraform records in a state file's `sensitive_attributes` (Terraform
    /// 0.15 plans an update of an object whose recorded marks include the
    /// schema's). `None`: recorded before fleetform kept them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_sensitive_paths: Option<Vec<crate::provider::AttrPath>>,
    /// `value` is a state file's `attributes` as read (`state push`,
    /// `init -migrate-state`), not yet decoded with the provider schema:
    /// a `dynamic` attribute is still its `{"value": …, "type": …}`
    /// wrapper. The first run that has the schema decodes it
    /// ([`crate::statefile::decode_object`]); until then it is written back to a
    /// state file as it came.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecoded: bool,
}

impl ObjectState {
    /// A ready object with `value` and nothing else recorded: no private
    /// data, dependencies or sensitive paths.
    pub fn new(value: Value) -> ObjectState {
        ObjectState {
            value,
            private: vec![],
            schema_version: 0,
            status: ObjectStatus::Ready,
            dependencies: vec![],
            create_before_destroy: false,
            sensitive_paths: vec![],
            value_sensitive_paths: None,
            undecoded: false,
        }
    }
}

/// Everything bound to one instance address: the current object and objects
/// deposed by a create-before-destroy replacement that are not deleted yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceState {
    pub provider: ProviderAddr,
    pub current: Option<ObjectState>,
    pub deposed: BTreeMap<String, ObjectState>,
}

impl InstanceState {
    pub fn is_empty(&self) -> bool {
        self.current.is_none() && self.deposed.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    pub value: Value,
    pub sensitive: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct State {
    /// Identifies one line of history; a snapshot from another lineage is
    /// never silently taken over.
    pub lineage: String,
    /// Increases with every snapshot written.
    pub serial: u64,
    #[serde(deserialize_with = "dense_map")]
    pub resources: BTreeMap<AbsResourceInstance, InstanceState>,
    pub outputs: BTreeMap<String, OutputState>,
    /// Operations whose worker stopped while the provider may have been
    /// acting, so they were not repeated: the object may exist without
    /// being in `resources`, or differ from it. Each stays until an
    /// operation on its instance completes (or the object is imported).
    #[serde(default)]
    pub interrupted: BTreeMap<AbsResourceInstance, InterruptedOp>,
    /// The outcome of every custom condition and check at the last apply,
    /// as Terraform records it in a state file's `check_results` (a pushed
    /// state's are kept until an apply records its own).
    #[serde(default)]
    pub check_results: Option<Vec<CheckResult>>,
    /// The provider configuration that manages each resource, as a state
    /// file's `provider` says it (`provider["…/aws"].west`,
    /// `module.m.provider["…"]`): once a resource is gone from the
    /// configuration, it is destroyed with this configuration, never with
    /// another one of the same provider (another account or region would
    /// find nothing to delete, and the object would be forgotten while it
    /// still exists). Every apply records the configuration's; snapshots
    /// written before fleetform kept it have none
    /// ([`State::provider_config`] says so).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provider_configs: BTreeMap<ConfigResource, AbsProviderConfig>,
}

/// A map decoded with its nodes full. Inserted one by one in order, as
/// serde's own decoding does, a `BTreeMap` leaves each node a little over
/// half full: a state of a million objects took about 280 MB more than
/// its entries. Built at once from the decoded entries it fills them (the
/// entries are held twice meanwhile, once, while the run starts).
fn dense_map<'de, D, K, V>(d: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    struct Entries<K, V>(std::marker::PhantomData<(K, V)>);
    impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> serde::de::Visitor<'de>
        for Entries<K, V>
    {
        type Value = BTreeMap<K, V>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut access: A,
        ) -> Result<BTreeMap<K, V>, A::Error> {
            // The announced length is not trusted for the room set aside.
            let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(4096));
            while let Some(entry) = access.next_entry::<K, V>()? {
                entries.push(entry);
            }
            // Of equal keys the last is kept, as inserting them would.
            Ok(entries.into_iter().collect())
        }
    }
    d.deserialize_map(Entries(std::marker::PhantomData))
}

/// What a state knows of the provider configuration of a resource's objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedProvider {
    /// The configuration recorded for it.
    Recorded(AbsProviderConfig),
    /// None was recorded (a snapshot of an earlier fleetform): only the
    /// provider is known.
    Unrecorded(ProviderAddr),
}

/// The status of a checkable object, or of all objects of one
/// configuration address: Terraform's `pass`, `fail`, `error`, `unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckStatus {
    Pass,
    Fail,
    Error,
    Unknown,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Error => "error",
            CheckStatus::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<CheckStatus> {
        Some(match s {
            "pass" => CheckStatus::Pass,
            "fail" => CheckStatus::Fail,
            "error" => CheckStatus::Error,
            "unknown" => CheckStatus::Unknown,
            _ => return None,
        })
    }

    /// The status of several objects: any error, else any failure, else
    /// anything unknown, else pass (also when there are none: nothing
    /// failed).
    pub fn aggregate(all: impl IntoIterator<Item = CheckStatus>) -> CheckStatus {
        let mut out = None;
        for s in all {
            out = Some(match (out, s) {
                (Some(CheckStatus::Error), _) | (_, CheckStatus::Error) => CheckStatus::Error,
                (Some(CheckStatus::Fail), _) | (_, CheckStatus::Fail) => CheckStatus::Fail,
                (Some(CheckStatus::Unknown), _) | (_, CheckStatus::Unknown) => CheckStatus::Unknown,
                _ => CheckStatus::Pass,
            });
        }
        out.unwrap_or(CheckStatus::Pass)
    }
}

/// The checks of one configuration address: a resource with conditions,
/// an output with preconditions or a `check` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// `resource`, `output` or `check`.
    pub object_kind: String,
    /// Without instance keys: `module.net.aws_vpc.main`, `output.id`.
    pub config_addr: String,
    pub status: CheckStatus,
    pub objects: Vec<CheckedObject>,
}

/// One instance of a checkable configuration address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckedObject {
    /// With instance keys: `module.net[0].aws_vpc.main["a"]`.
    pub object_addr: String,
    pub status: CheckStatus,
    /// The error messages of the conditions that failed.
    pub failure_messages: Vec<String>,
}

/// One interrupted operation, as the next plan reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptedOp {
    pub run_id: String,
    /// `create`, `update` or `delete`.
    pub operation: String,
    /// When the run learned of it (RFC 3339).
    pub at: String,
}

/// The change an applied operation makes to state; recorded in the journal
/// and replayed onto the snapshot, so recording one operation is O(1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StateDelta {
    /// Sets (or with `None` removes) the current object of an instance.
    SetCurrent {
        addr: AbsResourceInstance,
        provider: ProviderAddr,
        object: Option<ObjectState>,
    },
    /// Sets (or with `None` removes) a deposed object of an instance.
    SetDeposed {
        addr: AbsResourceInstance,
        provider: ProviderAddr,
        key: String,
        object: Option<ObjectState>,
    },
    /// Moves the current object of an instance to a deposed key.
    Depose {
        addr: AbsResourceInstance,
        key: String,
    },
    SetOutput {
        name: String,
        value: Option<OutputState>,
    },
    /// Records (or with `None` clears) an interrupted operation.
    SetInterrupted {
        addr: AbsResourceInstance,
        op: Option<InterruptedOp>,
    },
    /// Replaces the check results (an apply's, at its end).
    SetCheckResults(Option<Vec<CheckResult>>),
    /// Records the provider configuration of each resource of the
    /// configuration (an apply's, at its start); what is recorded for a
    /// resource that has no object left is dropped.
    SetProviderConfigs(Vec<(ConfigResource, AbsProviderConfig)>),
}

impl State {
    pub fn new(lineage: impl Into<String>) -> State {
        State {
            lineage: lineage.into(),
            ..State::default()
        }
    }

    pub fn current(&self, addr: &AbsResourceInstance) -> Option<&ObjectState> {
        self.resources.get(addr).and_then(|i| i.current.as_ref())
    }

    /// Number of current objects (what `state list` prints).
    pub fn instance_count(&self) -> usize {
        self.resources
            .values()
            .filter(|i| i.current.is_some())
            .count()
    }

    /// Applies one delta. Deltas are idempotent: replaying a journal twice
    /// gives the same state.
    pub fn apply_delta(&mut self, delta: &StateDelta) {
        match delta {
            StateDelta::SetCurrent {
                addr,
                provider,
                object,
            } => {
                let inst = self.entry(addr, provider);
                inst.current = object.clone();
                self.prune(addr);
                // Whatever was interrupted there is settled now.
                self.interrupted.remove(addr);
            }
            StateDelta::SetDeposed {
                addr,
                provider,
                key,
                object,
            } => {
                let inst = self.entry(addr, provider);
                match object {
                    Some(o) => {
                        inst.deposed.insert(key.clone(), o.clone());
                    }
                    None => {
                        inst.deposed.remove(key);
                    }
                }
                self.prune(addr);
            }
            StateDelta::Depose { addr, key } => {
                if let Some(inst) = self.resources.get_mut(addr)
                    && let Some(obj) = inst.current.take()
                {
                    inst.deposed.insert(key.clone(), obj);
                }
            }
            StateDelta::SetOutput { name, value } => match value {
                Some(v) => {
                    self.outputs.insert(name.clone(), v.clone());
                }
                None => {
                    self.outputs.remove(name);
                }
            },
            StateDelta::SetInterrupted { addr, op } => match op {
                Some(op) => {
                    self.interrupted.insert(addr.clone(), op.clone());
                }
                None => {
                    self.interrupted.remove(addr);
                }
            },
            StateDelta::SetCheckResults(results) => self.check_results = results.clone(),
            StateDelta::SetProviderConfigs(configs) => {
                let live: std::collections::BTreeSet<ConfigResource> = self
                    .resources
                    .keys()
                    .map(AbsResourceInstance::config_resource)
                    .collect();
                self.provider_configs.retain(|r, _| live.contains(r));
                for (r, p) in configs {
                    self.provider_configs.insert(r.clone(), p.clone());
                }
            }
        }
    }

    /// The provider configuration of `addr`'s objects, as recorded.
    pub fn provider_config(&self, addr: &AbsResourceInstance) -> Option<RecordedProvider> {
        let inst = self.resources.get(addr)?;
        Some(match self.provider_configs.get(&addr.config_resource()) {
            Some(p) if p.provider == inst.provider => RecordedProvider::Recorded(p.clone()),
            _ => RecordedProvider::Unrecorded(inst.provider.clone()),
        })
    }

    fn entry(&mut self, addr: &AbsResourceInstance, provider: &ProviderAddr) -> &mut InstanceState {
        self.resources
            .entry(addr.clone())
            .or_insert_with(|| InstanceState {
                provider: provider.clone(),
                current: None,
                deposed: BTreeMap::new(),
            })
    }

    fn prune(&mut self, addr: &AbsResourceInstance) {
        if self
            .resources
            .get(addr)
            .is_some_and(InstanceState::is_empty)
        {
            self.resources.remove(addr);
        }
    }

    /// Encodes the snapshot for storage (msgpack with field names, so added
    /// fields stay readable).
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(self).expect("state is always serialisable")
    }

    pub fn decode(bytes: &[u8]) -> Result<State, rmp_serde::decode::Error> {
        rmp_serde::from_slice(bytes)
    }

    /// [`State::encode`] packed ([`crate::parts::pack_named`]), as
    /// snapshots are stored: a million instances' state encodes to about
    /// 400 MB, which the coordinator held beside the state while storing
    /// it; packed, the encoding is never whole in memory.
    pub fn encode_packed(&self) -> Vec<u8> {
        crate::parts::pack_named(self)
    }

    /// A snapshot as stored: packed ([`State::encode_packed`]) or, as
    /// snapshots were written before, not.
    pub fn decode_stored(bytes: &[u8]) -> Result<State, rmp_serde::decode::Error> {
        crate::parts::unpack_named(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(id: &str) -> ObjectState {
        ObjectState::new(Value::object([("id", Value::from(id))]))
    }

    #[test]
    fn an_interrupted_operation_is_kept_until_its_instance_is_settled() {
        let addr: AbsResourceInstance = "sim_object.a".parse().unwrap();
        let mut s = State::new("l");
        let op = InterruptedOp {
            run_id: "r1".into(),
            operation: "create".into(),
            at: "2026-11-24T00:00:00Z".into(),
        };
        s.apply_delta(&StateDelta::SetInterrupted {
            addr: addr.clone(),
            op: Some(op.clone()),
        });
        assert_eq!(s.instance_count(), 0, "no object is assumed");
        let decoded = State::decode(&s.encode()).unwrap();
        assert_eq!(decoded.interrupted.get(&addr), Some(&op));
        s.apply_delta(&StateDelta::SetCurrent {
            addr: addr.clone(),
            provider: ProviderAddr::new("fleetform", "sim"),
            object: Some(obj("1")),
        });
        assert!(s.interrupted.is_empty(), "created (or imported) at last");
    }

    #[test]
    fn each_resource_keeps_the_provider_configuration_an_apply_recorded() {
        let sim = ProviderAddr::new("fleetform", "sim");
        let mut s = State::new("l");
        let a: AbsResourceInstance = "module.m[0].sim_object.a".parse().unwrap();
        let gone: AbsResourceInstance = "sim_object.gone".parse().unwrap();
        for addr in [&a, &gone] {
            s.apply_delta(&StateDelta::SetCurrent {
                addr: addr.clone(),
                provider: sim.clone(),
                object: Some(obj("1")),
            });
        }
        // A snapshot of an earlier fleetform knows only the provider.
        assert_eq!(
            s.provider_config(&a),
            Some(RecordedProvider::Unrecorded(sim.clone()))
        );
        let west = AbsProviderConfig {
            module: crate::addr::Module::root(),
            provider: sim.clone(),
            alias: Some("west".into()),
        };
        let later = "sim_object.later"
            .parse::<AbsResourceInstance>()
            .unwrap()
            .config_resource();
        s.apply_delta(&StateDelta::SetProviderConfigs(vec![
            (a.config_resource(), west.clone()),
            (gone.config_resource(), west.clone()),
            (later.clone(), west.clone()),
        ]));
        assert_eq!(
            s.provider_config(&a),
            Some(RecordedProvider::Recorded(west.clone()))
        );
        let decoded = State::decode(&s.encode()).unwrap();
        assert_eq!(decoded, s, "kept in snapshots");
        // The next apply: `gone` has no object left, `later` has one now.
        s.apply_delta(&StateDelta::SetCurrent {
            addr: gone.clone(),
            provider: sim.clone(),
            object: None,
        });
        s.apply_delta(&StateDelta::SetCurrent {
            addr: "sim_object.later".parse().unwrap(),
            provider: sim.clone(),
            object: Some(obj("2")),
        });
        s.apply_delta(&StateDelta::SetProviderConfigs(vec![]));
        assert_eq!(
            s.provider_configs.keys().cloned().collect::<Vec<_>>(),
            vec![later, a.config_resource()]
        );
        // A configuration of another provider is not this one's.
        s.provider_configs.insert(
            a.config_resource(),
            AbsProviderConfig {
                provider: ProviderAddr::implied("null"),
                ..west
            },
        );
        assert_eq!(
            s.provider_config(&a),
            Some(RecordedProvider::Unrecorded(sim))
        );
        assert_eq!(s.provider_config(&gone), None);
    }

    #[test]
    fn deltas_are_idempotent_and_prune_empty_instances() {
        let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
        let p = ProviderAddr::implied("null");
        let mut s = State::new("l");
        let set = StateDelta::SetCurrent {
            addr: addr.clone(),
            provider: p.clone(),
            object: Some(obj("1")),
        };
        s.apply_delta(&set);
        s.apply_delta(&set);
        assert_eq!(s.instance_count(), 1);
        s.apply_delta(&StateDelta::Depose {
            addr: addr.clone(),
            key: "00000001".into(),
        });
        assert_eq!(s.instance_count(), 0);
        assert_eq!(s.resources[&addr].deposed.len(), 1);
        s.apply_delta(&StateDelta::SetDeposed {
            addr: addr.clone(),
            provider: p,
            key: "00000001".into(),
            object: None,
        });
        assert!(s.resources.is_empty());
    }

    #[test]
    fn snapshots_round_trip() {
        let mut s = State::new("lineage");
        s.serial = 7;
        s.apply_delta(&StateDelta::SetCurrent {
            addr: "sim_object.x[3]".parse().unwrap(),
            provider: ProviderAddr::new("fleetform", "sim"),
            object: Some(obj("9")),
        });
        assert_eq!(State::decode(&s.encode()).unwrap(), s);
        assert!(State::decode(b"\x01garbage").is_err());
    }

    /// Snapshots are stored packed: smaller, read back the same, checked
    /// for damage; those stored before they were packed still read.
    #[test]
    fn packed_snapshots_read_back_smaller_and_damage_is_an_error() {
        let mut s = State::new("lineage");
        s.serial = 3;
        for i in 0..2000 {
            s.apply_delta(&StateDelta::SetCurrent {
                addr: format!("sim_object.x[{i}]").parse().unwrap(),
                provider: ProviderAddr::new("fleetform", "sim"),
                object: Some(obj(&format!("id-{i}"))),
            });
        }
        let (plain, packed) = (s.encode(), s.encode_packed());
        assert!(
            packed.len() * 4 < plain.len(),
            "{} of {}",
            packed.len(),
            plain.len()
        );
        assert_eq!(State::decode_stored(&packed).unwrap(), s);
        assert_eq!(State::decode_stored(&plain).unwrap(), s, "an unpacked one");
        // A byte changed inside the content: the checksum or the decoding
        // says so.
        let mut damaged = packed.clone();
        let at = damaged.len() / 2;
        damaged[at] ^= 0x5a;
        assert!(State::decode_stored(&damaged).is_err());
        // Cut short, or with something after the state.
        assert!(State::decode_stored(&packed[..packed.len() - 9]).is_err());
        let mut longer = plain.clone();
        longer.extend_from_slice(b"extra");
        let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
        let mut out = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        std::io::Write::write_all(&mut out, &longer).unwrap();
        let err = State::decode_stored(&out.finish().unwrap()).unwrap_err();
        assert!(err.to_string().contains("5 bytes after the value"), "{err}");
    }
}

/// Resource-level dependencies (what each resource's objects or changes
/// record, merged), for the transitive sets Terraform's files carry.
#[derive(Debug, Default)]
pub struct DependencyClosure {
    direct: BTreeMap<AbsResource, std::collections::BTreeSet<AbsResource>>,
}

impl DependencyClosure {
    pub fn new<'a>(
        records: impl IntoIterator<Item = (AbsResource, &'a [AbsResource])>,
    ) -> DependencyClosure {
        let mut direct: BTreeMap<AbsResource, std::collections::BTreeSet<AbsResource>> =
            BTreeMap::new();
        for (r, deps) in records {
            direct.entry(r).or_default().extend(deps.iter().cloned());
        }
        DependencyClosure { direct }
    }

    /// The objects of a state.
    pub fn of_state(state: &State) -> DependencyClosure {
        DependencyClosure::new(state.resources.iter().flat_map(|(addr, inst)| {
            inst.current
                .iter()
                .chain(inst.deposed.values())
                .map(move |o| (addr.containing_resource(), o.dependencies.as_slice()))
        }))
    }

    /// `deps` and everything they depend on, sorted.
    pub fn of(&self, deps: &[AbsResource]) -> Vec<AbsResource> {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack: Vec<&AbsResource> = deps.iter().collect();
        while let Some(d) = stack.pop() {
            if seen.insert(d.clone()) {
                stack.extend(self.direct.get(d).into_iter().flatten());
            }
        }
        seen.into_iter().collect()
    }
}
