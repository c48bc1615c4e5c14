//! Which drift a normal plan shows, attribute by attribute, as Terraform
//! 1.11 decides it: only drift of attributes that something the plan
//! changes refers to (directly or through locals), in the text and in
//! `show -json`'s `relevant_attributes`. Embedded mode, the sim provider;
//! where `terraform` 1.11 is installed the same steps run under it and the
//! drift sections and `relevant_attributes` are compared, otherwise that
//! part prints `SKIP:`.

use fleetform_tests::{CliRun, run_in};
use serde_json::Value as Json;
use std::path::Path;

/// `b` reads `a`'s name (through a local) and `a.tags["env"]`; nothing
/// reads `a.size` or `a.tags["team"]`. `x` is `b`'s own tag.
fn config(store: &Path, x: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{}"
}}

resource "sim_object" "a" {{
  name = "a"
  size = 3
  tags = {{ env = "test", team = "blue" }}
}}

locals {{
  a_name = sim_object.a.name
}}

resource "sim_object" "b" {{
  name = "b-${{local.a_name}}"
  tags = {{ env = sim_object.a.tags["env"], x = "{x}" }}
}}
"#,
        store.display()
    )
}

/// Changes the stored object named `name` outside the tool.
fn edit_outside(store: &Path, name: &str, edit: &dyn Fn(&mut Json)) {
    for entry in std::fs::read_dir(store).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if doc["name"] == name {
            edit(&mut doc);
            std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
            return;
        }
    }
    panic!("no sim object named {name} in {}", store.display());
}

fn ok(r: &CliRun) {
    assert_eq!(r.code, 0, "{}", r.all_output());
}

/// The drift section of a plan's text ("" when it has none), ids left out.
fn drift_section(text: &str) -> String {
    let Some(start) = text.find("Note: Objects have changed outside of") else {
        return String::new();
    };
    let rest = &text[start..];
    let end = rest
        .find("changes.\n")
        .map_or(rest.len(), |i| i + "changes.\n".len());
    rest[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("id "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `relevant_attributes` of a saved plan, sorted (Terraform's order is
/// not a stable one).
fn relevant(show: &CliRun) -> Vec<Json> {
    let doc: Json =
        serde_json::from_str(&show.stdout).unwrap_or_else(|e| panic!("{e}: {}", show.all_output()));
    let mut out = doc["relevant_attributes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    out.sort_by_key(|r| r.to_string());
    out
}

/// One tool's run of the scenario: apply, drift `a`'s unread attributes,
/// plan a change of `b` (no drift shown), then drift `a.tags["env"]` too
/// and plan again (that drift shown, alone). The two plans' texts and
/// `relevant_attributes`.
fn scenario(
    dir: &Path,
    store: &Path,
    tool: &dyn Fn(&Path, &[&str]) -> CliRun,
) -> [(String, Vec<Json>); 2] {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), config(store, "1")).unwrap();
    ok(&tool(dir, &["apply", "-auto-approve"]));
    edit_outside(store, "a", &|o| {
        o["size"] = 7.into();
        o["tags"]["team"] = "red".into();
    });
    std::fs::write(dir.join("main.tf"), config(store, "2")).unwrap();
    let plan_and_show = || {
        let plan = tool(dir, &["plan", "-out=p.plan"]);
        ok(&plan);
        let show = tool(dir, &["show", "-json", "p.plan"]);
        ok(&show);
        (drift_section(&plan.stdout), relevant(&show))
    };
    let unread = plan_and_show();
    edit_outside(store, "a", &|o| o["tags"]["env"] = "prod".into());
    let read = plan_and_show();
    [unread, read]
}

#[test]
fn only_drift_of_attributes_the_changes_read_is_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = scenario(
        &tmp.path().join("ff"),
        &tmp.path().join("ff-store"),
        &|d, a| run_in(d, a),
    );
    let [(unread_text, unread_rel), (read_text, read_rel)] = &ours;
    let expected = serde_json::json!([
        {"resource": "sim_object.a", "attribute": ["name"]},
        {"resource": "sim_object.a", "attribute": ["tags", "env"]},
    ]);
    let mut expected = expected.as_array().unwrap().clone();
    expected.sort_by_key(|r| r.to_string());
    assert_eq!(unread_text, "", "size and tags.team are read by nothing");
    assert_eq!(unread_rel, &expected);
    assert!(
        read_text.contains("  # sim_object.a has changed\n"),
        "{read_text}"
    );
    assert!(read_text.contains("\"prod\""), "{read_text}");
    assert!(
        !read_text.contains("\"red\"") && !read_text.contains("size"),
        "{read_text}"
    );
    assert_eq!(read_rel, &expected);

    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("drift relevance", &["fleetform/sim"])
    else {
        return;
    };
    let theirs = scenario(
        &tmp.path().join("tf"),
        &tmp.path().join("tf-store"),
        &|d, a| terraform.run_plain(d, a, ""),
    );
    let as_fleetform = |t: &str| fleetform_tests::texts::as_fleetform(t);
    for ((our_text, our_rel), (their_text, their_rel)) in ours.iter().zip(&theirs) {
        assert_eq!(&as_fleetform(their_text), our_text);
        assert_eq!(their_rel, our_rel);
    }
}

/// `b` reads `a[0].tags["env"]` through a module's input and output,
/// `a[1].tags` (the index after it is computed) and `a` whole through a
/// splat; nothing reads `a[0].size`.
fn module_config(store: &Path, x: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{}"
}}

variable "k" {{
  default = "env"
}}

resource "sim_object" "a" {{
  count = 2
  name  = "a${{count.index}}"
  size  = 3
  tags  = {{ env = "test" }}
}}

module "m" {{
  source = "./m"
  in     = sim_object.a[0].tags["env"]
}}

resource "sim_object" "b" {{
  name = "b-${{module.m.out}}"
  tags = {{ n = length(sim_object.a[*].name), k = sim_object.a[1].tags[var.k], x = "{x}" }}
}}
"#,
        store.display()
    )
}

