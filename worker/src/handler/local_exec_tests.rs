//! `local-exec` against Terraform 1.9's behaviour: the messages, the
//! environment and directory, failures worded like Go's `os/exec`, and
//! cancellation.

use super::super::provision::{self, SUPPRESSED};
use super::super::{NeverStopped, NoProgress, Progress, StopSignal};
use super::{go_quote, run as run_reporting};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::wire::ProgressEvent;
use fleetform_shared::wire::{OnFailure, ProvisionerSpec};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn spec(command: &str) -> ProvisionerSpec {
    ProvisionerSpec {
        kind: "local-exec".into(),
        command: command.into(),
        interpreter: vec![],
        working_dir: None,
        environment: BTreeMap::new(),
        quiet: false,
        on_failure: OnFailure::Fail,
        suppress_output: false,
        ephemeral_config: false,
        range: None,
        context: None,
    }
}

/// Runs a provisioner, output lines reported nowhere.
async fn run(
    spec: &ProvisionerSpec,
    stop: &dyn StopSignal,
) -> (Vec<String>, Result<(), fleetform_shared::diag::Diagnostic>) {
    run_reporting(spec, stop, Arc::new(|_: &str| {})).await
}

fn executing(command: &str) -> String {
    format!("Executing: [\"/bin/sh\" \"-c\" {}]", go_quote(command))
}

#[tokio::test]
async fn output_lines_come_in_order_with_the_environment_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "echo \"$GREETING\"; pwd; echo oops >&2; printf last";
    let mut s = spec(cmd);
    s.environment
        .insert("GREETING".into(), "hello there".into());
    s.working_dir = Some(dir.path().display().to_string());
    let (out, result) = run(&s, &NeverStopped).await;
    assert!(result.is_ok(), "{result:?}");
    let pwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        out,
        [
            executing(cmd),
            "hello there".to_string(),
            pwd.display().to_string(),
            "oops".to_string(),
            "last".to_string(),
        ]
    );
    // The worker's own environment is kept.
    let (out, _) = run(&spec("echo \"$PATH\""), &NeverStopped).await;
    assert_eq!(out[1], std::env::var("PATH").unwrap());
}

#[tokio::test]
async fn quiet_hides_the_command_and_an_interpreter_replaces_the_shell() {
    let mut s = spec("echo secret");
    s.quiet = true;
    let (out, _) = run(&s, &NeverStopped).await;
    assert_eq!(
        out,
        ["local-exec: Executing: Suppressed by quiet=true", "secret"]
    );
    let mut s = spec("a \"b\"");
    s.interpreter = vec!["printf".into(), "[%s]\\n".into()];
    let (out, result) = run(&s, &NeverStopped).await;
    assert!(result.is_ok());
    assert_eq!(
        out,
        [
            "Executing: [\"printf\" \"[%s]\\\\n\" \"a \\\"b\\\"\"]",
            "[a \"b\"]"
        ]
    );
}

#[tokio::test]
async fn a_failing_command_is_reported_as_terraform_words_it() {
    let (out, result) = run(&spec("echo out; echo err >&2; exit 3"), &NeverStopped).await;
    assert_eq!(out.len(), 3);
    let d = result.unwrap_err();
    assert_eq!(d.summary, "local-exec provisioner error");
    assert_eq!(
        d.detail,
        "Error running command 'echo out; echo err >&2; exit 3': exit status 3. Output: out\nerr\n"
    );
    let (_, result) = run(&spec("kill -TERM $$"), &NeverStopped).await;
    assert!(
        result
            .unwrap_err()
            .detail
            .contains("': signal: terminated. Output: "),
    );
    let (out, result) = run(&spec(""), &NeverStopped).await;
    assert!(out.is_empty());
    let d = result.unwrap_err();
    assert_eq!(
        (d.summary.as_str(), d.detail.as_str()),
        (
            "Invalid local-exec provisioner command",
            "The command must be a non-empty string."
        )
    );
}

#[tokio::test]
async fn commands_that_cannot_start_are_reported_like_go_does() {
    let mut s = spec("x");
    s.interpreter = vec!["no-such-program-fleetform".into()];
    let d = run(&s, &NeverStopped).await.1.unwrap_err();
    assert_eq!(
        d.detail,
        "Error running command 'x': exec: \"no-such-program-fleetform\": executable file not found in $PATH. Output: "
    );
    s.interpreter = vec!["/no/such/program".into()];
    let d = run(&s, &NeverStopped).await.1.unwrap_err();
    assert_eq!(
        d.detail,
        "Error running command 'x': fork/exec /no/such/program: no such file or directory. Output: "
    );
    let mut s = spec("true");
    s.working_dir = Some("/no/such/dir".into());
    let d = run(&s, &NeverStopped).await.1.unwrap_err();
    assert_eq!(
        d.detail,
        "Error running command 'true': chdir /no/such/dir: no such file or directory. Output: "
    );
}

