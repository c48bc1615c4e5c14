//! The live summary of a large apply on a terminal. At fleet scale one
//! line per instance ("Creating...", "Creation complete...") scrolls past
//! faster than anyone reads: when standard output is a terminal and a run
//! has more than [`THRESHOLD`] operations, those lines go to a log file
//! instead, and the terminal shows a summary redrawn in place: a bar per
//! kind of operation with counts, rate and ETA, how many are in progress
//! and the slowest of them, and the errors so far (each error is printed
//! in full as it happens, above the summary). `-json` output is never
//! affected. FLEETFORM_LIVE=off turns it off; =on turns it on whatever the
//! terminal and the size.

use fleetform_shared::plan::{Action, Plan};
use fleetform_shared::wire::ApplyOp;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Operations above which the summary replaces the per-instance lines.
pub const THRESHOLD: usize = 300;

const KINDS: [&str; 4] = ["create", "update", "destroy", "read"];

fn kind(op: ApplyOp) -> &'static str {
    match op {
        ApplyOp::Create => "create",
        ApplyOp::Update => "update",
        ApplyOp::Delete => "destroy",
        // Not in the plan's totals: the render does not count them.
        ApplyOp::Read | ApplyOp::Open | ApplyOp::Renew | ApplyOp::Close => "read",
    }
}

/// How many operations of each kind the plan holds.
pub fn totals(plan: &Plan) -> BTreeMap<&'static str, usize> {
    let mut t = BTreeMap::new();
    for c in &plan.changes {
        let kinds: &[&'static str] = match c.action {
            Action::Create => &["create"],
            Action::Update => &["update"],
            Action::Delete => &["destroy"],
            Action::Read => &["read"],
            Action::DeleteThenCreate | Action::CreateThenDelete => &["create", "destroy"],
            Action::NoOp | Action::Forget => &[],
        };
        for k in kinds {
            *t.entry(*k).or_insert(0) += 1;
        }
    }
    t
}

pub struct Live {
    log: std::io::BufWriter<std::fs::File>,
    pub log_path: PathBuf,
    totals: BTreeMap<&'static str, usize>,
    done: BTreeMap<&'static str, usize>,
    failed: Vec<String>,
    first_start: Option<Instant>,
    /// Lines of the summary on the screen now.
    drawn: usize,
}

impl Live {
    /// The live summary of applying a plan of `totals` operations, when it
    /// is wanted: a terminal, more than [`THRESHOLD`] operations, and
    /// FLEETFORM_LIVE not `off`. Called when applying starts (never for a
    /// plan that is only shown, nor over an approval prompt).
    pub fn start(totals: BTreeMap<&'static str, usize>, operation: &str) -> Option<Live> {
        let setting = std::env::var("FLEETFORM_LIVE").unwrap_or_default();
        let count: usize = totals.values().sum();
        let wanted = match setting.as_str() {
            "off" | "0" | "false" => false,
            "on" | "1" | "true" => true,
            _ => std::io::IsTerminal::is_terminal(&std::io::stdout()) && count > THRESHOLD,
        };
        if !wanted {
            return None;
        }
        let dir = PathBuf::from(".fleetform").join("logs");
        std::fs::create_dir_all(&dir).ok()?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let log_path = dir.join(format!("{operation}-{stamp}.log"));
        let file = std::fs::File::create(&log_path).ok()?;
        println!(
            "\n{count} operations: each instance's lines go to {}",
            log_path.display()
        );
        Some(Live {
            log: std::io::BufWriter::new(file),
            log_path,
            totals,
            done: BTreeMap::new(),
            failed: Vec::new(),
            first_start: None,
            drawn: 0,
        })
    }

    /// One per-instance line, into the log.
    pub fn log(&mut self, line: &str) {
        let _ = writeln!(self.log, "{line}");
    }

    pub fn started(&mut self) {
        self.first_start.get_or_insert_with(Instant::now);
    }

    pub fn completed(&mut self, op: ApplyOp) {
        *self.done.entry(kind(op)).or_insert(0) += 1;
    }

    pub fn errored(&mut self, addr: String) {
        self.failed.push(addr);
    }

