//! Running one tool (fleetform or Terraform) over a corpus module: each
//! command in its own process group with a timeout, its output kept in the
//! work directory; the plan, apply and reads of one half of the test.
//!
//! Included by tests/tests/corpus.rs (`#[path]`).

use super::Module;
use super::compare::{Observed, is_data_address, parse_outputs};
use super::plan::resource_changes;
use fleetform_tests::{Grouped, run_grouped};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One command of either tool; the slowest module takes a few seconds.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// The plan file both tools write and apply, in the module's root.
const PLAN_FILE: &str = "corpus.tfplan";

/// What a command did; stdout/stderr kept in files under the work dir.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The diagnostics of a failed run, without log noise, for a report.
    pub fn errors(&self) -> String {
        let text = format!("{}\n{}", self.stdout, self.stderr);
        let mut lines: Vec<&str> = Vec::new();
        let mut in_error = false;
        for l in text.lines() {
            let bare = l.trim_start_matches(['│', '╷', '╵', ' ']);
            if bare.starts_with("Error:") {
                in_error = true;
            } else if l.starts_with('╵') || bare.starts_with('[') {
                in_error = false;
            }
            if in_error && !bare.is_empty() && !lines.contains(&bare) {
                lines.push(bare);
            }
        }
        if lines.is_empty() {
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            return tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        }
        lines.into_iter().take(12).collect::<Vec<_>>().join("\n")
    }

    /// What a plan that should have had nothing to do would change: its
    /// `# address will be ...` lines and its summary.
    pub fn planned_changes(&self) -> String {
        let lines: Vec<&str> = self
            .stdout
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("# ") || l.starts_with("Plan:"))
            .take(12)
            .collect();
        if lines.is_empty() {
            self.errors()
        } else {
            lines.join("\n")
        }
    }
}

/// Runs `exe args` in `dir` with `envs`, in its own process group so a
/// timeout ends the providers too.
fn run(exe: &Path, args: &[String], dir: &Path, envs: &[(&str, String)], log: &Path) -> Ran {
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(dir);
    for k in [
        "TF_LOG",
        "TF_LOG_PATH",
        "TF_DATA_DIR",
        "TF_WORKSPACE",
        "TF_PLUGIN_CACHE_DIR",
        "TF_CLI_ARGS",
        "FLEETFORM_COORDINATOR",
        "FLEETFORM_PLUGIN_DIR",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
    let Grouped {
        status,
        stdout,
        mut stderr,
    } = run_grouped(cmd, COMMAND_TIMEOUT);
    if status.is_none() {
        stderr.push_str(&format!("\n[timeout] killed after {COMMAND_TIMEOUT:?}"));
    }
    // Kept with the work directory (FLEETFORM_CORPUS_KEEP).
    let _ = std::fs::write(log.with_extension("out"), &stdout);
    let _ = std::fs::write(log.with_extension("err"), &stderr);
    Ran {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
    }
}

/// How one tool is run: the executable, a command before the plan, flags
/// for every command but `state`, and where its logs go.
pub struct Side<'a> {
    pub exe: &'a Path,
    pub pre: &'a [&'a str],
    pub flags: &'a [&'a str],
    pub log: PathBuf,
}

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

impl Side<'_> {
    /// Runs `words` (the subcommand first; the side's flags go right after
    /// it, before any positional argument such as a plan file) in `root`;
    /// the run, whatever its exit code.
    pub fn run_any(
        &self,
        words: Vec<String>,
        root: &Path,
        envs: &[(&str, String)],
        tag: &str,
    ) -> Ran {
        let mut args = words;
        if args.first().is_some_and(|c| c != "state") {
            let tail = args.split_off(1);
            args.extend(self.flags.iter().map(|s| s.to_string()));
            args.extend(tail);
        }
        let name = self.log.file_name().unwrap().to_string_lossy();
        run(
            self.exe,
            &args,
            root,
            envs,
            &self.log.with_file_name(format!("{name}-{tag}")),
        )
    }

    /// As [`Side::run_any`], an error unless it exits 0.
    pub fn run(
        &self,
        words: Vec<String>,
        root: &Path,
        envs: &[(&str, String)],
        tag: &str,
    ) -> Result<Ran, String> {
        let shown = words.join(" ");
        let r = self.run_any(words, root, envs, tag);
        if r.code == Some(0) {
            Ok(r)
        } else {
            Err(format!("`{shown}` failed:\n{}", r.errors()))
        }
    }

    /// `plan -out`, `show -json` of that plan, `apply` of it, then the
    /// outputs and the state list; what was seen, or what went wrong, and
    /// the time it took.
    pub fn plan_apply_read(
        &self,
        m: &Module,
        root: &Path,
        envs: &[(&str, String)],
    ) -> (Result<Observed, String>, f64) {
        let start = Instant::now();
        let result = (|| {
            if !self.pre.is_empty() {
                self.run(strings(self.pre), root, envs, "pre")?;
            }
            let mut plan = strings(&["plan", &format!("-out={PLAN_FILE}")]);
            plan.extend(m.args.iter().cloned());
            self.run(plan, root, envs, "plan")?;
            let shown = self.run(strings(&["show", "-json", PLAN_FILE]), root, envs, "show")?;
            let changes = resource_changes(&shown.stdout)?;
            self.run(strings(&["apply", PLAN_FILE]), root, envs, "apply")?;
            let outputs = self.run(strings(&["output", "-json"]), root, envs, "output")?;
            let state = self.run(strings(&["state", "list"]), root, envs, "state")?;
            let mut state: Vec<String> = state
                .stdout
                .lines()
                .map(str::trim)
                .filter(|a| !a.is_empty() && !is_data_address(a))
                .map(str::to_string)
                .collect();
            state.sort();
            Ok(Observed {
                outputs: parse_outputs(&outputs.stdout)?,
                state,
                changes,
            })
        })();
        (result, start.elapsed().as_secs_f64())
    }

    /// `plan -detailed-exitcode` with the module's arguments: Ok when it
    /// has nothing to do (exit 0), else what it would change or its error.
    pub fn plans_nothing(
        &self,
        m: &Module,
        root: &Path,
        envs: &[(&str, String)],
        tag: &str,
    ) -> Result<(), String> {
        let mut plan = strings(&["plan", "-detailed-exitcode"]);
        plan.extend(m.args.iter().cloned());
        let r = self.run_any(plan, root, envs, tag);
        match r.code {
            Some(0) => Ok(()),
            Some(2) => Err(format!("plans changes:\n{}", r.planned_changes())),
            _ => Err(format!("plan failed:\n{}", r.errors())),
        }
    }
}
