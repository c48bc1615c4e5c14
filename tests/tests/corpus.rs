//! The corpus test: public root modules (tests/corpus/manifest.json) run
//! unchanged under fleetform and do what Terraform 1.11 does.
//!
//! The modules' files are not in this repository: each is taken from a local
//! git mirror of its repository (`$FLEETFORM_CORPUS_MIRRORS/<owner>+<name>/repo`,
//! default /work/.mirror) at the pinned commit; a module whose mirror is
//! absent is skipped with a `SKIP:` line. Each tool plans into a file,
//! shows it as JSON, applies it and reads the outputs and the state list
//! (tests/corpus/tool.rs). The Terraform half (`terraform` 1.11 on PATH;
//! skipped with a `SKIP:` line otherwise) must give the recorded
//! expectations (tests/corpus/<name>/expected.json: outputs with value, type
//! and sensitivity; expected_state.txt: managed resource instances;
//! expected_plan.json: the plan's resource changes), and so must the
//! fleetform half, which always runs (embedded mode). Then each tool takes
//! over the state the other wrote and must plan no change
//! (tests/corpus/exchange.rs). Both use our provider binaries through a CLI
//! configuration's `dev_overrides`. Modules with a `known_failure` are
//! reported as such (with a `FIXED:` line once they pass); the test fails
//! only when another module fails under fleetform, or when Terraform does
//! not give the expectations (the entry is then wrong).
//!
//! FLEETFORM_CORPUS_RECORD=1 rewrites the expectations from Terraform's;
//! FLEETFORM_CORPUS_SLOW=1 also runs the modules marked `slow`;
//! FLEETFORM_CORPUS_ONLY=a,b runs only those modules;
//! FLEETFORM_CORPUS_NO_TERRAFORM=1 runs the fleetform halves only;
//! FLEETFORM_CORPUS_KEEP=1 keeps the work directory (both copies, the logs).

#[path = "../corpus/compare.rs"]
mod compare;
#[path = "../corpus/exchange.rs"]
mod exchange;
#[path = "../corpus/plan.rs"]
mod plan;
#[path = "../corpus/tool.rs"]
mod tool;

use compare::{Expected, Rule};
use exchange::Applied;
use fleetform_tests::{bin_dir, binary};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use tool::Side;

#[derive(Deserialize)]
struct Manifest {
    modules: Vec<Module>,
}

/// One corpus entry; the fields are described in tests/corpus/README.md.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Module {
    name: String,
    repository: String,
    mirror: String,
    commit: String,
    #[allow(dead_code)] // documentation for readers of the manifest
    license: String,
    license_file: String,
    files: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[allow(dead_code)]
    excluded_because: Option<String>,
    root: String,
    #[serde(default)]
    own_files: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    terraform_skip: Option<String>,
    #[allow(dead_code)]
    exercises: String,
    known_failure: Option<String>,
    slow: Option<String>,
    #[serde(default)]
    outputs: BTreeMap<String, Rule>,
    #[serde(default)]
    files_expected: BTreeMap<String, String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// The git directory of a module's mirror, or why there is none.
fn mirror(m: &Module) -> Result<PathBuf, String> {
    let base = std::env::var("FLEETFORM_CORPUS_MIRRORS").unwrap_or_else(|_| "/work/.mirror".into());
    let repo = Path::new(&base).join(&m.mirror).join("repo");
    let git = if repo.join(".git").is_dir() {
        repo.join(".git")
    } else {
        repo.clone()
    };
    let fetch = m.repository.trim_start_matches("https://github.com/");
    if !git.join("objects").is_dir() {
        return Err(format!(
            "no mirror of {} at {} (fetch github:{fetch})",
            m.repository,
            repo.display()
        ));
    }
    let has = Command::new("git")
        .arg(format!("--git-dir={}", git.display()))
        .args(["cat-file", "-e", &format!("{}^{{commit}}", m.commit)])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        return Err(format!(
            "the mirror {} lacks commit {} (fetch github:{fetch} again)",
            repo.display(),
            m.commit
        ));
    }
    Ok(git)
}

/// Extracts the module's files at its commit into `dest` (repository layout
/// kept, so `../..` sources resolve), drops the excluded ones and adds our
/// own files (tfvars) to the root. Returns the root directory.
fn materialize(m: &Module, git: &Path, dest: &Path) -> PathBuf {
    std::fs::create_dir_all(dest).unwrap();
    let tar = dest.with_extension("tar");
    let ok = Command::new("git")
        .arg(format!("--git-dir={}", git.display()))
        .args(["archive", "--format=tar", "-o"])
        .arg(&tar)
        .arg(&m.commit)
        .arg("--")
        .args(&m.files)
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{}: git archive of {:?} at {} failed",
        m.name, m.files, m.commit
    );
    let ok = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(dest)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{}: cannot unpack {}", m.name, tar.display());
    std::fs::remove_file(&tar).unwrap();
    assert!(
        dest.join(&m.license_file).is_file(),
        "{}: the licence file {} is missing",
        m.name,
        m.license_file
    );
    for x in &m.exclude {
        std::fs::remove_file(dest.join(x))
            .unwrap_or_else(|e| panic!("{}: exclude {x}: {e}", m.name));
    }
    let root = dest.join(&m.root);
    for f in &m.own_files {
        std::fs::copy(corpus_dir().join(&m.name).join(f), root.join(f))
            .unwrap_or_else(|e| panic!("{}: own file {f}: {e}", m.name));
    }
    root
}

