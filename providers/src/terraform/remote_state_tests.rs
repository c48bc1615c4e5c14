//! `terraform_remote_state` against the cases of Terraform's
//! `data_source_state_test.go`: local state files, workspaces, defaults,
//! missing state, wrongly typed arguments and unsupported backends.

use super::*;
use std::path::Path;

const BASIC: &str = r#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"x","outputs":{"foo":{"value":"bar","type":"string"}},"resources":[]}"#;

fn local(path: &Path) -> Value {
    Value::object([("path", Value::from(path.to_str().unwrap()))])
}

fn cfg(backend: &str, config: Value) -> Value {
    Value::object([
        ("backend", Value::from(backend)),
        ("config", config),
        ("defaults", Value::null()),
        ("workspace", Value::null()),
        ("outputs", Value::null()),
    ])
}

fn with(v: &Value, name: &str, x: Value) -> Value {
    crate::defaults::set_attr(v, name, x)
}

fn state_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// The first error's summary and detail.
fn first_error(r: CallResult<Value>) -> (String, String) {
    let d = r.expect_err("want an error");
    let e = d.iter().find(|d| d.is_error()).expect("an error").clone();
    (e.summary, e.detail)
}

#[test]
fn schema_is_terraforms() {
    let s = RemoteState.schema();
    let a = &s.block.attributes;
    let flags = |n: &str| {
        let x = &a[n];
        (x.ty.clone(), x.required, x.optional, x.computed)
    };
    assert_eq!(flags("backend"), (Type::String, true, false, false));
    assert_eq!(flags("config"), (Type::Dynamic, false, true, false));
    assert_eq!(flags("defaults"), (Type::Dynamic, false, true, false));
    assert_eq!(flags("outputs"), (Type::Dynamic, false, false, true));
    assert_eq!(flags("workspace"), (Type::String, false, true, false));
    assert_eq!(a.len(), 5);
}

#[test]
fn reads_the_outputs_of_a_local_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_file(dir.path(), "basic.tfstate", BASIC);
    let config = cfg("local", local(&path));
    assert!(validate(&config).is_empty());
    let got = read(&config).unwrap();
    assert_eq!(
        got,
        Value::object([
            ("backend", Value::from("local")),
            ("config", local(&path)),
            ("defaults", Value::null()),
            ("workspace", Value::null()),
            ("outputs", Value::object([("foo", Value::from("bar"))])),
        ])
    );

    // The old `_local` name still works and is kept as given.
    let got = read(&cfg("_local", local(&path))).unwrap();
    assert_eq!(got.get_attr("backend"), &Value::from("_local"));
    assert_eq!(got.get_attr("outputs").get_attr("foo"), &Value::from("bar"));

    // Naming the default workspace reads the same file.
    let named = with(&config, "workspace", Value::from("default"));
    let got = read(&named).unwrap();
    assert_eq!(got.get_attr("workspace"), &Value::from("default"));
    assert_eq!(got.get_attr("outputs").get_attr("foo"), &Value::from("bar"));
}

#[test]
fn defaults_fill_in_outputs_the_state_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let empty = state_file(
        dir.path(),
        "empty.tfstate",
        r#"{"version":4,"serial":0,"lineage":""}"#,
    );
    let defaults = Value::object([("foo", Value::from("dflt")), ("n", Value::int(1))]);
    let got = read(&with(
        &cfg("local", local(&empty)),
        "defaults",
        defaults.clone(),
    ))
    .unwrap();
    assert_eq!(got.get_attr("defaults"), &defaults);
    assert_eq!(got.get_attr("outputs"), &defaults);

    // The state's own outputs win over defaults.
    let basic = state_file(dir.path(), "basic.tfstate", BASIC);
    let got = read(&with(&cfg("local", local(&basic)), "defaults", defaults)).unwrap();
    assert_eq!(
        got.get_attr("outputs"),
        &Value::object([("foo", Value::from("bar")), ("n", Value::int(1))])
    );

    // An empty state has no outputs (and no error).
    let got = read(&cfg("local", local(&empty))).unwrap();
    assert_eq!(got.get_attr("outputs"), &Value::Map(Default::default()));
}

#[test]
fn other_workspaces_live_under_workspace_dir() {
    let dir = tempfile::tempdir().unwrap();
    let ws_dir = dir.path().join("states.d");
    state_file(
        &ws_dir,
        "staging/terraform.tfstate",
        r#"{"version":4,"outputs":{"env":{"value":"staging","type":"string"}}}"#,
    );
    let config = Value::object([
        ("path", Value::from("/nonexistent/ignored.tfstate")),
        ("workspace_dir", Value::from(ws_dir.to_str().unwrap())),
    ]);
    let d = with(&cfg("local", config), "workspace", Value::from("staging"));
    let got = read(&d).unwrap();
    assert_eq!(
        got.get_attr("outputs"),
        &Value::object([("env", Value::from("staging"))])
    );
    let (summary, _) = first_error(read(&with(&d, "workspace", Value::from("prod"))));
    assert_eq!(summary, "Unable to find remote state");
}

