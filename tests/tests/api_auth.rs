//! The coordinator's API protection with real processes: bearer tokens
//! over TLS with roles and workspace globs (`--auth-token-file`,
//! `--tls-cert/--tls-key`), client certificates (`--client-ca`, mutual
//! TLS, `cert:NAME` grants), and the rule that an unauthenticated API is
//! served on loopback only unless `--insecure`. Certificates come from
//! rcgen: a CA, a server certificate for 127.0.0.1/localhost and client
//! certificates, all written as PEM files to a temporary directory.
//! Real nats-server, moto S3, coordinator, worker and CLI.

use fleetform_tests::{
    CliRun, Coordinator, Nats, S3, Worker, binary, sim_config, sim_store_objects,
};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Two objects; `n` lets a test ask for a change that would add one.
const RESOURCES: &str = r#"
variable "n" {
  type    = number
  default = 2
}

resource "sim_object" "x" {
  count = var.n
  name  = "x-${count.index}"
}
"#;

const READ: &str = "READTOKEN-0123456789abcdef";
const PLAN: &str = "PLANTOKEN-0123456789abcdef";
const APPLY: &str = "APPLYTOKEN-0123456789abcdef";
const ADMIN: &str = "ADMINTOKEN-0123456789abcdef";

/// Every variable the CLI reads its coordinator and credentials from: a
/// test sets those it means, none leaks in from the environment.
const CLI_VARS: &[&str] = &[
    "FLEETFORM_COORDINATOR",
    "FLEETFORM_TOKEN",
    "FLEETFORM_CA_CERT",
    "FLEETFORM_CLIENT_CERT",
    "FLEETFORM_CLIENT_KEY",
    "FLEETFORM_WORKSPACE",
    "TF_WORKSPACE",
];

/// The PEM files of a test PKI.
struct Pki {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    /// CN `ci-runner`.
    client_cert: PathBuf,
    client_key: PathBuf,
    /// CN `intruder`, signed by the same CA but granted nothing.
    intruder_cert: PathBuf,
    intruder_key: PathBuf,
}

/// A CA, a server certificate for 127.0.0.1 and localhost, and client
/// certificates `ci-runner` and `intruder`, as PEM files in `dir/pki`.
fn pki(dir: &Path) -> Pki {
    let out = dir.join("pki");
    std::fs::create_dir_all(&out).unwrap();
    let write = |name: &str, text: String| {
        let p = out.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "fleetform test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let ca = write("ca.pem", ca_cert.pem());
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |sans: &[&str], cn: &str, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().unwrap();
        let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &issuer).unwrap();
        (
            write(&format!("{cn}.pem"), cert.pem()),
            write(&format!("{cn}-key.pem"), key.serialize_pem()),
        )
    };
    let (server_cert, server_key) = leaf(
        &["127.0.0.1", "localhost"],
        "coordinator",
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (client_cert, client_key) = leaf(&[], "ci-runner", ExtendedKeyUsagePurpose::ClientAuth);
    let (intruder_cert, intruder_key) = leaf(&[], "intruder", ExtendedKeyUsagePurpose::ClientAuth);
    Pki {
        ca,
        server_cert,
        server_key,
        client_cert,
        client_key,
        intruder_cert,
        intruder_key,
    }
}

/// Runs `fleetform -chdir=DIR ARGS...` with exactly the credentials in
/// `envs`, killed after 60 s so that a hang fails the test.
fn cli(dir: &Path, args: &[&str], envs: &[(&str, String)]) -> CliRun {
    cli_typed(dir, args, envs, "")
}

/// [`cli`] with `input` on standard input.
fn cli_typed(dir: &Path, args: &[&str], envs: &[(&str, String)], input: &str) -> CliRun {
    let mut cmd = Command::new(binary("fleetform"));
    cmd.arg(format!("-chdir={}", dir.display()))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in CLI_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
    fleetform_tests::bind_to_test_project(&mut cmd, args, envs);
    let mut child = cmd.spawn().expect("start fleetform");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped stdin");
        // A command that reads nothing may be gone before this is written.
        let _ = stdin.write_all(input.as_bytes());
    }
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => {
            let out = out.expect("wait for fleetform");
            CliRun {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        }
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("fleetform {args:?} did not finish within 60s (hung?)")
        }
    }
}

