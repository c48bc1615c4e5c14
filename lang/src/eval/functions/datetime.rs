//! Date and time functions: timestamp, plantimestamp, formatdate, timeadd,
//! timecmp. Timestamps are RFC 3339 strings (see [`rfc3339`] for how they
//! are read, with Terraform's exact errors); the calendar is the `time`
//! crate's.

mod rfc3339;
#[cfg(test)]
mod tests;

use super::{Def, FnError, FnResult, Unknowns::Deep, def, def_env, def_impure, str_arg};
use crate::eval::env::EvalEnv;
use fleetform_shared::value::Value;
use rfc3339::{Strictness, format_rfc3339, offset_text, parse_duration, parse_timestamp};
use time::{Duration, OffsetDateTime};

pub(super) const DEFS: &[Def] = &[
    def_impure("timestamp", timestamp),
    def_env("plantimestamp", Deep, plantimestamp),
    def("formatdate", Deep, formatdate),
    def("timeadd", Deep, timeadd),
    def("timecmp", Deep, timecmp),
];

/// The current time in UTC, to the second (Go's RFC 3339 layout has no
/// fraction).
/// The current time in RFC 3339 (UTC), as `timestamp()` gives it: what a
/// plan records for `plantimestamp()`.
/// A duration written as Go writes them (`90s`, `5m`, `1h30m`), as
/// `-lock-timeout` takes it; the error is Go's message.
pub fn parse_go_duration(text: &str) -> Result<std::time::Duration, String> {
    let nanos = rfc3339::parse_duration(text)?;
    u64::try_from(nanos)
        .map(std::time::Duration::from_nanos)
        .map_err(|_| format!("negative duration {text:?}"))
}

pub fn now_rfc3339() -> String {
    format_rfc3339(&OffsetDateTime::now_utc())
}

/// The moment an RFC 3339 timestamp (as [`now_rfc3339`] writes them)
/// names; None when it is not one.
pub fn parse_rfc3339(text: &str) -> Option<std::time::SystemTime> {
    let t = rfc3339::parse_timestamp(text, rfc3339::Strictness::Strict).ok()?;
    Some(std::time::SystemTime::from(t))
}

fn timestamp(_: &EvalEnv, _: &[Value]) -> FnResult {
    Ok(Value::String(format_rfc3339(&OffsetDateTime::now_utc())))
}

/// The time the plan was made; unknown when the caller has none (as
/// Terraform's is while validating).
fn plantimestamp(env: &EvalEnv, _: &[Value]) -> FnResult {
    Ok(env
        .plan_timestamp
        .clone()
        .map_or(Value::unknown(), Value::String))
}

/// `timeadd` is cty's: both of its errors blame the call, not an argument.
fn timeadd(a: &[Value]) -> FnResult {
    let (ts, duration) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let t = parse_timestamp(&ts, Strictness::Strict).map_err(FnError::call)?;
    let nanos = parse_duration(&duration).map_err(FnError::call)?;
    // Go's arithmetic has no year limit; the `time` crate stops at 9999.
    let sum = t
        .checked_add(Duration::nanoseconds(nanos))
        .filter(|t| t.year() <= 9999)
        .ok_or_else(|| FnError::call("the resulting timestamp is after the year 9999"))?;
    Ok(Value::String(format_rfc3339(&sum)))
}

/// -1, 0 or 1 as the first instant is before, equal to or after the second
/// (offsets taken into account); Terraform's own function, with Go's more
/// lenient reading of the timestamps.
fn timecmp(a: &[Value]) -> FnResult {
    let read = |i: usize| {
        let text = str_arg(a, i)?;
        parse_timestamp(&text, Strictness::Lenient).map_err(|e| FnError::arg(i, e))
    };
    let (x, y) = (read(0)?, read(1)?);
    Ok(Value::int(x.cmp(&y) as i64))
}

/// cty's `formatdate`: the timestamp is read first, then the spec is
/// written out token by token (see [`tokens`]).
fn formatdate(a: &[Value]) -> FnResult {
    let (spec, ts) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let t = parse_timestamp(&ts, Strictness::Strict).map_err(|e| FnError::arg(1, e))?;
    let mut out = String::new();
    for tok in tokens(&spec) {
        match tok.as_bytes()[0] {
            b'\'' => out.push_str(&literal(tok)?),
            c if c.is_ascii_alphabetic() => out.push_str(&verb(tok, &t)?),
            _ => out.push_str(tok),
        }
    }
    Ok(Value::String(out))
}

