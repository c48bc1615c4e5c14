//! String functions: case, trimming, splitting, `format`.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, int_arg, list_arg, str_arg};
use crate::eval::ops::to_number;
use bigdecimal::RoundingMode;
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[
    def("upper", 1, Some(1), Deep, upper),
    def("lower", 1, Some(1), Deep, lower),
    def("title", 1, Some(1), Deep, title),
    def("format", 1, None, Deep, format),
    def("formatlist", 1, None, Deep, formatlist),
    def("join", 2, Some(2), Deep, join),
    def("split", 2, Some(2), Deep, split),
    def("replace", 3, Some(3), Deep, replace),
    def("substr", 3, Some(3), Deep, substr),
    def("trimspace", 1, Some(1), Deep, trimspace),
    def("trim", 2, Some(2), Deep, trim),
    def("trimprefix", 2, Some(2), Deep, trimprefix),
    def("trimsuffix", 2, Some(2), Deep, trimsuffix),
    def("chomp", 1, Some(1), Deep, chomp),
    def("startswith", 2, Some(2), Deep, startswith),
    def("endswith", 2, Some(2), Deep, endswith),
    def("strrev", 1, Some(1), Deep, strrev),
];

fn s(v: String) -> FnResult {
    Ok(Value::String(v))
}

pub(super) fn upper(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.to_uppercase())
}

pub(super) fn lower(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.to_lowercase())
}

pub(super) fn title(a: &[Value]) -> FnResult {
    let mut out = String::new();
    let mut at_word_start = true;
    for c in str_arg(a, 0)?.chars() {
        if at_word_start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        at_word_start = !c.is_alphanumeric();
    }
    s(out)
}

pub(super) fn join(a: &[Value]) -> FnResult {
    let sep = str_arg(a, 0)?;
    let items = list_arg(a, 1)?;
    let parts = (0..items.len())
        .map(|i| str_arg(items, i).map_err(|e| FnError::arg(1, format!("element {i}: {}", e.msg))))
        .collect::<Result<Vec<_>, _>>()?;
    s(parts.join(&sep))
}

pub(super) fn split(a: &[Value]) -> FnResult {
    let (sep, text) = (str_arg(a, 0)?, str_arg(a, 1)?);
    if text.is_empty() {
        return Ok(Value::List(vec![Value::String(String::new())]));
    }
    Ok(Value::List(
        text.split(sep.as_str())
            .map(|p| Value::String(p.to_string()))
            .collect(),
    ))
}

pub(super) fn replace(a: &[Value]) -> FnResult {
    let (text, from, to) = (str_arg(a, 0)?, str_arg(a, 1)?, str_arg(a, 2)?);
    if from.len() > 1 && from.starts_with('/') && from.ends_with('/') {
        return Err(FnError::arg(
            1,
            "regular expression patterns are not supported yet",
        ));
    }
    s(text.replace(&from, &to))
}

pub(super) fn substr(a: &[Value]) -> FnResult {
    let chars: Vec<char> = str_arg(a, 0)?.chars().collect();
    let (offset, length) = (int_arg(a, 1)?, int_arg(a, 2)?);
    let len = chars.len() as i64;
    let start = if offset < 0 {
        (len + offset).max(0)
    } else {
        offset.min(len)
    };
    let end = if length < 0 {
        len
    } else {
        (start + length).min(len)
    };
    s(chars[start as usize..end.max(start) as usize]
        .iter()
        .collect())
}

pub(super) fn trimspace(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.trim().to_string())
}

pub(super) fn trim(a: &[Value]) -> FnResult {
    let cut: Vec<char> = str_arg(a, 1)?.chars().collect();
    s(str_arg(a, 0)?
        .trim_matches(|c| cut.contains(&c))
        .to_string())
}

pub(super) fn trimprefix(a: &[Value]) -> FnResult {
    let (text, prefix) = (str_arg(a, 0)?, str_arg(a, 1)?);
    s(text
        .strip_prefix(prefix.as_str())
        .unwrap_or(&text)
        .to_string())
}

pub(super) fn trimsuffix(a: &[Value]) -> FnResult {
    let (text, suffix) = (str_arg(a, 0)?, str_arg(a, 1)?);
    s(text
        .strip_suffix(suffix.as_str())
        .unwrap_or(&text)
        .to_string())
}

pub(super) fn chomp(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.trim_end_matches(['\n', '\r']).to_string())
}

pub(super) fn startswith(a: &[Value]) -> FnResult {
    Ok(Value::Bool(str_arg(a, 0)?.starts_with(&str_arg(a, 1)?)))
}

pub(super) fn endswith(a: &[Value]) -> FnResult {
    Ok(Value::Bool(str_arg(a, 0)?.ends_with(&str_arg(a, 1)?)))
}

pub(super) fn strrev(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.chars().rev().collect())
}

pub(super) fn format(a: &[Value]) -> FnResult {
    let spec = str_arg(a, 0)?;
    format_with(&spec, &a[1..])
        .map(Value::String)
        .map_err(|e| FnError {
            arg: e.arg.map(|i| i + 1),
            msg: e.msg,
        })
}

