//! Golden tests for the file and path functions on a bundle of files:
//! Terraform's documented examples and its own test table (inputs and
//! expected texts), digests of "Hello World" from coreutils, unknown and
//! null arguments.

use super::clean;
use crate::eval::EvalEnv;
use crate::eval::functions::testing::{err, err_in, lit, ok, ok_in, s, with_files};
use fleetform_shared::value::Value;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\xff";

fn bundle() -> EvalEnv {
    with_files(&[
        ("hello.txt", b"Hello World"),
        ("testdata/icon.png", PNG),
        ("templates/a.tpl", b"a"),
        ("modules/net/data.json", b"{}"),
        ("../shared/c.txt", b"shared"),
    ])
}

const MISSING: &str = "this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource";

#[test]
fn file_reads_the_bundle() {
    let env = bundle();
    for (src, want) in [
        ("file(\"hello.txt\")", "Hello World"),
        ("file(\"./templates/../hello.txt\")", "Hello World"),
        ("file(\"modules/net/data.json\")", "{}"),
        ("file(\"../shared/c.txt\")", "shared"),
        ("filebase64(\"testdata/icon.png\")", "iVBORw0KGgoA/w=="),
        ("filebase64(\"hello.txt\")", "SGVsbG8gV29ybGQ="),
    ] {
        assert_eq!(ok_in(&env, src), s(want), "{src}");
    }
    assert_eq!(ok_in(&env, "file(var.unknown)"), Value::unknown());
    assert_eq!(ok_in(&env, "filebase64(var.unknown)"), Value::unknown());
}

#[test]
fn file_errors_as_terraform() {
    let env = bundle();
    // Every file function's first parameter is "path".
    let arg = |_: &str, m: &str| format!("Invalid value for \"path\" parameter: {m}.");
    for (src, want) in [
        (
            "file(\"testdata/missing\")",
            arg("file", &format!("no file exists at \"testdata/missing\"; {MISSING}")),
        ),
        (
            "file(\"./testdata/../nope\")",
            arg("file", &format!("no file exists at \"nope\"; {MISSING}")),
        ),
        (
            "filebase64(\"nope\")",
            arg("filebase64", &format!("no file exists at \"nope\"; {MISSING}")),
        ),
        (
            "file(\"templates/\")",
            arg("file", "failed to read file: read templates: is a directory"),
        ),
        (
            "file(\"hello.txt/x\")",
            arg("file", "open hello.txt/x: not a directory"),
        ),
        (
            "file(\"~user/x\")",
            arg("file", "failed to expand ~: cannot expand user-specific home dir"),
        ),
        (
            "file(\"./testdata/icon.png\")",
            "Call to function \"file\" failed: contents of \"./testdata/icon.png\" are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead.".into(),
        ),
        (
            "file(null)",
            arg("file", "argument must not be null"),
        ),
    ] {
        assert_eq!(err_in(&env, src), want, "{src}");
    }
    // Without a bundle nothing exists.
    assert!(err("file(\"hello.txt\")").contains("no file exists at \"hello.txt\""));
}

#[test]
fn fileexists_answers_for_regular_files_only() {
    let env = bundle();
    for (src, want) in [
        ("fileexists(\"hello.txt\")", true),
        ("fileexists(\"./hello.txt\")", true),
        ("fileexists(\"testdata/missing\")", false),
        ("fileexists(\"../shared/c.txt\")", true),
        ("fileexists(\"/etc/passwd\")", false),
    ] {
        assert_eq!(ok_in(&env, src), Value::Bool(want), "{src}");
    }
    for (src, want) in [
        ("fileexists(\"\")", "\".\" is a directory, not a file"),
        (
            "fileexists(\"templates\")",
            "\"templates\" is a directory, not a file",
        ),
        (
            "fileexists(\"hello.txt/x\")",
            "failed to stat \"hello.txt/x\"",
        ),
    ] {
        assert_eq!(
            err_in(&env, src),
            format!("Call to function \"fileexists\" failed: {want}."),
            "{src}"
        );
    }
    assert_eq!(ok_in(&env, "fileexists(var.unknown)"), Value::unknown());
}