/// Splits a date format into runs of one repeated letter (verbs), quoted
/// literals (`''` alone is a quote; inside quotes `''` stands for one), and
/// anything else, as cty's scanner does.
fn tokens(spec: &str) -> Vec<&str> {
    let b = spec.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i] == b'\'' {
            if b.get(i + 1) == Some(&b'\'') {
                i += 2;
            } else {
                // Up to the closing quote; doubled quotes are escapes. An
                // unclosed quote runs to the end.
                i += 1;
                while i < b.len() {
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    i += 1;
                }
            }
        } else if b[i].is_ascii_alphabetic() {
            while i < b.len() && b[i] == b[start] {
                i += 1;
            }
        } else {
            while i < b.len() && b[i] != b'\'' && !b[i].is_ascii_alphabetic() {
                i += 1;
            }
        }
        out.push(&spec[start..i]);
    }
    out
}

/// A quoted literal's text: `''` is a quote, `'x''y'` is `x'y`.
fn literal(tok: &str) -> Result<String, FnError> {
    if tok.len() == 1 || !tok.ends_with('\'') {
        return Err(FnError::arg(0, "unterminated literal '"));
    }
    if tok == "''" {
        return Ok("'".into());
    }
    Ok(tok[1..tok.len() - 1].replace("''", "'"))
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// One verb (`YYYY`, `MMM`, `hh`, `ZZZ`…) applied to `t`.
fn verb(tok: &str, t: &OffsetDateTime) -> Result<String, FnError> {
    let bad = |why: &str| {
        let sep = if why.is_empty() { "" } else { ": " };
        Err(FnError::arg(
            0,
            format!("invalid date format verb {tok:?}{sep}{why}"),
        ))
    };
    let n = tok.len();
    let two_forms = |v: u32, what: &str, one: &str| match n {
        1 => Ok(v.to_string()),
        2 => Ok(format!("{v:02}")),
        _ => bad(&format!(
            "{what} must either be \"{one}\" or \"{one}{one}\""
        )),
    };
    let hour12 = match t.hour() % 12 {
        0 => 12,
        h => h,
    };
    match &tok[..1] {
        "Y" => match n {
            2 => Ok(format!("{:02}", t.year() % 100)),
            4 => Ok(format!("{:04}", t.year())),
            _ => bad("year must either be \"YY\" or \"YYYY\""),
        },
        "M" => {
            let name = MONTHS[t.month() as usize - 1];
            match n {
                1 | 2 => two_forms(t.month() as u32, "month", "M"),
                3 => Ok(name[..3].to_string()),
                4 => Ok(name.to_string()),
                _ => bad("month must be \"M\", \"MM\", \"MMM\", or \"MMMM\""),
            }
        }
        "D" => two_forms(t.day() as u32, "day of month", "D"),
        "E" => {
            let name = WEEKDAYS[t.weekday().number_days_from_sunday() as usize];
            match n {
                3 => Ok(name[..3].to_string()),
                4 => Ok(name.to_string()),
                _ => bad("day of week must either be \"EEE\" or \"EEEE\""),
            }
        }
        "h" => two_forms(t.hour() as u32, "24-hour", "h"),
        "H" => two_forms(hour12 as u32, "12-hour", "H"),
        "A" | "a" if n != 2 => {
            let l = &tok[..1];
            bad(&format!("must be \"{l}{l}\""))
        }
        "A" => Ok(if t.hour() < 12 { "AM" } else { "PM" }.into()),
        "a" => Ok(if t.hour() < 12 { "am" } else { "pm" }.into()),
        "m" => two_forms(t.minute() as u32, "minute", "m"),
        "s" => two_forms(t.second() as u32, "second", "s"),
        "Z" => match n {
            1 => Ok(offset_text(t.offset(), true, true)),
            3 => Ok(match offset_text(t.offset(), false, false).as_str() {
                "+0000" => "UTC".into(),
                other => other.into(),
            }),
            4 => Ok(offset_text(t.offset(), false, false)),
            5 => Ok(offset_text(t.offset(), false, true)),
            _ => bad("timezone must be Z, ZZZZ, or ZZZZZ"),
        },
        _ => bad(""),
    }
}