pub(super) fn formatlist(a: &[Value]) -> FnResult {
    let spec = str_arg(a, 0)?;
    let n = a[1..]
        .iter()
        .filter_map(|v| {
            if let Value::List(l) = v {
                Some(l.len())
            } else {
                None
            }
        })
        .max();
    let Some(n) = n else {
        return Ok(Value::List(vec![Value::String(
            format_with(&spec, &a[1..]).map_err(|e| FnError::call(e.msg))?,
        )]));
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let row = a[1..]
            .iter()
            .enumerate()
            .map(|(j, v)| match v {
                Value::List(l) if l.len() != n => Err(FnError::arg(
                    j + 1,
                    "all list arguments must have the same length",
                )),
                Value::List(l) => Ok(l[i].clone()),
                v => Ok(v.clone()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Value::String(
            format_with(&spec, &row).map_err(|e| FnError::call(e.msg))?,
        ));
    }
    Ok(Value::List(out))
}

/// Go-style `fmt` verbs as Terraform's `format` supports them.
fn format_with(spec: &str, args: &[Value]) -> Result<String, FnError> {
    let mut out = String::new();
    let mut chars = spec.chars().peekable();
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let (mut left, mut zero, mut plus) = (false, false, false);
        while let Some(&f) = chars.peek() {
            match f {
                '-' => left = true,
                '0' => zero = true,
                '+' => plus = true,
                ' ' | '#' => {}
                _ => break,
            }
            chars.next();
        }
        let width: String = std::iter::from_fn(|| chars.next_if(char::is_ascii_digit)).collect();
        let precision = if chars.next_if_eq(&'.').is_some() {
            Some(
                std::iter::from_fn(|| chars.next_if(char::is_ascii_digit))
                    .collect::<String>()
                    .parse::<usize>()
                    .unwrap_or(0),
            )
        } else {
            None
        };
        let verb = chars
            .next()
            .ok_or_else(|| FnError::call("unterminated format verb"))?;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let arg = args.get(next).ok_or_else(|| {
            FnError::call(format!(
                "not enough arguments for %{verb} at position {}",
                next + 1
            ))
        })?;
        let text = format_one(verb, arg, precision, plus).map_err(|m| FnError::arg(next, m))?;
        next += 1;
        let width = width.parse::<usize>().unwrap_or(0);
        let pad = width.saturating_sub(text.chars().count());
        if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            let fill = if zero && !matches!(verb, 's' | 'q' | 'v') {
                '0'
            } else {
                ' '
            };
            out.extend(std::iter::repeat_n(fill, pad));
            out.push_str(&text);
        }
    }
    if next < args.len() {
        return Err(FnError::call(format!(
            "too many arguments; only {next} used by format string"
        )));
    }
    Ok(out)
}

fn format_one(
    verb: char,
    arg: &Value,
    precision: Option<usize>,
    plus: bool,
) -> Result<String, String> {
    let num = || {
        to_number(arg)
            .ok_or_else(|| format!("number required for %{verb}, but have {}", arg.kind()))
    };
    let sign = |s: String, neg: bool| if plus && !neg { format!("+{s}") } else { s };
    Ok(match verb {
        'v' | 's' => {
            let text = match arg {
                Value::Null if verb == 's' => return Err("null value cannot be formatted".into()),
                v => crate::eval::ops::to_string(v)
                    .unwrap_or_else(|| super::encoding::to_json(v).to_string()),
            };
            match precision {
                Some(p) => text.chars().take(p).collect(),
                None => text,
            }
        }
        'q' => serde_json::to_string(
            &crate::eval::ops::to_string(arg).ok_or("string required for %q")?,
        )
        .unwrap_or_default(),
        't' => match arg {
            Value::Bool(b) => b.to_string(),
            _ => return Err(format!("bool required for %t, but have {}", arg.kind())),
        },
        'd' => {
            let n = num()?;
            if !n.is_integer() {
                return Err("an integer is required for %d".into());
            }
            sign(n.to_string(), n.signum() < 0)
        }
        'f' => {
            let n = num()?;
            let digits = precision.unwrap_or(6);
            let text = match n.to_decimal() {
                // Rounded from the exact decimal, as cty rounds its big floats.
                Some(d) => d
                    .with_scale_round(digits as i64, RoundingMode::HalfEven)
                    .to_plain_string(),
                None => format!("{:.*}", digits, n.as_f64()),
            };
            sign(text, n.signum() < 0)
        }
        'e' => {
            let f = num()?.as_f64();
            sign(format!("{f:.*e}", precision.unwrap_or(6)), f < 0.0)
        }
        'g' => {
            let n = num()?;
            sign(n.to_string(), n.signum() < 0)
        }
        'x' | 'X' | 'o' | 'b' => {
            let n = num()?
                .to_decimal()
                .filter(|d| d.is_integer())
                .map(|d| d.with_scale(0).as_bigint_and_exponent().0)
                .ok_or_else(|| format!("an integer is required for %{verb}"))?;
            match verb {
                'x' => format!("{n:x}"),
                'X' => format!("{n:X}"),
                'o' => format!("{n:o}"),
                _ => format!("{n:b}"),
            }
        }
        other => return Err(format!("unsupported format verb %{other}")),
    })
}