/// Asserts a failure whose whole stderr is one line starting `prefix`.
fn one_line_error(run: &CliRun, prefix: &str) {
    assert_eq!(run.code, 1, "{}", run.all_output());
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one error line, got:\n{}",
        run.stderr
    );
    assert!(lines[0].starts_with(prefix), "{}", run.stderr);
}

/// A fleet whose coordinator serves the API over TLS with `extra` flags.
struct Fleet {
    config: PathBuf,
    store: PathBuf,
    pki: Pki,
    /// `https://127.0.0.1:PORT`.
    url: String,
    coordinator: Coordinator,
    _rest: (Nats, S3, Worker),
    /// Last, so that the processes stop before their directory goes.
    tmp: tempfile::TempDir,
}

impl Fleet {
    /// `flags` gets the PKI's paths and returns the coordinator's extra
    /// arguments beyond --tls-cert/--tls-key.
    fn start(grants: &str, flags: impl Fn(&Pki) -> Vec<String>) -> Fleet {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let pki = pki(dir);
        let config = sim_config(dir, "config", RESOURCES);
        let grants_file = dir.join("grants");
        std::fs::write(&grants_file, grants).unwrap();
        let mut extra = vec![
            "--tls-cert".to_string(),
            pki.server_cert.display().to_string(),
            "--tls-key".to_string(),
            pki.server_key.display().to_string(),
            "--auth-token-file".to_string(),
            grants_file.display().to_string(),
        ];
        extra.extend(flags(&pki));
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let nats = Nats::start(dir).unwrap();
        let s3 = S3::start(dir).unwrap();
        let coordinator =
            Coordinator::start_full(dir, &nats, &s3, "127.0.0.1:0", "coordinator", &extra, &[])
                .unwrap();
        let url = coordinator.url.replacen("http://", "https://", 1);
        let worker = Worker::start(dir, &nats, "w1", 4).unwrap();
        Fleet {
            store: dir.join("sim-store"),
            tmp,
            config,
            pki,
            url,
            coordinator,
            _rest: (nats, s3, worker),
        }
    }

    /// Coordinator URL and CA, plus `token` if any.
    fn env(&self, token: Option<&str>) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("FLEETFORM_COORDINATOR", self.url.clone()),
            ("FLEETFORM_CA_CERT", self.pki.ca.display().to_string()),
        ];
        if let Some(t) = token {
            env.push(("FLEETFORM_TOKEN", t.to_string()));
        }
        env
    }

    fn store_var(&self) -> String {
        format!("store={}", self.store.display())
    }

    /// `fleetform ARGS` in the configuration's directory.
    fn run(&self, args: &[&str], envs: &[(&str, String)]) -> CliRun {
        cli(&self.config, args, envs)
    }

    /// Fails, with the coordinator's log, unless `state list` with `env`
    /// succeeds: the coordinator prints its address before it sets TLS up.
    fn expect_serving(&self, env: &[(&str, String)]) {
        let out = self.run(&["state", "list"], env);
        if out.code != 0 {
            let log = self.coordinator.proc.log_text();
            // Without the backtrace's frames.
            let frame = |l: &str| {
                let l = l.trim_start();
                l.starts_with("at ")
                    || l.split_once(": ")
                        .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            };
            let log: Vec<&str> = log.lines().filter(|l| !frame(l)).collect();
            panic!(
                "the coordinator does not serve: {}\ncoordinator log:\n{}",
                out.all_output(),
                log.join("\n")
            );
        }
    }

    /// `state list` as the admin sees it.
    fn state_list(&self) -> String {
        let out = self.run(&["state", "list"], &self.env(Some(ADMIN)));
        assert_eq!(out.code, 0, "{}", out.all_output());
        out.stdout
    }
}