/// Fires after a delay, like a run cancelled while its command runs.
struct StopAfter(Duration);

#[async_trait::async_trait]
impl StopSignal for StopAfter {
    async fn stopped(&self) {
        tokio::time::sleep(self.0).await
    }
}

#[tokio::test]
async fn a_cancelled_run_kills_the_command_and_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("late");
    // A background child holds the pipe open too: the whole group goes.
    let cmd = format!(
        "echo started; (sleep 5; touch {0}) & sleep 5; touch {0}",
        marker.display()
    );
    let t0 = Instant::now();
    let (out, result) = run(&spec(&cmd), &StopAfter(Duration::from_millis(300))).await;
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    assert_eq!(out[1], "started");
    let d = result.unwrap_err();
    assert!(
        d.detail.contains("': signal: killed. Output: started\n"),
        "{}",
        d.detail
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(!marker.exists(), "the background child was killed too");
}

#[tokio::test]
async fn on_failure_decides_whether_later_provisioners_run_and_the_operation_fails() {
    let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
    let mut ignored = spec("exit 1");
    ignored.on_failure = OnFailure::Continue;
    let mut secret = spec("echo s3cr3t");
    secret.suppress_output = true;
    let failing = spec("exit 2");
    let never = spec("echo never");
    let specs = [ignored, secret, failing, never];
    let out = provision::run(
        &addr,
        &specs,
        &NeverStopped,
        &(Arc::new(NoProgress) as Arc<dyn Progress>),
    )
    .await;
    let summary: Vec<(usize, bool)> = out
        .steps
        .iter()
        .map(|s| (s.output.len(), s.errored))
        .collect();
    assert_eq!(summary, [(1, true), (2, false), (1, true)]);
    assert_eq!(out.steps[1].output, [SUPPRESSED, SUPPRESSED]);
    assert_eq!(out.diagnostics.0.len(), 1, "only the failure that counts");
    let d = &out.diagnostics.0[0];
    assert_eq!(d.address.as_deref(), Some("null_resource.a"));
    assert!(
        d.detail
            .starts_with("Error running command 'exit 2': exit status 2.")
    );
}

#[test]
fn arguments_are_quoted_as_go_quotes_them() {
    assert_eq!(go_quote("echo hi"), "\"echo hi\"");
    assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_eq!(go_quote("l1\nl2\tx\u{1b}"), "\"l1\\nl2\\tx\\x1b\"");
    assert_eq!(go_quote("héllo"), "\"héllo\"");
}

/// Keeps what a task reports.
#[derive(Default)]
struct Recorded(Mutex<Vec<(u32, ProgressEvent)>>);

impl Progress for Recorded {
    fn report(&self, step: u32, event: ProgressEvent) {
        self.0.lock().unwrap().push((step, event));
    }
}

#[tokio::test]
async fn progress_reports_each_provisioner_its_lines_and_its_end_as_the_result_has_them() {
    let addr: AbsResourceInstance = "null_resource.a".parse().unwrap();
    let mut secret = spec("echo s3cr3t");
    secret.suppress_output = true;
    let specs = [spec("echo one; echo two >&2"), secret];
    let recorded = Arc::new(Recorded::default());
    let progress: Arc<dyn Progress> = recorded.clone();
    let out = provision::run(&addr, &specs, &NeverStopped, &progress).await;
    // What was reported live, rebuilt into steps, is what the result says.
    // Per provisioner: its kind, its lines, and its end (errored, lines).
    type Step = (String, Vec<String>, Option<(bool, u32)>);
    let mut rebuilt: Vec<Step> = vec![];
    for (step, event) in recorded.0.lock().unwrap().drain(..) {
        match event {
            ProgressEvent::Started { provisioner } => {
                assert_eq!(step as usize, rebuilt.len());
                rebuilt.push((provisioner, vec![], None));
            }
            ProgressEvent::Output { seq, line } => {
                let s = &mut rebuilt[step as usize];
                assert_eq!(
                    (seq as usize, s.2),
                    (s.1.len(), None),
                    "in order, before the end"
                );
                s.1.push(line);
            }
            ProgressEvent::Finished { errored, lines } => {
                rebuilt[step as usize].2 = Some((errored, lines));
            }
            other => panic!("not a provisioner's progress: {other:?}"),
        }
    }
    let expected: Vec<_> = out
        .steps
        .iter()
        .map(|s| {
            let end = Some((s.errored, s.output.len() as u32));
            (s.kind.clone(), s.output.clone(), end)
        })
        .collect();
    assert_eq!(rebuilt, expected);
    assert_eq!(out.steps[0].output[1..], ["one", "two"]);
    assert_eq!(out.steps[1].output, [SUPPRESSED, SUPPRESSED]);
}
