//! A run's hold on its workspace: the in-process lock (one run at a time
//! here) and the lease in the object store (one process at a time
//! anywhere), renewed while the run goes. A run whose lease was taken over
//! (it expired while this process could not renew it) starts nothing new
//! and writes no snapshot.

use super::handle::Shared;
use crate::store::{Lease, LeaseError, LeaseStore, LockInfo};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;

/// How long a lease lasts without renewal: a holder that died frees the
/// workspace after this. Renewed every third of it.
pub(crate) const LOCK_TTL: Duration = Duration::from_secs(30);

pub(crate) enum CheckError {
    /// The lease is not this run's any more: another process holds the
    /// workspace now, or the store refuses it in a way that waiting does
    /// not mend (a bucket deleted, credentials revoked).
    Lost(Diagnostics),
    /// The store could not be asked.
    Unreachable(String),
}

pub(crate) struct WorkspaceGuard {
    _local: OwnedMutexGuard<()>,
    held: Option<Held>,
}

struct Held {
    leases: LeaseStore,
    lease: Arc<tokio::sync::Mutex<Lease>>,
    renew: tokio::task::JoinHandle<()>,
    lost: Arc<AtomicBool>,
    /// The lease expired before it could be renewed: it may be lost, or
    /// still ours once renewed (nobody else could reach the store either).
    overdue: Arc<AtomicBool>,
    /// When the lease stops being safe to act on unless renewed: two
    /// thirds of its time to live after its last renewal began, on this
    /// process's monotonic clock. A contender takes the lock only after
    /// watching it unrenewed for its whole time to live (`store/lease.rs`),
    /// so neither side depends on the clocks of two hosts agreeing, and a
    /// renewal that hangs pauses the run as one that fails does.
    safe_until: Arc<std::sync::Mutex<std::time::Instant>>,
    /// Why the store refused the renewal for good (then `lost` is set).
    refused: Arc<std::sync::OnceLock<String>>,
}

/// What a run asks for.
pub(crate) struct Want<'a> {
    pub workspace: &'a str,
    pub run_id: &'a str,
    pub operation: &'a str,
    /// `-lock-timeout`: how long to wait for a held lock (none: fail at once).
    pub wait: Option<Duration>,
    /// A run this process resumes: its predecessor's lease is taken over.
    pub resumed: bool,
    /// The in-process lock, when taken already (recovery takes it first).
    pub local: Option<OwnedMutexGuard<()>>,
    /// A background refresh: it never makes another run give way.
    pub background: bool,
    /// Told once when the state store cannot be reached and the lock is
    /// waited for.
    pub on_wait: Option<&'a (dyn Fn(&str) + Sync)>,
    /// Told every 10 seconds while `-lock-timeout` waits for a lock another
    /// run holds, with who holds it.
    pub on_held: Option<&'a (dyn Fn(String) + Sync)>,
}

/// How often a wait for a held lock says so (as Terraform does).
const SAY_HELD_EVERY: Duration = Duration::from_secs(10);

/// "Still waiting" for a held lock, with its holder when known.
fn still_waiting(workspace: &str, holder: Option<&LockInfo>, waited: Duration) -> String {
    let who = holder
        .map(|h| {
            format!(
                " by run {} ({}, {} since {})",
                h.run_id, h.operation, h.owner, h.created
            )
        })
        .unwrap_or_default();
    format!(
        "Workspace {workspace} is locked{who}; waited {}s for it (-lock-timeout).",
        waited.as_secs()
    )
}

/// How long taking a lock is retried while the state store is out of reach.
const STORE_RETRY_FOR: Duration = Duration::from_secs(10 * 60);

impl WorkspaceGuard {
    /// The lease was taken over: nothing may be started or written.
    pub fn lost(&self) -> bool {
        self.held
            .as_ref()
            .is_some_and(|h| h.lost.load(Ordering::Relaxed))
    }

    /// The lease is overdue for renewal: start nothing until it is renewed.
    pub fn paused(&self) -> bool {
        self.held.as_ref().is_some_and(|h| {
            let late = *h.safe_until.lock().unwrap_or_else(|e| e.into_inner())
                <= std::time::Instant::now();
            (h.overdue.load(Ordering::Relaxed) || late) && !h.lost.load(Ordering::Relaxed)
        })
    }

