//! Runs batches of generated expressions (see `exprgen`) through Terraform
//! and fleetform as root module outputs, and reports where the two
//! disagree: an output's value, type or sensitivity, whether it fails, and
//! the summary and detail of its error.
//!
//! Each batch is one `main.tf` with an output per expression, applied by
//! both tools in their own directory; outputs that fail in either tool are
//! compared by their diagnostics and dropped, and the survivors applied
//! again until both succeed, then `output -json` is compared.
//! `FLEETFORM_EXPR_TRACE=1` prints every round: its expressions and what
//! each tool printed.

use crate::exprgen::Case;
use crate::{binary, run_grouped};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One disagreement between the tools on one expression.
#[derive(Debug, Clone)]
pub struct Divergence {
    pub expr: String,
    /// `value`, `type`, `sensitive`, `fails`, `summary`, `detail`, `batch`.
    pub aspect: &'static str,
    pub terraform: String,
    pub fleetform: String,
}

/// An error diagnostic as either tool prints it, reduced to what is compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Diag {
    pub line: usize,
    pub summary: String,
    pub detail: String,
}

/// What a batch run produced, for the counts in the test's report.
#[derive(Default, Debug)]
pub struct Tally {
    pub cases: usize,
    pub failed_in_terraform: usize,
    pub compared_values: usize,
    pub divergences: Vec<Divergence>,
}

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Terraform,
    Fleetform,
}

struct Run {
    ok: bool,
    errors: Vec<Diag>,
    stderr: String,
}

/// Work directories of the two tools and Terraform's empty CLI config.
pub struct Bench {
    root: tempfile::TempDir,
    /// Rounds applied so far: each round names its outputs afresh, so no
    /// output's value in the state from an earlier round meets a new one.
    rounds: std::sync::atomic::AtomicUsize,
}

impl Bench {
    pub fn new() -> Bench {
        let root = tempfile::tempdir().expect("temporary directory");
        for d in ["tf", "ff"] {
            std::fs::create_dir_all(root.path().join(d)).expect("work directory");
        }
        std::fs::write(root.path().join("empty.tfrc"), "").expect("CLI config");
        Bench {
            root,
            rounds: Default::default(),
        }
    }

    fn dir(&self, tool: Tool) -> PathBuf {
        self.root.path().join(match tool {
            Tool::Terraform => "tf",
            Tool::Fleetform => "ff",
        })
    }

    fn command(&self, tool: Tool, args: &[&str]) -> Command {
        let mut cmd = match tool {
            Tool::Terraform => {
                let mut c = Command::new("terraform");
                c.env("TF_CLI_CONFIG_FILE", self.root.path().join("empty.tfrc"))
                    .env("CHECKPOINT_DISABLE", "1");
                c
            }
            Tool::Fleetform => {
                let mut c = Command::new(binary("fleetform"));
                c.env_remove("FLEETFORM_COORDINATOR");
                c
            }
        };
        cmd.args(args).current_dir(self.dir(tool));
        cmd
    }

    /// `apply` in the tool's directory, with its error diagnostics.
    fn apply(&self, tool: Tool) -> Run {
        let cmd = self.command(
            tool,
            &["apply", "-auto-approve", "-no-color", "-input=false"],
        );
        let out = run_grouped(cmd, Duration::from_secs(120));
        let ok = out.status.is_some_and(|s| s.success());
        let text = format!("{}\n{}", out.stdout, out.stderr);
        Run {
            ok,
            errors: parse_errors(&text),
            stderr: text,
        }
    }