struct Tools {
    fleetform: PathBuf,
    terraform: Result<PathBuf, String>,
    envs: Vec<(&'static str, String)>,
}

enum Outcome {
    Pass(String),
    Skip(String),
    KnownFailure(String),
    /// A known failure that passes now: reported, not a failure, so a fix
    /// landing elsewhere does not break this test before the manifest catches up.
    Fixed(String),
    Fail(String),
}

fn run_module(m: &Module, tools: &Tools, work: &Path) -> Outcome {
    if let Some(why) = &m.slow
        && !env_flag("FLEETFORM_CORPUS_SLOW")
    {
        return Outcome::Skip(format!("slow, FLEETFORM_CORPUS_SLOW=1 runs it: {why}"));
    }
    let git = match mirror(m) {
        Ok(g) => g,
        Err(why) => return Outcome::Skip(why),
    };
    let recording = env_flag("FLEETFORM_CORPUS_RECORD") && m.terraform_skip.is_none();
    let mut expected = match Expected::load(m) {
        Ok(e) => e,
        Err(_) if recording => Expected::empty(),
        Err(e) => return Outcome::Fail(e),
    };
    let logs = work.join(&m.name).join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let (tf_tree, ff_tree) = (work.join(&m.name).join("tf"), work.join(&m.name).join("ff"));

    // The Terraform half first, when Terraform runs here, so that a
    // recording run compares fleetform with what it just recorded.
    let tf_side = tools.terraform.as_ref().ok().map(|terraform| Side {
        exe: terraform,
        // `get` installs the local modules; `init` would ask the registry
        // for the providers that dev_overrides already names.
        pre: &["get"],
        flags: &["-no-color"],
        log: logs.join("terraform"),
    });
    let tf_note = match (&m.terraform_skip, &tools.terraform, &tf_side) {
        (Some(why), _, _) => Ok(format!("Terraform half skipped: {why}")),
        (None, Err(why), _) => Ok(format!("Terraform half skipped: {why}")),
        (None, Ok(_), None) => unreachable!("a side for every Terraform"),
        (None, Ok(_), Some(tf_side)) => {
            let tf_root = materialize(m, &git, &tf_tree);
            match tf_side.plan_apply_read(m, &tf_root, &tools.envs) {
                (Err(e), _) => Err(format!(
                    "Terraform 1.11 fails on this module (the corpus entry is wrong): {e}"
                )),
                (Ok(seen), secs) if recording => {
                    seen.record(m);
                    let note = format!(
                        "recorded {} outputs, {} resource instances and {} planned changes of Terraform 1.11 ({secs:.1} s)",
                        seen.outputs.len(),
                        seen.state.len(),
                        seen.changes.len()
                    );
                    expected = seen;
                    Ok(note)
                }
                (Ok(seen), secs) => {
                    let p = expected.differences(m, &seen, &tf_root);
                    if p.is_empty() {
                        Ok(format!("Terraform 1.11 gives the same ({secs:.1} s)"))
                    } else {
                        Err(format!(
                            "Terraform 1.11 differs from the recorded expectations:\n  {}",
                            p.join("\n  ")
                        ))
                    }
                }
            }
        }
    };

    // The fleetform half, always.
    let ff_root = materialize(m, &git, &ff_tree);
    let ff_side = Side {
        exe: &tools.fleetform,
        pre: &[],
        flags: &[],
        log: logs.join("fleetform"),
    };
    let (ff, ff_secs) = ff_side.plan_apply_read(m, &ff_root, &tools.envs);
    let mut ff_problems = match &ff {
        Ok(seen) => expected.differences(m, seen, &ff_root),
        Err(e) => vec![e.clone()],
    };

    // Each tool takes over the other's state, when both applied.
    let exchange = match (&tf_side, &tf_note, &ff) {
        (Some(tf), Ok(_), Ok(_)) if m.terraform_skip.is_none() => {
            let start = Instant::now();
            let applied = Applied {
                ff: &ff_side,
                tf,
                ff_tree: &ff_tree,
                tf_tree: &tf_tree,
            };
            for r in [
                applied.terraform_reads_fleetform(m, &tools.envs),
                applied.fleetform_reads_terraform(m, &tools.envs),
            ] {
                ff_problems.extend(r.err());
            }
            format!(
                "; states exchanged ({:.1} s)",
                start.elapsed().as_secs_f64()
            )
        }
        _ => String::new(),
    };

    let (n, r, c) = (
        expected.outputs.len(),
        expected.state.len(),
        expected.changes.len(),
    );
    let ff_report = if ff_problems.is_empty() {
        format!(
            "fleetform gives the {n} expected outputs, {r} resource instances and {c} planned changes ({ff_secs:.1} s){exchange}"
        )
    } else {
        format!(
            "fleetform ({ff_secs:.1} s):\n    {}",
            ff_problems.join("\n").replace('\n', "\n    ")
        )
    };
    let tf_note = match tf_note {
        Ok(note) => note,
        Err(e) => return Outcome::Fail(format!("{e}\n  {ff_report}")),
    };
    match (&m.known_failure, ff_problems.is_empty()) {
        (None, true) => Outcome::Pass(format!("{ff_report}; {tf_note}")),
        (None, false) => Outcome::Fail(format!("{ff_report}\n  {tf_note}")),
        (Some(known), false) => {
            Outcome::KnownFailure(format!("{known}\n  {ff_report}\n  {tf_note}"))
        }
        (Some(_), true) => Outcome::Fixed(format!(
            "{ff_report}; {tf_note}; remove its known_failure from tests/corpus/manifest.json"
        )),
    }
}

/// `terraform` on PATH when it is 1.11, or why the Terraform halves are
/// skipped.
fn locate_terraform() -> Result<PathBuf, String> {
    if env_flag("FLEETFORM_CORPUS_NO_TERRAFORM") {
        return Err("FLEETFORM_CORPUS_NO_TERRAFORM=1".into());
    }
    let out = Command::new("terraform")
        .arg("version")
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("no `terraform` on PATH ({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("").trim();
    if !first.starts_with("Terraform v1.11.") {
        return Err(format!(
            "`terraform` is {first:?}, the expectations are Terraform 1.11's"
        ));
    }
    Ok(PathBuf::from("terraform"))
}

#[test]
fn public_root_modules_give_terraforms_outputs_under_fleetform() {
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(corpus_dir().join("manifest.json")).unwrap())
            .expect("tests/corpus/manifest.json");
    let fleetform = binary("fleetform");
    let providers = ["null", "random", "local", "time"];
    for p in providers {
        binary(&format!("terraform-provider-{p}"));
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cli_config = work.path().join("cli.tfrc");
    let overrides: String = providers
        .iter()
        .map(|p| format!("    \"hashicorp/{p}\" = \"{}\"\n", bin_dir().display()))
        .collect();
    std::fs::write(
        &cli_config,
        format!(
            "provider_installation {{\n  dev_overrides {{\n{overrides}  }}\n  direct {{}}\n}}\n"
        ),
    )
    .unwrap();
    let terraform = locate_terraform();
    if let Err(why) = &terraform {
        println!("SKIP: corpus: the Terraform halves: {why}");
    }
    let tools = Tools {
        fleetform,
        terraform,
        envs: vec![
            ("HOME", home.display().to_string()),
            ("TF_CLI_CONFIG_FILE", cli_config.display().to_string()),
            ("CHECKPOINT_DISABLE", "1".into()),
            ("TF_IN_AUTOMATION", "1".into()),
            ("TF_INPUT", "0".into()),
            ("NO_COLOR", "1".into()),
        ],
    };
    let only: Option<Vec<String>> = std::env::var("FLEETFORM_CORPUS_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());

    let start = Instant::now();
    let (mut passed, mut known, mut skipped, mut failed) = (0, 0, 0, Vec::new());
    for m in &manifest.modules {
        if only.as_ref().is_some_and(|o| !o.contains(&m.name)) {
            continue;
        }
        match run_module(m, &tools, work.path()) {
            Outcome::Pass(s) => {
                passed += 1;
                println!("PASS: corpus {}: {s}", m.name);
            }
            Outcome::Skip(s) => {
                skipped += 1;
                println!("SKIP: corpus {}: {s}", m.name);
            }
            Outcome::KnownFailure(s) => {
                known += 1;
                println!("KNOWN FAILURE: corpus {}: {s}", m.name);
            }
            Outcome::Fixed(s) => {
                passed += 1;
                println!("FIXED: corpus {}: {s}", m.name);
            }
            Outcome::Fail(s) => {
                println!("FAIL: corpus {}: {s}", m.name);
                failed.push(m.name.clone());
            }
        }
    }
    println!(
        "corpus: {passed} modules pass, {known} known failures, {skipped} skipped, {} failing, in {:.0} s",
        failed.len(),
        start.elapsed().as_secs_f64()
    );
    if env_flag("FLEETFORM_CORPUS_KEEP") {
        println!("work directory kept: {}", work.keep().display());
    }
    assert!(
        failed.is_empty(),
        "corpus modules failing: {failed:?} (FAIL lines above)"
    );
}
