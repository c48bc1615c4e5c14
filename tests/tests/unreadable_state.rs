//! A Terraform state that may hold objects but cannot be read (its S3
//! backend cannot be reached or has no such bucket, its file is not a
//! state) stops plan, apply, destroy and `init -migrate-state` before
//! anything is planned: planning from an empty state instead would create
//! every object of that state again.

use fleetform_tests::{CliRun, S3, fleetform_in, free_port, run_in, sim_config, sim_objects};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

const ONE: &str = r#"
resource "sim_object" "a" {
  name = "a"
}
"#;

fn s3_backend(bucket: &str, endpoint: &str) -> String {
    format!(
        "terraform {{\n  backend \"s3\" {{\n    bucket         = \"{bucket}\"\n    key            = \"team/app.tfstate\"\n    region         = \"us-east-1\"\n    endpoint       = \"{endpoint}\"\n    use_path_style = true\n  }}\n}}\n"
    )
}

/// Runs `fleetform ARGS` in `dir` with `env`, failing the test when it
/// takes longer than `within`.
fn run_env(dir: &Path, args: &[&str], env: &[(&str, String)], within: Duration) -> CliRun {
    let mut all = vec![format!("-chdir={}", dir.display())];
    all.extend(args.iter().map(|a| a.to_string()));
    let start = Instant::now();
    let out = fleetform_tests::fleetform(&all.iter().map(String::as_str).collect::<Vec<_>>(), env)
        .expect("run fleetform");
    assert!(
        start.elapsed() < within,
        "{args:?} took {:?}",
        start.elapsed()
    );
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every command that plans, and the migration, stops with `said` in its
/// error; nothing is created and fleetform's state stays empty.
fn every_run_stops(dir: &Path, store: &Path, env: &[(&str, String)], said: &[&str]) {
    let var = format!("store={}", store.display());
    for args in [
        vec!["plan", "-var", &var],
        vec!["plan", "-detailed-exitcode", "-var", &var],
        vec!["apply", "-auto-approve", "-var", &var],
        vec!["destroy", "-auto-approve", "-var", &var],
        vec!["init", "-migrate-state"],
    ] {
        let out = run_env(dir, &args, env, Duration::from_secs(30));
        assert_eq!(out.code, 1, "{args:?}: {}", out.all_output());
        assert!(
            out.stderr
                .contains("Error: Cannot read the Terraform state"),
            "{args:?}: {}",
            out.stderr
        );
        for s in said {
            assert!(
                out.stderr.contains(s),
                "{args:?}: no {s:?} in {}",
                out.stderr
            );
        }
        assert!(
            !out.stdout.contains("will be created"),
            "{args:?} planned: {}",
            out.stdout
        );
    }
    assert_eq!(sim_objects(store), 0, "nothing created");
    let listed = run_env(dir, &["state", "list"], env, Duration::from_secs(60));
    assert_eq!(listed.code, 0, "{}", listed.all_output());
    assert_eq!(listed.stdout, "", "fleetform's state has no objects");
}

/// The environment of a user whose credentials are set (so that the
/// client does not look for an instance's).
fn credentials() -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
    ]
}

#[test]
fn an_s3_backend_that_cannot_be_reached_stops_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    // Nothing listens there: the port was free a moment ago.
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let dir = sim_config(
        tmp.path(),
        "c",
        &format!("{}{ONE}", s3_backend("team-states", &endpoint)),
    );
    every_run_stops(
        &dir,
        &tmp.path().join("sim-store"),
        &credentials(),
        &[
            "s3://team-states/team/app.tfstate",
            &format!("(endpoint {endpoint})"),
            "Connection refused",
            "AWS_ALLOW_HTTP",
            "remove the backend block",
        ],
    );
}

/// A partial backend block (the rest given to `terraform init
/// -backend-config`) does not say where the state is.
#[test]
fn a_partial_s3_backend_block_stops_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let partial = "terraform {\n  backend \"s3\" {}\n}\n";
    let dir = sim_config(tmp.path(), "c", &format!("{partial}{ONE}"));
    every_run_stops(
        &dir,
        &tmp.path().join("sim-store"),
        &credentials(),
        &["bucket and key are not both given", "init -migrate-state"],
    );
}

