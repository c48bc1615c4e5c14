//! Encryption at rest in embedded mode: with `FLEETFORM_ENCRYPTION_KEY`
//! no file under `.fleetform/` nor a saved plan holds a resource value in
//! clear; without the key, or with another one, commands fail with a
//! clear error and write nothing; a fallback key rotates; the enforced
//! mode refuses a plaintext state that the default mode adopts.

use fleetform_tests::CliRun;
use std::collections::BTreeMap;
use std::path::Path;

const SECRET: &str = "topsecret-value-7731";
const KEY_A: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const KEY_B: &str = "HxweHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgE=";

fn config(dir: &Path, input: &str) {
    std::fs::write(
        dir.join("main.tf"),
        format!(
            "resource \"terraform_data\" \"a\" {{\n  input = \"{input}\"\n}}\n\noutput \"o\" {{\n  value = terraform_data.a.output\n}}\n"
        ),
    )
    .unwrap();
}

/// Runs the CLI in `dir` with exactly these encryption variables.
fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> CliRun {
    const VARS: [&str; 8] = [
        "FLEETFORM_ENCRYPTION_KEY",
        "FLEETFORM_ENCRYPTION_KEY_FILE",
        "FLEETFORM_ENCRYPTION_PASSPHRASE",
        "FLEETFORM_ENCRYPTION_FALLBACK_KEY",
        "FLEETFORM_ENCRYPTION_FALLBACK_KEY_FILE",
        "FLEETFORM_ENCRYPTION_FALLBACK_PASSPHRASE",
        "FLEETFORM_ENCRYPTION_ENFORCED",
        "FLEETFORM_COORDINATOR",
    ];
    let mut cmd = std::process::Command::new(fleetform_tests::binary("fleetform"));
    cmd.arg(format!("-chdir={}", dir.display())).args(args);
    for v in VARS {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    fleetform_tests::bind_to_test_project(&mut cmd, args, &[]);
    let out = cmd.output().unwrap();
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every file under `dir` with its content.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Files fleetform wrote (not the configuration, which holds the value
/// as the user wrote it) that hold the value in clear.
fn holding_the_secret(dir: &Path) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|(p, _)| !p.ends_with(".tf"))
        .filter(|(_, bytes)| bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

/// The state's files, which a refused command must leave as they were
/// (the redb file may be rewritten by opening it; the state store not).
fn state_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files(&dir.join(".fleetform/state"))
}

#[test]
fn state_journal_and_plan_files_are_encrypted_and_keys_rotate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    config(dir, SECRET);
    let key_a = [("FLEETFORM_ENCRYPTION_KEY", KEY_A)];

    let r = run(dir, &key_a, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        r.stdout.contains(SECRET),
        "the output shows it: {}",
        r.stdout
    );
    let r = run(dir, &key_a, &["plan", "-out=saved.tfplan"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        holding_the_secret(dir).is_empty(),
        "files holding the value in clear: {:?}",
        holding_the_secret(dir)
    );
    // With the key, everything reads.
    let pulled = run(dir, &key_a, &["state", "pull"]);
    assert_eq!(pulled.code, 0, "{}", pulled.all_output());
    assert!(pulled.stdout.contains(SECRET));
    let shown = run(dir, &key_a, &["show", "-json", "saved.tfplan"]);
    assert_eq!(shown.code, 0, "{}", shown.all_output());

    // Without a key, or with another: a clear error, nothing written.
    let before = state_files(dir);
    for (env, says) in [
        (vec![], "no encryption key is set"),
        (
            vec![("FLEETFORM_ENCRYPTION_KEY", KEY_B)],
            "encrypted with a key this process does not have",
        ),
    ] {
        for args in [&["state", "pull"][..], &["apply", "-auto-approve"][..]] {
            let r = run(dir, &env, args);
            assert_eq!(r.code, 1, "{args:?}: {}", r.all_output());
            assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
            assert!(!r.stderr.contains("corrupted"), "{}", r.stderr);
        }
        let r = run(dir, &env, &["show", "-json", "saved.tfplan"]);
        assert_eq!(r.code, 1, "{}", r.all_output());
        assert!(r.stderr.contains(says), "{}", r.stderr);
        assert_eq!(state_files(dir), before, "nothing may be written");
    }

    // Rotation: B writes, A still reads; then B alone reads the new state.
    config(dir, "second-value-2");
    let rotate = [
        ("FLEETFORM_ENCRYPTION_KEY", KEY_B),
        ("FLEETFORM_ENCRYPTION_FALLBACK_KEY", KEY_A),
    ];
    let r = run(dir, &rotate, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let r = run(
        dir,
        &[("FLEETFORM_ENCRYPTION_KEY", KEY_B)],
        &["output", "o"],
    );
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(r.stdout.contains("second-value-2"), "{}", r.stdout);
}

#[test]
fn enforced_mode_refuses_plaintext_that_the_default_mode_adopts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    config(dir, SECRET);
    let r = run(dir, &[], &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        !holding_the_secret(dir).is_empty(),
        "plaintext without a key"
    );

    let enforced = [
        ("FLEETFORM_ENCRYPTION_KEY", KEY_A),
        ("FLEETFORM_ENCRYPTION_ENFORCED", "true"),
    ];
    let before = state_files(dir);
    let r = run(dir, &enforced, &["plan"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(r.stderr.contains("refuses plaintext"), "{}", r.stderr);
    assert_eq!(state_files(dir), before);

    // The default mode reads the plaintext state and writes encrypted.
    config(dir, "after-adoption-1");
    let key_a = [("FLEETFORM_ENCRYPTION_KEY", KEY_A)];
    let r = run(dir, &key_a, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let r = run(dir, &enforced, &["output", "o"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(r.stdout.contains("after-adoption-1"));

    // A passphrase works the same way (one derivation per process).
    let pass = [(
        "FLEETFORM_ENCRYPTION_PASSPHRASE",
        "correct horse battery staple",
    )];
    let other = tempfile::tempdir().unwrap();
    config(other.path(), SECRET);
    let r = run(other.path(), &pass, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(holding_the_secret(other.path()).is_empty());
    let r = run(other.path(), &pass, &["output", "o"]);
    assert!(r.stdout.contains(SECRET), "{}", r.all_output());
}
