//! Override files: one test per merge rule of Terraform's override
//! documentation, in native and JSON syntax, and the errors for overriding
//! what no primary file declares.

use super::json_tests::{load, load_ok, schema_of};
use super::*;
use crate::eval::{MapScope, evaluate};
use fleetform_shared::addr::Resource;
use fleetform_shared::value::{PathStep, Value};

fn decoded(m: &Module, type_name: &str, name: &str) -> Value {
    let r = &m.resources[&Resource::managed(type_name, name)];
    let (v, d) = r.body.decode(&schema_of(type_name), &MapScope::new());
    assert!(!d.has_errors(), "{d}");
    v
}

/// Summaries, details and (file, line) of the errors.
fn errors(files: &[(&str, &str)]) -> Vec<(String, String, String, usize)> {
    let (_, d) = load(files);
    d.iter()
        .filter(|d| d.is_error())
        .map(|d| {
            let r = d.range.clone().unwrap_or_default();
            (
                d.summary.clone(),
                d.detail.clone(),
                r.filename,
                r.start.line,
            )
        })
        .collect()
}

const BASE: &str = r#"resource "sim_object" "web" {
  name = "t2.micro"
  size = 1
  rule {
    port = 1
  }
  rule {
    port = 2
  }
  config {
    port = 3
  }
}
"#;

#[test]
fn override_files_are_recognised_by_name() {
    for name in [
        "override.tf",
        "override.tf.json",
        "a_override.tf",
        "dir/b_override.tf.json",
    ] {
        assert!(is_override_file(name), "{name}");
    }
    for name in [
        "overrides.tf",
        "override_a.tf",
        "x-override.tf",
        "override.json",
    ] {
        assert!(!is_override_file(name), "{name}");
    }
}

#[test]
fn an_argument_replaces_the_base_argument_and_others_stay() {
    for (file, text) in [
        (
            "override.tf",
            "resource \"sim_object\" \"web\" {\n  name = \"foo\"\n}\n",
        ),
        (
            "override.tf.json",
            r#"{"resource": {"sim_object": {"web": {"name": "foo"}}}}"#,
        ),
    ] {
        let m = load_ok(&[("main.tf", BASE), (file, text)]);
        let v = decoded(&m, "sim_object", "web");
        assert_eq!(v.get_attr("name"), &Value::from("foo"), "{file}");
        assert_eq!(v.get_attr("size"), &Value::int(1), "{file}");
    }
}

#[test]
fn nested_blocks_replace_all_base_blocks_of_their_type_only() {
    for (file, text) in [
        (
            "override.tf",
            "resource \"sim_object\" \"web\" {\n  rule {\n    port = 9\n  }\n}\n",
        ),
        (
            "override.tf.json",
            r#"{"resource": {"sim_object": {"web": {"rule": {"port": 9}}}}}"#,
        ),
    ] {
        let m = load_ok(&[("main.tf", BASE), (file, text)]);
        let v = decoded(&m, "sim_object", "web");
        assert_eq!(
            v.get_attr("rule"),
            &Value::tuple(vec![Value::object([("port", Value::int(9))])]),
            "{file}"
        );
        assert_eq!(
            v.get_attr("config"),
            &Value::object([("port", Value::int(3))]),
            "{file}"
        );
    }
}

#[test]
fn a_json_base_is_overridden_before_the_schema_reads_it() {
    // In the base the JSON `rule` property is not yet known to be a block;
    // the override's `rule` block still replaces it, and `tags` (an
    // argument) replaces the base's JSON `tags`.
    let base = r#"{"resource": {"sim_object": {"web": {
        "rule": [{"port": 1}, {"port": 2}],
        "tags": {"a": "b"},
        "size": 1
    }}}}"#;
    let over = "resource \"sim_object\" \"web\" {\n  rule {\n    port = 9\n  }\n  tags = { c = \"d\" }\n}\n";
    let m = load_ok(&[("main.tf.json", base), ("override.tf", over)]);
    let v = decoded(&m, "sim_object", "web");
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![Value::object([("port", Value::int(9))])])
    );
    assert_eq!(
        v.get_attr("tags"),
        &Value::object([("c", Value::from("d"))])
    );
    assert_eq!(v.get_attr("size"), &Value::int(1));
}

