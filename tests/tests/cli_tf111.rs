//! CLI behaviours checked against Terraform 1.11 (issue 31): `fmt` keeps
//! a file's end as it is, piped `console` prints only the last result and
//! stops at the first error, and `graph` without -type draws the
//! configuration's resources whether or not anything would change, and
//! outputs holding whole resource objects have their schemas' types. Each
//! test has fixed expectations (what Terraform 1.11.4 printed when they
//! were written) and, when `terraform` is on PATH, compares with it too
//! (our provider binaries through `dev_overrides`); without it, that part
//! prints `SKIP:`.

use fleetform_tests::{CliRun, bin_dir, run_in, run_with_input};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `terraform` in `dir` with our providers, or None when it is absent.
fn terraform(dir: &Path, args: &[&str], input: &str) -> Option<CliRun> {
    let rc = dir.join("..").join("tf-cli.tfrc");
    std::fs::write(
        &rc,
        format!(
            "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/null\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
            bin_dir().display()
        ),
    )
    .unwrap();
    let mut child = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Some(CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

fn terraform_present() -> bool {
    let found = Command::new("terraform")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
    }
    found
}

const FMT_FILES: [(&str, &str); 4] = [
    ("nonl.tf", "a = 1"),
    ("multi.tf", "a = 1\n\n\n"),
    ("un.tf", "a   = 1"),
    ("unmulti.tf", "a   = 1\n\n\n"),
];

/// `fmt` in a directory of FMT_FILES: what it prints and the files after.
fn fmt_run(dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in FMT_FILES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut seen = Vec::new();
    for args in [&["fmt", "-check", "-diff"][..], &["fmt"]] {
        let r = tool(dir, args, "");
        seen.push(format!("{args:?} exit {}\n{}", r.code, r.stdout));
    }
    for (name, _) in FMT_FILES {
        seen.push(format!(
            "{name}: {:?}",
            std::fs::read_to_string(dir.join(name)).unwrap()
        ));
    }
    for args in [
        &["fmt", "-"][..],
        &["fmt", "-check", "-"],
        &["fmt", "-diff", "-"],
    ] {
        for input in ["a   = 1", "a = 1", "a = 1\n\n"] {
            let r = tool(dir, args, input);
            seen.push(format!(
                "{args:?} {input:?} exit {}: {:?}",
                r.code, r.stdout
            ));
        }
    }
    seen
}

/// A file without a final newline keeps having none, several stay
/// several; standard input's result ends with one newline.
#[test]
fn fmt_keeps_the_end_of_a_file_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = fmt_run(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    let diff_un = "un.tf\n--- old/un.tf\n+++ new/un.tf\n@@ -1 +1 @@\n-a   = 1\n\\ No newline at end of file\n+a = 1\n\\ No newline at end of file\n";
    let diff_unmulti = "unmulti.tf\n--- old/unmulti.tf\n+++ new/unmulti.tf\n@@ -1,3 +1,3 @@\n-a   = 1\n+a = 1\n \n \n";
    assert_eq!(
        ours[0],
        format!("[\"fmt\", \"-check\", \"-diff\"] exit 3\n{diff_un}{diff_unmulti}")
    );
    assert_eq!(ours[1], "[\"fmt\"] exit 0\nun.tf\nunmulti.tf\n");
    assert_eq!(
        ours[2..6],
        [
            "nonl.tf: \"a = 1\"",
            "multi.tf: \"a = 1\\n\\n\\n\"",
            "un.tf: \"a = 1\"",
            "unmulti.tf: \"a = 1\\n\\n\\n\"",
        ]
    );
    assert_eq!(ours[6], "[\"fmt\", \"-\"] \"a   = 1\" exit 0: \"a = 1\\n\"");
    assert_eq!(
        ours[8],
        "[\"fmt\", \"-\"] \"a = 1\\n\\n\" exit 0: \"a = 1\\n\\n\""
    );
    assert_eq!(
        ours[9],
        "[\"fmt\", \"-check\", \"-\"] \"a   = 1\" exit 3: \"\""
    );
    assert!(ours[12].ends_with("exit 0: \"--- old/<stdin>\\n+++ new/<stdin>\\n@@ -1 +1 @@\\n-a   = 1\\n\\\\ No newline at end of file\\n+a = 1\\n\\\\ No newline at end of file\\n\""), "{}", ours[12]);
    if terraform_present() {
        let theirs = fmt_run(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}

const CONSOLE_TF: &str = "variable \"x\" {\n  default = 2\n}\n\nlocals {\n  y = \"hi\"\n}\n";

/// Piped `console`: exit code and standard output for each input.
fn console_runs(dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), CONSOLE_TF).unwrap();
    [
        "var.x\nlocal.y\n",
        "var.x\nvar.nope\nlocal.y\n",
        "var.x\nexit\nlocal.y\n",
        "var.x\n\n",
        "local.y\nvar.x",
        "",
    ]
    .iter()
    .map(|input| {
        let r = tool(dir, &["console"], input);
        let errors = r.stderr.matches("Error: ").count();
        format!(
            "{input:?}: exit {} {:?}, {errors} error(s)",
            r.code, r.stdout
        )
    })
    .collect()
}

/// Only the last line's result is printed; the first error ends the
/// console (exit 1, nothing on standard output, the later lines not
/// evaluated); `exit` ends it printing nothing.
#[test]
fn piped_console_prints_the_last_result_and_stops_at_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = console_runs(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    assert_eq!(
        ours,
        [
            "\"var.x\\nlocal.y\\n\": exit 0 \"\\\"hi\\\"\\n\", 0 error(s)",
            "\"var.x\\nvar.nope\\nlocal.y\\n\": exit 1 \"\", 1 error(s)",
            "\"var.x\\nexit\\nlocal.y\\n\": exit 0 \"\", 0 error(s)",
            "\"var.x\\n\\n\": exit 0 \"\\n\", 0 error(s)",
            "\"local.y\\nvar.x\": exit 0 \"2\\n\", 0 error(s)",
            "\"\": exit 0 \"\\n\", 0 error(s)",
        ]
    );
    if terraform_present() {
        let theirs = console_runs(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}

/// `type(x)` in the console for values whose type a conversion, a
/// function or an `optional()` default gives (not their shape alone).
const TYPED_TF: &str = "variable \"o\" {\n  type    = object({ names = optional(list(string), []), tags = optional(map(number)) })\n  default = {}\n}\n";

fn type_runs(dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), TYPED_TF).unwrap();
    [
        "type(var.o)\n",
        "type(tomap({a = [1]}))\n",
        "type(split(\",\", \"a,b\"))\n",
        "type(regex(\"(a)(b)?\", \"a\"))\n",
        "type(toset([]))\n",
        "type(true ? [] : [\"a\"])\n",
        "type(tolist([[1], [1, 2]]))\n",
        "[type(1)]\n",
    ]
    .iter()
    .map(|input| {
        let r = tool(dir, &["console"], input);
        let errors = r.stderr.matches("Error: ").count();
        format!("exit {} {}{errors} error(s)", r.code, r.stdout)
    })
    .collect()
}

/// Values carry their type: the console prints it as Terraform's does,
/// one member a line below the first level, and refuses `type` inside an
/// expression.
#[test]
fn console_type_prints_the_value_s_type_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = type_runs(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    assert_eq!(
        ours,
        [
            "exit 0 object({\n    names: list(string),\n    tags: map(number),\n})\n0 error(s)",
            "exit 0 map(\n    tuple([\n        number,\n    ]),\n)\n0 error(s)",
            "exit 0 list(string)\n0 error(s)",
            "exit 0 tuple([\n    string,\n    string,\n])\n0 error(s)",
            "exit 0 set(dynamic)\n0 error(s)",
            "exit 0 list(string)\n0 error(s)",
            "exit 0 list(list(number))\n0 error(s)",
            "exit 1 1 error(s)",
        ]
    );
    if terraform_present() {
        let theirs = type_runs(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}

const GRAPH_TF: &str = "resource \"null_resource\" \"a\" {}\n\nresource \"null_resource\" \"b\" {\n  triggers = {\n    a = null_resource.a.id\n  }\n}\n\nmodule \"m\" {\n  source = \"./m\"\n}\n";

const GRAPH_DOT: &str = "digraph G {
  rankdir = \"RL\";
  node [shape = rect, fontname = \"sans-serif\"];
  \"null_resource.a\" [label=\"null_resource.a\"];
  \"null_resource.b\" [label=\"null_resource.b\"];
  subgraph \"cluster_module.m\" {
    label = \"module.m\"
    fontname = \"sans-serif\"
    \"module.m.null_resource.c\" [label=\"null_resource.c\"];
  }
  \"null_resource.b\" -> \"null_resource.a\";
}
";

const EMPTY_DOT: &str = "digraph G {
  rankdir = \"RL\";
  node [shape = rect, fontname = \"sans-serif\"];
  /* This configuration does not contain any resources.         */
  /* For a more detailed graph, try: terraform graph -type=plan */
}
";

/// `graph` without -type: the configuration's resources, a cluster per
/// module, the same before and after an apply (it does not plan), and a
/// comment when there are no resources. Names and edges are Terraform's
/// here: this graph has no internal nodes. (-type=apply and -plan=FILE
/// are compared in graph_tf111.rs.)
#[test]
fn default_graph_draws_the_resources_whether_or_not_anything_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let draw = |name: &str, tool: &dyn Fn(&Path, &[&str]) -> CliRun| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(dir.join("m")).unwrap();
        std::fs::write(dir.join("main.tf"), GRAPH_TF).unwrap();
        std::fs::write(
            dir.join("m/main.tf"),
            "resource \"null_resource\" \"c\" {}\n",
        )
        .unwrap();
        let empty = tmp.path().join(format!("{name}-empty"));
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::write(empty.join("main.tf"), "output \"o\" {\n  value = 1\n}\n").unwrap();
        tool(&dir, &["init"]);
        let before = tool(&dir, &["graph"]);
        let applied = tool(&dir, &["apply", "-auto-approve"]);
        assert_eq!(applied.code, 0, "{}", applied.all_output());
        let after = tool(&dir, &["graph"]);
        let none = tool(&empty, &["graph"]);
        [before, after, none].map(|r| format!("exit {}\n{}", r.code, r.stdout))
    };
    let ours = draw("ff", &|d, a| run_in(d, a));
    assert_eq!(ours[0], format!("exit 0\n{GRAPH_DOT}"));
    assert_eq!(ours[1], ours[0]);
    assert_eq!(ours[2], format!("exit 0\n{EMPTY_DOT}"));
    if terraform_present() {
        let theirs = draw("tf", &|d, a| terraform(d, a, "").expect("terraform"));
        assert_eq!(ours, theirs);
    }
}

