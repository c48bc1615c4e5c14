//! What scripts read from the CLI when its output goes nowhere or its
//! command line is wrong: every command ends quietly, by SIGPIPE, when
//! its standard output is a pipe nobody reads (`fleetform state list |
//! head -1`), and a usage error exits 1, never 2 (which `plan
//! -detailed-exitcode` means as "changes present").

use fleetform_tests::{binary, run_in};
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SIGPIPE: i32 = 13;

/// One sim object and an output; `name="a"` is not formatted, so that
/// `fmt -check` has a file to list.
const CONFIG: &str = r#"terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

provider "sim" {
  store_dir = ".fleetform/sim-store"
}

resource "sim_object" "a" {
  name="a"
}

output "name" {
  value = sim_object.a.name
}
"#;

/// How a command ended whose standard output, or error, was closed.
struct Ended {
    status: ExitStatus,
    stderr: String,
}

/// Runs `fleetform ARGS` in `dir` with `input` on its standard input and
/// its standard output a pipe whose reading end is closed before the
/// command starts; standard error is collected, or also closed when
/// `close_stderr`.
fn with_output_closed(dir: &Path, args: &[&str], input: &str, close_stderr: bool) -> Ended {
    let mut child = Command::new(binary("fleetform"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fleetform");
    drop(child.stdout.take());
    if close_stderr {
        drop(child.stderr.take());
    }
    let mut stdin = child.stdin.take().expect("piped stdin");
    // The command may end before it reads its input.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => {
            let out = out.expect("wait for fleetform");
            Ended {
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        }
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("fleetform {args:?} did not end within 120 s with its output closed");
        }
    }
}

/// The commands a `--help` text lists (its "Commands:" section), without
/// clap's `help`.
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Whether a `--help` text's usage has a form without a subcommand
/// (`fleetform providers [DIR]`, not only `fleetform state <COMMAND>`).
fn runs_alone(help: &str) -> bool {
    help.lines()
        .skip_while(|l| !l.starts_with("Usage:"))
        .take_while(|l| !l.trim().is_empty())
        .any(|l| !l.trim_end().ends_with("<COMMAND>"))
}

/// Every command `fleetform --help` lists, and every command of a group
/// (`state list`, `workspace new`...), as named in the cases below.
fn every_command(dir: &Path) -> BTreeSet<String> {
    let top = run_in(dir, &["--help"]);
    let mut all = BTreeSet::from(["help".to_string()]);
    for command in listed_commands(&top.stdout) {
        let help = run_in(dir, &[&command, "--help"]);
        for sub in listed_commands(&help.stdout) {
            all.insert(format!("{command} {sub}"));
        }
        if runs_alone(&help.stdout) {
            all.insert(command);
        }
    }
    all
}

