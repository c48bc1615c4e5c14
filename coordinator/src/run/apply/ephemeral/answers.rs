//! The answers of the apply walk's ephemeral tasks (opens, renewals,
//! closes), and what each does to its gate.

use super::{ApplyEphemerals, Event, Instance, Phase, renew_due};
use crate::run::ctx::RunCtx;
use crate::run::eval::ephemeral::record_open;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::Action;
use fleetform_shared::wire::{ApplyOp, RunEvent, TaskOutcome, TaskResult};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::time::Instant;

/// An answer of one of the walk's ephemeral tasks.
pub(crate) enum Answer {
    Opened {
        gate: usize,
        addr: AbsResourceInstance,
        started: Instant,
        result: Option<TaskResult>,
    },
    Renewed {
        gate: usize,
        instance: usize,
        started: Instant,
        result: Option<TaskResult>,
    },
    Closed {
        gate: usize,
        instance: usize,
        started: Instant,
        result: Option<TaskResult>,
    },
}

/// A dispatched task's place among the gates.
pub(super) enum Pending {
    Open {
        gate: usize,
        addr: AbsResourceInstance,
    },
    Renew {
        gate: usize,
        instance: usize,
    },
    Close {
        gate: usize,
        instance: usize,
    },
}

impl Pending {
    pub(super) fn answer(
        self,
        rx: tokio::sync::oneshot::Receiver<TaskResult>,
        started: Instant,
    ) -> BoxFuture<'static, Answer> {
        async move {
            let result = rx.await.ok();
            match self {
                Pending::Open { gate, addr } => Answer::Opened {
                    gate,
                    addr,
                    started,
                    result,
                },
                Pending::Renew { gate, instance } => Answer::Renewed {
                    gate,
                    instance,
                    started,
                    result,
                },
                Pending::Close { gate, instance } => Answer::Closed {
                    gate,
                    instance,
                    started,
                    result,
                },
            }
        }
        .boxed()
    }
}

impl ApplyEphemerals {
    /// Takes an event of [`ApplyEphemerals::next`].
    pub fn handle(&mut self, ctx: &mut RunCtx<'_>, event: Event) {
        let Event::Answer(answer) = event else {
            return; // [`ApplyEphemerals::start`] sends what is due.
        };
        match answer {
            Answer::Opened {
                gate,
                addr,
                started,
                result,
            } => self.on_opened(ctx, gate, addr, started, result),
            Answer::Renewed {
                gate,
                instance,
                started,
                result,
            } => self.on_renewed(ctx, gate, instance, started, result),
            Answer::Closed {
                gate,
                instance,
                started,
                result,
            } => self.on_closed(ctx, gate, instance, started, result),
        }
    }

    /// An open answered: the instance joins its gate; the gate is open (or
    /// failed) once every open has answered.
    fn on_opened(
        &mut self,
        ctx: &mut RunCtx<'_>,
        g: usize,
        addr: AbsResourceInstance,
        started: Instant,
        result: Option<TaskResult>,
    ) {
        {
            let spec = ctx
                .graph
                .resource_providers
                .get(&self.gates[g].resource)
                .and_then(|p| ctx.providers.get(p))
                .map(|(s, _)| s.clone());
            let mut diags = Diagnostics::new();
            let opened = match spec {
                Some(spec) => record_open(ctx, &addr, &spec, result, started, &mut diags),
                None => None,
            };
            if opened.is_none() {
                self.gates[g].open_failed = true;
            }
            if !diags.is_empty() {
                ctx.emit(RunEvent::Diagnostics(diags));
            }
            let gate = &mut self.gates[g];
            if let Some(o) = opened {
                gate.instances.push(Instance {
                    renew_private: o.private.clone(),
                    renew_due: o.renew_at.map(renew_due),
                    opened: o,
                    renewing: false,
                    renewals: 0,
                    expired: false,
                    renew_diags: Diagnostics::new(),
                });
            }
            if let Phase::Opening { left } = &mut gate.phase {
                *left -= 1;
                if *left == 0 {
                    match gate.open_failed {
                        true => self.failed(g),
                        false => self.opened(g),
                    }
                }
            }
        }
    }

    /// A renewal answered: the next one is due when the provider says, or
    /// the instance expired.
    fn on_renewed(
        &mut self,
        ctx: &mut RunCtx<'_>,
        g: usize,
        instance: usize,
        started: Instant,
        result: Option<TaskResult>,
    ) {
        {
            let inst = &mut self.gates[g].instances[instance];
            inst.renewing = false;
            let addr = inst.opened.addr.clone();
            let worker = result.as_ref().map(|r| r.worker.clone());
            let outcome = match result.map(|r| r.outcome) {
                Some(TaskOutcome::Renew(o)) => Ok(o),
                Some(TaskOutcome::Failed(d)) => Err(d),
                _ => Err(Diagnostic::error(
                    "Lost an ephemeral resource's renewal",
                    "no answer came",
                )
                .into()),
            };
            match outcome {
                Ok(o) if !o.diagnostics.has_errors() => {
                    inst.renew_diags.extend(o.diagnostics);
                    inst.renew_private = o.private;
                    inst.renew_due = o.renew_at.map(renew_due);
                    ctx.emit(RunEvent::ApplyComplete {
                        addr,
                        deposed: None,
                        action: Action::Read,
                        op: ApplyOp::Renew,
                        id: None,
                        elapsed_ms: started.elapsed().as_millis() as u64,
                        worker: worker.unwrap_or_default(),
                    });
                }
                // Not renewed: no more attempts, and the value is not
                // used again; the error is reported with the close.
                Ok(o) => inst.expire(o.diagnostics),
                Err(d) => inst.expire(d),
            }
            self.close_if_unused(g);
        }
    }

    /// A close answered: reported with what its renewals said.
    fn on_closed(
        &mut self,
        ctx: &mut RunCtx<'_>,
        g: usize,
        instance: usize,
        started: Instant,
        result: Option<TaskResult>,
    ) {
        {
            let inst = &mut self.gates[g].instances[instance];
            let addr = inst.opened.addr.clone();
            let mut diags = std::mem::take(&mut inst.renew_diags);
            let worker = result.as_ref().map(|r| r.worker.clone());
            let closed = match result.map(|r| r.outcome) {
                Some(TaskOutcome::Close(d)) | Some(TaskOutcome::Failed(d)) => {
                    let ok = !d.has_errors();
                    diags.extend(d);
                    ok
                }
                _ => {
                    diags.push(Diagnostic::error(
                        "Lost an ephemeral resource's close",
                        "no answer came",
                    ));
                    false
                }
            };
            if closed {
                ctx.emit(RunEvent::ApplyComplete {
                    addr: addr.clone(),
                    deposed: None,
                    action: Action::Read,
                    op: ApplyOp::Close,
                    id: None,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    worker: worker.unwrap_or_default(),
                });
            }
            if !diags.is_empty() {
                let diags = diags.into_iter().map(|d| d.for_address(&addr)).collect();
                ctx.emit(RunEvent::Diagnostics(diags));
            }
        }
    }
}