#[test]
fn tokens_over_tls_are_checked_for_role_and_workspace() {
    let grants = format!(
        "# TOKEN ROLE WORKSPACE-GLOB\n{READ} read *\n{PLAN} plan tests/dev-*\n{APPLY} apply *\n{ADMIN} admin *\n"
    );
    let f = Fleet::start(&grants, |_| Vec::new());
    let store_var = f.store_var();

    f.expect_serving(&f.env(Some(READ)));

    // No token, a wrong token: not authenticated, one line, exit 1.
    let none = f.run(&["state", "list"], &f.env(None));
    one_line_error(&none, "Error: not authenticated: ");
    assert!(none.stderr.contains("FLEETFORM_TOKEN"), "{}", none.stderr);
    let wrong = f.run(
        &["state", "list"],
        &f.env(Some("WRONGTOKEN-0123456789abcdef")),
    );
    one_line_error(&wrong, "Error: not authenticated: ");
    assert!(
        wrong.stderr.contains("the token is not valid"),
        "{}",
        wrong.stderr
    );
    let refused_apply = f.run(
        &["apply", "-auto-approve", "-var", &store_var],
        &f.env(None),
    );
    one_line_error(&refused_apply, "Error: not authenticated: ");
    assert!(sim_store_objects(&f.store).is_empty());

    // The apply token applies.
    let applied = f.run(
        &["apply", "-auto-approve", "-var", &store_var],
        &f.env(Some(APPLY)),
    );
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    assert!(
        applied
            .stdout
            .contains("Apply complete! Resources: 2 added"),
        "{}",
        applied.stdout
    );
    let objects = sim_store_objects(&f.store);
    assert_eq!(objects.len(), 2, "{objects:?}");
    let listed = f.state_list();
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        ["sim_object.x[0]", "sim_object.x[1]"]
    );

    // The read token reads...
    let read_list = f.run(&["state", "list"], &f.env(Some(READ)));
    assert_eq!(read_list.code, 0, "{}", read_list.all_output());
    assert_eq!(read_list.stdout, listed);
    let pulled = f.run(&["state", "pull"], &f.env(Some(READ)));
    assert_eq!(pulled.code, 0, "{}", pulled.all_output());
    assert!(
        pulled.stdout.contains("\"sim_object\"") && pulled.stdout.contains("\"serial\""),
        "{}",
        pulled.stdout
    );
    // ...but may not apply (here a change that would add a third object).
    let denied = f.run(
        &["apply", "-auto-approve", "-var", &store_var, "-var", "n=3"],
        &f.env(Some(READ)),
    );
    one_line_error(&denied, "Error: permission denied: ");
    assert!(
        denied
            .stderr
            .contains("needs the apply role on workspace \"tests/default\""),
        "{}",
        denied.stderr
    );
    assert_eq!(f.state_list(), listed);
    assert_eq!(sim_store_objects(&f.store), objects);

    // The plan token plans on dev-* only. The workspace is made by the
    // apply token, in a directory of its own (`workspace new` selects it).
    let elsewhere = f.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let made = cli(
        &elsewhere,
        &["workspace", "new", "dev-1"],
        &f.env(Some(APPLY)),
    );
    assert_eq!(made.code, 0, "{}", made.all_output());
    let mut on_dev = f.env(Some(PLAN));
    on_dev.push(("FLEETFORM_WORKSPACE", "dev-1".to_string()));
    let planned = f.run(&["plan", "-var", &store_var], &on_dev);
    assert_eq!(planned.code, 0, "{}", planned.all_output());
    assert!(
        planned
            .stdout
            .contains("Plan: 2 to add, 0 to change, 0 to destroy"),
        "{}",
        planned.stdout
    );
    let plan_default = f.run(&["plan", "-var", &store_var], &f.env(Some(PLAN)));
    one_line_error(&plan_default, "Error: permission denied: ");
    assert!(
        plan_default
            .stderr
            .contains("needs the plan role on workspace \"tests/default\""),
        "{}",
        plan_default.stderr
    );
    let apply_dev = f.run(&["apply", "-auto-approve", "-var", &store_var], &on_dev);
    one_line_error(&apply_dev, "Error: permission denied: ");
    assert!(
        apply_dev
            .stderr
            .contains("needs the apply role on workspace \"tests/dev-1\""),
        "{}",
        apply_dev.stderr
    );
    // Listings hold only the workspaces the token may read: the read
    // token sees both, the plan token dev-1 alone.
    let listing = |env: &[(&str, String)]| {
        let out = f.run(&["workspace", "list"], env);
        assert_eq!(out.code, 0, "{}", out.all_output());
        out.stdout
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(listing(&f.env(Some(READ))), ["*", "default", "dev-1"]);
    assert_eq!(listing(&on_dev), ["*", "dev-1"]);
    assert_eq!(
        sim_store_objects(&f.store),
        objects,
        "a plan changed objects"
    );

    // force-unlock needs admin: the apply token is told so; the admin
    // gets past the check to the lock that does not exist.
    let unlock = ["force-unlock", "-force", "no-such-lock-id"];
    let by_apply = f.run(&unlock, &f.env(Some(APPLY)));
    assert_eq!(by_apply.code, 1, "{}", by_apply.all_output());
    assert!(
        by_apply
            .stderr
            .contains("needs the admin role on workspace \"tests/default\""),
        "{}",
        by_apply.stderr
    );
    // One line, in the form every command uses for a refusal.
    assert_eq!(
        by_apply.stderr.trim().lines().count(),
        1,
        "{}",
        by_apply.stderr
    );
    assert!(
        by_apply.stderr.starts_with("Error: permission denied: "),
        "{}",
        by_apply.stderr
    );
    assert!(
        !by_apply.stderr.contains("no lock with id"),
        "{}",
        by_apply.stderr
    );
    let by_admin = f.run(&unlock, &f.env(Some(ADMIN)));
    assert_eq!(by_admin.code, 1, "{}", by_admin.all_output());
    assert!(
        by_admin
            .stderr
            .contains("has no lock with id no-such-lock-id"),
        "{}",
        by_admin.stderr
    );
    assert!(
        !by_admin.stderr.contains("role"),
        "admin was denied: {}",
        by_admin.stderr
    );

    // state push needs admin too.
    let pushed_file = f.tmp.path().join("pulled.tfstate");
    std::fs::write(&pushed_file, &pulled.stdout).unwrap();
    let pushed_arg = pushed_file.display().to_string();
    let history = |who| {
        let h = f.run(&["state", "history"], &f.env(Some(who)));
        assert_eq!(h.code, 0, "{}", h.all_output());
        h.stdout.lines().count()
    };
    let snapshots = history(READ);
    let push_by_apply = f.run(&["state", "push", &pushed_arg], &f.env(Some(APPLY)));
    assert_eq!(push_by_apply.code, 1, "{}", push_by_apply.all_output());
    assert!(
        push_by_apply
            .all_output()
            .contains("needs the admin role on workspace \"tests/default\""),
        "{}",
        push_by_apply.all_output()
    );
    assert!(
        push_by_apply
            .stderr
            .starts_with("Error: permission denied: "),
        "{}",
        push_by_apply.stderr
    );
    assert_eq!(history(READ), snapshots, "a denied push wrote a snapshot");
    let push_by_admin = f.run(&["state", "push", &pushed_arg], &f.env(Some(ADMIN)));
    assert_eq!(push_by_admin.code, 0, "{}", push_by_admin.all_output());
    assert!(
        push_by_admin
            .stdout
            .contains("Pushed 2 resource instance(s) into workspace \"tests/default\""),
        "{}",
        push_by_admin.stdout
    );
    assert_eq!(history(READ), snapshots + 1);

    // Without the CA the coordinator's certificate is not trusted: a
    // prompt error about it (cli() fails the test after 60 s).
    let started = Instant::now();
    let mut no_ca = f.env(Some(ADMIN));
    no_ca.retain(|(k, _)| *k != "FLEETFORM_CA_CERT");
    let untrusted = f.run(&["state", "list"], &no_ca);
    assert_eq!(untrusted.code, 1, "{}", untrusted.all_output());
    let said = untrusted.stderr.to_lowercase();
    assert!(
        said.contains("certificate")
            && (said.contains("unknownissuer") || said.contains("unknown issuer")),
        "{}",
        untrusted.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    let log = f.coordinator.proc.log_text();
    assert!(
        !log.contains(READ) && !log.contains(ADMIN),
        "a token in the log:\n{log}"
    );
}

/// A fleet whose coordinator requires client certificates from the test
/// CA (`--client-ca`) and grants `ci-runner` the apply role, no tokens;
/// its live view on the port returned.
fn mtls_fleet() -> (Fleet, u16) {
    let ui = fleetform_tests::free_port();
    let fleet = Fleet::start("cert:ci-runner apply *\n", |pki| {
        vec![
            "--client-ca".to_string(),
            pki.ca.display().to_string(),
            "--ui-listen".to_string(),
            format!("127.0.0.1:{ui}"),
        ]
    });
    (fleet, ui)
}

/// `curl` of the live view at `path` over TLS with the test CA and an
/// optional client certificate: (HTTP status, body).
fn ui_get(f: &Fleet, port: u16, path: &str, cert: Option<(&Path, &Path)>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-w", "\n%{http_code}", "--cacert"])
        .arg(&f.pki.ca)
        .arg(format!("https://127.0.0.1:{port}{path}"));
    if let Some((c, k)) = cert {
        cmd.arg("--cert").arg(c).arg("--key").arg(k);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// The fleet's environment with a client certificate and no token.
fn with_cert(f: &Fleet, cert: &Path, key: &Path) -> Vec<(&'static str, String)> {
    let mut env = f.env(None);
    env.push(("FLEETFORM_CLIENT_CERT", cert.display().to_string()));
    env.push(("FLEETFORM_CLIENT_KEY", key.display().to_string()));
    env
}

#[test]
fn client_certificates_authenticate_with_mutual_tls() {
    let (f, ui) = mtls_fleet();
    let store_var = f.store_var();
    let runner = with_cert(&f, &f.pki.client_cert, &f.pki.client_key);
    f.expect_serving(&runner);

    let applied = f.run(&["apply", "-auto-approve", "-var", &store_var], &runner);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    assert!(
        applied
            .stdout
            .contains("Apply complete! Resources: 2 added"),
        "{}",
        applied.stdout
    );
    assert_eq!(sim_store_objects(&f.store).len(), 2);
    let listed = f.run(&["state", "list"], &runner);
    assert_eq!(listed.code, 0, "{}", listed.all_output());
    assert_eq!(
        listed.stdout.lines().collect::<Vec<_>>(),
        ["sim_object.x[0]", "sim_object.x[1]"]
    );

    // The certificate's grant is apply: admin operations are denied, by name.
    let unlock = f.run(&["force-unlock", "-force", "some-lock-id"], &runner);
    assert_eq!(unlock.code, 1, "{}", unlock.all_output());
    assert!(
        unlock.stderr.contains(
            "cert:ci-runner may not do this: it needs the admin role on workspace \"tests/default\""
        ),
        "{}",
        unlock.stderr
    );

    // A certificate from the same CA whose name has no grant.
    let intruder = with_cert(&f, &f.pki.intruder_cert, &f.pki.intruder_key);
    let stranger = f.run(
        &["apply", "-auto-approve", "-var", &store_var, "-var", "n=3"],
        &intruder,
    );
    one_line_error(&stranger, "Error: not authenticated: ");
    assert!(
        stranger
            .stderr
            .contains("the client certificate \"intruder\" is not granted anything"),
        "{}",
        stranger.stderr
    );

    // Neither a certificate nor a token: refused, promptly.
    let started = Instant::now();
    let anonymous = f.run(
        &["apply", "-auto-approve", "-var", &store_var, "-var", "n=3"],
        &f.env(None),
    );
    assert_eq!(anonymous.code, 1, "{}", anonymous.all_output());
    assert!(
        anonymous.stderr.starts_with("Error: "),
        "{}",
        anonymous.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(sim_store_objects(&f.store).len(), 2);
    assert_eq!(
        f.run(&["state", "list"], &runner).stdout,
        listed.stdout,
        "a refused apply changed the state"
    );

    // The live view: the same TLS certificate and the same grants.
    let granted = Some((f.pki.client_cert.as_path(), f.pki.client_key.as_path()));
    let (code, body) = ui_get(&f, ui, "/api/runs", granted);
    assert_eq!(code, 200, "{body}");
    let runs: serde_json::Value = serde_json::from_str(&body).unwrap();
    let applied_run = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "apply" && r["status"] == "succeeded")
        .unwrap_or_else(|| panic!("{runs}"));
    let id = applied_run["run_id"].as_str().unwrap();
    let (code, body) = ui_get(&f, ui, &format!("/api/runs/{id}"), granted);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"done\":2"), "{body}");
    let (code, body) = ui_get(&f, ui, "/", granted);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("<table id=\"runs\">"), "{body}");
    let stranger = Some((f.pki.intruder_cert.as_path(), f.pki.intruder_key.as_path()));
    let (code, body) = ui_get(&f, ui, "/api/runs", stranger);
    assert_eq!(code, 401, "{body}");
    assert!(
        body.contains("\"intruder\" is not granted anything"),
        "{body}"
    );
    let (code, body) = ui_get(&f, ui, "/api/runs", None);
    assert_eq!(code, 401, "{body}");
    let (code, _) = ui_get(&f, ui, "/", None);
    assert_eq!(code, 303, "sent to sign in");
}