#[test]
fn lifecycle_merges_argument_by_argument() {
    let base = "resource \"sim_object\" \"web\" {\n  lifecycle {\n    ignore_changes = [size]\n    prevent_destroy = true\n  }\n}\n";
    let over = r#"{"resource": {"sim_object": {"web": {"lifecycle": {"create_before_destroy": true, "ignore_changes": []}}}}}"#;
    let m = load_ok(&[("main.tf", base), ("override.tf.json", over)]);
    let l = &m.resources[&Resource::managed("sim_object", "web")].lifecycle;
    assert!(l.create_before_destroy && l.prevent_destroy);
    let IgnoreChanges::Paths(paths) = &l.ignore_changes else {
        panic!("paths kept")
    };
    assert_eq!(paths[0].0, vec![PathStep::Key("size".into())]);
    // A lifecycle only in the override is taken as it is.
    let m = load_ok(&[
        ("main.tf", "resource \"sim_object\" \"web\" {}\n"),
        (
            "override.tf",
            "resource \"sim_object\" \"web\" {\n  lifecycle {\n    ignore_changes = all\n  }\n}\n",
        ),
    ]);
    assert_eq!(
        m.resources[&Resource::managed("sim_object", "web")]
            .lifecycle
            .ignore_changes,
        IgnoreChanges::All
    );
}

#[test]
fn override_provisioners_replace_the_base_provisioners() {
    let base = "resource \"sim_object\" \"web\" {\n  provisioner \"local-exec\" {\n    command = \"a\"\n  }\n  provisioner \"local-exec\" {\n    command = \"b\"\n  }\n}\n";
    let over = "resource \"sim_object\" \"web\" {\n  provisioner \"local-exec\" {\n    command = \"c\"\n  }\n}\n";
    let (m, d) = load(&[("main.tf", base), ("x_override.tf", over)]);
    assert!(!d.has_errors(), "{d}");
    let r = &m.unwrap().resources[&Resource::managed("sim_object", "web")];
    assert_eq!(r.provisioners.len(), 1);
    assert_eq!(r.provisioners[0].command.range.filename, "x_override.tf");
}

#[test]
fn meta_arguments_are_replaced_but_depends_on_may_not_be_overridden() {
    let base =
        "resource \"sim_object\" \"web\" {\n  count = 1\n}\nresource \"sim_object\" \"db\" {}\n";
    let over = "resource \"sim_object\" \"web\" {\n  count    = 3\n  provider = sim.west\n}\n\nresource \"sim_object\" \"db\" {\n  depends_on = [sim_object.web]\n}\n";
    let (m, _) = load(&[("main.tf", base), ("override.tf", over)]);
    let web = &m.unwrap().resources[&Resource::managed("sim_object", "web")];
    assert_eq!(web.provider, "sim.west");
    assert_eq!(
        evaluate(web.count.as_ref().unwrap(), &MapScope::new()),
        Ok(Value::int(3))
    );
    assert_eq!(
        errors(&[("main.tf", base), ("override.tf", over)]),
        [(
            "Unsupported override".to_string(),
            "The depends_on argument may not be overridden.".to_string(),
            "override.tf".to_string(),
            7
        )]
    );
}

#[test]
fn variable_type_and_default_are_checked_together_after_merging() {
    let base = "variable \"v\" {\n  type    = string\n  default = \"abc\"\n}\n";
    // An override default that fits the base type.
    let m = load_ok(&[
        ("main.tf", base),
        (
            "override.tf.json",
            r#"{"variable": {"v": {"default": "xyz", "description": "d"}}}"#,
        ),
    ]);
    let v = &m.variables["v"];
    assert_eq!(v.default, Some(Value::from("xyz")));
    assert_eq!(v.description.as_deref(), Some("d"));
    // An override type the base default no longer fits.
    let e = errors(&[
        ("main.tf", base),
        ("override.tf", "variable \"v\" {\n  type = number\n}\n"),
    ]);
    assert_eq!(
        e,
        [(
            "Invalid default value for variable".to_string(),
            "Overriding this variable's type constraint has made its default value invalid: a number is required.".to_string(),
            "override.tf".to_string(),
            1
        )]
    );
    // An override default the base type does not take.
    let e = errors(&[
        ("main.tf", base),
        ("override.tf", "variable \"v\" {\n  default = [1]\n}\n"),
    ]);
    assert_eq!(
        e[0].1,
        "The overridden default value for this variable is not compatible with the variable's type constraint: string required."
    );
}

