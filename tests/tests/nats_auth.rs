//! A fleet on a NATS server that requires TLS and passwords, with the
//! subject permissions of `deploy/nats/accounts.conf`: coordinator and
//! worker connect with `--nats-user/--nats-password/--nats-tls-ca` and a
//! run applies; a worker with a wrong password or without the CA does not
//! start; the worker's credentials cannot publish tasks or delete streams;
//! the coordinator's may ask a worker about a task, and the worker answers.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_config, sim_objects};
use std::path::{Path, PathBuf};
use std::time::Duration;

const COORDINATOR_PASSWORD: &str = "coordinator-secret-1";
const WORKER_PASSWORD: &str = "worker-secret-2";

/// A CA and a server certificate for 127.0.0.1 signed by it, as PEM files
/// in `dir`: (ca, cert, key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "fleetform test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".into()]).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server-key.pem"),
    );
    std::fs::write(&paths.0, ca_cert.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

fn accounts_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("deploy/nats/accounts.conf")
}

fn nats_with_auth(dir: &Path) -> (Nats, PathBuf) {
    let (ca, cert, key) = certificates(dir);
    // nats-server reads an include relative to the configuration file.
    std::fs::copy(accounts_conf(), dir.join("accounts.conf")).unwrap();
    let config = format!(
        "tls {{\n  cert_file: {cert:?}\n  key_file: {key:?}\n}}\ninclude \"accounts.conf\"\n"
    );
    let nats = Nats::start_configured(
        dir,
        &config,
        &[
            ("FLEETFORM_COORDINATOR_PASSWORD", COORDINATOR_PASSWORD),
            ("FLEETFORM_WORKER_PASSWORD", WORKER_PASSWORD),
        ],
    )
    .unwrap();
    (nats, ca)
}

fn worker_args<'a>(ca: &'a str, password: &'a str) -> Vec<&'a str> {
    vec![
        "--nats-user",
        "worker",
        "--nats-password",
        password,
        "--nats-tls-ca",
        ca,
    ]
}

#[test]
fn a_fleet_runs_on_nats_with_tls_passwords_and_subject_permissions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (nats, ca) = nats_with_auth(dir);
    let ca = ca.to_str().unwrap().to_string();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start_full(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[
            "--nats-user",
            "coordinator",
            "--nats-password",
            COORDINATOR_PASSWORD,
            "--nats-tls-ca",
            &ca,
        ],
        &[],
    )
    .unwrap();
    let worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        8,
        &worker_args(&ca, WORKER_PASSWORD),
        "info",
    )
    .unwrap();

    let store = dir.join("sim-store");
    let config = sim_config(
        dir,
        "cfg",
        "resource \"sim_object\" \"a\" {\n  count = 20\n  name  = \"a-${count.index}\"\n}\n",
    );
    let out = fleetform(
        &[
            &format!("-chdir={}", config.display()),
            "apply",
            "-auto-approve",
            "-var",
            &format!("store={}", store.display()),
        ],
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    )
    .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{stderr}\ncoordinator:\n{}\nworker:\n{}",
        coordinator.proc.log_text(),
        worker.proc.log_text()
    );
    assert!(stdout.contains("Resources: 20 added"), "{stdout}");
    assert_eq!(sim_objects(&store), 20);
    // Its heartbeats pass the permissions too.
    let listed = fleetform(
        &["workers"],
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    )
    .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("w1 ") && listed.contains("refused"),
        "{listed}
worker:
{}",
        worker.proc.log_text()
    );

    // A wrong password, or no CA for the server's certificate: the worker
    // does not start, and says why.
    for (extra, why) in [
        (
            worker_args(&ca, "wrong-password"),
            "authorization violation",
        ),
        (
            vec!["--nats-user", "worker", "--nats-password", WORKER_PASSWORD],
            "certificate",
        ),
    ] {
        let out = std::process::Command::new(fleetform_tests::binary("fleetform-worker"))
            .args(["--nats", &nats.url, "--id", "bad"])
            .args(&extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(why), "expected {why:?} in:\n{err}");
    }

    // The worker's credentials: no tasks published, no stream deleted.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let auth = fleetform_nats::NatsAuth {
            nats_user: Some("worker".into()),
            nats_password: Some(WORKER_PASSWORD.into()),
            nats_tls_ca: Some(ca.clone().into()),
            ..Default::default()
        };
        let client = fleetform_nats::connect(&nats.url, &auth, "intruder")
            .await
            .unwrap();
        let mut js = async_nats::jetstream::new(client);
        js.set_timeout(Duration::from_secs(2));
        let published = match js.publish("fleetform.task.default", "forged".into()).await {
            Ok(ack) => ack.await.map(|_| ()).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        assert!(published.is_err(), "a worker published a task");
        let deleted = js.delete_stream("FLEETFORM_TASKS").await;
        assert!(deleted.is_err(), "a worker deleted the task stream");

        // The coordinator's credentials see the stream still there.
        let auth = fleetform_nats::NatsAuth {
            nats_user: Some("coordinator".into()),
            nats_password: Some(COORDINATOR_PASSWORD.into()),
            nats_tls_ca: Some(ca.clone().into()),
            ..Default::default()
        };
        let client = fleetform_nats::connect(&nats.url, &auth, "check")
            .await
            .unwrap();
        let js = async_nats::jetstream::new(client.clone());
        assert!(js.get_stream("FLEETFORM_TASKS").await.is_ok());

        // ...and may ask a worker about a task, which may answer.
        let ask = fleetform_shared::wire::TaskStatusRequest {
            run_id: "r".into(),
            task_id: "r:apply:nothing".into(),
            incarnation: String::new(),
        };
        let answer = tokio::time::timeout(
            Duration::from_secs(5),
            client.request(
                fleetform_shared::wire::nats::task_status_subject("w1"),
                rmp_serde::to_vec_named(&ask).unwrap().into(),
            ),
        )
        .await
        .expect("the worker answers in time")
        .expect("the worker answers");
        let status: fleetform_shared::wire::TaskStatus =
            rmp_serde::from_slice(&answer.payload).unwrap();
        assert_eq!(status, fleetform_shared::wire::TaskStatus::Unknown);
    });
}