/// The coordinator asks for a client certificate in the TLS handshake;
/// a CLI without one (and without a token) must be told what it lacks,
/// not just that the transport failed.
#[test]
fn without_a_client_certificate_the_error_says_one_is_needed() {
    let (f, _) = mtls_fleet();
    f.expect_serving(&with_cert(&f, &f.pki.client_cert, &f.pki.client_key));
    let anonymous = f.run(&["state", "list"], &f.env(None));
    assert_eq!(anonymous.code, 1, "{}", anonymous.all_output());
    let lines: Vec<&str> = anonymous.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", anonymous.stderr);
    assert!(lines[0].starts_with("Error: "), "{}", anonymous.stderr);
    // "certificate", or the variables that give one.
    let said = anonymous.stderr.to_lowercase();
    assert!(
        said.contains("certificate") || said.contains("fleetform_client_cert"),
        "the error does not say that a client certificate is needed:\n{}",
        anonymous.stderr
    );
}

/// A coordinator process with a file:// state in `dir`; its stdout lines
/// come on the receiver, its stderr goes to `dir/NAME.log`.
struct Served {
    child: Child,
    lines: mpsc::Receiver<String>,
    log: PathBuf,
}

impl Served {
    fn start(dir: &Path, name: &str, nats: &str, args: &[&str]) -> Served {
        let log = dir.join(format!("{name}.log"));
        let mut child = Command::new(binary("fleetform-coordinator"))
            .args(args)
            .args(["--nats", nats])
            .arg("--state")
            .arg(format!(
                "file://{}",
                dir.join(format!("{name}-state")).display()
            ))
            .arg("--data-dir")
            .arg(dir.join(format!("{name}-data")))
            .args(["--name", name])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start fleetform-coordinator");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Served { child, lines, log }
    }