    /// Erases the summary (before something else is printed).
    pub fn clear(&mut self) {
        if self.drawn > 0 {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\x1b[{}A", self.drawn);
            for _ in 0..self.drawn {
                let _ = writeln!(out, "\x1b[2K");
            }
            let _ = write!(out, "\x1b[{}A", self.drawn);
            let _ = out.flush();
            self.drawn = 0;
        }
    }

    /// The summary's lines: `running` is each operation in progress as
    /// (address, seconds so far).
    pub fn lines(&self, running: &[(String, u64)]) -> Vec<String> {
        let elapsed = self
            .first_start
            .map_or(0.0, |t| t.elapsed().as_secs_f64())
            .max(0.001);
        let mut out = Vec::new();
        for k in KINDS {
            let total = self.totals.get(k).copied().unwrap_or(0);
            if total == 0 {
                continue;
            }
            let done = self.done.get(k).copied().unwrap_or(0).min(total);
            let width = 30;
            let filled = done * width / total;
            let rate = done as f64 / elapsed;
            let eta = if done == total {
                "done".to_string()
            } else if rate > 0.0 {
                format!("ETA {:.0}s", (total - done) as f64 / rate)
            } else {
                "ETA -".to_string()
            };
            out.push(format!(
                "  {k:<8} [{}{}] {done:>7}/{total:<7} {rate:>7.0}/s  {eta}",
                "#".repeat(filled),
                "-".repeat(width - filled)
            ));
        }
        let mut slow: Vec<&(String, u64)> = running.iter().collect();
        slow.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let slowest = slow
            .iter()
            .take(3)
            .map(|(a, s)| format!("{a} ({s}s)"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(format!(
            "  in progress: {}{}",
            running.len(),
            if slowest.is_empty() {
                String::new()
            } else {
                format!("; slowest: {slowest}")
            }
        ));
        out.push(match self.failed.len() {
            0 => "  errors: 0".to_string(),
            n => format!("  errors: {n} (first: {}; shown above)", self.failed[0]),
        });
        out
    }

    /// Draws the summary in place of the last one.
    pub fn draw(&mut self, running: &[(String, u64)]) {
        let lines = self.lines(running);
        self.clear();
        let mut out = std::io::stdout().lock();
        for l in &lines {
            let _ = writeln!(out, "\x1b[2K{l}");
        }
        let _ = out.flush();
        self.drawn = lines.len();
        let _ = self.log.flush();
    }

    /// The last summary stays; the log is complete.
    pub fn finish(&mut self, running: &[(String, u64)]) {
        self.draw(running);
        self.drawn = 0;
        let _ = self.log.flush();
        println!("Each instance's lines: {}", self.log_path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::ProviderAddr;
    use fleetform_shared::plan::ResourceChange;

    #[test]
    fn the_summary_counts_each_kind_and_names_the_slowest() {
        let change = |a: &str, action| {
            ResourceChange::new(a.parse().unwrap(), ProviderAddr::implied("null"), action)
        };
        let plan = Plan {
            changes: vec![
                change("null_resource.a[0]", Action::Create),
                change("null_resource.a[1]", Action::Create),
                change("null_resource.b", Action::CreateThenDelete),
                change("null_resource.c", Action::NoOp),
            ],
            ..Plan::default()
        };
        let t = totals(&plan);
        assert_eq!(t.get("create"), Some(&3));
        assert_eq!(t.get("destroy"), Some(&1));
        assert_eq!(t.get("update"), None);
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("x.log");
        let mut live = Live {
            log: std::io::BufWriter::new(std::fs::File::create(&log_path).unwrap()),
            log_path: log_path.clone(),
            totals: t,
            done: BTreeMap::new(),
            failed: vec![],
            first_start: Some(Instant::now()),
            drawn: 0,
        };
        live.completed(ApplyOp::Create);
        live.completed(ApplyOp::Create);
        live.completed(ApplyOp::Delete);
        live.errored("null_resource.a[1]".into());
        let lines = live.lines(&[
            ("null_resource.b".into(), 4),
            ("null_resource.a[0]".into(), 9),
        ]);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(
            lines[0].starts_with("  create   [####################----------]       2/3"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("1/1") && lines[1].ends_with("done"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2],
            "  in progress: 2; slowest: null_resource.a[0] (9s), null_resource.b (4s)"
        );
        assert_eq!(
            lines[3],
            "  errors: 1 (first: null_resource.a[1]; shown above)"
        );
        live.log("null_resource.a[0]: Creating...");
        live.finish(&[]);
        assert_eq!(
            std::fs::read_to_string(&log_path).unwrap(),
            "null_resource.a[0]: Creating...\n"
        );
    }
}
