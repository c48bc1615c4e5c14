//! Our random, local and time providers through the real CLI in embedded
//! mode: values generated at apply flow into a real file, a second plan
//! has nothing to do, and destroy removes the file.

use fleetform_tests::fleetform;
use std::path::Path;

const CONFIG: &str = r#"
resource "random_pet" "name" {
  length = 2
}

resource "random_integer" "port" {
  min = 8000
  max = 8999
}

resource "time_static" "at" {}

resource "local_file" "out" {
  filename = "${path.module}/out/${random_pet.name.id}.txt"
  content  = "pet=${random_pet.name.id} port=${random_integer.port.result} year=${time_static.at.year}"
}

output "pet" {
  value = random_pet.name.id
}

output "port" {
  value = random_integer.port.result
}

output "year" {
  value = time_static.at.year
}
"#;

fn in_dir(dir: &Path, args: &[&str]) -> (i32, String) {
    let chdir = format!("-chdir={}", dir.display());
    let mut all = vec![chdir.as_str()];
    all.extend_from_slice(args);
    let out = fleetform(&all, &[]).expect("run fleetform");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn random_values_flow_into_a_local_file_that_destroy_removes() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("main.tf"), CONFIG).unwrap();
    let (code, out) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Apply complete! Resources: 4 added, 0 changed, 0 destroyed."),
        "{out}"
    );

    let (code, out) = in_dir(tmp.path(), &["output", "-json"]);
    assert_eq!(code, 0, "{out}");
    let json = &out[..out.rfind('}').map_or(out.len(), |i| i + 1)];
    let outputs: serde_json::Value = serde_json::from_str(json).unwrap();
    let pet = outputs["pet"]["value"].as_str().unwrap().to_string();
    let port = outputs["port"]["value"].as_i64().unwrap();
    let year = outputs["year"]["value"].as_i64().unwrap();
    assert_eq!(pet.split('-').count(), 2, "{pet}");
    assert!((8000..=8999).contains(&port), "{port}");
    assert!(year >= 2024, "{year}");

    let file = tmp.path().join(format!("out/{pet}.txt"));
    let content = std::fs::read_to_string(&file).unwrap();
    assert_eq!(content, format!("pet={pet} port={port} year={year}"));

    let (code, out) = in_dir(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan has no changes:\n{out}");

    let (code, out) = in_dir(tmp.path(), &["destroy", "-auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(!file.exists(), "destroy removes the file");
    let chdir = format!("-chdir={}", tmp.path().display());
    let listed = fleetform(&[chdir.as_str(), "state", "list"], &[]).expect("run fleetform");
    assert!(listed.status.success());
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(
        stdout.trim().is_empty(),
        "state is empty after destroy: {stdout}"
    );
}

/// A sensitive attribute (random_password.result) never appears in the plan
/// or in `state show`, and JSON output flags it.
#[test]
fn sensitive_attributes_stay_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("main.tf"),
        "resource \"random_password\" \"p\" {\n  length = 24\n}\n",
    )
    .unwrap();
    let (code, out) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("+ result") && out.contains("(sensitive value)"),
        "{out}"
    );
    let chdir = format!("-chdir={}", tmp.path().display());
    let json = fleetform(&[chdir.as_str(), "show", "-json"], &[]).expect("run fleetform");
    let state: serde_json::Value = serde_json::from_slice(&json.stdout).expect("state json");
    let res = &state["values"]["root_module"]["resources"][0];
    let password = res["values"]["result"]
        .as_str()
        .expect("result in JSON state")
        .to_string();
    assert_eq!(password.chars().count(), 24);
    assert_eq!(res["sensitive_values"]["result"], true, "{res}");
    assert!(!out.contains(&password), "the apply output never shows it");
    let (code, shown) = in_dir(tmp.path(), &["state", "show", "random_password.p"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("result") && shown.contains("= (sensitive value)"),
        "{shown}"
    );
    assert!(!shown.contains(&password), "{shown}");
}
