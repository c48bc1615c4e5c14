//! Planning on recent reads (`-refresh-max-age`): which instances take
//! their object from the workspace's record of refreshed objects instead
//! of a read, which are read again because their plan changes them, what
//! every read adds to the record, and the line that tells the user how old
//! the reused objects are. The plan walk's own steps on reused reads are
//! in `reused.rs`.

use crate::run::ctx::RunCtx;
use crate::store::Refreshed;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::{Action, Plan};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{Operation, ProviderSpec};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Loading or writing the record waits no longer than this: it saves
/// reads, and a plan never waits long on the store for it.
const STORE_WAIT: Duration = Duration::from_secs(10);

/// An instance planned on a reused read, with what planning it again
/// from a new read takes.
pub(in crate::run) struct Reused {
    pub(in crate::run) read_at_ms: u64,
    pub(in crate::run) spec: Arc<ProviderSpec>,
    pub(in crate::run) config: Value,
    pub(in crate::run) force_replace: bool,
}

/// The plan walk's share of the record of refreshed objects.
#[derive(Default)]
pub(in crate::run) struct Reuse {
    /// Loaded when the plan refreshes; reads are added as they come.
    pub(in crate::run) record: Option<Refreshed>,
    pub(in crate::run) max_age_ms: Option<u64>,
    pub(in crate::run) reread_changed: bool,
    pub(in crate::run) now_ms: u64,
    /// Instances planned on a reused read and not answered yet.
    pub(in crate::run) reused: HashMap<AbsResourceInstance, Reused>,
    /// Reused reads the plan kept, and the oldest of them.
    pub(in crate::run) kept: usize,
    pub(in crate::run) oldest_ms: Option<u64>,
    /// Objects read by this plan, and of them those read again because
    /// their plan on a reused read changed them.
    pub(in crate::run) read: usize,
    pub(in crate::run) reread: usize,
}

impl Reuse {
    /// The record, when this plan reads objects (a destroy or an import
    /// reads none the record could use).
    pub async fn load(ctx: &RunCtx<'_>) -> Reuse {
        let options = &ctx.request.options;
        let reads = (options.refresh || options.refresh_only)
            && ctx.request.operation != Operation::Destroy
            && !options.import_only;
        if !reads {
            return Reuse::default();
        }
        let store = &ctx.shared.store;
        let workspace = &ctx.handle.workspace;
        let record = match tokio::time::timeout(STORE_WAIT, store.load_refreshed(workspace)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                tracing::warn!(workspace, error = %e, "reading the refresh record failed; every object is read");
                Refreshed::default()
            }
            Err(_) => {
                tracing::warn!(
                    workspace,
                    "the refresh record did not load in time; every object is read"
                );
                Refreshed::default()
            }
        };
        Reuse {
            record: Some(record),
            // A refresh-only plan is asked to read, unless it is a
            // background refresh, which reads only what is stale.
            max_age_ms: options
                .refresh_max_age_ms
                .filter(|_| !options.refresh_only || ctx.handle.background),
            reread_changed: !options.no_reread_changed,
            now_ms: crate::run::events::now_ms(),
            ..Reuse::default()
        }
    }

    /// Writes the record with this plan's reads, bounded to the instances
    /// in `ctx`'s state. A failure costs only reads later: it is logged.
    pub async fn save(&mut self, ctx: &RunCtx<'_>) {
        crate::metrics::refreshed(self.read, self.kept, self.reread);
        let Some(record) = self.record.as_mut() else {
            return;
        };
        record.retain_in(&ctx.prior);
        let workspace = &ctx.handle.workspace;
        // Shown even when nothing was read: a restarted coordinator learns
        // the drift from the first plan that loads the record.
        ctx.shared.drift.set(workspace, record);
        if self.read == 0 {
            return;
        }
        let save = ctx.shared.store.save_refreshed(workspace, record);
        match tokio::time::timeout(STORE_WAIT, save).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(workspace, error = %e, "writing the refresh record failed")
            }
            Err(_) => tracing::warn!(workspace, "writing the refresh record timed out"),
        }
    }

    /// What the plan says about the reads it reused, when it was allowed to.
    pub fn note(&self) -> Option<Diagnostic> {
        let max_age = self.max_age_ms?;
        let oldest = match self.oldest_ms {
            Some(at) => format!(
                " (oldest {} ago)",
                short_duration(self.now_ms.saturating_sub(at))
            ),
            None => String::new(),
        };
        let reread = match self.reread {
            0 => String::new(),
            n => format!(
                " {} of them {} read again because the plan changes {}.",
                thousands(n),
                if n == 1 { "was" } else { "were" },
                if n == 1 { "it" } else { "them" },
            ),
        };
        Some(Diagnostic::warning(
            "Objects refreshed earlier were reused",
            format!(
                "Reused {} objects refreshed within {}{oldest}; read {}.{reread}",
                thousands(self.kept),
                short_duration(max_age),
                thousands(self.read),
            ),
        ))
    }
}

/// Before an apply: forgets the reads of the objects `plan` changes. Once
/// written, an object's earlier read is older than the object, and must
/// never stand in for a read again, even if the apply wrote back the very
/// value the state held when it was read (reverting drift does); done
/// before the apply, so a run that dies half way leaves no such read
/// behind. The run holds the workspace's lock, so no plan records a read
/// meanwhile. When the record cannot be read, an empty one replaces it.
pub(crate) async fn forget_changed(
    shared: &crate::run::handle::Shared,
    workspace: &str,
    plan: &Plan,
) {
    let changed: Vec<&AbsResourceInstance> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| &c.addr)
        .collect();
    if changed.is_empty() {
        return;
    }
    let store = &shared.store;
    let (mut record, loaded) =
        match tokio::time::timeout(STORE_WAIT, store.load_refreshed(workspace)).await {
            Ok(Ok(r)) => (r, true),
            _ => (Refreshed::default(), false),
        };
    let before = record.entries.len();
    for addr in changed {
        record.entries.remove(addr);
    }
    if loaded {
        shared.drift.set(workspace, &record);
    }
    if loaded && record.entries.len() == before {
        return;
    }
    match tokio::time::timeout(STORE_WAIT, store.save_refreshed(workspace, &record)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(workspace, error = %e, "forgetting the reads of changed objects failed")
        }
        Err(_) => tracing::warn!(
            workspace,
            "forgetting the reads of changed objects timed out"
        ),
    }
}

/// `2m10s`, `45s`, `1h0m5s`: Go's way of writing a duration, to whole
/// seconds (below one second, in milliseconds).
pub(in crate::run) fn short_duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, m) => format!("{m}m{s}s"),
        (h, m) => format!("{h}h{m}m{s}s"),
    }
}

/// `9,990`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_counts_read_as_the_plan_writes_them() {
        assert_eq!(short_duration(130_000), "2m10s");
        assert_eq!(short_duration(45_000), "45s");
        assert_eq!(short_duration(3_605_000), "1h0m5s");
        assert_eq!(short_duration(300), "300ms");
        assert_eq!(thousands(9_990), "9,990");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(10), "10");
    }
}