    fn outputs(&self, tool: Tool) -> BTreeMap<String, Json> {
        let out = run_grouped(
            self.command(tool, &["output", "-json"]),
            Duration::from_secs(60),
        );
        assert!(
            out.status.is_some_and(|s| s.success()),
            "output -json failed: {}",
            out.stderr
        );
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("output -json is not JSON ({e}): {}", out.stdout))
    }

    /// Compares the tools on `cases`, adding to `tally`.
    pub fn run_batch(&self, cases: &[Case], tally: &mut Tally) {
        tally.cases += cases.len();
        let unsure = self.run_rounds(cases, tally, true);
        // An output only one tool blamed while the other failed elsewhere
        // may not have been evaluated by the other (a syntax error stops
        // everything): each such case is tried again on its own.
        for i in unsure {
            self.run_rounds(std::slice::from_ref(&cases[i]), tally, false);
        }
    }

    /// Applies `cases` until both tools succeed on what is left; returns
    /// the cases whose outcome is uncertain when `defer` is set.
    fn run_rounds(&self, cases: &[Case], tally: &mut Tally, defer: bool) -> Vec<usize> {
        let mut unsure = Vec::new();
        let mut live: Vec<usize> = (0..cases.len()).collect();
        for _ in 0..5 {
            let round = self
                .rounds
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let lines = write_config(&self.dir(Tool::Terraform), round, cases, &live);
            write_config(&self.dir(Tool::Fleetform), round, cases, &live);
            let (tf, ff) = std::thread::scope(|s| {
                let tf = s.spawn(|| self.apply(Tool::Terraform));
                let ff = self.apply(Tool::Fleetform);
                (tf.join().expect("terraform thread"), ff)
            });
            if std::env::var_os("FLEETFORM_EXPR_TRACE").is_some() {
                eprintln!(
                    "round {round}: terraform ok {}, fleetform ok {}",
                    tf.ok, ff.ok
                );
                for &i in &live {
                    eprintln!("  r{round}_e{i} = {}", cases[i].expr);
                }
                eprintln!(
                    "terraform printed:\n{}\nfleetform printed:\n{}",
                    tf.stderr, ff.stderr
                );
            }
            if tf.ok && ff.ok {
                let missing = self.compare_outputs(round, cases, &live, tally, defer, [&tf, &ff]);
                if !missing.is_empty() {
                    // Seen in CI: with an infinite output in the round,
                    // Terraform's apply exited 0 and its `output -json`
                    // lacked all seven outputs of the round (here it
                    // crashes instead). Such cases are tried again on
                    // their own; an output still absent then is a
                    // divergence, reported with what the apply printed.
                    unsure.extend(missing);
                }
                return unsure;
            }
            let owner = |line: usize| {
                lines
                    .iter()
                    .find(|(_, r)| r.contains(&line))
                    .map(|(i, _)| *i)
            };
            let mut failing: BTreeMap<usize, (Vec<Diag>, Vec<Diag>)> = BTreeMap::new();
            for (run, is_tf) in [(&tf, true), (&ff, false)] {
                for d in &run.errors {
                    let Some(i) = owner(d.line) else { continue };
                    let slot = failing.entry(i).or_default();
                    let side = if is_tf { &mut slot.0 } else { &mut slot.1 };
                    side.push(d.clone());
                }
            }
            if failing.is_empty() {
                // A failure no output can be blamed for (Terraform cannot
                // store some values in its state): halve the cases until
                // one alone fails, and report that one.
                if live.len() > 1 {
                    let half = live.len() / 2;
                    for part in [&live[..half], &live[half..]] {
                        let sub: Vec<Case> = part.iter().map(|&i| cases[i].clone()).collect();
                        tally.cases -= sub.len();
                        self.run_batch(&sub, tally);
                    }
                    return unsure;
                }
                tally.divergences.push(Divergence {
                    expr: live
                        .first()
                        .map(|&i| cases[i].expr.clone())
                        .unwrap_or_default(),
                    aspect: "batch",
                    terraform: tail(&tf.stderr),
                    fleetform: tail(&ff.stderr),
                });
                return unsure;
            }
            for (i, (t, f)) in failing {
                live.retain(|&j| j != i);
                let one_sided = t.is_empty() && !tf.ok || f.is_empty() && !ff.ok;
                if defer && one_sided {
                    unsure.push(i);
                    continue;
                }
                if !t.is_empty() {
                    tally.failed_in_terraform += 1;
                }
                compare_errors(&cases[i].expr, t, f, tally);
            }
        }
        unsure
    }

    /// Compares the outputs of round `round`; with `defer`, returns the
    /// cases an output of either tool is missing for instead of comparing them.
    fn compare_outputs(
        &self,
        round: usize,
        cases: &[Case],
        live: &[usize],
        tally: &mut Tally,
        defer: bool,
        applies: [&Run; 2],
    ) -> Vec<usize> {
        let (tf, ff) = (self.outputs(Tool::Terraform), self.outputs(Tool::Fleetform));
        let mut missing = Vec::new();
        for &i in live {
            let name = format!("r{round}_e{i}");
            let (t, f) = (tf.get(&name), ff.get(&name));
            if defer && t.is_none() != f.is_none() {
                missing.push(i);
                continue;
            }
            tally.compared_values += 1;
            if t.is_none() && f.is_none() {
                // Both leave a null output out.
                continue;
            }
            for aspect in ["value", "type", "sensitive"] {
                let pick = |o: Option<&Json>, run: &Run| {
                    o.map(|o| o[aspect].to_string())
                        .unwrap_or_else(|| absent(run))
                };
                let (a, b) = (pick(t, applies[0]), pick(f, applies[1]));
                if a != b {
                    tally.divergences.push(Divergence {
                        expr: cases[i].expr.clone(),
                        aspect,
                        terraform: a,
                        fleetform: b,
                    });
                }
            }
        }
        missing
    }
}