/// A 404 that is not S3's answer for a missing key (a web server, a
/// proxy) is no "no state" either.
#[test]
fn an_endpoint_that_is_not_s3_stops_every_run() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request);
            let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let dir = sim_config(
        tmp.path(),
        "c",
        &format!("{}{ONE}", s3_backend("team-states", &endpoint)),
    );
    every_run_stops(
        &dir,
        &tmp.path().join("sim-store"),
        &credentials(),
        &["404 Not Found", "is the endpoint an S3 server?"],
    );
}

/// A bucket that does not exist is no "no state": S3 answers 404 for it
/// as for a missing key. A missing key in a bucket that exists is.
#[test]
fn an_s3_backend_without_its_bucket_stops_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let s3 = S3::start(tmp.path()).unwrap();
    let store = tmp.path().join("sim-store");
    let dir = sim_config(
        tmp.path(),
        "missing-bucket",
        &format!("{}{ONE}", s3_backend("no-such-bucket", &s3.endpoint)),
    );
    every_run_stops(
        &dir,
        &store,
        &credentials(),
        &[
            "s3://no-such-bucket/team/app.tfstate",
            "the bucket no-such-bucket does not exist",
            "Create the bucket",
        ],
    );

    let dir = sim_config(
        tmp.path(),
        "no-state-yet",
        &format!("{}{ONE}", s3_backend(&s3.bucket, &s3.endpoint)),
    );
    let var = format!("store={}", store.display());
    let out = run_env(
        &dir,
        &["apply", "-auto-approve", "-var", &var],
        &credentials(),
        Duration::from_secs(120),
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert_eq!(sim_objects(&store), 1);
}

/// A `terraform.tfstate` (or the file a `backend "local"` block names)
/// that is there but is not a state fleetform can read stops every run;
/// an empty one is no state, as for Terraform; once fleetform has a state
/// of its own, the file is not read.
#[test]
fn a_terraform_state_file_that_cannot_be_read_stops_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("sim-store");
    let local_backend =
        "terraform {\n  backend \"local\" {\n    path = \"states/main.tfstate\"\n  }\n}\n";
    for (name, backend, file, text, said) in [
        (
            "not-json",
            "",
            "terraform.tfstate",
            "{\"version\": 4, \"resources\": [",
            "not JSON",
        ),
        (
            "version-3",
            "",
            "terraform.tfstate",
            "{\"version\": 3, \"serial\": 7, \"modules\": []}",
            "its format version is 3",
        ),
        (
            "local-backend",
            local_backend,
            "states/main.tfstate",
            "not a state",
            "not JSON",
        ),
    ] {
        let dir = sim_config(tmp.path(), name, &format!("{backend}{ONE}"));
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        every_run_stops(&dir, &store, &[], &[file, said]);
    }

    // A directory where the file should be cannot be read either.
    let dir = sim_config(tmp.path(), "directory", ONE);
    std::fs::create_dir(dir.join("terraform.tfstate")).unwrap();
    every_run_stops(&dir, &store, &[], &["terraform.tfstate", "Is a directory"]);

    let dir = sim_config(tmp.path(), "empty", ONE);
    std::fs::write(dir.join("terraform.tfstate"), "").unwrap();
    let var = format!("store={}", store.display());
    let out = run_in(&dir, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(
        out.code,
        0,
        "an empty file is no state: {}",
        out.all_output()
    );
    assert_eq!(sim_objects(&store), 1);
    std::fs::write(dir.join("terraform.tfstate"), "not a state").unwrap();
    let out = fleetform_in(
        &dir,
        &["plan", "-detailed-exitcode", "-var", &var].map(String::from),
        Duration::from_secs(120),
    )
    .unwrap();
    assert_eq!(
        out.code,
        0,
        "fleetform manages the workspace now: {}",
        out.all_output()
    );
}
