//! `ephemeralasnull` and `terraform.applying` in the evaluator.

use super::*;

fn scope(applying: bool) -> MapScope {
    let mut s = MapScope::new()
        .with_variable("token", Value::from("s3cret"))
        .with_variable("plain", Value::from("p"))
        .with_local("derived", Value::from("x-s3cret"));
    s.ephemeral = [
        Reference::Variable("token".into()),
        Reference::Local("derived".into()),
    ]
    .into();
    s.env.apply = applying;
    s
}

fn eval(src: &str, applying: bool) -> Value {
    let e = parse_expression("t.tf", src).expect("parses");
    evaluate(&e, &scope(applying)).expect("evaluates")
}

#[test]
fn ephemeralasnull_nulls_what_derives_from_an_ephemeral_value_only() {
    assert_eq!(eval("ephemeralasnull(var.token)", false), Value::null());
    assert_eq!(eval("ephemeralasnull(local.derived)", false), Value::null());
    assert_eq!(
        eval("ephemeralasnull(\"a-${upper(var.token)}\")", false),
        Value::null()
    );
    assert_eq!(
        eval("ephemeralasnull(terraform.applying)", true),
        Value::null()
    );
    assert_eq!(eval("ephemeralasnull(var.plain)", false), Value::from("p"));
    // Its own result is not ephemeral any more.
    assert_eq!(
        eval(
            "ephemeralasnull([ephemeralasnull(var.token), var.plain])",
            false
        ),
        Value::tuple(vec![Value::null(), Value::from("p")])
    );
    // Without it, the value is there (configuration checks keep it out of
    // anything recorded).
    assert_eq!(eval("var.token", false), Value::from("s3cret"));
}

#[test]
fn terraform_applying_is_true_only_while_applying() {
    assert_eq!(eval("terraform.applying", false), Value::Bool(false));
    assert_eq!(eval("terraform.applying", true), Value::Bool(true));
}

#[test]
fn ephemeralasnull_takes_exactly_one_argument() {
    let e = parse_expression("t.tf", "ephemeralasnull(var.token, 1)").unwrap();
    assert!(evaluate(&e, &scope(false)).is_err());
    assert!(functions::exists("ephemeralasnull"));
}
