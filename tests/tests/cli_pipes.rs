//! What scripts read from the CLI when its command line is wrong: a usage
//! error exits 1, never 2 (which `plan -detailed-exitcode` means as
//! "changes present").

use fleetform_tests::run_in;

/// A command line clap refuses exits 1 with the usage on standard error,
/// as Terraform's does: exit 2 from `plan -detailed-exitcode` would read
/// as "changes present". Help and version are no errors.
#[test]
fn a_usage_error_exits_1_and_help_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (args, said) in [
        (
            vec!["plan", "-detailed-exitcode", "-bogus"],
            "Usage: fleetform plan",
        ),
        (vec!["bogus"], "Usage: fleetform"),
        (
            vec!["plan", "-detailed-exitcode", "-parallelism=many"],
            "invalid value 'many'",
        ),
    ] {
        let out = run_in(dir, &args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.all_output());
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.starts_with("error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(said), "{args:?}: {}", out.stderr);
    }
    for args in [vec!["--help"], vec!["plan", "-help"], vec!["help"]] {
        let out = run_in(dir, &args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.all_output());
        assert!(out.stdout.contains("Usage: fleetform"), "{}", out.stdout);
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.stderr);
    }
    let out = run_in(dir, &["--version"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.starts_with("fleetform "), "{}", out.stdout);
}