    /// The address of the `listening on ADDR` line, or None when stdout
    /// ended (the process exited) or 30 s passed first.
    fn listening(&self) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            if let Some(addr) = line.strip_prefix("listening on ") {
                return Some(addr.trim().to_string());
            }
        }
    }

    /// The exit code, waiting up to `timeout`; None if still running.
    fn exit_within(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_api_without_authentication_is_served_on_loopback_only_unless_insecure() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let config = sim_config(dir, "config", RESOURCES);

    // Reachable from other hosts and no credentials: refused at once.
    let mut refused = Served::start(dir, "refused", &nats.url, &["--listen", "0.0.0.0:0"]);
    let code = refused.exit_within(Duration::from_secs(10));
    assert!(
        code.is_some_and(|c| c != 0),
        "exit {code:?}; stderr:\n{}",
        refused.stderr()
    );
    assert!(
        refused
            .stderr()
            .contains("refusing to serve the API on 0.0.0.0:"),
        "{}",
        refused.stderr()
    );
    assert_eq!(refused.listening(), None, "it listened after all");

    // --client-ca needs an auth file (and TLS): refused as a usage error.
    let mut half = Served::start(
        dir,
        "half",
        &nats.url,
        &[
            "--listen",
            "127.0.0.1:0",
            "--client-ca",
            "/nonexistent/ca.pem",
        ],
    );
    let code = half.exit_within(Duration::from_secs(10));
    assert!(code.is_some_and(|c| c != 0), "exit {code:?}");
    assert!(
        half.stderr().contains("--auth-token-file"),
        "{}",
        half.stderr()
    );

    // With --insecure it serves, with a warning, and needs no token.
    let insecure = Served::start(
        dir,
        "insecure",
        &nats.url,
        &["--listen", "0.0.0.0:0", "--insecure"],
    );
    let addr = insecure
        .listening()
        .unwrap_or_else(|| panic!("no listening line; stderr:\n{}", insecure.stderr()));
    assert!(addr.starts_with("0.0.0.0:"), "{addr}");
    let stderr = insecure.stderr();
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("WARNING"))
        .unwrap_or_else(|| panic!("no WARNING line:\n{stderr}"));
    assert!(
        warning.contains("without authentication") && warning.contains("--insecure"),
        "{warning}"
    );
    let port = addr.rsplit(':').next().unwrap();
    let open = cli(
        &config,
        &["state", "list"],
        &[("FLEETFORM_COORDINATOR", format!("http://127.0.0.1:{port}"))],
    );
    assert_eq!(open.code, 0, "{}", open.all_output());

    // Loopback without an auth file: served, and said to be loopback only.
    let local = Served::start(dir, "local", &nats.url, &["--listen", "127.0.0.1:0"]);
    let addr = local
        .listening()
        .unwrap_or_else(|| panic!("no listening line; stderr:\n{}", local.stderr()));
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let stderr = local.stderr();
    assert!(stderr.contains("listening on loopback"), "{stderr}");
    assert!(!stderr.contains("WARNING"), "{stderr}");

    // Tokens on a reachable address without TLS: served, with a warning
    // that they travel in clear text.
    let grants = dir.join("grants");
    std::fs::write(&grants, format!("{ADMIN} admin *\n")).unwrap();
    let grants = grants.display().to_string();
    let clear = Served::start(
        dir,
        "clear",
        &nats.url,
        &["--listen", "0.0.0.0:0", "--auth-token-file", &grants],
    );
    assert!(clear.listening().is_some(), "stderr:\n{}", clear.stderr());
    assert!(
        clear
            .stderr()
            .contains("WARNING: API tokens travel in clear text"),
        "{}",
        clear.stderr()
    );
}

