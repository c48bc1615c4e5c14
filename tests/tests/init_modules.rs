//! `fleetform init` installing modules through the real CLI: a module in a
//! local git repository (tagged v1, then v2) called with
//! `git::file:///…/repo.git//sub?ref=…`, with a nested local module inside
//! it, is cloned into `.terraform/modules` and recorded in `modules.json`
//! exactly as Terraform records it; the tree then applies in embedded mode.
//! Re-running keeps what is installed, a changed ref reinstalls, -upgrade
//! re-fetches. Registry sources are used only when installed already (as
//! `terraform init` leaves them), otherwise they are a clear error.

use fleetform_tests::{CliRun, run_in};
use serde_json::Value as Json;
use std::path::Path;
use std::process::Command;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn ok(dir: &Path, args: &[&str]) -> CliRun {
    let r = run_in(dir, args);
    assert_eq!(r.code, 0, "fleetform {args:?}:\n{}", r.all_output());
    r
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=fleetform test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const SUB: &str = r#"
variable "name" {
  type = string
}

module "inner" {
  source = "./inner"
  prefix = "hello"
}

resource "null_resource" "r" {
  triggers = {
    name = var.name
  }
}

output "greeting" {
  value = "${module.inner.word} ${var.name}"
}
"#;

fn inner(version: &str) -> String {
    format!(
        "variable \"prefix\" {{\n  type = string\n}}\n\noutput \"word\" {{\n  value = \"${{var.prefix}}-{version}\"\n}}\n"
    )
}

fn root_tf(source: &str) -> String {
    format!(
        r#"
module "net" {{
  source = "{source}"
  name   = "x"
}}

module "local" {{
  source = "./modules/local/"
}}

output "greeting" {{
  value = module.net.greeting
}}

output "local" {{
  value = module.local.v
}}
"#
    )
}

/// A repository with the module in `sub/` (and its nested module in
/// `sub/inner/`), tagged v1 and then v2; returns the commit of v1.
fn module_repo(repo: &Path) -> String {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "--quiet"]);
    write(repo, "sub/main.tf", SUB);
    write(repo, "sub/inner/main.tf", &inner("v1"));
    write(repo, "README.md", "not a module\n");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", "module v1"]);
    git(repo, &["tag", "v1"]);
    let v1 = git(repo, &["rev-parse", "HEAD"]);
    write(repo, "sub/inner/main.tf", &inner("v2"));
    git(repo, &["commit", "--quiet", "-am", "module v2"]);
    git(repo, &["tag", "v2"]);
    v1
}

fn manifest(dir: &Path) -> String {
    read(dir, ".terraform/modules/modules.json")
}

