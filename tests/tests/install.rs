//! Provider installation as Terraform does it, through the CLI in embedded
//! mode: a filesystem mirror named by a CLI configuration file found through
//! `TF_CLI_CONFIG_FILE`, version constraints, `dev_overrides`, and
//! `providers schema -json`.

use fleetform_tests::{binary, fleetform};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Terraform's name for this platform, as the mirror layout spells it.
fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}_{arch}")
}

fn write_executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `<mirror>/registry.terraform.io/hashicorp/null/<version>/<platform>/`.
fn package_dir(mirror: &Path, version: &str) -> PathBuf {
    mirror
        .join("registry.terraform.io/hashicorp/null")
        .join(version)
        .join(platform())
}

struct Setup {
    tmp: tempfile::TempDir,
}

impl Setup {
    /// A mirror holding the real null provider as 3.2.1, plus 3.3.0-beta1
    /// and 4.0.0 that fail if anything runs them.
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let mirror = tmp.path().join("mirror");
        let real = package_dir(&mirror, "3.2.1").join("terraform-provider-null_v3.2.1_x5");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::copy(binary("terraform-provider-null"), &real).unwrap();
        for v in ["3.3.0-beta1", "4.0.0"] {
            let broken = package_dir(&mirror, v).join(format!("terraform-provider-null_v{v}"));
            write_executable(
                &broken,
                "#!/bin/sh\necho 'wrong version chosen' >&2\nexit 1\n",
            );
        }
        std::fs::create_dir_all(tmp.path().join("work")).unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        Setup { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn cli_config(&self, text: &str) {
        std::fs::write(self.path("cli.tfrc"), text).unwrap();
    }

    fn mirror_config(&self) {
        self.cli_config(&format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path    = {:?}\n    include = [\"hashicorp/*\"]\n  }}\n}}\n",
            self.path("mirror")
        ));
    }

    fn main_tf(&self, constraint: &str) {
        self.main_tf_with_trigger(constraint, "v");
    }

    fn main_tf_with_trigger(&self, constraint: &str, trigger: &str) {
        std::fs::write(
            self.path("work/main.tf"),
            format!(
                "terraform {{\n  required_providers {{\n    null = {{\n      source  = \"hashicorp/null\"\n      version = \"{constraint}\"\n    }}\n  }}\n}}\n\nresource \"null_resource\" \"a\" {{\n  triggers = {{\n    k = \"{trigger}\"\n  }}\n}}\n"
            ),
        )
        .unwrap();
    }

    /// Runs the CLI in the work dir with only this setup's configuration.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let chdir = format!("-chdir={}", self.path("work").display());
        let mut all = vec![chdir.as_str()];
        all.extend_from_slice(args);
        let env = [
            (
                "TF_CLI_CONFIG_FILE",
                self.path("cli.tfrc").display().to_string(),
            ),
            ("HOME", self.path("home").display().to_string()),
            ("FLEETFORM_PLUGIN_DIR", String::new()),
        ];
        let out = fleetform(&all, &env).expect("run fleetform");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

#[test]
fn a_filesystem_mirror_provides_the_newest_allowed_version() {
    let s = Setup::new();
    s.mirror_config();
    s.main_tf("~> 3.2");
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
        "{out}"
    );
}

#[test]
fn a_constraint_no_mirror_satisfies_names_what_was_searched() {
    let s = Setup::new();
    s.mirror_config();
    s.main_tf("~> 5.0");
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("Failed to find provider"), "{all}");
    assert!(
        all.contains("registry.terraform.io/hashicorp/null matches the constraint \"~> 5.0\""),
        "{all}"
    );
    assert!(
        all.contains(&format!(
            "{} (filesystem mirror)",
            s.path("mirror").display()
        )),
        "{all}"
    );
    assert!(all.contains("available: "), "{all}");
    assert!(all.contains("3.2.1 in "), "{all}");
    assert!(all.contains("cli.tfrc"), "{all}");
}