const PLAN_TF: &str = "variable \"v\" {\n  default = 1\n}\n\nlocals {\n  l = var.v\n}\n\nresource \"null_resource\" \"a\" {}\n\nresource \"null_resource\" \"b\" {\n  triggers = {\n    a = null_resource.a.id\n    l = local.l\n  }\n}\n\noutput \"o\" {\n  value = null_resource.b.id\n}\n\nmodule \"m\" {\n  source = \"./m\"\n}\n";

const P: &str = "[root] provider[\\\"registry.terraform.io/hashicorp/null\\\"]";

/// `graph -type=plan`: Terraform's shape (`subgraph "root"`, `[root] …
/// (expand)` nodes, boxes, diamonds and notes, provider and module
/// `(close)` nodes, `[root] root`, edges transitively reduced). Equal to
/// Terraform 1.11's text for this configuration; Terraform's graph has
/// more kinds of internal nodes (e.g. for nested module variables) whose
/// names may differ elsewhere.
#[test]
fn plan_graph_has_terraforms_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let draw = |name: &str, tool: &dyn Fn(&Path, &[&str]) -> CliRun| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(dir.join("m")).unwrap();
        std::fs::write(dir.join("main.tf"), PLAN_TF).unwrap();
        std::fs::write(
            dir.join("m/main.tf"),
            "resource \"null_resource\" \"c\" {}\n",
        )
        .unwrap();
        tool(&dir, &["init"]);
        let r = tool(&dir, &["graph", "-type=plan"]);
        format!("exit {}\n{}", r.code, r.stdout)
    };
    let ours = draw("ff", &|d, a| run_in(d, a));
    let expected = format!(
        "exit 0
digraph {{
	compound = \"true\"
	newrank = \"true\"
	subgraph \"root\" {{
		\"[root] module.m.null_resource.c (expand)\" [label = \"module.m.null_resource.c\", shape = \"box\"]
		\"[root] null_resource.a (expand)\" [label = \"null_resource.a\", shape = \"box\"]
		\"[root] null_resource.b (expand)\" [label = \"null_resource.b\", shape = \"box\"]
		\"{P}\" [label = \"{p}\", shape = \"diamond\"]
		\"[root] var.v\" [label = \"var.v\", shape = \"note\"]
		\"[root] local.l (expand)\" -> \"[root] var.v\"
		\"[root] module.m (close)\" -> \"[root] module.m.null_resource.c (expand)\"
		\"[root] module.m.null_resource.c (expand)\" -> \"[root] module.m (expand)\"
		\"[root] module.m.null_resource.c (expand)\" -> \"{P}\"
		\"[root] null_resource.a (expand)\" -> \"{P}\"
		\"[root] null_resource.b (expand)\" -> \"[root] local.l (expand)\"
		\"[root] null_resource.b (expand)\" -> \"[root] null_resource.a (expand)\"
		\"[root] output.o (expand)\" -> \"[root] null_resource.b (expand)\"
		\"{P} (close)\" -> \"[root] module.m.null_resource.c (expand)\"
		\"{P} (close)\" -> \"[root] null_resource.b (expand)\"
		\"[root] root\" -> \"[root] module.m (close)\"
		\"[root] root\" -> \"[root] output.o (expand)\"
		\"[root] root\" -> \"{P} (close)\"
	}}
}}
",
        p = &P[7..]
    );
    assert_eq!(ours, expected);
    if terraform_present() {
        let theirs = draw("tf", &|d, a| terraform(d, a, "").expect("terraform"));
        assert_eq!(ours, theirs);
    }
}