#[test]
fn every_command_ends_quietly_when_its_output_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    let applied = run_in(dir, &["apply", "-auto-approve"]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    let shown = run_in(dir, &["state", "show", "sim_object.a"]);
    let id = shown
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("id"))
        .map(|v| {
            v.trim_start_matches([' ', '='])
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_else(|| panic!("no id: {}", shown.all_output()));
    let pulled = run_in(dir, &["state", "pull"]);
    std::fs::write(dir.join("pulled.tfstate"), &pulled.stdout).unwrap();
    let runs = run_in(dir, &["runs", "list"]);
    let run_id = runs
        .stdout
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run: {}", runs.all_output()))
        .to_string();
    let sim = "registry.terraform.io/fleetform/sim";

    // (command as --help names it, arguments, standard input, the exit
    // status when the command writes nothing on standard output).
    let cases: Vec<(&str, Vec<&str>, &str, Option<i32>)> = vec![
        ("help", vec!["--help"], "", None),
        ("help", vec!["help", "plan"], "", None),
        ("version", vec!["version"], "", None),
        ("init", vec!["init"], "", None),
        ("get", vec!["get"], "", None),
        ("validate", vec!["validate"], "", None),
        // No test files here: only the summary line, on standard output.
        ("test", vec!["test"], "", None),
        ("fmt", vec!["fmt", "-check"], "", None),
        ("graph", vec!["graph"], "", None),
        ("providers", vec!["providers"], "", None),
        ("providers lock", vec!["providers", "lock"], "", None),
        (
            "providers mirror",
            vec!["providers", "mirror", "m"],
            "",
            None,
        ),
        (
            "providers schema",
            vec!["providers", "schema", "-json"],
            "",
            None,
        ),
        // Nothing to change: the plan's text is all it prints, and a
        // failed write of it ends the command as any other print does.
        ("plan", vec!["plan", "-detailed-exitcode"], "", None),
        ("plan", vec!["plan", "-destroy"], "", None),
        ("apply", vec!["apply", "-auto-approve"], "", None),
        ("refresh", vec!["refresh"], "", None),
        ("show", vec!["show"], "", None),
        ("modules", vec!["modules"], "", None),
        (
            "metadata functions",
            vec!["metadata", "functions", "-json"],
            "",
            None,
        ),
        ("show", vec!["show", "-json"], "", None),
        ("output", vec!["output"], "", None),
        ("console", vec!["console"], "sim_object.a.name\n", None),
        ("state list", vec!["state", "list"], "", None),
        (
            "state show",
            vec!["state", "show", "sim_object.a"],
            "",
            None,
        ),
        ("state pull", vec!["state", "pull"], "", None),
        ("state history", vec!["state", "history"], "", None),
        (
            "state mv",
            vec!["state", "mv", "-dry-run", "sim_object.a", "sim_object.b"],
            "",
            None,
        ),
        (
            "state rm",
            vec!["state", "rm", "-dry-run", "sim_object.a"],
            "",
            None,
        ),
        (
            "state replace-provider",
            vec!["state", "replace-provider", "-auto-approve", sim, sim],
            "",
            None,
        ),
        (
            "state push",
            vec!["state", "push", "-force", "pulled.tfstate"],
            "",
            None,
        ),
        ("taint", vec!["taint", "sim_object.a"], "", None),
        ("untaint", vec!["untaint", "sim_object.a"], "", None),
        ("runs list", vec!["runs", "list"], "", None),
        ("runs show", vec!["runs", "show", &run_id], "", None),
        // A new embedded coordinator keeps no events of the run, and
        // cannot cancel a finished one: both say so on standard error.
        ("runs watch", vec!["runs", "watch", &run_id], "", Some(1)),
        ("runs cancel", vec!["runs", "cancel", &run_id], "", Some(1)),
        ("workers", vec!["workers"], "", None),
        ("drift", vec!["drift"], "", None),
        ("workspace new", vec!["workspace", "new", "w2"], "", None),
        (
            "workspace select",
            vec!["workspace", "select", "default"],
            "",
            None,
        ),
        ("workspace show", vec!["workspace", "show"], "", None),
        ("workspace list", vec!["workspace", "list"], "", None),
        (
            "workspace delete",
            vec!["workspace", "delete", "w2"],
            "",
            None,
        ),
        (
            "import",
            vec!["-workspace=imported", "import", "sim_object.a", &id],
            "",
            None,
        ),
        // No lock is held: the error is on standard error.
        (
            "force-unlock",
            vec!["force-unlock", "-force", "1"],
            "",
            Some(1),
        ),
        // Without a coordinator to log in to, an error on standard error.
        ("login", vec!["login"], "", Some(1)),
        // A host nobody stored a token for: nothing is removed.
        ("logout", vec!["logout", "nobody.invalid"], "", None),
        // Last: whatever it destroyed before it ended.
        ("destroy", vec!["destroy", "-auto-approve"], "", None),
    ];

    let covered: BTreeSet<String> = cases.iter().map(|c| c.0.to_string()).collect();
    assert_eq!(
        covered,
        every_command(dir),
        "a case for every command --help lists"
    );

    for (_, args, input, exit) in &cases {
        let ended = with_output_closed(dir, args, input, false);
        for noise in ["panicked", "Broken pipe", "backtrace", "os error"] {
            assert!(
                !ended.stderr.contains(noise),
                "{args:?} said {noise:?}:\n{}",
                ended.stderr
            );
        }
        match exit {
            None => assert_eq!(
                ended.status.signal(),
                Some(SIGPIPE),
                "{args:?} ends as SIGPIPE ends a tool, not {:?}:\n{}",
                ended.status,
                ended.stderr
            ),
            Some(code) => assert_eq!(
                ended.status.code(),
                Some(*code),
                "{args:?}:\n{}",
                ended.stderr
            ),
        }
    }

    // The directory is left usable (no lock or busy database behind).
    let listed = run_in(dir, &["workspace", "list"]);
    assert_eq!(listed.code, 0, "{}", listed.all_output());
}

/// Standard error closed too: a diagnostic that cannot be written ends the
/// command the same way, not with a panic's status 101.
#[test]
fn a_closed_standard_error_ends_quietly_too() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        vec!["force-unlock", "-force", "1"],
        vec!["plan", "-detailed-exitcode", "-bogus"],
    ] {
        let ended = with_output_closed(tmp.path(), &args, "", true);
        assert_eq!(
            ended.status.signal(),
            Some(SIGPIPE),
            "{args:?}: {:?}",
            ended.status
        );
    }
}

/// Standard output that refuses writes for another reason than a closed
/// pipe (a full disk): an error that says so, exit 1.
#[test]
fn a_failed_write_to_standard_output_is_an_error() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("SKIP: no /dev/full");
        return;
    }
    let out = Command::new(binary("fleetform"))
        .arg("version")
        .stdout(std::fs::File::create(full).unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("Error: writing to standard output: No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A command line clap refuses exits 1 with the usage on standard error,
/// as Terraform's does: exit 2 from `plan -detailed-exitcode` would read
/// as "changes present". Help and version are no errors.
#[test]
fn a_usage_error_exits_1_and_help_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (args, said) in [
        (
            vec!["plan", "-detailed-exitcode", "-bogus"],
            "Usage: fleetform plan",
        ),
        (vec!["bogus"], "Usage: fleetform"),
        (
            vec!["plan", "-detailed-exitcode", "-parallelism=many"],
            "invalid value 'many'",
        ),
    ] {
        let out = run_in(dir, &args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.all_output());
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.starts_with("error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(said), "{args:?}: {}", out.stderr);
    }
    for args in [vec!["--help"], vec!["plan", "-help"], vec!["help"]] {
        let out = run_in(dir, &args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.all_output());
        assert!(out.stdout.contains("Usage: fleetform"), "{}", out.stdout);
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.stderr);
    }
    let out = run_in(dir, &["--version"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.starts_with("fleetform "), "{}", out.stdout);
}