const MODULE_M: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "in" {}

resource "sim_object" "c" {
  name = "c-${var.in}"
  size = 1
}

output "out" {
  value = sim_object.c.name
}
"#;

/// The module scenario under one tool: apply, drift `a[0].size`, `c.size`
/// and `a[1].tags`, plan a change of `b`: its drift section and
/// `relevant_attributes`.
fn module_scenario(
    dir: &Path,
    store: &Path,
    tool: &dyn Fn(&Path, &[&str]) -> CliRun,
) -> (String, Vec<Json>) {
    std::fs::create_dir_all(dir.join("m")).unwrap();
    std::fs::write(dir.join("m/main.tf"), MODULE_M).unwrap();
    std::fs::write(dir.join("main.tf"), module_config(store, "1")).unwrap();
    ok(&tool(dir, &["init"]));
    ok(&tool(dir, &["apply", "-auto-approve"]));
    edit_outside(store, "a0", &|o| o["size"] = 7.into());
    edit_outside(store, "c-test", &|o| o["size"] = 7.into());
    edit_outside(store, "a1", &|o| o["tags"]["team"] = "red".into());
    std::fs::write(dir.join("main.tf"), module_config(store, "2")).unwrap();
    let plan = tool(dir, &["plan", "-out=p.plan"]);
    ok(&plan);
    let show = tool(dir, &["show", "-json", "p.plan"]);
    ok(&show);
    (drift_section(&plan.stdout), relevant(&show))
}