impl Default for Bench {
    fn default() -> Self {
        Bench::new()
    }
}

fn compare_errors(expr: &str, mut t: Vec<Diag>, mut f: Vec<Diag>, tally: &mut Tally) {
    let mut push = |aspect, a: String, b: String| {
        tally.divergences.push(Divergence {
            expr: expr.to_string(),
            aspect,
            terraform: a,
            fleetform: b,
        })
    };
    // The order of several errors in one output is the evaluators' own
    // business; what they are is compared.
    for side in [&mut t, &mut f] {
        side.sort_by(|a, b| (&a.summary, &a.detail).cmp(&(&b.summary, &b.detail)));
        side.dedup();
    }
    let say = |ds: &[Diag]| {
        ds.iter()
            .map(|d| format!("{}: {}", d.summary, d.detail))
            .collect::<Vec<_>>()
            .join(" // ")
    };
    if t.is_empty() || f.is_empty() {
        let or_none = |ds: &[Diag]| {
            if ds.is_empty() {
                "no error".to_string()
            } else {
                format!("error: {}", say(ds))
            }
        };
        push("fails", or_none(&t), or_none(&f));
        return;
    }
    let summaries = |ds: &[Diag]| {
        ds.iter()
            .map(|d| d.summary.clone())
            .collect::<Vec<_>>()
            .join(" // ")
    };
    if summaries(&t) != summaries(&f) {
        push("summary", say(&t), say(&f));
        return;
    }
    for (a, b) in t.iter().zip(&f) {
        if a.detail != b.detail {
            push("detail", a.detail.clone(), b.detail.clone());
        }
    }
}

/// How a missing output is reported: Terraform loses a whole round's
/// outputs, with or without an error, when one of them is infinite.
fn absent(run: &Run) -> String {
    if run.stderr.contains("cannot serialize infinity") {
        "(absent) Terraform: cannot serialize infinity".into()
    } else {
        format!("(absent) the apply printed:\n{}", tail(&run.stderr))
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// Writes the live cases as outputs `rR_eI` and returns each one's line range.
fn write_config(
    dir: &Path,
    round: usize,
    cases: &[Case],
    live: &[usize],
) -> Vec<(usize, std::ops::RangeInclusive<usize>)> {
    let mut text = String::new();
    let mut line = 1;
    let mut ranges = Vec::new();
    for &i in live {
        let c = &cases[i];
        let block = format!(
            "output \"r{round}_e{i}\" {{\n{}  value = {}\n}}\n",
            if c.sensitive {
                "  sensitive = true\n"
            } else {
                ""
            },
            c.expr
        );
        let n = block.lines().count();
        ranges.push((i, line..=line + n - 1));
        line += n;
        text.push_str(&block);
    }
    std::fs::write(dir.join("main.tf"), text).expect("write main.tf");
    ranges
}

/// The error diagnostics in a tool's output: both print a summary line
/// `Error: …`, a location line `on main.tf line N…`, a source excerpt
/// and, after a blank line, the detail. Fleetform frames them in `│`.
pub fn parse_errors(text: &str) -> Vec<Diag> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('╷') && !l.starts_with('╵'))
        .map(|l| {
            l.strip_prefix('│')
                .map(|r| r.strip_prefix(' ').unwrap_or(r))
                .unwrap_or(l)
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(summary) = lines[i].strip_prefix("Error: ") else {
            i += 1;
            continue;
        };
        let mut diag = Diag {
            line: 0,
            summary: summary.trim().to_string(),
            detail: String::new(),
        };
        i += 1;
        let mut detail = Vec::new();
        let mut in_detail = false;
        while i < lines.len()
            && !lines[i].starts_with("Error: ")
            && !lines[i].starts_with("Warning: ")
        {
            let l = lines[i];
            if diag.line == 0 && !in_detail {
                if let Some(rest) = l.trim_start().strip_prefix("on main.tf line ") {
                    let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                    diag.line = n.parse().unwrap_or(0);
                }
            } else if !in_detail && l.trim().is_empty() {
                in_detail = true;
            } else if in_detail {
                detail.push(l.trim());
            }
            i += 1;
        }
        // Terraform wraps a detail at its terminal's width, so where a
        // line broke, and how many spaces were there, is not compared.
        diag.detail = detail
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push(diag);
    }
    out
}