/// `fleetform login` stores a token only once the coordinator accepted it,
/// in Terraform's credentials file (owner-only), and later commands use it
/// without FLEETFORM_TOKEN; `logout` removes it.
#[test]
fn login_stores_an_accepted_token_that_later_commands_use() {
    let grants = format!("{READ} read *\n{ADMIN} admin *\n");
    let f = Fleet::start(&grants, |_| Vec::new());
    f.expect_serving(&f.env(Some(READ)));
    let home = f.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let creds = home.join(".terraform.d").join("credentials.tfrc.json");
    let host = f.url.trim_start_matches("https://").to_string();
    // CA and HOME, no token and no coordinator: login names it.
    let base = vec![
        ("FLEETFORM_CA_CERT", f.pki.ca.display().to_string()),
        ("HOME", home.display().to_string()),
    ];
    let mut with_coordinator = base.clone();
    with_coordinator.push(("FLEETFORM_COORDINATOR", f.url.clone()));

    let wrong = cli_typed(
        &f.config,
        &["login", &f.url],
        &base,
        "WRONGTOKEN-0123456789abcdef\n",
    );
    assert_eq!(wrong.code, 1, "{}", wrong.all_output());
    assert!(
        wrong.stderr.contains("refused this token"),
        "{}",
        wrong.stderr
    );
    assert!(!creds.exists(), "a refused token was stored");

    let none = cli_typed(&f.config, &["state", "list"], &with_coordinator, "");
    assert_eq!(none.code, 1, "{}", none.all_output());
    assert!(none.stderr.contains("fleetform login"), "{}", none.stderr);

    let ok = cli_typed(&f.config, &["login", &f.url], &base, &format!("{READ}\n"));
    assert_eq!(ok.code, 0, "{}", ok.all_output());
    assert!(
        ok.stdout.contains(&format!("Token for {host}:")),
        "{}",
        ok.stdout
    );
    assert!(ok.stdout.contains("Success!"), "{}", ok.stdout);
    assert!(
        !ok.stdout.contains(READ),
        "the token was echoed: {}",
        ok.stdout
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&creds).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "credentials file mode {mode:o}");
    }
    let stored = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&creds).unwrap()).unwrap()
    };
    assert_eq!(
        stored()["credentials"][&host]["token"],
        READ,
        "{}",
        stored()
    );

    // The stored token serves a command that names only the coordinator;
    // it reads (its grant) and may not apply.
    let listed = cli_typed(&f.config, &["state", "list"], &with_coordinator, "");
    assert_eq!(listed.code, 0, "{}", listed.all_output());
    let apply = cli_typed(
        &f.config,
        &["apply", "-auto-approve", "-var", &f.store_var()],
        &with_coordinator,
        "",
    );
    assert_eq!(apply.code, 1, "{}", apply.all_output());
    assert!(
        apply.stderr.contains("permission denied"),
        "{}",
        apply.stderr
    );
    // FLEETFORM_TOKEN still comes first.
    let mut admin = with_coordinator.clone();
    admin.push(("FLEETFORM_TOKEN", "WRONGTOKEN-0123456789abcdef".to_string()));
    let env_first = cli_typed(&f.config, &["state", "list"], &admin, "");
    assert_eq!(env_first.code, 1, "{}", env_first.all_output());

    let out = cli_typed(&f.config, &["logout"], &with_coordinator, "");
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        out.stdout
            .contains(&format!("removed the stored API token for {host}")),
        "{}",
        out.stdout
    );
    assert!(stored()["credentials"].get(&host).is_none(), "{}", stored());
    let after = cli_typed(&f.config, &["state", "list"], &with_coordinator, "");
    assert_eq!(after.code, 1, "{}", after.all_output());
    let again = cli_typed(&f.config, &["logout", &f.url], &base, "");
    assert_eq!(
        again.stdout,
        format!("No credentials for {host} are stored.\n\n")
    );
}