    /// Whether what the run writes may still be acted on, for the run's
    /// task claims (`store/claims.rs`): the lease is held and not overdue
    /// (the same two thirds of its time to live that [`Self::paused`]
    /// keeps). Always true without a lease (`-lock=false`).
    pub fn fence(&self) -> crate::store::Fence {
        let Some(h) = &self.held else {
            return Arc::new(|| true);
        };
        let (lost, overdue, safe_until) = (h.lost.clone(), h.overdue.clone(), h.safe_until.clone());
        Arc::new(move || {
            let late =
                *safe_until.lock().unwrap_or_else(|e| e.into_inner()) <= std::time::Instant::now();
            !lost.load(Ordering::Relaxed) && !overdue.load(Ordering::Relaxed) && !late
        })
    }

    /// Fencing, before a snapshot is written: whether the lease is still
    /// this run's (`Err`: the store could not say).
    pub async fn check(&self) -> Result<(), CheckError> {
        let Some(h) = &self.held else { return Ok(()) };
        if let Some(why) = h.refused.get() {
            return Err(CheckError::Lost(refused(why)));
        }
        if self.paused() {
            return Err(CheckError::Unreachable(
                "the state lock is overdue for renewal".into(),
            ));
        }
        let lease = h.lease.lock().await.clone();
        match h.leases.holds(&lease).await {
            Ok(true) if !self.lost() => Ok(()),
            Ok(_) => {
                let now = h.leases.holder(&lease.workspace).await.ok().flatten();
                Err(CheckError::Lost(lost_to(&lease, now.as_ref())))
            }
            Err(e) if e.is_transient() => Err(CheckError::Unreachable(e.to_string())),
            Err(e) => Err(CheckError::Lost(refused(&e.to_string()))),
        }
    }

    /// Gives the lease up (the in-process lock goes with the guard).
    pub async fn release(mut self) {
        if let Some(h) = self.held.take() {
            h.renew.abort();
            let lease = h.lease.lock().await.clone();
            if let Err(e) = h.leases.release(&lease).await {
                tracing::warn!(workspace = %lease.workspace, error = %e, "releasing the state lock failed; it expires by itself");
            }
        }
    }
}

impl Drop for WorkspaceGuard {
    fn drop(&mut self) {
        if let Some(h) = self.held.take() {
            h.renew.abort();
            tokio::spawn(async move {
                let lease = h.lease.lock().await.clone();
                let _ = h.leases.release(&lease).await;
            });
        }
    }
}

/// [`lost`], saying who holds the lock now: when it is another
/// coordinator that took this very run over, where to follow it.
fn lost_to(lease: &Lease, now: Option<&LockInfo>) -> Diagnostics {
    match now {
        Some(h) if h.run_id == lease.info.run_id => Diagnostic::error(
            "Run taken over by another coordinator",
            format!(
                "This coordinator could not renew the lock on workspace {} in time, and {} took run {} over; it finishes the run. Follow it there: fleetform --coordinator=URL runs watch {}",
                lease.workspace, h.owner, h.run_id, h.run_id
            ),
        )
        .into(),
        _ => lost(&lease.workspace),
    }
}

/// The state store refuses the lock in a way that waiting does not mend.
fn refused(why: &str) -> Diagnostics {
    Diagnostic::error(
        "The state store refuses the state lock",
        format!("{why}. This run starts nothing more and cannot write the state; its journal keeps what it did."),
    )
    .into()
}

fn lost(workspace: &str) -> Diagnostics {
    Diagnostic::error(
        "Lost the state lock",
        format!("Another process took the lock on workspace {workspace} over (it expired while this coordinator could not renew it, or it was force-unlocked). This run started nothing after that and did not write the state; its journal keeps what it did."),
    )
    .into()
}

/// Terraform's "Error acquiring the state lock", with who holds it.
pub(crate) fn held(workspace: &str, info: &LockInfo, ttl: Duration) -> Diagnostics {
    Diagnostic::error(
        "Error acquiring the state lock",
        format!(
            "Workspace {workspace} is locked.\n\nLock Info:\n  ID:        {}\n  Run:       {}\n  Operation: {}\n  Who:       {}\n  Created:   {}\n\nfleetform locks a workspace while a run uses it, so that two runs never write one state. Wait for that run (fleetform runs watch {}), or retry with -lock-timeout=DURATION to wait for it. If its holder is gone for good, the lock expires by itself within {} seconds, or remove it now with: fleetform force-unlock {}",
            info.id,
            info.run_id,
            info.operation,
            info.owner,
            info.created,
            info.run_id,
            ttl.as_secs(),
            info.id
        ),
    )
    .into()
}

