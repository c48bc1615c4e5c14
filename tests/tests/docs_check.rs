//! The repository stands alone: `docs/check.sh` finds no citation of a
//! document outside it and no cited `docs/` path that is missing.

use fleetform_tests::repo_root;
use std::process::Command;

#[test]
fn every_cited_document_is_in_the_repository() {
    let out = Command::new("sh")
        .arg(repo_root().join("docs/check.sh"))
        .output()
        .expect("run docs/check.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("docs check: ok"), "{text}");
}
