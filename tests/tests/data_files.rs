//! Files the configuration reads (`file`, `templatefile`, `fileset`,
//! `filebase64`) come with the bundle, from the root and from module
//! directories through `path.module`, through the real CLI in embedded mode
//! and from a saved plan; impure and time functions follow the phase.

use fleetform_tests::{CliRun, run_in};
use serde_json::Value as Json;
use std::path::Path;

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn ok(dir: &Path, args: &[&str]) -> CliRun {
    let r = run_in(dir, args);
    assert_eq!(r.code, 0, "fleetform {args:?}:\n{}", r.all_output());
    r
}

const ROOT: &str = r#"
module "web" {
  source = "./modules/web"
  name   = "fleet"
}

resource "null_resource" "stamp" {
  triggers = {
    at = timestamp()
  }
}

output "motd" {
  value = trimspace(file("${path.root}/motd.txt"))
}

output "page" {
  value = module.web.page
}

output "assets" {
  value = module.web.assets
}

output "blob" {
  value = filebase64("bin/data.bin")
}

output "plan_time_known" {
  value = length(plantimestamp()) > 0
}

output "stamped" {
  value = null_resource.stamp.triggers.at
}
"#;

const WEB: &str = r#"
variable "name" {
  type = string
}

output "page" {
  value = templatefile("${path.module}/templates/index.tpl", { name = var.name, items = ["a", "b"] })
}

output "assets" {
  value = sort(fileset(path.module, "assets/**/*.css"))
}
"#;

#[test]
fn files_read_by_functions_travel_with_the_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "main.tf", ROOT.as_bytes());
    write(dir, "motd.txt", b"  hello fleet  \n");
    write(dir, "bin/data.bin", &[0, 159, 146, 150, 255]);
    write(dir, "modules/web/main.tf", WEB.as_bytes());
    write(
        dir,
        "modules/web/templates/index.tpl",
        b"<h1>${name}</h1>\n%{ for i in items ~}\n<li>${i}</li>\n%{ endfor ~}\n",
    );
    write(dir, "modules/web/assets/site.css", b"body{}");
    write(dir, "modules/web/assets/deep/x.css", b"x{}");
    write(dir, "modules/web/assets/skip.js", b"");

    // While planning, timestamp() is unknown; plantimestamp() is known.
    let plan = ok(dir, &["plan", "-no-color", "-out=tfplan"]);
    let text = plan.all_output();
    assert!(text.contains("(known after apply)"), "{text}");

    // The saved plan carries the files: change them on disk and apply it.
    write(dir, "motd.txt", b"changed on disk");
    ok(dir, &["apply", "tfplan"]);
    let outputs: Json = serde_json::from_str(&ok(dir, &["output", "-json"]).stdout).unwrap();
    assert_eq!(outputs["motd"]["value"], "hello fleet");
    assert_eq!(
        outputs["page"]["value"],
        "<h1>fleet</h1>\n<li>a</li>\n<li>b</li>\n"
    );
    assert_eq!(
        outputs["assets"]["value"],
        serde_json::json!(["assets/deep/x.css", "assets/site.css"])
    );
    assert_eq!(outputs["blob"]["value"], "AJ+Slv8=");
    assert_eq!(outputs["plan_time_known"]["value"], true);
    let stamped = outputs["stamped"]["value"].as_str().unwrap();
    assert!(stamped.ends_with('Z') && stamped.contains('T'), "{stamped}");

    // A missing file is an error at the call, naming the file.
    write(
        dir,
        "main.tf",
        b"output \"x\" {\n  value = file(\"nope.txt\")\n}\n",
    );
    let r = run_in(dir, &["plan", "-no-color"]);
    let text = r.all_output();
    assert_eq!(r.code, 1, "{text}");
    assert!(text.contains("nope.txt"), "{text}");
    assert!(text.contains("main.tf line 2"), "{text}");
}

/// `plan -out` again and again in one directory: a plan file carries the
/// module directories' files, and the one already there is not one of
/// them (each plan used to carry all the plans before it). A file the
/// configuration reads still travels.
#[test]
fn a_plan_file_does_not_carry_the_plan_files_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "main.tf",
        br#"
resource "null_resource" "n" {
  count = 50
  triggers = {
    motd = file("motd.txt")
  }
}
"#,
    );
    write(dir, "motd.txt", b"hello");
    let sizes: Vec<u64> = (0..3)
        .map(|_| {
            ok(dir, &["plan", "-no-color", "-out=tfplan"]);
            std::fs::metadata(dir.join("tfplan")).unwrap().len()
        })
        .collect();
    // Equal but for the plan's own small differences (its time): a plan
    // that carried the one before would be twice the size.
    let close = |size: u64| size.abs_diff(sizes[0]) < sizes[0] / 10;
    assert!(sizes.iter().all(|s| close(*s)), "{sizes:?}");
    // Under another name too, beside the first.
    ok(dir, &["plan", "-no-color", "-out=second.plan"]);
    let second = std::fs::metadata(dir.join("second.plan")).unwrap().len();
    assert!(close(second), "{second} against {sizes:?}");
    ok(dir, &["apply", "second.plan"]);
    let shown = ok(dir, &["state", "show", "null_resource.n[49]"]).stdout;
    assert!(shown.contains("hello"), "{shown}");
}
