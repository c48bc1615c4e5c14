//! `-refresh-max-age`: a plan reuses the reads an earlier plan recorded
//! and reads only the objects whose read is missing or older than the
//! object in state; an object the plan would change is read again before
//! its change is final (unless `-reread-changed=false`). Embedded mode,
//! the sim provider with its read log (`reads.log` in its store) counting
//! every object read.

use fleetform_tests::{CliRun, run_in, sim_stored};
use std::path::Path;

/// Four objects; `size2` is `o[2]`'s size, the one the steps change.
fn config(store: &Path, size2: u32) -> String {
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

resource "sim_object" "o" {{
  count = 4
  name  = "o-${{count.index}}"
  size  = count.index == 2 ? {size2} : 3
}}
"#,
        store.display()
    )
}

fn ok(r: &CliRun) {
    assert_eq!(r.code, 0, "{}", r.all_output());
}

/// The ids the provider read since the log was last emptied, and empties it.
fn take_reads(store: &Path) -> Vec<String> {
    let log = store.join("reads.log");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, "").unwrap();
    text.lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn a_plan_reads_only_stale_objects_and_rereads_what_it_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, store) = (tmp.path().join("cfg"), tmp.path().join("store"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.tf"), config(&store, 3)).unwrap();
    ok(&run_in(&dir, &["apply", "-auto-approve"]));
    let id = |name: &str| {
        sim_stored(&store, name).1["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    std::fs::write(store.join("reads.log"), "").unwrap();

    // A full plan reads every object, as Terraform does, and records them.
    let full = run_in(&dir, &["plan"]);
    ok(&full);
    assert_eq!(take_reads(&store).len(), 4, "{}", full.stdout);
    assert!(!full.all_output().contains("Reused"), "{}", full.stdout);

    // Within the bound nothing is read again.
    let reused = run_in(&dir, &["plan", "-refresh-max-age=1h"]);
    ok(&reused);
    assert_eq!(
        take_reads(&store),
        Vec::<String>::new(),
        "{}",
        reused.stdout
    );
    let said = reused.all_output();
    assert!(
        said.contains("Reused 4 objects refreshed within 1h0m0s (oldest "),
        "{said}"
    );
    assert!(said.contains("; read 0."), "{said}");
    assert!(said.contains("No changes."), "{said}");

    // o[2] drifts outside, and its configuration changes: planned on the
    // earlier read the change would be 3 -> 4; read again, it is 7 -> 4.
    let (path, mut doc) = sim_stored(&store, "o-2");
    doc["size"] = 7.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    std::fs::write(dir.join("main.tf"), config(&store, 4)).unwrap();
    let trusting = run_in(
        &dir,
        &["plan", "-refresh-max-age=1h", "-reread-changed=false"],
    );
    ok(&trusting);
    assert_eq!(take_reads(&store), Vec::<String>::new());
    assert!(trusting.stdout.contains("3 -> 4"), "{}", trusting.stdout);

    let applied = run_in(&dir, &["apply", "-auto-approve", "-refresh-max-age=1h"]);
    ok(&applied);
    assert_eq!(take_reads(&store), vec![id("o-2")], "{}", applied.stdout);
    assert!(applied.stdout.contains("7 -> 4"), "{}", applied.stdout);
    assert!(
        applied
            .all_output()
            .contains("1 of them was read again because the plan changes it."),
        "{}",
        applied.all_output()
    );
    assert_eq!(sim_stored(&store, "o-2").1["size"].as_f64(), Some(4.0));

    // The apply wrote o[2]: its read is older than the object now, so the
    // next plan reads it, and only it.
    let after = run_in(&dir, &["plan", "-refresh-max-age=1h"]);
    ok(&after);
    assert_eq!(take_reads(&store), vec![id("o-2")], "{}", after.stdout);
    let said = after.all_output();
    assert!(
        said.contains("Reused 3 objects") && said.contains("; read 1."),
        "{said}"
    );
}

#[test]
fn a_bad_duration_is_refused_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("main.tf"), "").unwrap();
    let r = run_in(tmp.path(), &["plan", "-refresh-max-age=soon"]);
    assert_ne!(r.code, 0);
    assert!(
        r.all_output()
            .contains("Invalid value for -refresh-max-age"),
        "{}",
        r.all_output()
    );
}

#[test]
fn drift_found_by_a_plan_is_listed_until_applied_away() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, store) = (tmp.path().join("cfg"), tmp.path().join("store"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.tf"), config(&store, 3)).unwrap();
    ok(&run_in(&dir, &["apply", "-auto-approve"]));
    let none = run_in(&dir, &["drift"]);
    assert_eq!(none.code, 0, "{}", none.all_output());

    let (path, mut doc) = sim_stored(&store, "o-1");
    doc["size"] = 9.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    ok(&run_in(&dir, &["plan"]));
    let found = run_in(&dir, &["drift"]);
    assert_eq!(found.code, 2, "{}", found.all_output());
    assert!(
        found.stdout.contains("  sim_object.o[1]  (read "),
        "{}",
        found.stdout
    );
    assert!(
        !found.stdout.contains("sim_object.o[0]"),
        "{}",
        found.stdout
    );

    // Applying writes the object again: the read that found it is old news.
    ok(&run_in(&dir, &["apply", "-auto-approve"]));
    let gone = run_in(&dir, &["drift"]);
    assert_eq!(gone.code, 0, "{}", gone.all_output());
    // The apply wrote back the value the state held when o[1] was read:
    // the read is older than the object all the same, and never reused.
    std::fs::write(store.join("reads.log"), "").unwrap();
    let next = run_in(&dir, &["plan", "-refresh-max-age=1h"]);
    ok(&next);
    let o1 = sim_stored(&store, "o-1").1["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(take_reads(&store), vec![o1], "{}", next.all_output());
}
