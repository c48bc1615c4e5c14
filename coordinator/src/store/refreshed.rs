//! A workspace's record of refreshed objects: for each resource instance,
//! the object a read returned, when it was read, and which state object it
//! refreshed. Kept beside the state (never inside the Terraform-format
//! snapshot, which must stay what Terraform writes), so that a plan with
//! `-refresh-max-age` can reuse a recent read instead of asking the cloud
//! again (docs/state.md, "Refreshed objects").

use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::state::State;
use fleetform_shared::value::Value;
use fleetform_shared::wire::PriorObject;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One instance's latest read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refresh {
    /// What the provider returned; `None` when the object was gone.
    pub object: Option<PriorObject>,
    /// When it was read, unix milliseconds.
    pub read_at_ms: u64,
    /// The state serial the read was made against.
    pub serial: u64,
    /// The state's object that was refreshed. A read is reused only while
    /// the state still holds exactly this object: an apply that wrote the
    /// object since makes the read older than the object, and it is never
    /// used again (comparing the object, not the serial, keeps reads of
    /// objects an apply did not touch).
    pub refreshed: Value,
}

/// Every instance's latest read, by address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Refreshed {
    pub entries: BTreeMap<AbsResourceInstance, Refresh>,
}

impl Refreshed {
    /// Reads what [`Refreshed::encode`] wrote, or a record written before
    /// records were packed.
    pub fn decode(bytes: &[u8]) -> Result<Refreshed, rmp_serde::decode::Error> {
        fleetform_shared::parts::unpack_named(bytes)
    }

    /// Packed as it is encoded: the record holds every object read, and
    /// encoded plain into one vector it was the largest allocation at the
    /// end of a re-plan (67 of 437 MB at 100,000 instances). An older
    /// coordinator cannot read a packed record; it loses only reads (its
    /// plans read every object again).
    pub fn encode(&self) -> Vec<u8> {
        fleetform_shared::parts::pack_named(self)
    }

    /// The read of `addr` that may stand in for a read now: no older than
    /// `max_age_ms` at `now_ms`, and made of the object `state` holds.
    pub fn fresh(
        &self,
        addr: &AbsResourceInstance,
        state: &State,
        now_ms: u64,
        max_age_ms: u64,
    ) -> Option<&Refresh> {
        let r = self.entries.get(addr)?;
        let current = state.current(addr)?;
        let young = now_ms.saturating_sub(r.read_at_ms) <= max_age_ms;
        (young && current.value == r.refreshed).then_some(r)
    }

    /// Records a read of `addr` made against `state`.
    pub fn record(
        &mut self,
        addr: AbsResourceInstance,
        state: &State,
        object: Option<PriorObject>,
        read_at_ms: u64,
    ) {
        let Some(current) = state.current(&addr) else {
            return;
        };
        let refreshed = current.value.clone();
        self.entries.insert(
            addr,
            Refresh {
                object,
                read_at_ms,
                serial: state.serial,
                refreshed,
            },
        );
    }

    /// Instances whose latest read differs from the state's object it
    /// refreshed (changed or gone outside fleetform), with when that read
    /// was made: the drift the record knows of, for whoever reports it
    /// without planning.
    pub fn drifted(&self) -> Vec<(&AbsResourceInstance, u64)> {
        self.entries
            .iter()
            .filter(|(_, r)| r.object.as_ref().map(|o| &o.value) != Some(&r.refreshed))
            .map(|(a, r)| (a, r.read_at_ms))
            .collect()
    }

    /// Drops the reads of instances `state` no longer holds, so the record
    /// never outgrows the state.
    pub fn retain_in(&mut self, state: &State) {
        self.entries.retain(|a, _| state.current(a).is_some());
    }
}

/// The drift each workspace's record of refreshed objects holds, as the
/// live view shows it: set whenever a plan (a background refresh's
/// included) or an apply writes the record, so showing it reads nothing
/// from the store. It knows what was recorded since this coordinator
/// started: after a restart a workspace shows again once a plan or a
/// background refresh has read it.
#[derive(Default)]
pub struct DriftBoard(std::sync::Mutex<BTreeMap<String, Vec<Drifted>>>);

/// One object whose latest read differs from the state.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Drifted {
    pub address: String,
    /// When the read that found it was made (ms since the Unix epoch).
    pub read_at_ms: u64,
    /// Deleted outside fleetform (else changed).
    pub gone: bool,
}

impl DriftBoard {
    /// `workspace`'s drift is what `record` holds now.
    pub fn set(&self, workspace: &str, record: &Refreshed) {
        let rows: Vec<Drifted> = record
            .drifted()
            .into_iter()
            .map(|(addr, read_at_ms)| Drifted {
                address: addr.to_string(),
                read_at_ms,
                gone: record.entries.get(addr).is_some_and(|r| r.object.is_none()),
            })
            .collect();
        let mut board = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if rows.is_empty() {
            board.remove(workspace);
        } else {
            board.insert(workspace.to_string(), rows);
        }
    }

    /// A deleted workspace has no drift.
    pub fn forget(&self, workspace: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(workspace);
    }