fn failed(e: &LeaseError) -> Diagnostics {
    Diagnostic::error("Error acquiring the state lock", e.to_string()).into()
}

/// Takes the workspace for a run: the in-process lock, then the lease.
pub(crate) async fn acquire(
    shared: &Shared,
    mut want: Want<'_>,
) -> Result<WorkspaceGuard, Diagnostics> {
    let deadline = want.wait.map(|w| tokio::time::Instant::now() + w);
    let local = match want.local.take() {
        Some(g) => g,
        None => local_lock(shared, &want, deadline).await?,
    };
    let Some(leases) = shared.leases.clone() else {
        return Ok(WorkspaceGuard {
            _local: local,
            held: None,
        });
    };
    let info = LockInfo {
        id: uuid::Uuid::new_v4().to_string(),
        owner: shared.owner.clone(),
        run_id: want.run_id.to_string(),
        operation: want.operation.to_string(),
        created: fleetform_lang::eval::now_rfc3339(),
        expires: 0,
        ttl_ms: None,
    };
    let (lease, acquiring) = take_lease(shared, &leases, &want, info, deadline).await?;
    let lease = Arc::new(tokio::sync::Mutex::new(lease));
    let flags = Flags {
        lost: Arc::new(AtomicBool::new(false)),
        overdue: Arc::new(AtomicBool::new(false)),
        safe_until: Arc::new(std::sync::Mutex::new(safe_until(
            acquiring,
            shared.lock_ttl,
        ))),
        refused: Arc::default(),
    };
    let (lost, overdue, safe, refused) = (
        flags.lost.clone(),
        flags.overdue.clone(),
        flags.safe_until.clone(),
        flags.refused.clone(),
    );
    let renew = tokio::spawn(renew(leases.clone(), lease.clone(), flags, shared.lock_ttl));
    Ok(WorkspaceGuard {
        _local: local,
        held: Some(Held {
            leases,
            lease,
            renew,
            lost,
            overdue,
            safe_until: safe,
            refused,
        }),
    })
}

/// The in-process lock on the workspace (one run of this coordinator at a
/// time), waiting for it up to `deadline` and saying now and then who
/// holds it.
async fn local_lock(
    shared: &Shared,
    want: &Want<'_>,
    deadline: Option<tokio::time::Instant>,
) -> Result<OwnedMutexGuard<()>, Diagnostics> {
    let lock = shared.workspace_lock(want.workspace);
    match lock.clone().try_lock_owned() {
        Ok(g) => Ok(g),
        Err(_) => {
            // A background refresh holding the workspace is cancelled,
            // and this run waits for it to end (see `background`).
            let deadline = match &shared.background {
                Some(bg) if !want.background => bg.give_way(want.workspace, deadline),
                _ => deadline,
            };
            let busy = || async {
                let info = match &shared.leases {
                    Some(l) => l.holder(want.workspace).await.ok().flatten(),
                    None => None,
                };
                Err(match info {
                    Some(info) => held(want.workspace, &info, shared.lock_ttl),
                    None => Diagnostic::error(
                        "Error acquiring the state lock",
                        format!("Workspace {} is locked by another run of this coordinator. Retry with -lock-timeout=DURATION to wait for it.", want.workspace),
                    )
                    .into(),
                })
            };
            let Some(d) = deadline else {
                return busy().await;
            };
            let start = tokio::time::Instant::now();
            let acquired = lock.lock_owned();
            tokio::pin!(acquired);
            loop {
                let next = (tokio::time::Instant::now() + SAY_HELD_EVERY).min(d);
                match tokio::time::timeout_at(next, &mut acquired).await {
                    Ok(g) => return Ok(g),
                    Err(_) if next >= d => return busy().await,
                    Err(_) => {
                        if let Some(tell) = want.on_held {
                            let holder = match &shared.leases {
                                Some(l) => l.holder(want.workspace).await.ok().flatten(),
                                None => None,
                            };
                            tell(still_waiting(
                                want.workspace,
                                holder.as_ref(),
                                start.elapsed(),
                            ));
                        }
                    }
                }
            }
        }
    }
}