#[test]
fn overriding_nullable_checks_the_base_default() {
    let e = errors(&[
        ("main.tf", "variable \"v\" {\n  default = null\n}\n"),
        (
            "override.tf.json",
            "{\n\"variable\": {\"v\": {\"nullable\": false}}}",
        ),
    ]);
    assert_eq!(
        e,
        [(
            "Invalid default value for variable".to_string(),
            "A null default value is not valid when nullable=false.".to_string(),
            "override.tf.json".to_string(),
            2
        )]
    );
}

#[test]
fn locals_are_overridden_one_by_one_across_blocks() {
    let m = load_ok(&[
        (
            "main.tf",
            "locals {\n  a = 1\n  b = 2\n}\nlocals {\n  c = 3\n}\n",
        ),
        ("override.tf", "locals {\n  a = 10\n  c = 30\n}\n"),
    ]);
    let values: Vec<Value> = m
        .locals
        .values()
        .map(|l| evaluate(&l.expr, &MapScope::new()).unwrap())
        .collect();
    assert_eq!(values, [Value::int(10), Value::int(2), Value::int(30)]);
    assert_eq!(m.locals["a"].range.filename, "override.tf");
}

#[test]
fn outputs_keep_a_description_an_empty_override_does_not_set() {
    let m = load_ok(&[
        (
            "main.tf",
            "output \"o\" {\n  value       = 1\n  description = \"kept\"\n}\n",
        ),
        (
            "override.tf.json",
            r#"{"output": {"o": {"value": "${1 + 1}", "description": "", "sensitive": true}}}"#,
        ),
    ]);
    let o = &m.outputs["o"];
    assert_eq!(evaluate(&o.expr, &MapScope::new()), Ok(Value::int(2)));
    assert_eq!(o.description.as_deref(), Some("kept"));
    assert!(o.sensitive);
}

#[test]
fn module_calls_merge_source_and_arguments() {
    let m = load_ok(&[
        (
            "main.tf",
            "module \"m\" {\n  source    = \"./a\"\n  providers = { sim = sim.west }\n  x         = 1\n  y         = 2\n}\n",
        ),
        (
            "override.tf.json",
            r#"{"module": {"m": {"source": "./b", "providers": {}, "y": 20}}}"#,
        ),
    ]);
    let call = &m.module_calls["m"];
    assert_eq!(call.source, "./b");
    assert_eq!(
        call.providers.len(),
        1,
        "an empty providers map overrides nothing"
    );
    let args: Vec<(String, Value)> = call
        .arguments
        .iter()
        .map(|(k, a)| (k.clone(), evaluate(&a.expr, &MapScope::new()).unwrap()))
        .collect();
    assert_eq!(
        args,
        [
            ("x".to_string(), Value::int(1)),
            ("y".to_string(), Value::int(20))
        ]
    );
}

#[test]
fn providers_merge_by_name_and_alias() {
    let base = "provider \"sim\" {\n  region = \"a\"\n}\nprovider \"sim\" {\n  alias  = \"west\"\n  region = \"b\"\n}\n";
    let over = r#"{"provider": {"sim": [{"alias": "west", "region": "w"}], "other": {"x": 1}}}"#;
    let m = load_ok(&[("main.tf", base), ("override.tf.json", over)]);
    let region = |key: &str| {
        let p = &m.providers[key];
        p.body.decode(&schema_of("sim"), &MapScope::new()).0
    };
    assert_eq!(region("sim").get_attr("region"), &Value::from("a"));
    assert_eq!(region("sim.west").get_attr("region"), &Value::from("w"));
    // A default configuration may be overridden without a base: absent is empty.
    assert!(m.providers.contains_key("other"));
    let e = errors(&[
        ("main.tf", base),
        ("override.tf", "provider \"sim\" {\n  alias = \"east\"\n}\n"),
    ]);
    assert_eq!(
        e,
        [(
            "Missing base provider configuration for override".to_string(),
            "There is no sim provider configuration with the alias \"east\". An override file can only override an aliased provider configuration that was already defined in a primary configuration file.".to_string(),
            "override.tf".to_string(),
            1
        )]
    );
}