#[test]
fn the_local_backend_defaults_its_paths_like_terraform() {
    let b = LocalBackend {
        path: None,
        workspace_dir: None,
    };
    assert_eq!(b.state_path("default"), PathBuf::from("terraform.tfstate"));
    assert_eq!(
        b.state_path("dev"),
        PathBuf::from("terraform.tfstate.d/dev/terraform.tfstate")
    );
    let b = LocalBackend {
        path: Some("x/s.tfstate".into()),
        workspace_dir: None,
    };
    assert_eq!(b.state_path("default"), PathBuf::from("x/s.tfstate"));
    assert_eq!(
        b.state_path("dev"),
        PathBuf::from("terraform.tfstate.d/dev/terraform.tfstate")
    );
}

#[test]
fn a_missing_or_empty_state_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.tfstate");
    let (summary, detail) = first_error(read(&cfg("local", local(&missing))));
    assert_eq!(summary, "Unable to find remote state");
    assert_eq!(
        detail,
        "No stored state was found for the given workspace in the given backend."
    );
    let empty = state_file(dir.path(), "zero.tfstate", "");
    let (summary, _) = first_error(read(&cfg("local", local(&empty))));
    assert_eq!(summary, "Unable to find remote state");
    let bad = state_file(dir.path(), "bad.tfstate", "{");
    let (summary, _) = first_error(read(&cfg("local", local(&bad))));
    assert_eq!(summary, "Unsupported state file format");
}

#[test]
fn wrongly_typed_arguments_are_rejected() {
    let config = cfg("local", Value::from("nope"));
    let d = validate(&config);
    let e = d.iter().next().unwrap();
    assert_eq!(e.summary, "Invalid backend configuration");
    assert_eq!(
        e.detail,
        "The given configuration is not valid for backend \"local\": an object is required."
    );

    // With the backend unknown only the shape of the configuration is checked.
    let unknown_backend = with(&config, "backend", Value::unknown());
    let d = validate(&unknown_backend);
    assert_eq!(
        d.iter().next().unwrap().detail,
        "The configuration must be an object value."
    );
    let partly_unknown = cfg("local", Value::object([("path", Value::unknown())]));
    assert!(validate(&partly_unknown).is_empty());

    let defaults = with(
        &cfg("local", Value::object([("path", Value::from("x"))])),
        "defaults",
        Value::from("nope"),
    );
    let d = validate(&defaults);
    let e = d.iter().next().unwrap();
    assert_eq!(
        (e.summary.as_str(), e.detail.as_str()),
        (
            "Invalid default values",
            "Defaults must be given in an object value."
        )
    );

    let extra = cfg("local", Value::object([("bucket", Value::from("b"))]));
    assert_eq!(
        validate(&extra).iter().next().unwrap().detail,
        "The given configuration is not valid for backend \"local\": unexpected attribute \"bucket\"."
    );
    let list_path = cfg("local", Value::object([("path", Value::tuple(vec![]))]));
    assert_eq!(
        validate(&list_path).iter().next().unwrap().detail,
        "The given configuration is not valid for backend \"local\": .path: string required."
    );
    let empty_path = cfg("local", Value::object([("path", Value::from(""))]));
    assert_eq!(
        validate(&empty_path).iter().next().unwrap().detail,
        "The \"path\" attribute value must not be empty."
    );
    let empty_dir = cfg("local", Value::object([("workspace_dir", Value::from(""))]));
    assert_eq!(
        validate(&empty_dir).iter().next().unwrap().summary,
        "Invalid local workspace directory path"
    );
}

#[test]
fn backends_other_than_local_are_refused_clearly() {
    let d = validate(&cfg("nonexistent", Value::null()));
    let e = d.iter().next().unwrap();
    assert_eq!(e.summary, "Invalid backend configuration");
    assert_eq!(e.detail, "There is no backend type named \"nonexistent\".");

    let s3 = cfg(
        "s3",
        Value::object([("bucket", Value::from("b")), ("key", Value::from("k"))]),
    );
    let d = validate(&s3);
    let e = d.iter().next().unwrap();
    assert_eq!(e.summary, "Unsupported backend");
    assert!(
        e.detail.contains("only from the \"local\" backend")
            && e.detail.contains("the \"s3\" backend is not supported"),
        "{}",
        e.detail
    );
    let (summary, _) = first_error(read(&s3));
    assert_eq!(summary, "Unsupported backend");
}