/// The workspace's lease in the object store, retrying while another
/// process holds it (up to `deadline`) or the store is out of reach; with
/// the moment the successful attempt began (see [`safe_until`]).
async fn take_lease(
    shared: &Shared,
    leases: &LeaseStore,
    want: &Want<'_>,
    info: LockInfo,
    deadline: Option<tokio::time::Instant>,
) -> Result<(Lease, std::time::Instant), Diagnostics> {
    let take_over = want.resumed.then_some(want.run_id);
    let since = tokio::time::Instant::now();
    let mut backoff = Duration::from_millis(200);
    let mut said = false;
    let mut said_held = tokio::time::Instant::now();
    let mut acquiring;
    loop {
        acquiring = std::time::Instant::now();
        match leases
            .acquire(want.workspace, info.clone(), shared.lock_ttl, take_over)
            .await
        {
            Ok(l) => return Ok((l, acquiring)),
            Err(LeaseError::Held(holder)) => match deadline {
                Some(d) if tokio::time::Instant::now() < d => {
                    if said_held.elapsed() >= SAY_HELD_EVERY {
                        said_held = tokio::time::Instant::now();
                        if let Some(tell) = want.on_held {
                            tell(still_waiting(
                                want.workspace,
                                Some(&holder),
                                since.elapsed(),
                            ));
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                _ => return Err(held(want.workspace, &holder, shared.lock_ttl)),
            },
            // The store out of reach: wait for it, as every write does. A
            // store that cannot work as configured fails the run at once.
            Err(LeaseError::Store(e)) if e.is_transient() && since.elapsed() < STORE_RETRY_FOR => {
                if !said {
                    said = true;
                    tracing::warn!(workspace = %want.workspace, error = %e, "taking the state lock failed; retrying");
                    if let Some(tell) = want.on_wait {
                        tell(&e.to_string());
                    }
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
            Err(e) => return Err(failed(&e)),
        }
    }
}

/// See [`Held::safe_until`].
fn safe_until(renewal_began: std::time::Instant, ttl: Duration) -> std::time::Instant {
    renewal_began + ttl.max(Duration::from_secs(1)) * 2 / 3
}

struct Flags {
    lost: Arc<AtomicBool>,
    overdue: Arc<AtomicBool>,
    safe_until: Arc<std::sync::Mutex<std::time::Instant>>,
    refused: Arc<std::sync::OnceLock<String>>,
}

/// Renews the lease every third of its time until it is lost. A renewal
/// that fails (the store is out of reach) is tried again; once the lease
/// is past its expiry the run is paused (`overdue`), not stopped: the
/// renewal is a conditional write on the lock this process wrote, so it
/// succeeds only if nobody took the lock meanwhile, and then the run goes
/// on. Only a lock someone else wrote is lost, or one the store refuses
/// for good (a misconfiguration: waiting would pause the run forever).
async fn renew(
    leases: LeaseStore,
    lease: Arc<tokio::sync::Mutex<Lease>>,
    flags: Flags,
    ttl: Duration,
) {
    let every = ttl / 3;
    let mut wait = every;
    loop {
        tokio::time::sleep(wait).await;
        let mut l = lease.lock().await;
        let began = std::time::Instant::now();
        match leases.renew(&mut l, ttl).await {
            Ok(()) => {
                *flags.safe_until.lock().unwrap_or_else(|e| e.into_inner()) =
                    safe_until(began, ttl);
                if flags.overdue.swap(false, Ordering::Relaxed) {
                    tracing::info!(workspace = %l.workspace, "the state lock is renewed: the run goes on");
                }
                wait = every;
            }
            Err(LeaseError::Lost) => {
                tracing::error!(workspace = %l.workspace, "the state lock was taken over: the run stops starting operations");
                flags.lost.store(true, Ordering::Relaxed);
                return;
            }
            Err(e) if !e.is_transient() => {
                tracing::error!(workspace = %l.workspace, error = %e, "the state store refuses the state lock: the run stops starting operations");
                let _ = flags.refused.set(e.to_string());
                flags.lost.store(true, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                tracing::warn!(workspace = %l.workspace, error = %e, "renewing the state lock failed; trying again");
                if *flags.safe_until.lock().unwrap_or_else(|e| e.into_inner())
                    <= std::time::Instant::now()
                {
                    flags.overdue.store(true, Ordering::Relaxed);
                }
                wait = Duration::from_secs(1).min(every);
            }
        }
    }
}
