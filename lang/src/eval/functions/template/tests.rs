//! Golden tests for `templatefile`: Terraform's own test table (same
//! template texts, expected values and error texts), its documented
//! examples, and how the template's names are checked.

use crate::eval::EvalEnv;
use crate::eval::functions::testing::{err_in, ok_in, s, with_files};
use fleetform_shared::value::Value;

fn bundle() -> EvalEnv {
    with_files(&[
        ("testdata/hello.txt", b"Hello World"),
        ("testdata/icon.png", b"\x89PNG\r\n\x1a\n\x00\xff"),
        ("testdata/hello.tmpl", b"Hello, ${name}!"),
        ("testdata/func.tmpl", b"The items are ${join(\", \", list)}"),
        (
            "testdata/recursive.tmpl",
            b"${templatefile(\"recursive.tmpl\", {})}",
        ),
        (
            "testdata/list.tmpl",
            b"%{ for x in list ~}\n- ${x}\n%{ endfor ~}\n",
        ),
        ("testdata/bare.tmpl", b"${val}"),
        (
            "backends.tftpl",
            b"%{ for addr in ip_addrs ~}\nbackend ${addr}:${port}\n%{ endfor ~}\n",
        ),
        (
            "backends.json.tftpl",
            b"${jsonencode({\n  \"backends\": [for addr in ip_addrs : \"${addr}:${port}\"],\n})}",
        ),
        ("uses_file.tftpl", b"[${file(\"testdata/hello.txt\")}]"),
        ("refers.tftpl", b"a\n  ${upper(var.name)}"),
        ("bad.tftpl", b"${"),
        ("if.tftpl", b"%{ if on }yes%{ else }no%{ endif }"),
        (
            "blank_lines.tftpl",
            b"#!/bin/bash\n%{ for x in xs ~}\n\n\n    echo ${x}\n%{ endfor ~}\n\n  done\n",
        ),
        (
            "strip.tftpl",
            b"<%{ if on ~}\n  yes \n%{~ else ~}\n  no \n%{~ endif ~} >",
        ),
    ])
}

fn detail(src: &str) -> String {
    err_in(&bundle(), src)
}

#[test]
fn terraforms_table() {
    let env = bundle();
    let list = "[\"a\", \"b\", \"c\"]";
    for (src, want) in [
        ("templatefile(\"testdata/hello.txt\", {})", s("Hello World")),
        (
            "templatefile(\"testdata/hello.tmpl\", {name = \"Jodie\"})",
            s("Hello, Jodie!"),
        ),
        (
            "templatefile(\"testdata/hello.tmpl\", tomap({name = \"Jimbo\"}))",
            s("Hello, Jimbo!"),
        ),
        (
            &format!("templatefile(\"testdata/func.tmpl\", {{list = {list}}})"),
            s("The items are a, b, c"),
        ),
        (
            &format!("templatefile(\"testdata/list.tmpl\", {{list = {list}}})"),
            s("- a\n- b\n- c\n"),
        ),
        // Only an interpolation: its value comes through unconverted.
        (
            "templatefile(\"testdata/bare.tmpl\", {val = true})",
            Value::Bool(true),
        ),
    ] {
        assert_eq!(ok_in(&env, src), want, "{src}");
    }
    let arg = |n: usize, m: &str| {
        format!(
            "Invalid value for \"{}\" parameter: {m}.",
            ["path", "vars"][n - 1]
        )
    };
    for (src, want) in [
        (
            "templatefile(\"testdata/icon.png\", {})",
            "Call to function \"templatefile\" failed: contents of \"testdata/icon.png\" are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead.".to_string(),
        ),
        (
            "templatefile(\"testdata/missing\", {})",
            arg(1, "no file exists at \"testdata/missing\"; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource"),
        ),
        (
            "templatefile(\"testdata/hello.tmpl\", {\"name!\" = \"Jodie\"})",
            arg(2, "invalid template variable name \"name!\": must start with a letter, followed by zero or more letters, digits, and underscores"),
        ),
        (
            "templatefile(\"testdata/hello.tmpl\", {})",
            arg(2, "vars map does not contain key \"name\", referenced at testdata/hello.tmpl:1,10-14"),
        ),
    ] {
        assert_eq!(detail(src), want, "{src}");
    }
}

#[test]
fn a_template_cannot_call_templatefile() {
    let env = bundle();
    let got = err_in(&env, "templatefile(\"testdata/recursive.tmpl\", {})");
    assert!(
        got.starts_with("Call to function \"templatefile\" failed: testdata/recursive.tmpl:1,3-"),
        "{got}"
    );
    assert!(
        got.ends_with(": Error in function call; Call to function \"templatefile\" failed: cannot recursively call templatefile from inside another template function.."),
        "{got}"
    );
    // The failed render leaves nothing behind.
    assert_eq!(
        ok_in(
            &env,
            "templatefile(\"testdata/hello.tmpl\", {name = \"x\"})"
        ),
        s("Hello, x!")
    );
}