const OBJECTS_TF: &str = "resource \"null_resource\" \"a\" {\n  count = 2\n}\n\nresource \"terraform_data\" \"d\" {\n  input = { n = 1, names = [\"x\"] }\n}\n\noutput \"a\" {\n  value = null_resource.a\n}\n\noutput \"one\" {\n  value = null_resource.a[0]\n}\n\noutput \"d\" {\n  value = terraform_data.d\n}\n";

/// `output -json`'s types of outputs that hold whole resource objects.
fn object_types(dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), OBJECTS_TF).unwrap();
    let applied = tool(dir, &["apply", "-auto-approve", "-input=false"], "");
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    let out = tool(dir, &["output", "-json"], "");
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("output -json");
    ["a", "one", "d"]
        .iter()
        .map(|k| format!("{k}: {}", json[k]["type"]))
        .collect()
}

/// A resource object has the type its schema implies: a null attribute
/// keeps its attribute's type (`triggers`, a map of string, is null here),
/// and an attribute of any type (`terraform_data`'s `input`) has the type
/// of its value. Before, null attributes were `dynamic` in fleetform.
#[test]
fn resource_objects_have_their_schema_s_types_in_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = object_types(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    let null_resource = r#"["object",{"id":"string","triggers":["map","string"]}]"#;
    let input = r#"["object",{"n":"number","names":["tuple",["string"]]}]"#;
    assert_eq!(
        ours,
        [
            format!(r#"a: ["tuple",[{null_resource},{null_resource}]]"#),
            format!("one: {null_resource}"),
            format!(
                r#"d: ["object",{{"id":"string","input":{input},"output":{input},"triggers_replace":"dynamic"}}]"#
            ),
        ]
    );
    if terraform_present() {
        let theirs = object_types(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}

/// The console's `type()` of resource objects from the state, after the
/// apply of OBJECTS_TF.
fn console_object_types(dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), OBJECTS_TF).unwrap();
    let applied = tool(dir, &["apply", "-auto-approve", "-input=false"], "");
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    [
        "type(null_resource.a[0].triggers)\n",
        "type(null_resource.a[1])\n",
        "type(terraform_data.d.triggers_replace)\n",
    ]
    .iter()
    .map(|input| {
        let r = tool(dir, &["console"], input);
        format!("exit {} {}", r.code, r.stdout)
    })
    .collect()
}

/// The console sees the state's objects typed by their schemas, as plans
/// do: a null attribute has its attribute's type. Before, the console's
/// objects were untyped (`dynamic` for null attributes).
#[test]
fn console_objects_have_their_schema_s_types() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = console_object_types(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    assert_eq!(
        ours,
        [
            "exit 0 map(string)\n",
            "exit 0 object({\n    id: string,\n    triggers: map(string),\n})\n",
            "exit 0 dynamic\n",
        ]
    );
    if terraform_present() {
        let theirs = console_object_types(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}

const TYPED_NULLS_TF: &str = r#"variable "s" {
  type    = string
  default = null
}

variable "o" {
  type = object({
    a = string
    b = optional(list(number))
  })
  default = { a = null }
}

output "cond" {
  value = { v = true ? null : "a", w = false ? 1 : null, o = true ? null : { a = 1 } }
}

output "functions" {
  value = { s = tostring(null), n = tonumber(null), l = tolist(null), lookup = lookup({ a = tostring(null) }, "a", "x"), try = try(tostring(null), 1) }
}

output "variables" {
  value = { s = var.s, o = var.o }
}

output "collections" {
  value = { for_list = [for x in tolist(["a", null]) : x], set = toset([null, "a"]), untyped = [null, "a"], map = tomap({ a = null, b = "x" }) }
}
"#;

/// `output -json`'s type of each output of [`TYPED_NULLS_TF`].
fn output_types(dir: &Path, run: &dyn Fn(&Path, &[&str]) -> CliRun) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), TYPED_NULLS_TF).unwrap();
    let applied = run(dir, &["apply", "-auto-approve", "-input=false"]);
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    let out = run(dir, &["output", "-json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("output -json");
    let outputs = json.as_object().expect("outputs");
    outputs
        .iter()
        .map(|(k, o)| format!("{k}: {}", o["type"]))
        .collect()
}

/// Nulls have types, as cty's do: a conditional's `null` takes the other
/// result's type, `tostring(null)` is a string, a variable's null default
/// has the variable's type, an omitted optional attribute its own, a null
/// element of a typed list keeps the element type through a `for`, a
/// function returning a null argument (`lookup`, `try`) keeps its type; a
/// literal `null` alone is dynamic. (Null outputs are left out of `output
/// -json` by both tools, so each null sits in an object.) Before, every
/// null here was `dynamic` in fleetform.
#[test]
fn typed_nulls_have_terraforms_types_in_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = output_types(&tmp.path().join("ff"), &|d, a| run_in(d, a));
    assert_eq!(
        ours,
        [
            "collections: [\"object\",{\"for_list\":[\"tuple\",[\"string\",\"string\"]],\"map\":[\"map\",\"string\"],\"set\":[\"set\",\"string\"],\"untyped\":[\"tuple\",[\"dynamic\",\"string\"]]}]",
            "cond: [\"object\",{\"o\":[\"object\",{\"a\":\"number\"}],\"v\":\"string\",\"w\":\"number\"}]",
            "functions: [\"object\",{\"l\":[\"list\",\"dynamic\"],\"lookup\":\"string\",\"n\":\"number\",\"s\":\"string\",\"try\":\"string\"}]",
            "variables: [\"object\",{\"o\":[\"object\",{\"a\":\"string\",\"b\":[\"list\",\"number\"]}],\"s\":\"string\"}]",
        ]
    );
    if let Some(tf) = fleetform_tests::terraform::Terraform::find("typed nulls", &[]) {
        let theirs = output_types(&tmp.path().join("tf"), &|d, a| tf.run(d, a, ""));
        assert_eq!(ours, theirs);
    }
}

