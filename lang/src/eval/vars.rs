//! `-var name=value` values parsed against the variable's type the way
//! Terraform does: literally for primitive (or absent) types, as an HCL
//! expression for everything else, `any` included.

use super::{EmptyScope, convert, evaluate, parse_expression};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// Splits `name=value` as given to `-var`.
pub fn parse_var_assignment(arg: &str) -> Result<(String, String), Diagnostic> {
    match arg.split_once('=') {
        Some((name, value)) if name.ends_with(' ') => Err(Diagnostic::error(
            "Invalid -var option",
            format!(
                "Variable name {name:?} is invalid due to trailing space. Did you mean -var=\"{}={}\"?",
                name.strip_suffix(' ').unwrap_or(name),
                value.strip_prefix(' ').unwrap_or(value)
            ),
        )),
        Some((name, value)) if !name.trim().is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(Diagnostic::error(
            "Invalid -var option",
            format!(
                "The given -var option {arg:?} is not correctly specified. Must be a variable name and value separated by an equals sign, like -var=\"key=value\"."
            ),
        )),
    }
}

/// The value of variable `name` from a raw `-var` string.
pub fn parse_var_value(name: &str, raw: &str, ty: Option<&Type>) -> Result<Value, Diagnostics> {
    let literal = ty.is_none_or(Type::is_primitive);
    let value = if literal {
        Value::String(raw.to_string())
    } else {
        let expr = parse_expression(&format!("<value for var.{name}>"), raw)?;
        evaluate(&expr, &EmptyScope)?
    };
    match ty {
        Some(t) => convert(value, t).map_err(|e| {
            Diagnostic::error(
                "Invalid value for input variable",
                format!("The value for variable \"{name}\" is not compatible with the variable's type constraint: {e}."),
            )
            .into()
        }),
        None => Ok(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_are_literal_and_collections_are_hcl() {
        assert_eq!(
            parse_var_value("a", "hello world", None),
            Ok(Value::from("hello world"))
        );
        assert_eq!(
            parse_var_value("a", "[1]", Some(&Type::String)),
            Ok(Value::from("[1]"))
        );
        assert_eq!(
            parse_var_value("n", "3", Some(&Type::Number)),
            Ok(Value::int(3))
        );
        assert_eq!(
            parse_var_value("l", "[\"a\", 1]", Some(&Type::list(Type::String))),
            Ok(Value::tuple(vec![Value::from("a"), Value::from("1")]))
        );
        let e = parse_var_value("n", "abc", Some(&Type::Number)).unwrap_err();
        assert_eq!(e.0[0].summary, "Invalid value for input variable");
        assert!(parse_var_value("l", "[1,", Some(&Type::list(Type::Number))).is_err());
        assert_eq!(
            parse_var_assignment("a=b=c").unwrap(),
            ("a".into(), "b=c".into())
        );
        assert!(parse_var_assignment("novalue").is_err());
        assert_eq!(
            parse_var_assignment("a =b").unwrap_err().detail,
            "Variable name \"a \" is invalid due to trailing space. Did you mean -var=\"a=b\"?"
        );
        // `any` is not primitive: the text is an expression, as in Terraform.
        assert_eq!(
            parse_var_value("a", "[1]", Some(&Type::Dynamic)),
            Ok(Value::tuple(vec![Value::int(1)]))
        );
    }
}
