//! Live provisioner output and the result's copy of it: each start, line
//! and end shown once, in order, whatever part came live.

use super::ProvisionStream;
use crate::dispatch::ProgressWatcher;
use crate::run::EventLog;
use fleetform_shared::wire::{ProgressEvent, ProvisionStep, RunEvent};
use std::sync::Arc;

/// The events as short strings: `start k`, `line k: text`, `done k ok|err`.
fn shown(log: &EventLog) -> Vec<String> {
    log.since(0)
        .into_iter()
        .map(|e| match e {
            RunEvent::ProvisionStart { provisioner, .. } => format!("start {provisioner}"),
            RunEvent::ProvisionOutput {
                provisioner, line, ..
            } => format!("line {provisioner}: {line}"),
            RunEvent::ProvisionDone {
                provisioner,
                errored,
                ..
            } => format!("done {provisioner} {}", if errored { "err" } else { "ok" }),
            other => format!("{other:?}"),
        })
        .collect()
}

fn stream() -> (Arc<EventLog>, Arc<ProvisionStream>) {
    let log = Arc::new(EventLog::default());
    let addr = "null_resource.a".parse().unwrap();
    (log.clone(), ProvisionStream::into_log(log, &addr))
}

fn started(kind: &str) -> ProgressEvent {
    ProgressEvent::Started {
        provisioner: kind.into(),
    }
}

fn line(seq: u32, text: &str) -> ProgressEvent {
    ProgressEvent::Output {
        seq,
        line: text.into(),
    }
}

fn steps() -> Vec<ProvisionStep> {
    vec![
        ProvisionStep {
            kind: "local-exec".into(),
            output: vec!["a".into(), "b".into(), "c".into()],
            errored: true,
        },
        ProvisionStep {
            kind: "local-exec".into(),
            output: vec!["d".into()],
            errored: false,
        },
    ]
}

const ALL: [&str; 8] = [
    "start local-exec",
    "line local-exec: a",
    "line local-exec: b",
    "line local-exec: c",
    "done local-exec err",
    "start local-exec",
    "line local-exec: d",
    "done local-exec ok",
];

#[test]
fn without_live_progress_the_result_shows_everything() {
    let (log, s) = stream();
    s.finish(&steps());
    assert_eq!(shown(&log), ALL);
}

#[test]
fn everything_live_then_the_result_adds_nothing() {
    let (log, s) = stream();
    s.progress(0, started("local-exec"));
    for (i, t) in ["a", "b", "c"].into_iter().enumerate() {
        s.progress(0, line(i as u32, t));
    }
    s.progress(
        0,
        ProgressEvent::Finished {
            errored: true,
            lines: 3,
        },
    );
    s.progress(1, started("local-exec"));
    s.progress(1, line(0, "d"));
    assert_eq!(shown(&log).len(), 7, "{:?}", shown(&log));
    s.finish(&steps());
    assert_eq!(shown(&log), ALL);
}

#[test]
fn a_gap_duplicates_and_late_progress_leave_the_rest_to_the_result() {
    let (log, s) = stream();
    s.progress(0, started("local-exec"));
    s.progress(0, started("local-exec"));
    s.progress(0, line(0, "a"));
    s.progress(0, line(0, "a"));
    // Line 1 was lost: 2 is not shown out of order, nor is the end.
    s.progress(0, line(2, "c"));
    s.progress(
        0,
        ProgressEvent::Finished {
            errored: true,
            lines: 3,
        },
    );
    // Nor the next provisioner, which would come before b and c.
    s.progress(1, started("local-exec"));
    assert_eq!(shown(&log), ALL[..2]);
    s.finish(&steps());
    // Progress after the result is late.
    s.progress(1, line(0, "d"));
    assert_eq!(shown(&log), ALL);
}