/// Relevance crosses module boundaries and keeps instance keys: a
/// reference through a splat names the resource without a key, which no
/// drifted instance is, as in Terraform.
#[test]
fn relevance_follows_modules_and_instance_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let (text, rel) = module_scenario(
        &tmp.path().join("ff"),
        &tmp.path().join("ff-store"),
        &|d, a| run_in(d, a),
    );
    let mut expected = serde_json::json!([
        {"resource": "module.m.sim_object.c", "attribute": ["name"]},
        {"resource": "sim_object.a", "attribute": []},
        {"resource": "sim_object.a[0]", "attribute": ["tags", "env"]},
        {"resource": "sim_object.a[1]", "attribute": ["tags"]},
    ])
    .as_array()
    .unwrap()
    .clone();
    expected.sort_by_key(|r| r.to_string());
    assert_eq!(rel, expected);
    assert!(text.contains("  # sim_object.a[1] has changed\n"), "{text}");
    assert!(
        !text.contains("sim_object.a[0]") && !text.contains("sim_object.c"),
        "{text}"
    );

    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("drift relevance modules", &["fleetform/sim"])
    else {
        return;
    };
    let (their_text, their_rel) = module_scenario(
        &tmp.path().join("tf"),
        &tmp.path().join("tf-store"),
        // `init` would look the sim provider up in the registry; `get`
        // installs the module alone.
        &|d, a| match a {
            ["init"] => terraform.run_plain(d, &["get"], ""),
            _ => terraform.run_plain(d, a, ""),
        },
    );
    assert_eq!(fleetform_tests::texts::as_fleetform(&their_text), text);
    assert_eq!(their_rel, rel);
}

/// `b` reads into each kind of nested block of a `sim_server`: a list
/// block by index, a set block through a `for` expression and a splat, a
/// map block by key, a single block, and a nested attribute by index; `x`
/// is `b`'s own tag.
fn blocks_config(store: &Path, x: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{}"
}}

resource "sim_server" "a" {{
  name      = "a"
  endpoints = [{{ host = "h1", port = 80 }}]
  boot {{
    image = "debian"
  }}
  disk {{
    size = 10
    kind = "ssd"
  }}
  disk {{
    size = 20
  }}
  rule {{
    port     = 22
    protocol = "tcp"
  }}
  rule {{
    port = 80
  }}
  label "x" {{
    value = "vx"
  }}
}}

locals {{
  ports = [for r in sim_server.a.rule : r.port]
}}

resource "sim_object" "b" {{
  name = "b"
  tags = {{
    d0    = sim_server.a.disk[0].size
    one   = one([for r in sim_server.a.rule : r.port if r.port == 22])
    splat = join(",", compact(sim_server.a.rule[*].protocol))
    lbl   = sim_server.a.label["x"].value
    img   = sim_server.a.boot.image
    ep    = sim_server.a.endpoints[0].host
    ports = join(",", local.ports)
    x     = "{x}"
  }}
}}
"#,
        store.display()
    )
}

/// `relevant_attributes` of a plan changing `b`.
fn blocks_scenario(dir: &Path, store: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun) -> Vec<Json> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), blocks_config(store, "1")).unwrap();
    ok(&tool(dir, &["apply", "-auto-approve"]));
    std::fs::write(dir.join("main.tf"), blocks_config(store, "2")).unwrap();
    ok(&tool(dir, &["plan", "-out=p.plan"]));
    let show = tool(dir, &["show", "-json", "p.plan"]);
    ok(&show);
    relevant(&show)
}

/// Paths into nested blocks keep list indexes and map keys, stop at a set
/// block (its elements have no address: a `for` over it or a splat reads
/// the whole set) and go on into single blocks and nested attributes, as
/// Terraform's. (Only the relevance: `sim_server` keeps its object in
/// state alone, so the sim cannot make it drift.)
#[test]
fn relevance_goes_into_nested_blocks_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = blocks_scenario(
        &tmp.path().join("ff"),
        &tmp.path().join("ff-store"),
        &|d, a| run_in(d, a),
    );
    let mut expected = serde_json::json!([
        {"resource": "sim_server.a", "attribute": ["boot", "image"]},
        {"resource": "sim_server.a", "attribute": ["disk", 0, "size"]},
        {"resource": "sim_server.a", "attribute": ["endpoints", 0, "host"]},
        {"resource": "sim_server.a", "attribute": ["label", "x", "value"]},
        {"resource": "sim_server.a", "attribute": ["rule"]},
    ])
    .as_array()
    .unwrap()
    .clone();
    expected.sort_by_key(|r| r.to_string());
    assert_eq!(ours, expected);

    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("drift relevance blocks", &["fleetform/sim"])
    else {
        return;
    };
    let theirs = blocks_scenario(
        &tmp.path().join("tf"),
        &tmp.path().join("tf-store"),
        &|d, a| terraform.run_plain(d, a, ""),
    );
    assert_eq!(theirs, ours);
}

