//! The functions of the built-in provider `terraform.io/builtin/terraform`
//! (Terraform 1.8+): `encode_tfvars`, `decode_tfvars` and `encode_expr`.
//!
//! Encoding writes a value as HCL the way Terraform's `hclwrite` does
//! (objects and maps one attribute per line with keys sorted, sequences
//! on one line, strings quoted with `${`/`%{` doubled and unprintable
//! characters as `\u` escapes), then lays it out with `terraform fmt`'s
//! rules ([`crate::fmt`]): that is what aligns the `=` signs and indents
//! nested lines. Decoding reads a variables file's syntax: attributes only,
//! each a constant expression (no variables, no function calls). Messages
//! are Terraform 1.11's, seen in `terraform console`.

use crate::config::parse_file;
use crate::inputs::constant::{constant, hcl_range, type_range};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::function::{FunctionError, FunctionParameter, FunctionSignature};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

fn one(param: &str, ty: Type, returns: Type) -> FunctionSignature {
    FunctionSignature {
        parameters: vec![FunctionParameter::new(param, ty)],
        variadic: None,
        return_type: returns,
        summary: String::new(),
        description: String::new(),
        deprecation: String::new(),
    }
}

/// The signature of function `name`, if the provider has it.
pub fn signature(name: &str) -> Option<FunctionSignature> {
    match name {
        "encode_tfvars" => Some(one("value", Type::Dynamic, Type::String)),
        "decode_tfvars" => Some(one("src", Type::String, Type::Dynamic)),
        "encode_expr" => Some(one("value", Type::Dynamic, Type::String)),
        _ => None,
    }
}

/// Calls function `name` with arguments that suit its [`signature`].
pub fn call(name: &str, args: &[Value]) -> Result<Value, FunctionError> {
    let arg = args
        .first()
        .ok_or_else(|| FunctionError::call("missing argument"))?;
    match name {
        "encode_tfvars" => encode_tfvars(arg).map(Value::String),
        "decode_tfvars" => match arg {
            Value::String(src) => decode_tfvars(src),
            _ => Err(FunctionError::argument(0, "string required")),
        },
        "encode_expr" => Ok(Value::String(encode_expr(arg))),
        _ => Err(FunctionError::call(format!("no function named {name:?}"))),
    }
}

/// A value as an HCL expression: `{a = 1}` is three lines, `"x"` is `"x"`.
pub fn encode_expr(value: &Value) -> String {
    let mut raw = String::from("x = ");
    write_expr(value, &mut raw);
    let formatted = layout(&raw);
    let expr = formatted.strip_prefix("x = ").unwrap_or(&formatted);
    expr.strip_suffix('\n').unwrap_or(expr).to_string()
}

/// An object as the text of a variables file: one `name = value` per
/// attribute, sorted by name, each name a valid variable name.
pub fn encode_tfvars(value: &Value) -> Result<String, FunctionError> {
    let Value::Map(attrs) = value else {
        return Err(FunctionError::call(
            "invalid value to encode: must be an object whose attribute names will become the encoded variable names",
        ));
    };
    let mut raw = String::new();
    for (name, v) in attrs.iter() {
        if !is_identifier(name) {
            return Err(FunctionError::call(format!(
                "invalid variable name {name:?}: must be a valid identifier, per Terraform's rules for input variable declarations"
            )));
        }
        raw.push_str(name);
        raw.push_str(" = ");
        write_expr(v, &mut raw);
        raw.push('\n');
    }
    if raw.is_empty() {
        return Ok(raw);
    }
    Ok(layout(&raw))
}

/// `fmt`'s layout of text this module wrote; it always parses, but should
/// it not, the unformatted text is still valid HCL.
fn layout(raw: &str) -> String {
    crate::fmt::format(raw).unwrap_or_else(|_| raw.to_string())
}

fn write_expr(value: &Value, out: &mut String) {
    match value {
        // Callers pass wholly known values; an unknown has no syntax.
        Value::Null(_) | Value::Unknown(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => quote(s, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(item, out);
            }
            out.push(']');
        }
        Value::Map(attrs) if attrs.is_empty() => out.push_str("{}"),
        Value::Map(attrs) => {
            out.push_str("{\n");
            for (k, v) in attrs.iter() {
                if is_identifier(k) {
                    out.push_str(k);
                } else {
                    quote(k, out);
                }
                out.push_str(" = ");
                write_expr(v, out);
                out.push('\n');
            }
            out.push('}');
        }
    }
}

/// HCL's identifier rule: a letter or `_`, then letters, digits, `_`, `-`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A quoted string literal: `"`, `\` and the usual control characters
/// escaped, `${` and `%{` doubled so that they stay literal, and
/// characters Go does not count as printable written as `\uXXXX`.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if !printable(c) => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// An approximation of Go's `unicode.IsPrint`: not a control or format
/// character, and no space but the ASCII one.
fn printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
        | 0x202a..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb
        | 0xe000..=0xf8ff | 0xf0000..=0x10ffff)
}

/// The name HCL gives the source in messages.
const SOURCE: &str = "<decode_tfvars argument>";

/// The text of a variables file as an object of its values.
pub fn decode_tfvars(src: &str) -> Result<Value, FunctionError> {
    let (body, diags) = parse_file(SOURCE, src);
    if diags.has_errors() {
        return Err(FunctionError::call(format!(
            "invalid tfvars syntax: {}",
            diagnostics_text(&diags)
        )));
    }
    let Some(body) = body else {
        return Ok(Value::object(Vec::<(String, Value)>::new()));
    };
    if let Some(b) = body.blocks.first() {
        let d = Diagnostic::error(
            format!("Unexpected {:?} block", b.type_name),
            "Blocks are not allowed here.",
        )
        .at(type_range(&b.decl_range, &b.type_name));
        return Err(FunctionError::call(format!(
            "invalid tfvars content: {}",
            diagnostics_text(&d.into())
        )));
    }
    let mut values = Vec::with_capacity(body.attributes.len());
    for (name, attr) in body.attributes {
        let v = constant(&attr.expr).map_err(|d| {
            FunctionError::call(format!(
                "invalid expression for variable {name:?}: {}",
                diagnostics_text(&d)
            ))
        })?;
        values.push((name, v));
    }
    Ok(Value::object(values))
}

/// Diagnostics as HCL writes them into an error string: the first as
/// `file:range: summary; detail`, then how many others there are.
fn diagnostics_text(diags: &Diagnostics) -> String {
    let all: Vec<&Diagnostic> = diags.iter().collect();
    let Some(first) = all.first() else {
        return "no diagnostics".to_string();
    };
    let at = first
        .range
        .as_ref()
        .map(hcl_range)
        .unwrap_or_else(|| "<nil>".to_string());
    let text = format!("{at}: {}; {}", first.summary, first.detail);
    match all.len() {
        1 => text,
        n => format!("{text}, and {} other diagnostic(s)", n - 1),
    }
}

#[cfg(test)]
mod tests;
