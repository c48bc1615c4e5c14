//! `fleetform metadata functions -json` against `terraform metadata
//! functions -json` (Terraform 1.11): the same functions (each also as
//! `core::NAME`), with the same parameter names, types, nullability,
//! variadic parameter and return type. Descriptions are our own words and
//! are not compared. Without `terraform` on PATH only fleetform's own
//! document is checked (and the comparison prints `SKIP:`).

use fleetform_tests::binary;
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

/// Functions Terraform lists that fleetform does not implement; calling
/// one must be an error at the call. None today.
const MISSING: &[&str] = &[];

fn fleetform(dir: &Path, args: &[&str], input: Option<&str>) -> Output {
    run(
        Command::new(binary("fleetform"))
            .args(args)
            .current_dir(dir),
        input,
    )
    .expect("fleetform starts")
}

/// Runs `cmd` with `input` on its standard input; None when it cannot start.
fn run(cmd: &mut Command, input: Option<&str>) -> Option<Output> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.unwrap_or("").as_bytes()).unwrap();
    drop(stdin);
    Some(child.wait_with_output().unwrap())
}

/// `terraform ARGS` in `dir` with an empty CLI configuration; None when
/// Terraform is not installed.
fn terraform(dir: &Path, args: &[&str]) -> Option<Output> {
    let rc = dir.join("empty.tfrc");
    std::fs::write(&rc, "").unwrap();
    let mut cmd = Command::new("terraform");
    cmd.args(args)
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env("CHECKPOINT_DISABLE", "1");
    run(&mut cmd, None)
}

fn document(out: &Output) -> Json {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the output is JSON")
}

/// The document without descriptions (of functions and of parameters).
fn signatures(doc: &Json) -> serde_json::Map<String, Json> {
    let mut functions = doc["function_signatures"]
        .as_object()
        .expect("function_signatures is an object")
        .clone();
    for f in functions.values_mut() {
        let f = f.as_object_mut().unwrap();
        f.remove("description");
        if let Some(Json::Array(params)) = f.get_mut("parameters") {
            for p in params {
                p.as_object_mut().unwrap().remove("description");
            }
        }
        if let Some(Json::Object(p)) = f.get_mut("variadic_parameter") {
            p.remove("description");
        }
    }
    functions
}

#[test]
fn function_signatures_agree_with_terraform() {
    let dir = tempfile::tempdir().unwrap();
    let ours = document(&fleetform(
        dir.path(),
        &["metadata", "functions", "-json"],
        None,
    ));
    assert_eq!(ours["format_version"], "1.0");
    let ours_sigs = signatures(&ours);
    assert_eq!(
        ours_sigs["slice"]["parameters"][1],
        serde_json::json!({"name": "start_index", "type": "number"})
    );
    assert_eq!(ours_sigs["core::slice"], ours_sigs["slice"]);
    for (name, f) in ours["function_signatures"].as_object().unwrap() {
        let described = f["description"].as_str().unwrap_or_default();
        assert!(!described.is_empty(), "{name} has no description");
    }
    let Some(out) = terraform(dir.path(), &["metadata", "functions", "-json"]) else {
        println!("SKIP: terraform is absent, nothing to compare with");
        return;
    };
    let theirs = signatures(&document(&out));
    let names = |m: &serde_json::Map<String, Json>| m.keys().cloned().collect::<BTreeSet<_>>();
    let missing: BTreeSet<String> = names(&theirs)
        .difference(&names(&ours_sigs))
        .cloned()
        .collect();
    let expected: BTreeSet<String> = MISSING
        .iter()
        .flat_map(|n| [n.to_string(), format!("core::{n}")])
        .collect();
    assert_eq!(
        missing, expected,
        "functions Terraform has and fleetform lacks"
    );
    let extra: Vec<_> = names(&ours_sigs)
        .difference(&names(&theirs))
        .cloned()
        .collect();
    assert!(
        extra.is_empty(),
        "functions Terraform does not list: {extra:?}"
    );
    let differ: Vec<String> = theirs
        .iter()
        .filter(|(name, sig)| ours_sigs.get(*name).is_some_and(|o| o != *sig))
        .map(|(name, sig)| {
            format!(
                "{name}:\n  terraform: {sig}\n  fleetform: {}",
                ours_sigs[name]
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "signatures differ:\n{}",
        differ.join("\n")
    );
    println!(
        "{} function signatures agree with Terraform's",
        theirs.len()
    );
}

#[test]
fn a_function_fleetform_lacks_is_an_error_at_the_call() {
    let dir = tempfile::tempdir().unwrap();
    // A name no tool has stands for the MISSING ones: the same path.
    for name in MISSING.iter().copied().chain(["nosuchfunction"]) {
        let call = format!("{name}(1)");
        let out = fleetform(dir.path(), &["console"], Some(&format!("{call}\n")));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{call}: {stderr}");
        assert!(
            stderr.contains("Call to unknown function")
                && stderr.contains("on <console-input> line 1:")
                && stderr.contains(&format!("1: {call}")),
            "{call}: {stderr}"
        );
    }
}

#[test]
fn the_json_flag_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let out = fleetform(dir.path(), &["metadata", "functions"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let ours = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        ours.starts_with("The `fleetform metadata functions` command requires the `-json` flag."),
        "{ours}"
    );
    if let Some(tf) = terraform(dir.path(), &["metadata", "functions"]) {
        assert_eq!(tf.status.code(), Some(1));
        let plain = |s: &str| -> String {
            let mut out = String::new();
            let mut chars = s.chars();
            while let Some(c) = chars.next() {
                if c == '\u{1b}' {
                    chars.by_ref().find(|c| c.is_ascii_alphabetic());
                } else {
                    out.push(c);
                }
            }
            out.lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            plain(&String::from_utf8_lossy(&tf.stderr)).replace("terraform", "fleetform"),
            plain(&ours)
        );
    }
}