    /// The drift of the workspaces `readable` lets through, by workspace.
    pub fn rows(&self, readable: impl Fn(&str) -> bool) -> Vec<(String, Vec<Drifted>)> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(w, _)| readable(w))
            .map(|(w, rows)| (w.clone(), rows.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::ProviderAddr;
    use fleetform_shared::state::{InstanceState, ObjectState};

    fn addr(s: &str) -> AbsResourceInstance {
        s.parse().unwrap()
    }

    fn state_with(id: &str) -> State {
        let mut s = State::new("l");
        s.serial = 3;
        let object = ObjectState {
            value: Value::object([("id", Value::from(id))]),
            private: vec![],
            schema_version: 0,
            status: Default::default(),
            dependencies: vec![],
            create_before_destroy: false,
            sensitive_paths: vec![],
            value_sensitive_paths: None,
            undecoded: false,
        };
        s.resources.insert(
            addr("sim_object.a"),
            InstanceState {
                provider: ProviderAddr::implied("sim"),
                current: Some(object),
                deposed: Default::default(),
            },
        );
        s
    }

    #[test]
    fn a_read_is_reused_only_while_young_and_of_the_object_in_state() {
        let state = state_with("one");
        let mut r = Refreshed::default();
        r.record(addr("sim_object.a"), &state, None, 1_000);
        assert!(
            r.fresh(&addr("sim_object.a"), &state, 61_000, 60_000)
                .is_some()
        );
        assert!(
            r.fresh(&addr("sim_object.a"), &state, 61_001, 60_000)
                .is_none()
        );
        // An apply wrote the object since the read: the read is older.
        let applied = state_with("two");
        assert!(
            r.fresh(&addr("sim_object.a"), &applied, 2_000, 60_000)
                .is_none()
        );
        let back = Refreshed::decode(&r.encode()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn the_record_is_stored_packed_and_an_unpacked_one_still_reads() {
        let state = state_with("one");
        let mut r = Refreshed::default();
        r.record(addr("sim_object.a"), &state, None, 1_000);
        let packed = r.encode();
        assert!(
            packed.starts_with(&[0x04, 0x22, 0x4d, 0x18]),
            "an LZ4 frame"
        );
        assert_eq!(Refreshed::decode(&packed).unwrap(), r);
        // As records were written before they were packed.
        let plain = rmp_serde::to_vec_named(&r).unwrap();
        assert_eq!(Refreshed::decode(&plain).unwrap(), r);
        // A damaged one is an error (the store then starts afresh).
        let mut damaged = packed.clone();
        let last = damaged.len() - 6;
        damaged[last] ^= 0xff;
        assert!(Refreshed::decode(&damaged).is_err());
    }

    #[test]
    fn a_read_that_differs_from_the_state_is_drift() {
        let state = state_with("one");
        let a = addr("sim_object.a");
        let object = |id: &str| PriorObject {
            value: Value::object([("id", Value::from(id))]),
            private: vec![],
            schema_version: 0,
        };
        let mut r = Refreshed::default();
        r.record(a.clone(), &state, Some(object("one")), 5);
        assert!(r.drifted().is_empty());
        r.record(a.clone(), &state, Some(object("changed")), 6);
        assert_eq!(r.drifted(), [(&a, 6)]);
        r.record(a.clone(), &state, None, 7);
        assert_eq!(r.drifted(), [(&a, 7)], "gone is drift too");
    }

    /// The live view's board follows the record it was last given: a
    /// change and a deletion are listed, a record without drift (an apply
    /// forgot the read) clears the workspace, a deleted workspace goes, and
    /// only readable workspaces are listed.
    #[test]
    fn the_drift_board_shows_what_the_latest_record_holds() {
        let state = state_with("one");
        let a = addr("sim_object.a");
        let changed = PriorObject {
            value: Value::object([("id", Value::from("changed"))]),
            private: vec![],
            schema_version: 0,
        };
        let board = DriftBoard::default();
        let mut r = Refreshed::default();
        r.record(a.clone(), &state, Some(changed), 6);
        board.set("team/x", &r);
        let shown = |board: &DriftBoard| board.rows(|w| w.starts_with("team/"));
        let row = |gone, at| Drifted {
            address: "sim_object.a".into(),
            read_at_ms: at,
            gone,
        };
        assert_eq!(shown(&board), [("team/x".to_string(), vec![row(false, 6)])]);
        r.record(a.clone(), &state, None, 7);
        board.set("team/x", &r);
        board.set("other/y", &r);
        assert_eq!(shown(&board), [("team/x".to_string(), vec![row(true, 7)])]);
        r.entries.remove(&a);
        board.set("team/x", &r);
        assert!(shown(&board).is_empty());
        board.forget("other/y");
        assert!(board.rows(|_| true).is_empty());
    }

    #[test]
    fn the_record_keeps_only_instances_in_state() {
        let state = state_with("one");
        let mut r = Refreshed::default();
        r.record(addr("sim_object.a"), &state, None, 1);
        r.record(addr("sim_object.b"), &state, None, 1);
        assert_eq!(r.entries.len(), 1);
        r.retain_in(&State::new("l"));
        assert!(r.entries.is_empty());
    }
}
