//! Golden tests for `fileset` on a bundle: Terraform's documented examples
//! and its own test table (same file names, same expected sets and errors),
//! plus the glob syntax doublestar v1 has.

use super::{match_component, relative};
use crate::eval::EvalEnv;
use crate::eval::functions::testing::{err_in, lit, ok_in, with_files};
use fleetform_shared::value::Value;

fn bundle() -> EvalEnv {
    with_files(&[
        ("main.tf", b""),
        ("files/hello.txt", b""),
        ("files/world.txt", b""),
        ("files/subdirectory/anotherfile.txt", b""),
        ("testdata/hello.txt", b""),
        ("testdata/hello.tmpl", b""),
        ("testdata/icon.png", b""),
        ("testdata/deep/er/x.tmpl", b""),
        ("weird/a[1].txt", b""),
        ("weird/.hidden", b""),
    ])
}

fn set(items: &[&str]) -> Value {
    Value::List(items.iter().map(|i| Value::from(*i)).collect())
}

fn fileset(path: &str, pattern: &str) -> String {
    format!("fileset({}, {})", lit(path), lit(pattern))
}

#[test]
fn documented_examples() {
    let env = bundle();
    for (path, pattern, want) in [
        (
            ".",
            "files/*.txt",
            set(&["files/hello.txt", "files/world.txt"]),
        ),
        (
            ".",
            "files/{hello,world}.txt",
            set(&["files/hello.txt", "files/world.txt"]),
        ),
        ("files", "*", set(&["hello.txt", "world.txt"])),
        (
            "files",
            "**",
            set(&["hello.txt", "subdirectory/anotherfile.txt", "world.txt"]),
        ),
        ("./files/", "*", set(&["hello.txt", "world.txt"])),
    ] {
        assert_eq!(
            ok_in(&env, &fileset(path, pattern)),
            want,
            "{path} {pattern}"
        );
    }
}

#[test]
fn terraforms_table() {
    let env = bundle();
    let hello = ["testdata/hello.tmpl", "testdata/hello.txt"];
    for (path, pattern, want) in [
        (".", "testdata*", set(&[])),
        (".", "testdata", set(&[])),
        (".", "{testdata,missing}", set(&[])),
        (".", "testdata/missing", set(&[])),
        (".", "testdata/missing*", set(&[])),
        (".", "*/missing", set(&[])),
        (".", "**/missing", set(&[])),
        (".", "testdata/*.txt", set(&["testdata/hello.txt"])),
        (".", "testdata/hello.txt", set(&["testdata/hello.txt"])),
        (".", "testdata/hello.???", set(&["testdata/hello.txt"])),
        (".", "testdata/hello*", set(&hello)),
        (".", "testdata/hello.{tmpl,txt}", set(&hello)),
        (
            ".",
            "*/hello.txt",
            set(&["files/hello.txt", "testdata/hello.txt"]),
        ),
        (
            ".",
            "*/*.txt",
            set(&[
                "files/hello.txt",
                "files/world.txt",
                "testdata/hello.txt",
                "weird/a[1].txt",
            ]),
        ),
        (
            ".",
            "*/hello*",
            set(&[
                "files/hello.txt",
                "testdata/hello.tmpl",
                "testdata/hello.txt",
            ]),
        ),
        (
            ".",
            "**/hello*",
            set(&[
                "files/hello.txt",
                "testdata/hello.tmpl",
                "testdata/hello.txt",
            ]),
        ),
        (
            ".",
            "**/hello.{tmpl,txt}",
            set(&[
                "files/hello.txt",
                "testdata/hello.tmpl",
                "testdata/hello.txt",
            ]),
        ),
        ("testdata", "missing", set(&[])),
        ("testdata", "missing*", set(&[])),
        ("testdata", "*.txt", set(&["hello.txt"])),
        ("testdata", "hello.txt", set(&["hello.txt"])),
        ("testdata", "hello.???", set(&["hello.txt"])),
        ("testdata", "hello*", set(&["hello.tmpl", "hello.txt"])),
    ] {
        assert_eq!(
            ok_in(&env, &fileset(path, pattern)),
            want,
            "{path} {pattern}"
        );
    }
    for (pattern, shown) in [("[", "\"[\""), ("\\", "\"\\\\\"")] {
        assert_eq!(
            err_in(&env, &fileset(".", pattern)),
            format!(
                "Call to function \"fileset\" failed: failed to glob pattern {shown}: syntax error in pattern."
            ),
            "{pattern}"
        );
    }
}