#[test]
fn file_hashes_of_hello_world() {
    let env = bundle();
    for (f, want) in [
        ("filemd5", "b10a8db164e0754105b7a99be72e3fe5"),
        ("filesha1", "0a4d55a8d778e5022fab701977c5d840bbc486d0"),
        (
            "filesha256",
            "a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e",
        ),
        (
            "filesha512",
            "2c74fd17edafd80e8447b0d46741ee243b7eb74dd2149a0ab1b9246fb30382f27e853d8585719e0e67cbda0daa8f51671064615d645ae27acb15bfb1447f459b",
        ),
        (
            "filebase64sha256",
            "pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=",
        ),
        (
            "filebase64sha512",
            "LHT9F+2v2A6ER7DUZ0HuJDt+t03SFJoKsbkkb7MDgvJ+hT2FhXGeDmfL2g2qj1FnEGRhXWRa4nrLFb+xRH9Fmw==",
        ),
    ] {
        assert_eq!(ok_in(&env, &format!("{f}(\"hello.txt\")")), s(want), "{f}");
        // The same digest as of the text itself.
        let of_text = f.replacen("file", "", 1);
        assert_eq!(ok(&format!("{of_text}(\"Hello World\")")), s(want), "{f}");
        // Binary files hash as well.
        assert!(
            ok_in(&env, &format!("{f}(\"testdata/icon.png\")"))
                .as_str()
                .is_some()
        );
        assert_eq!(ok_in(&env, &format!("{f}(var.unknown)")), Value::unknown());
        for (path, why) in [
            ("nope.txt", "open nope.txt: no such file or directory"),
            ("./templates", "read templates: is a directory"),
            ("hello.txt/x", "open hello.txt/x: not a directory"),
        ] {
            assert_eq!(
                err_in(&env, &format!("{f}({})", lit(path))),
                format!("Call to function \"{f}\" failed: {why}.")
            );
        }
        assert_eq!(
            err_in(&env, &format!("{f}(null)")),
            "Invalid value for \"path\" parameter: argument must not be null.".to_string()
        );
    }
}

#[test]
fn abspath_joins_the_root_module_directory() {
    let env = EvalEnv {
        cwd: "/home/user/some/terraform/root".into(),
        ..EvalEnv::default()
    };
    for (path, want) in [
        (".", "/home/user/some/terraform/root"),
        ("", "/home/user/some/terraform/root"),
        ("modules/net", "/home/user/some/terraform/root/modules/net"),
        ("../x/./y/", "/home/user/some/terraform/x/y"),
        ("/etc//x/../y", "/etc/y"),
    ] {
        assert_eq!(
            ok_in(&env, &format!("abspath({})", lit(path))),
            s(want),
            "{path}"
        );
    }
    assert_eq!(ok_in(&env, "abspath(var.unknown)"), Value::unknown());
}

#[test]
fn dirname_and_basename_as_go() {
    for (path, dir, base) in [
        ("foo/bar/baz.txt", "foo/bar", "baz.txt"),
        ("foo/bar/", "foo/bar", "bar"),
        ("foo", ".", "foo"),
        ("/foo", "/", "foo"),
        ("/", "/", "/"),
        ("///", "/", "/"),
        ("", ".", "."),
        ("a//b", "a", "b"),
        ("./a/../b/c", "b", "c"),
        ("../a", "..", "a"),
    ] {
        assert_eq!(
            ok(&format!("dirname({})", lit(path))),
            s(dir),
            "dirname {path}"
        );
        assert_eq!(
            ok(&format!("basename({})", lit(path))),
            s(base),
            "basename {path}"
        );
    }
    assert_eq!(ok("dirname(var.unknown)"), Value::unknown());
    assert_eq!(
        err("basename(null)"),
        "Invalid value for \"path\" parameter: argument must not be null."
    );
}

#[test]
fn pathexpand_uses_home_at_call_time() {
    assert_eq!(
        ok("pathexpand(\"/etc/resolv.conf\")"),
        s("/etc/resolv.conf")
    );
    assert_eq!(ok("pathexpand(\"\")"), s(""));
    assert_eq!(ok("pathexpand(\"a/~/b\")"), s("a/~/b"));
    assert_eq!(
        err("pathexpand(\"~steve/.ssh\")"),
        "Call to function \"pathexpand\" failed: cannot expand user-specific home dir."
    );
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() => {
            assert_eq!(
                ok("pathexpand(\"~/.ssh/id_rsa\")"),
                s(&format!("{}/.ssh/id_rsa", clean(&home)))
            );
            assert_eq!(ok("pathexpand(\"~\")"), s(&clean(&home)));
        }
        _ => assert!(err("pathexpand(\"~/x\")").contains("home directory")),
    }
    assert_eq!(ok("pathexpand(var.unknown)"), Value::unknown());
}

#[test]
fn paths_clean_as_go() {
    for (input, want) in [
        ("", "."),
        ("a/b/../c", "a/c"),
        ("/../a", "/a"),
        ("../../a/..", "../.."),
        ("a\\b", "a\\b"),
        ("//a//b//", "/a/b"),
    ] {
        assert_eq!(clean(input), want, "{input}");
    }
}