#[test]
fn terraform_settings_merge_per_provider_and_replace_core_versions() {
    let m = load_ok(&[
        (
            "main.tf",
            "terraform {\n  required_version = \">= 1.0\"\n  required_providers {\n    a = { source = \"acme/a\", version = \"1.0\" }\n    b = { source = \"acme/b\" }\n  }\n}\nterraform {\n  required_version = \"< 2.0\"\n}\n",
        ),
        (
            "override.tf.json",
            r#"{"terraform": {"required_version": ">= 1.9", "required_providers": {"a": {"source": "other/a"}}}}"#,
        ),
    ]);
    assert_eq!(m.required_version, [">= 1.9"]);
    let a = &m.required_providers["a"];
    assert_eq!(
        (a.source.to_string(), a.version.clone()),
        ("registry.terraform.io/other/a".to_string(), None)
    );
    assert_eq!(
        m.required_providers["b"].source.to_string(),
        "registry.terraform.io/acme/b"
    );
}

#[test]
fn later_override_files_win() {
    let m = load_ok(&[
        ("main.tf", "locals {\n  a = 1\n}\n"),
        ("b_override.tf", "locals {\n  a = 3\n}\n"),
        ("a_override.tf.json", r#"{"locals": {"a": 2}}"#),
    ]);
    assert_eq!(
        evaluate(&m.locals["a"].expr, &MapScope::new()),
        Ok(Value::int(3))
    );
}

#[test]
fn overriding_what_no_primary_file_declares_is_an_error() {
    let e = errors(&[
        ("main.tf", "locals {\n  a = 1\n}\n"),
        (
            "override.tf",
            "resource \"sim_object\" \"nope\" {}\ndata \"sim_lookup\" \"nope\" {}\nvariable \"nope\" {}\noutput \"nope\" {\n  value = 1\n}\nmodule \"nope\" {}\nlocals {\n  nope = 1\n}\nmoved {\n  from = a.b\n  to   = a.c\n}\nimport {\n  to = a.b\n  id = \"x\"\n}\n",
        ),
    ]);
    let got: Vec<(&str, &str, usize)> = e
        .iter()
        .map(|(s, d, _, l)| (s.as_str(), d.as_str(), *l))
        .collect();
    assert_eq!(
        got,
        [
            (
                "Missing resource to override",
                "There is no sim_object resource named \"nope\". An override file can only override a resource block defined in a primary configuration file.",
                1
            ),
            (
                "Missing data resource to override",
                "There is no sim_lookup data resource named \"nope\". An override file can only override a data block defined in a primary configuration file.",
                2
            ),
            (
                "Missing base variable declaration to override",
                "There is no variable named \"nope\". An override file can only override a variable that was already declared in a primary configuration file.",
                3
            ),
            (
                "Missing base output definition to override",
                "There is no output named \"nope\". An override file can only override an output that was already defined in a primary configuration file.",
                4
            ),
            (
                "Missing module call to override",
                "There is no module call named \"nope\". An override file can only override a module call that was defined in a primary configuration file.",
                7
            ),
            (
                "Missing base local value definition to override",
                "There is no local value named \"nope\". An override file can only override a local value that was already defined in a primary configuration file.",
                9
            ),
            (
                "Cannot override 'moved' blocks",
                "Records of moved objects can appear only in normal files, not in override files.",
                11
            ),
            (
                "Cannot override 'import' blocks",
                "Import blocks can appear only in normal files, not in override files.",
                15
            ),
        ]
    );
    // In JSON the error is at the override block's body.
    let e = errors(&[
        ("main.tf", ""),
        (
            "override.tf.json",
            "{\n  \"resource\": {\"sim_object\": {\"nope\": {}}}\n}",
        ),
    ]);
    assert_eq!(
        (e[0].0.as_str(), e[0].2.as_str(), e[0].3),
        ("Missing resource to override", "override.tf.json", 2)
    );
}