#[test]
fn glob_syntax() {
    let env = bundle();
    for (path, pattern, want) in [
        ("files", "[hw]*.txt", set(&["hello.txt", "world.txt"])),
        ("files", "[^h]*", set(&["world.txt"])),
        ("files", "[a-i]ello.txt", set(&["hello.txt"])),
        ("files", "?orld.txt", set(&["world.txt"])),
        (
            "files",
            "**/*.txt",
            set(&["hello.txt", "subdirectory/anotherfile.txt", "world.txt"]),
        ),
        ("files", "*/*", set(&["subdirectory/anotherfile.txt"])),
        (
            "testdata",
            "**/*.tmpl",
            set(&["deep/er/x.tmpl", "hello.tmpl"]),
        ),
        ("testdata", "deep/**", set(&["deep/er/x.tmpl"])),
        // Brackets are a class unless escaped; `*` matches dot files.
        ("weird", "a\\[1\\].txt", set(&["a[1].txt"])),
        ("weird", "a[1].txt", set(&[])),
        ("weird", "*", set(&[".hidden", "a[1].txt"])),
        // The pattern may climb out of the path; matches stay relative to it.
        (
            "files",
            "../testdata/*.txt",
            set(&["../testdata/hello.txt"]),
        ),
        (
            "files/subdirectory",
            "../../main.tf",
            set(&["../../main.tf"]),
        ),
        (".", "main.tf", set(&["main.tf"])),
        ("nowhere", "*", set(&[])),
    ] {
        assert_eq!(
            ok_in(&env, &fileset(path, pattern)),
            want,
            "{path} {pattern}"
        );
    }
    // A bad pattern is only noticed when an entry is tested against it.
    assert_eq!(ok_in(&env, &fileset("nowhere", "[")), set(&[]));
    assert!(err_in(&env, &fileset("files", "{a,b")).contains("syntax error in pattern"));
    assert!(err_in(&env, &fileset("files", "[z-]")).contains("syntax error in pattern"));
}

#[test]
fn unknown_and_null_arguments() {
    let env = bundle();
    assert_eq!(ok_in(&env, "fileset(var.unknown, \"*\")"), Value::unknown());
    assert_eq!(ok_in(&env, "fileset(\".\", var.unknown)"), Value::unknown());
    assert_eq!(
        err_in(&env, "fileset(\".\", null)"),
        "Invalid value for \"pattern\" parameter: argument must not be null."
    );
}

#[test]
fn components_match_as_doublestar() {
    let m = |p: &str, n: &str| {
        let (p, n): (Vec<char>, Vec<char>) = (p.chars().collect(), n.chars().collect());
        match_component(&p, &n).ok()
    };
    assert_eq!(m("*", ""), Some(true));
    assert_eq!(m("a*", "a"), Some(true));
    assert_eq!(m("a**", "abc"), Some(true));
    assert_eq!(m("*.{go,rs}", "x.rs"), Some(true));
    assert_eq!(m("{a,b}{c,d}", "bd"), Some(true));
    assert_eq!(m("[\\]]", "]"), Some(true));
    assert_eq!(m("[a-c-e]", "b"), None);
    assert_eq!(m("[]", "a"), None);
    assert_eq!(m("é?", "éa"), Some(true));
    assert_eq!(m("\\*", "*"), Some(true));
    assert_eq!(m("\\*", "a"), Some(false));
    assert_eq!(relative("a", "b/x").as_deref(), Ok("../b/x"));
    assert_eq!(relative(".", "a/b").as_deref(), Ok("a/b"));
    assert!(relative("../a", "b").is_err());
    assert!(relative("/a", "b").is_err());
}