/// `logout` prints what `terraform logout` prints and leaves the file as
/// Terraform leaves it, other hosts' tokens kept.
#[test]
fn logout_matches_terraform_s() {
    let Some(tf) = fleetform_tests::terraform::Terraform::find("logout", &[]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let before = r#"{"credentials":{"coord.example.com":{"token":"abc"},"other.example.org":{"token":"x"}}}"#;
    let ours = tmp.path().join("home");
    for home in [ours.as_path(), tf.home()] {
        std::fs::create_dir_all(home.join(".terraform.d")).unwrap();
        std::fs::write(home.join(".terraform.d/credentials.tfrc.json"), before).unwrap();
    }
    // Terraform reads ~/.terraform.d only without TF_CLI_CONFIG_FILE ("Not
    // reading CLI config directory because config location is overridden
    // by environment variable"), which its runner sets.
    std::fs::write(tf.home().join(".terraformrc"), "").unwrap();
    let terraform_logout = || {
        let out = Command::new("terraform")
            .args(["logout", "coord.example.com"])
            .current_dir(tmp.path())
            .env("HOME", tf.home())
            .env_remove("TF_CLI_CONFIG_FILE")
            .env("CHECKPOINT_DISABLE", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run terraform");
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let theirs = terraform_logout();
    let mine = cli_typed(
        tmp.path(),
        &["logout", "coord.example.com"],
        &[("HOME", ours.display().to_string())],
        "",
    );
    assert_eq!(theirs.code, 0, "{}", theirs.all_output());
    assert_eq!(mine.code, 0, "{}", mine.all_output());
    let plain = |s: &str, home: &Path| {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out.replace(&home.display().to_string(), "HOME")
            .replace("Terraform", "fleetform")
    };
    assert_eq!(plain(&mine.stdout, &ours), plain(&theirs.stdout, tf.home()));
    let read = |home: &Path| {
        std::fs::read_to_string(home.join(".terraform.d/credentials.tfrc.json")).unwrap()
    };
    assert_eq!(read(&ours), read(tf.home()));
    let theirs = terraform_logout();
    let mine = cli_typed(
        tmp.path(),
        &["logout", "coord.example.com"],
        &[("HOME", ours.display().to_string())],
        "",
    );
    assert_eq!(plain(&mine.stdout, &ours), plain(&theirs.stdout, tf.home()));
}