const DIAG_TF: &str = "output \"x\" {\n  value = var.nope\n}\n\nresource \"null_resource\" \"a\" {\n  triggers = {\n    a = var.nope2\n  }\n}\n";

/// Diagnostics name the top-level block their location is in, as
/// Terraform finds it from the source, and `-no-color` prints them without
/// the frame. Compared word for word: piped, Terraform wraps a detail at
/// 78 columns where fleetform keeps whole lines.
#[test]
fn diagnostics_name_their_block_and_no_color_drops_the_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let words = |r: &CliRun| r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let run = |dir: &Path, tool: &dyn Fn(&Path, &[&str], &str) -> CliRun| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("main.tf"), DIAG_TF).unwrap();
        tool(dir, &["plan", "-no-color", "-input=false"], "")
    };
    let ours = run(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    assert_eq!(ours.code, 1, "{}", ours.stderr);
    assert!(
        ours.stderr.starts_with(
            "\nError: Reference to undeclared input variable\n\n  on main.tf line 2, in output \"x\":\n   2:   value = var.nope\n\n"
        ),
        "{}",
        ours.stderr
    );
    assert!(
        ours.stderr
            .contains("  on main.tf line 7, in resource \"null_resource\" \"a\":\n"),
        "{}",
        ours.stderr
    );
    assert!(!ours.stderr.contains('│'), "{}", ours.stderr);
    if terraform_present() {
        let theirs = run(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(words(&ours), words(&theirs), "{}", theirs.stderr);
    }
}

const MODULE_OUTPUTS_TF: &str = r#"module "each" {
  source   = "./m"
  for_each = toset(["x", "y"])
  label    = "each-${each.key}"
}