#[test]
fn git_modules_install_apply_and_reinstall_when_the_source_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo.git");
    let v1_commit = module_repo(&repo);
    let url = format!("file://{}", repo.display());
    let dir = &tmp.path().join("root");
    let source_v1 = format!("git::{url}//sub?ref=v1");
    write(dir, "main.tf", &root_tf(&source_v1));
    write(
        dir,
        "modules/local/main.tf",
        "output \"v\" {\n  value = \"local\"\n}\n",
    );

    let init = ok(dir, &["init"]);
    let expected_progress = format!(
        "Initializing modules...\n- local in modules/local\nDownloading git::{url}?ref=v1 for net...\n- net in .terraform/modules/net/sub\n- net.inner in .terraform/modules/net/sub/inner\n"
    );
    assert!(
        init.stdout.starts_with(&expected_progress),
        "{}",
        init.stdout
    );
    assert!(init.stdout.contains("has been successfully initialized!"));
    let want_manifest = format!(
        concat!(
            r#"{{"Modules":[{{"Key":"","Source":"","Dir":"."}},"#,
            r#"{{"Key":"local","Source":"./modules/local","Dir":"modules/local"}},"#,
            r#"{{"Key":"net","Source":"git::{url}//sub?ref=v1","Dir":".terraform/modules/net/sub"}},"#,
            r#"{{"Key":"net.inner","Source":"./inner","Dir":".terraform/modules/net/sub/inner"}}]}}"#
        ),
        url = url
    );
    assert_eq!(manifest(dir), want_manifest);
    // The whole repository is installed, at the tag, with its git metadata
    // (as go-getter leaves it).
    let installed = dir.join(".terraform/modules/net");
    assert_eq!(read(&installed, "sub/main.tf"), SUB);
    assert_eq!(read(&installed, "sub/inner/main.tf"), inner("v1"));
    assert!(installed.join("README.md").is_file());
    assert_eq!(git(&installed, &["rev-parse", "HEAD"]), v1_commit);
    // A tag is cloned shallow.
    assert_eq!(git(&installed, &["rev-list", "--count", "HEAD"]), "1");

    ok(dir, &["apply", "-auto-approve"]);
    let outputs: Json = serde_json::from_str(&ok(dir, &["output", "-json"]).stdout).unwrap();
    assert_eq!(outputs["greeting"]["value"], "hello-v1 x");
    assert_eq!(outputs["local"]["value"], "local");

    // Unchanged: nothing is fetched, the manifest stays as it is.
    let again = ok(dir, &["init"]);
    assert!(!again.stdout.contains("Downloading"), "{}", again.stdout);
    assert!(!again.stdout.contains("- net"), "{}", again.stdout);
    assert_eq!(manifest(dir), want_manifest);

    // A changed ref is a changed source: installed again.
    write(dir, "main.tf", &root_tf(&format!("git::{url}//sub?ref=v2")));
    let changed = ok(dir, &["init"]);
    assert!(
        changed.stdout.contains(&format!(
            "Downloading git::{url}?ref=v2 for net...\n- net in .terraform/modules/net/sub\n- net.inner in .terraform/modules/net/sub/inner\n"
        )),
        "{}",
        changed.stdout
    );
    assert!(!changed.stdout.contains("- local in"), "{}", changed.stdout);
    assert!(manifest(dir).contains(r#""Source":"git::file://"#));
    assert!(manifest(dir).contains("//sub?ref=v2\""));
    ok(dir, &["apply", "-auto-approve"]);
    let outputs: Json = serde_json::from_str(&ok(dir, &["output", "-json"]).stdout).unwrap();
    assert_eq!(outputs["greeting"]["value"], "hello-v2 x");

    // -upgrade fetches everything again.
    let upgraded = ok(dir, &["init", "-upgrade"]);
    assert!(
        upgraded
            .stdout
            .starts_with("Upgrading modules...\n- local in modules/local\nDownloading"),
        "{}",
        upgraded.stdout
    );

    // A commit id: a full clone, checked out at that commit.
    write(
        dir,
        "main.tf",
        &root_tf(&format!("git::{url}//sub?ref={v1_commit}")),
    );
    ok(dir, &["init"]);
    assert_eq!(git(&installed, &["rev-parse", "HEAD"]), v1_commit);
    assert_eq!(read(&installed, "sub/inner/main.tf"), inner("v1"));
}

#[test]
fn registry_and_unsupported_sources_need_another_installer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "main.tf",
        "module \"consul\" {\n  source  = \"hashicorp/consul/aws\"\n  version = \"~> 0.1.0\"\n}\n",
    );
    let r = run_in(dir, &["init"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stderr.contains("Error: Registry module not installed"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("on main.tf line 2, in module \"consul\":"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "Module \"consul\" (at main.tf:1) comes from the module registry at registry.terraform.io (source \"hashicorp/consul/aws\", version \"~> 0.1.0\")"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("\"terraform init\" or \"tofu init\""),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("successfully initialized"));

    // What `terraform init` leaves behind is used as it is.
    write(
        dir,
        ".terraform/modules/consul/main.tf",
        "output \"v\" {\n  value = \"from the registry\"\n}\n",
    );
    let terraform_manifest = r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"consul","Source":"registry.terraform.io/hashicorp/consul/aws","Version":"0.1.2","Dir":".terraform/modules/consul"}]}"#;
    write(dir, ".terraform/modules/modules.json", terraform_manifest);
    ok(dir, &["init"]);
    assert_eq!(manifest(dir), terraform_manifest);
    ok(dir, &["validate"]);

    // A version constraint the installed version does not meet.
    write(
        dir,
        "main.tf",
        "module \"consul\" {\n  source  = \"hashicorp/consul/aws\"\n  version = \">= 0.2.0\"\n}\n",
    );
    let r = run_in(dir, &["init"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stderr.contains(
            "The installed version 0.1.2 does not meet the version constraint \">= 0.2.0\"."
        ),
        "{}",
        r.stderr
    );

    // Other go-getter sources are not supported yet.
    write(
        dir,
        "main.tf",
        "module \"vpc\" {\n  source = \"s3::https://s3-eu-west-1.amazonaws.com/bucket/vpc.zip\"\n}\n",
    );
    let r = run_in(dir, &["init"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stderr.contains("Error: Unsupported module source"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("go-getter's \"s3\" getter"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("on main.tf line 2, in module \"vpc\":"),
        "{}",
        r.stderr
    );
}