/// A plan's text from its first change to its summary, ids left out.
fn changes_section(text: &str) -> String {
    let Some(start) = text.find("\n  # ").map(|i| i + 1) else {
        return String::new();
    };
    let rest = &text[start..];
    let end = rest.find("\nPlan:").unwrap_or(rest.len());
    rest[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("id "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The id of the `sim_server` named `name` in the tool's state.
fn server_id(dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun, name: &str) -> String {
    let pulled = tool(dir, &["state", "pull"]);
    ok(&pulled);
    let doc: Json = serde_json::from_str(&pulled.stdout).unwrap();
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "sim_server" && r["name"] == name)
        .and_then(|r| r["instances"][0]["attributes"]["id"].as_str())
        .unwrap_or_else(|| panic!("no sim_server.{name} in {}", pulled.stdout))
        .to_string()
}

/// One tool's run: apply, then someone changes `a`'s list, set and map
/// blocks and its nested attribute outside, and a plan changes `b`. The
/// plan's drift section and its changes.
fn blocks_drift_scenario(
    dir: &Path,
    store: &Path,
    tool: &dyn Fn(&Path, &[&str]) -> CliRun,
) -> (String, String) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), blocks_config(store, "1")).unwrap();
    ok(&tool(dir, &["apply", "-auto-approve"]));
    let id = server_id(dir, tool, "a");
    std::fs::create_dir_all(store.join("server-drift")).unwrap();
    std::fs::write(
        store.join("server-drift").join(format!("{id}.json")),
        serde_json::json!({
            "disk": [{"size": 15, "kind": "ssd"}, {"size": 20, "kind": "hdd"}, {"size": 30, "kind": null}],
            "rule": [{"port": 22, "protocol": "udp"}, {"port": 80, "protocol": null}],
            "label": {"x": {"value": "vy"}, "z": {"value": "vz"}},
            "endpoints": [{"host": "h2", "port": 80}, {"host": "h3", "port": 81}],
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("main.tf"), blocks_config(store, "2")).unwrap();
    let plan = tool(dir, &["plan"]);
    ok(&plan);
    (drift_section(&plan.stdout), changes_section(&plan.stdout))
}

/// Drift inside nested blocks (a list block, a set block, a map block, a
/// nested attribute) is shown and planned as Terraform 1.11 shows and
/// plans it.
#[test]
fn drift_inside_nested_blocks_reads_as_terraform_s() {
    let tmp = tempfile::tempdir().unwrap();
    let (drift, changes) = blocks_drift_scenario(
        &tmp.path().join("ff"),
        &tmp.path().join("ff-store"),
        &|d, a| run_in(d, a),
    );
    assert!(drift.contains("sim_server.a"), "{drift}");
    assert!(
        changes.contains("# sim_server.a will be updated in-place"),
        "{changes}"
    );
    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("drift in nested blocks", &["fleetform/sim"])
    else {
        return;
    };
    let (their_drift, their_changes) = blocks_drift_scenario(
        &tmp.path().join("tf"),
        &tmp.path().join("tf-store"),
        &|d, a| terraform.run_plain(d, a, ""),
    );
    let as_fleetform = |t: &str| fleetform_tests::texts::as_fleetform(t);
    assert_eq!(drift, as_fleetform(&their_drift));
    assert_eq!(changes, as_fleetform(&their_changes));
}