#[test]
fn errors_inside_the_template_carry_its_ranges() {
    // Terraform's text exactly (HCL's diagnostic inside its error string).
    assert_eq!(
        detail("templatefile(\"testdata/list.tmpl\", {list = true})"),
        "Call to function \"templatefile\" failed: testdata/list.tmpl:1,13-17: Iteration over non-iterable value; A value of type bool cannot be used as the collection in a 'for' expression.."
    );
    let got = detail("templatefile(\"bad.tftpl\", {})");
    assert!(
        got.starts_with("Call to function \"templatefile\" failed: bad.tftpl:1,"),
        "{got}"
    );
}

#[test]
fn documented_examples() {
    let env = bundle();
    let vars = "{ port = 8080, ip_addrs = [\"10.0.0.1\", \"10.0.0.2\"] }";
    assert_eq!(
        ok_in(&env, &format!("templatefile(\"backends.tftpl\", {vars})")),
        s("backend 10.0.0.1:8080\nbackend 10.0.0.2:8080\n")
    );
    assert_eq!(
        ok_in(
            &env,
            &format!("templatefile(\"backends.json.tftpl\", {vars})")
        ),
        s("{\"backends\":[\"10.0.0.1:8080\",\"10.0.0.2:8080\"]}")
    );
}

#[test]
fn only_the_given_names_are_in_scope() {
    let env = bundle();
    // `var` is just another name a template may be given.
    assert_eq!(
        ok_in(
            &env,
            "templatefile(\"refers.tftpl\", {var = {name = \"x\"}})"
        ),
        s("a\n  X")
    );
    assert_eq!(
        detail("templatefile(\"refers.tftpl\", {name = \"x\"})"),
        "Invalid value for \"vars\" parameter: vars map does not contain key \"var\", referenced at refers.tftpl:2,11-14."
    );
    // Functions inside the template read the same bundle.
    assert_eq!(
        ok_in(&env, "templatefile(\"uses_file.tftpl\", {})"),
        s("[Hello World]")
    );
    assert_eq!(
        ok_in(&env, "templatefile(\"if.tftpl\", {on = false})"),
        s("no")
    );
    // `~` inside a directive trims its own body, but only the line next
    // to it: the next line's indentation stays (terraform 1.11.4 renders
    // "<  yes>" and "<  no>").
    assert_eq!(
        ok_in(&env, "templatefile(\"strip.tftpl\", {on = true})"),
        s("<  yes>")
    );
    assert_eq!(
        ok_in(&env, "templatefile(\"strip.tftpl\", {on = false})"),
        s("<  no>")
    );
}

#[test]
fn vars_must_be_a_map_and_unknowns_flow_through() {
    let env = bundle();
    assert_eq!(
        detail("templatefile(\"testdata/hello.tmpl\", \"name\")"),
        "Invalid value for \"vars\" parameter: invalid vars value: must be a map."
    );
    assert_eq!(
        detail("templatefile(\"testdata/hello.tmpl\", null)"),
        "Invalid value for \"vars\" parameter: argument must not be null."
    );
    assert_eq!(
        ok_in(&env, "templatefile(\"testdata/hello.tmpl\", var.unknown)"),
        Value::unknown()
    );
    assert_eq!(
        ok_in(&env, "templatefile(var.unknown, {})"),
        Value::unknown()
    );
    assert_eq!(
        ok_in(
            &env,
            "templatefile(\"testdata/hello.tmpl\", {name = var.unknown})"
        ),
        Value::unknown()
    );
    assert_eq!(
        ok_in(&env, "templatefile(\"if.tftpl\", {on = var.unknown})"),
        Value::unknown()
    );
}

#[test]
fn templatestring_renders_a_referenced_string() {
    let env = bundle();
    // `t` is a reference (a `for` variable) whose value is the template.
    assert_eq!(
        ok_in(
            &env,
            "[for t in [\"Hi, $${name}!%%{ for i in l }$${i}%%{ endfor }\"] : templatestring(t, { name = \"Jo\", l = [1, 2] })][0]"
        ),
        s("Hi, Jo!12")
    );
    assert!(
        detail("[for t in [\"$${nope}\"] : templatestring(t, {})][0]")
            .contains("vars map does not contain key \"nope\""),
    );
    // A template literal is refused: it would be rendered twice.
    assert!(
        detail("templatestring(\"Hi $${x}\", { x = 1 })").contains("must be a direct reference"),
    );
}

/// A `~` trims only the one line next to it in a template file: the blank
/// lines and indentation after it stay. Expectation taken from terraform
/// 1.11.4 (`templatefile("t1.tftpl", {xs = ["a", "b"]})` on the same text).
#[test]
fn a_strip_marker_reaches_only_the_adjacent_line() {
    let env = bundle();
    assert_eq!(
        ok_in(
            &env,
            "templatefile(\"blank_lines.tftpl\", {xs = [\"a\", \"b\"]})"
        ),
        s("#!/bin/bash\n\n\n    echo a\n\n\n    echo b\n\n  done\n")
    );
}