module "counted" {
  source = "./m"
  count  = 2
  label  = "counted-${count.index}"
}

module "one" {
  source = "./m"
  label  = "one"
}
"#;

const MODULE_OUTPUTS_CHILD_TF: &str = r#"variable "label" {
  type = string
}

locals {
  upper = upper(var.label)
}

resource "null_resource" "r" {
  triggers = { label = var.label }
}

output "label" {
  value = null_resource.r.triggers.label
}

output "upper" {
  value = local.upper
}

output "has_id" {
  value = null_resource.r.id != ""
}
"#;

/// Piped `console` lines reading module outputs after an apply.
fn console_module_outputs(
    dir: &Path,
    tool: &dyn Fn(&Path, &[&str], &str) -> CliRun,
) -> Vec<String> {
    std::fs::create_dir_all(dir.join("m")).unwrap();
    std::fs::write(dir.join("main.tf"), MODULE_OUTPUTS_TF).unwrap();
    std::fs::write(dir.join("m/main.tf"), MODULE_OUTPUTS_CHILD_TF).unwrap();
    let got = tool(dir, &["get"], "");
    assert_eq!(got.code, 0, "{}{}", got.stdout, got.stderr);
    let applied = tool(dir, &["apply", "-auto-approve", "-input=false"], "");
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    [
        "module.one.label\n",
        "module.counted[1].upper\n",
        "module.each[\"y\"].label\n",
        "module.one.has_id\n",
        "[for k, m in module.each : \"${k}=${m.upper}\"]\n",
        "length(module.counted)\n",
    ]
    .iter()
    .map(|input| {
        let r = tool(dir, &["console"], input);
        format!("exit {} {}", r.code, r.stdout)
    })
    .collect()
}

/// The console evaluates module outputs in each instance of the call, as
/// Terraform's does (before, `module.NAME` read as known after apply).
#[test]
fn console_evaluates_module_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = console_module_outputs(&tmp.path().join("ff"), &|d, a, i| run_with_input(d, a, i));
    assert_eq!(
        ours,
        [
            "exit 0 \"one\"\n",
            "exit 0 \"COUNTED-1\"\n",
            "exit 0 \"each-y\"\n",
            "exit 0 true\n",
            "exit 0 [\n  \"x=EACH-X\",\n  \"y=EACH-Y\",\n]\n",
            "exit 0 2\n",
        ]
    );
    if terraform_present() {
        let theirs = console_module_outputs(&tmp.path().join("tf"), &|d, a, i| {
            terraform(d, a, i).expect("terraform")
        });
        assert_eq!(ours, theirs);
    }
}