#[test]
fn dev_overrides_replace_the_provider_whatever_the_constraint() {
    let s = Setup::new();
    let dev = s.path("dev");
    let marker = s.path("dev-override-used");
    write_executable(
        &dev.join("terraform-provider-null"),
        &format!(
            "#!/bin/sh\ntouch {:?}\nexec {:?} \"$@\"\n",
            marker,
            binary("terraform-provider-null")
        ),
    );
    s.cli_config(&format!(
        "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/null\" = {dev:?}\n  }}\n  filesystem_mirror {{\n    path = {:?}\n  }}\n}}\n",
        s.path("mirror")
    ));
    s.main_tf("~> 9.0");
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(marker.exists(), "the overriding executable ran");
    assert!(
        err.contains("provider development overrides are in effect"),
        "{err}"
    );
}

#[test]
fn providers_schema_json_prints_terraforms_format() {
    let s = Setup::new();
    s.mirror_config();
    s.main_tf("~> 3.2");
    let (code, out, err) = s.run(&["providers", "schema", "-json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(doc["format_version"], "1.0");
    let null = &doc["provider_schemas"]["registry.terraform.io/hashicorp/null"];
    assert_eq!(null["provider"]["version"], 0, "{null}");
    let triggers = &null["resource_schemas"]["null_resource"]["block"]["attributes"]["triggers"];
    assert_eq!(
        triggers["type"],
        serde_json::json!(["map", "string"]),
        "{null}"
    );
    assert_eq!(triggers["description_kind"], "plain");
    assert_eq!(triggers["optional"], true);
    assert!(
        triggers.get("required").is_none(),
        "false flags are left out"
    );

    let (code, _, err) = s.run(&["providers", "schema"]);
    assert_eq!(code, 1);
    assert!(err.contains("requires the `-json` flag"), "{err}");
}

/// Terraform's `h1:` package hash, computed here independently of
/// fleetform (by Python's hashlib): SHA-256 over "HEX  NAME\n" lines of
/// the sorted files.
fn python_h1(dir: &Path) -> String {
    let script = r#"
import base64, hashlib, os, sys
root = sys.argv[1]
names = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
summary = "".join(hashlib.sha256(open(os.path.join(root, n), "rb").read()).hexdigest() + "  " + n + "\n" for n in names)
print("h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode())
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("python3");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `init` writes .terraform.lock.hcl as Terraform does (checked byte for
/// byte against Terraform 1.11's `providers lock -fs-mirror` on this
/// layout when written), refuses a package that changed under the lock,
/// and `providers mirror` copies the package where a mirror finds it.
#[test]
fn init_writes_the_lock_file_and_refuses_a_changed_package() {
    let s = Setup::new();
    s.mirror_config();
    s.main_tf("~> 3.2");
    let (code, out, err) = s.run(&["init"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("- Selected registry.terraform.io/hashicorp/null v3.2.1"),
        "{out}"
    );
    let lock = std::fs::read_to_string(s.path("work/.terraform.lock.hcl")).unwrap();
    let hash = python_h1(&package_dir(&s.path("mirror"), "3.2.1"));
    assert_eq!(
        lock,
        format!(
            "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\nprovider \"registry.terraform.io/hashicorp/null\" {{\n  version     = \"3.2.1\"\n  constraints = \"~> 3.2\"\n  hashes = [\n    \"{hash}\",\n  ]\n}}\n"
        )
    );
    // Again: the same file, the package recognised.
    let (code, out, _) = s.run(&["providers", "lock"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Using previously-installed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(s.path("work/.terraform.lock.hcl")).unwrap(),
        lock
    );

    // The mirror, copied where another mirror configuration finds it.
    let (code, out, err) = s.run(&["providers", "mirror", s.path("copy").to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    let copied = package_dir(&s.path("copy"), "3.2.1").join("terraform-provider-null_v3.2.1_x5");
    assert!(copied.is_file(), "{out}");
    assert_eq!(python_h1(&package_dir(&s.path("copy"), "3.2.1")), hash);

    // The package changes under the lock: init refuses, the lock stays.
    let binary_path =
        package_dir(&s.path("mirror"), "3.2.1").join("terraform-provider-null_v3.2.1_x5");
    let mut bytes = std::fs::read(&binary_path).unwrap();
    bytes.push(0);
    std::fs::write(&binary_path, bytes).unwrap();
    let (code, out, err) = s.run(&["init"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("Failed to verify a provider package"), "{err}");
    assert_eq!(
        std::fs::read_to_string(s.path("work/.terraform.lock.hcl")).unwrap(),
        lock
    );
}

/// Runs use the versions the lock file selects, on the packages it
/// hashed (Terraform's rules): a newer allowed version installed later is
/// not picked up, a changed package, a provider the file does not name and
/// a constraint that no longer allows the locked version each stop the
/// run before anything changes, with what to do.
#[test]
fn runs_use_the_locked_version_and_refuse_what_the_lock_file_rejects() {
    let s = Setup::new();
    s.mirror_config();
    s.main_tf("~> 3.2");
    let (code, out, err) = s.run(&["init"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lock = std::fs::read_to_string(s.path("work/.terraform.lock.hcl")).unwrap();
    assert!(lock.contains("version     = \"3.2.1\""), "{lock}");

    // 3.2.9 appears in the mirror: allowed by "~> 3.2" and newer, but not
    // locked. Running it would fail ("wrong version chosen").
    write_executable(
        &package_dir(&s.path("mirror"), "3.2.9").join("terraform-provider-null_v3.2.9"),
        "#!/bin/sh\necho 'wrong version chosen' >&2\nexit 1\n",
    );
    // init keeps the locked version; -upgrade moves to the newest.
    let (code, out, err) = s.run(&["init"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("- Using previously-installed registry.terraform.io/hashicorp/null v3.2.1"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(s.path("work/.terraform.lock.hcl")).unwrap(),
        lock
    );
    let (code, out, err) = s.run(&["init", "-upgrade"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("- Selected registry.terraform.io/hashicorp/null v3.2.9"),
        "{out}"
    );
    std::fs::write(s.path("work/.terraform.lock.hcl"), &lock).unwrap();
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 0, "the locked 3.2.1 should run:\n{out}\n{err}");
    assert!(out.contains("Resources: 1 added"), "{out}");
    // Without the lock file the newest allowed version is used: the same
    // configuration fails, which shows the lock file made the difference.
    std::fs::rename(
        s.path("work/.terraform.lock.hcl"),
        s.path("work/lock.saved"),
    )
    .unwrap();
    let (code, out, err) = s.run(&["plan", "-refresh=false"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        format!("{out}{err}").contains("wrong version chosen"),
        "{out}\n{err}"
    );
    std::fs::rename(
        s.path("work/lock.saved"),
        s.path("work/.terraform.lock.hcl"),
    )
    .unwrap();
    let state_before = s.run(&["state", "pull"]).1;

    // The locked package changes: every run refuses it.
    let locked_binary =
        package_dir(&s.path("mirror"), "3.2.1").join("terraform-provider-null_v3.2.1_x5");
    let original = std::fs::read(&locked_binary).unwrap();
    let mut changed = original.clone();
    changed.push(0);
    std::fs::write(&locked_binary, &changed).unwrap();
    s.main_tf_with_trigger("~> 3.2", "w");
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("does not match any of the checksums recorded in the dependency lock file"),
        "{all}"
    );
    assert_eq!(
        s.run(&["state", "pull"]).1,
        state_before,
        "nothing may change"
    );
    std::fs::write(&locked_binary, &original).unwrap();

    // The configuration's constraint moves past the locked version.
    s.main_tf_with_trigger("~> 3.3", "w");
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("locked version selection 3.2.1 doesn't match the updated version constraints \"~> 3.3\""), "{all}");
    assert!(all.contains("fleetform init -upgrade"), "{all}");

    // A lock file that does not name the provider.
    s.main_tf_with_trigger("~> 3.2", "w");
    std::fs::write(
        s.path("work/.terraform.lock.hcl"),
        "provider \"registry.terraform.io/hashicorp/random\" {\n  version = \"3.5.1\"\n  hashes = []\n}\n",
    )
    .unwrap();
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("no version is selected in the dependency lock file"),
        "{all}"
    );
    assert_eq!(
        s.run(&["state", "pull"]).1,
        state_before,
        "nothing may change"
    );

    // A lock file that is not HCL: named, nothing changes.
    std::fs::write(s.path("work/.terraform.lock.hcl"), "provider \"x\" {\n").unwrap();
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        format!("{out}{err}").contains("Invalid dependency lock file"),
        "{out}\n{err}"
    );

    // Back to the lock init wrote: the change applies with 3.2.1.
    std::fs::write(s.path("work/.terraform.lock.hcl"), &lock).unwrap();
    let (code, out, err) = s.run(&["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("1 added, 0 changed, 1 destroyed"), "{out}");
}
