//! RFC 3339 timestamps and Go duration strings, read and written exactly as
//! Terraform does, errors included.
//!
//! Terraform reads timestamps with Go's `time.Parse(time.RFC3339, …)` and
//! rewrites the Go parse error into words; its messages therefore follow
//! the order in which Go's layout-driven parser consumes the text (which
//! element it was at, and what text was left). [`go_parse`] follows that
//! parser step by step so the same input fails with the same message.
//! `formatdate` and `timeadd` come from cty, which first tries a strict
//! RFC 3339 reader and asks Go's parser only for an error to report (and
//! adds a few checks where Go is lenient); `timecmp` is Terraform's own and
//! uses Go's parser alone: [`Strictness`] selects which.
//!
//! Calendar arithmetic uses the `time` crate, whose years stop at 9999.

use time::{Date, Month, OffsetDateTime, Time, UtcOffset};

/// Which of the two timestamp readers Terraform 1.9 uses for a function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Strictness {
    /// cty's reader (`formatdate`, `timeadd`): valid RFC 3339 only.
    Strict,
    /// Go's `time.Parse` (`timecmp`): also a one-digit hour, a comma before
    /// the fraction, UTC offsets up to 24:60.
    Lenient,
}

/// Go's `time.ParseError`, reduced to what Terraform's message uses.
#[derive(Debug)]
struct GoError {
    /// The layout element being matched (`"2006"`, `"-"`, `"Z07:00"`…).
    layout_elem: &'static str,
    /// The input left when the element failed.
    value_elem: Vec<u8>,
    /// Go's own message (`": month out of range"`), often empty.
    message: String,
}

fn fail<T>(layout_elem: &'static str, value: &[u8], message: &str) -> Result<T, GoError> {
    Err(GoError {
        layout_elem,
        value_elem: value.to_vec(),
        message: message.to_string(),
    })
}

/// The parts of a timestamp; `offset` in seconds east of UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    year: i32,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    nanos: u32,
    offset: i32,
}

const RFC3339_LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// Reads an RFC 3339 timestamp; the error is Terraform's message.
pub(super) fn parse_timestamp(s: &str, strictness: Strictness) -> Result<OffsetDateTime, String> {
    let fields = match strictness {
        Strictness::Lenient => go_parse(s.as_bytes()).map_err(|e| describe(&e, false))?,
        Strictness::Strict => match strict_parse(s.as_bytes()) {
            Some(f) => f,
            None => {
                go_parse(s.as_bytes()).map_err(|e| describe(&e, true))?;
                return Err(describe(&strict_only_error(s.as_bytes()), true));
            }
        },
    };
    to_datetime(fields)
}

fn to_datetime(f: Fields) -> Result<OffsetDateTime, String> {
    let out_of_range = || "not a valid RFC3339 timestamp: out of range".to_string();
    let month = Month::try_from(f.month).map_err(|_| out_of_range())?;
    let date = Date::from_calendar_date(f.year, month, f.day).map_err(|_| out_of_range())?;
    let time =
        Time::from_hms_nano(f.hour, f.minute, f.second, f.nanos).map_err(|_| out_of_range())?;
    let offset = UtcOffset::from_whole_seconds(f.offset).map_err(|_| out_of_range())?;
    Ok(date.with_time(time).assume_offset(offset))
}

fn is_digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(s: &[u8], fixed: bool) -> Option<(u32, &[u8])> {
    if !is_digit(s, 0) {
        return None;
    }
    if !is_digit(s, 1) {
        if fixed {
            return None;
        }
        return Some(((s[0] - b'0') as u32, &s[1..]));
    }
    Some(((s[0] - b'0') as u32 * 10 + (s[1] - b'0') as u32, &s[2..]))
}

/// Go's `skip` for a one-byte literal of the layout.
fn skip<'a>(s: &'a [u8], literal: &'static str) -> Result<&'a [u8], GoError> {
    match s.first() {
        Some(&c) if c == literal.as_bytes()[0] => Ok(&s[1..]),
        _ => fail(literal, s, ""),
    }
}

/// Nanoseconds of a fraction's digits (Go reads at most nine).
fn nanos_of(digits: &[u8]) -> u32 {
    let digits = &digits[..digits.len().min(9)];
    let mut ns = 0u32;
    for d in digits {
        ns = ns * 10 + (d - b'0') as u32;
    }
    ns * 10u32.pow(9 - digits.len() as u32)
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in(month: u32, year: i32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Go's `time.Parse` with the RFC 3339 layout, element by element.
fn go_parse(v: &[u8]) -> Result<Fields, GoError> {
    // Year: four bytes, the first a digit, all of them digits.
    if v.len() < 4 || !is_digit(v, 0) || !v[..4].iter().all(u8::is_ascii_digit) {
        return fail("2006", v, "");
    }
    let year: i32 = std::str::from_utf8(&v[..4])
        .expect("digits")
        .parse()
        .expect("digits");
    let s = skip(&v[4..], "-")?;
    let (month, rest) = getnum(s, true).ok_or_else(|| bad("01", s))?;
    if !(1..=12).contains(&month) {
        return fail("01", rest, ": month out of range");
    }
    let s = skip(rest, "-")?;
    let (day, rest) = getnum(s, true).ok_or_else(|| bad("02", s))?;
    let s = skip(rest, "T")?;
    let (hour, rest) = getnum(s, false).ok_or_else(|| bad("15", s))?;
    if hour >= 24 {
        return fail("15", rest, ": hour out of range");
    }
    let s = skip(rest, ":")?;
    let (minute, rest) = getnum(s, true).ok_or_else(|| bad("04", s))?;
    if minute >= 60 {
        return fail("04", rest, ": minute out of range");
    }
    let s = skip(rest, ":")?;
    let (second, mut rest) = getnum(s, true).ok_or_else(|| bad("05", s))?;
    if second >= 60 {
        return fail("05", rest, ": second out of range");
    }
    let mut nanos = 0;
    // A fraction the layout does not mention is still accepted, after a
    // period or a comma.
    if rest.len() >= 2 && (rest[0] == b'.' || rest[0] == b',') && is_digit(rest, 1) {
        let n = 1 + rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        nanos = nanos_of(&rest[1..n]);
        rest = &rest[n..];
    }
    let (offset, rest) = go_offset(rest)?;
    if !rest.is_empty() {
        let extra = format!(": extra text: {}", go_quote(rest));
        return fail("", rest, &extra);
    }
    if day < 1 || day > days_in(month, year) {
        return fail("", b"", ": day out of range");
    }
    Ok(Fields {
        year,
        month: month as u8,
        day: day as u8,
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        nanos,
        offset,
    })
}

fn bad(layout_elem: &'static str, value: &[u8]) -> GoError {
    GoError {
        layout_elem,
        value_elem: value.to_vec(),
        message: String::new(),
    }
}

/// The `Z07:00` element: `Z`, or a sign, two digits, a colon, two digits.
fn go_offset(s: &[u8]) -> Result<(i32, &[u8]), GoError> {
    if s.first() == Some(&b'Z') {
        return Ok((0, &s[1..]));
    }
    if s.len() < 6 || s[3] != b':' {
        return fail("Z07:00", s, "");
    }
    let rest = &s[6..];
    let hours = getnum(&s[1..3], true);
    let minutes = hours.and_then(|_| getnum(&s[4..6], true));
    let (hr, mm) = (hours.map_or(0, |(h, _)| h), minutes.map_or(0, |(m, _)| m));
    // Go accepts offsets of 24 hours or 60 minutes, only not beyond.
    if mm > 60 {
        return fail("Z07:00", rest, ": time zone offset minute out of range");
    }
    if hr > 24 {
        return fail("Z07:00", rest, ": time zone offset hour out of range");
    }
    let sign = match s[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return fail("Z07:00", s, ""),
    };
    if minutes.is_none() {
        return fail("Z07:00", s, "");
    }
    Ok((sign * ((hr * 60 + mm) * 60) as i32, rest))
}

/// cty's strict reader: fixed positions, every field in range.
fn strict_parse(s: &[u8]) -> Option<Fields> {
    if s.len() < 19 {
        return None;
    }
    let num = |from: usize, to: usize, min: u32, max: u32| -> Option<u32> {
        let mut x = 0u32;
        for &c in &s[from..to] {
            if !c.is_ascii_digit() {
                return None;
            }
            x = x * 10 + (c - b'0') as u32;
        }
        (min..=max).contains(&x).then_some(x)
    };
    let year = num(0, 4, 0, 9999)? as i32;
    let month = num(5, 7, 1, 12)?;
    let day = num(8, 10, 1, days_in(month, year))?;
    let hour = num(11, 13, 0, 23)?;
    let minute = num(14, 16, 0, 59)?;
    let second = num(17, 19, 0, 59)?;
    if (s[4], s[7], s[10], s[13], s[16]) != (b'-', b'-', b'T', b':', b':') {
        return None;
    }
    let mut rest = &s[19..];
    let mut nanos = 0;
    if rest.len() >= 2 && rest[0] == b'.' && is_digit(rest, 1) {
        let n = 1 + rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        nanos = nanos_of(&rest[1..n]);
        rest = &rest[n..];
    }
    let offset = if rest == b"Z" {
        0
    } else {
        if rest.len() != 6 || rest[3] != b':' {
            return None;
        }
        let two = |i: usize, max: u32| {
            (is_digit(rest, i) && is_digit(rest, i + 1))
                .then(|| (rest[i] - b'0') as u32 * 10 + (rest[i + 1] - b'0') as u32)
                .filter(|x| *x <= max)
        };
        let (hr, mm) = (two(1, 23)?, two(4, 59)?);
        let secs = ((hr * 60 + mm) * 60) as i32;
        match rest[0] {
            b'+' => secs,
            b'-' => -secs,
            _ => return None,
        }
    };
    Some(Fields {
        year,
        month: month as u8,
        day: day as u8,
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        nanos,
        offset,
    })
}

/// The error cty reports for text Go's parser accepts but RFC 3339 does not.
fn strict_only_error(s: &[u8]) -> GoError {
    let two = |i: usize| (s[i] - b'0') as u32 * 10 + (s[i + 1] - b'0') as u32;
    if s.get(12) == Some(&b':') {
        return GoError {
            layout_elem: "15",
            value_elem: s[11..12].to_vec(),
            message: ": hour must have two digits".into(),
        };
    }
    if s.get(19) == Some(&b',') {
        return GoError {
            layout_elem: ".",
            value_elem: b",".to_vec(),
            message: ": sub-second separator must be a period".into(),
        };
    }
    let n = s.len();
    if s[n - 1] != b'Z' && (two(n - 5) >= 24 || two(n - 2) >= 60) {
        return GoError {
            layout_elem: "Z07:00",
            value_elem: s[n - 6..].to_vec(),
            message: ": timezone out of range".into(),
        };
    }
    GoError {
        layout_elem: RFC3339_LAYOUT,
        value_elem: s.to_vec(),
        message: String::new(),
    }
}

/// Terraform's wording of a Go parse error; cty (`strict`) words a few
/// hour and minute cases more helpfully than Terraform's own copy.
fn describe(e: &GoError, strict: bool) -> String {
    let value = String::from_utf8_lossy(&e.value_elem);
    if e.layout_elem.is_empty() && value.is_empty() && !e.message.is_empty() {
        return format!("not a valid RFC3339 timestamp{}", e.message);
    }
    let what = match e.layout_elem {
        "2006" => "year",
        "01" => "month",
        "02" => "day of month",
        "15" => "hour",
        "04" => "minute",
        "05" => "second",
        "Z07:00" => "UTC offset",
        "T" => {
            return "not a valid RFC3339 timestamp: missing required time introducer 'T'".into();
        }
        ":" | "-" if value.is_empty() => {
            return format!(
                "not a valid RFC3339 timestamp: end of string where {:?} is expected",
                e.layout_elem
            );
        }
        ":" | "-" => {
            return format!(
                "not a valid RFC3339 timestamp: found {value:?} where {:?} is expected",
                e.layout_elem
            );
        }
        _ => "timestamp segment",
    };
    if value.is_empty() {
        return format!("not a valid RFC3339 timestamp: end of string before {what}");
    }
    match what {
        "hour" if strict && value.contains(':') => {
            "not a valid RFC3339 timestamp: hour must be between 0 and 23 inclusive".into()
        }
        "hour" if strict && e.value_elem.len() != 2 => {
            "not a valid RFC3339 timestamp: hour must have exactly two digits".into()
        }
        "minute" if strict && e.value_elem.len() != 2 => {
            "not a valid RFC3339 timestamp: minute must have exactly two digits".into()
        }
        _ => format!("not a valid RFC3339 timestamp: cannot use {value:?} as {what}"),
    }
}

/// Go's `time.Format(time.RFC3339)`: whole seconds, `Z` for a zero offset.
pub(super) fn format_rfc3339(t: &OffsetDateTime) -> String {
    let mut out = String::with_capacity(25);
    out.push_str(&go_year(t.year()));
    out.push_str(&format!(
        "-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    ));
    out.push_str(&offset_text(t.offset(), true, true));
    out
}

/// A year as Go's four-digit layout element writes it (the sign before
/// the zero padding).
fn go_year(year: i32) -> String {
    let sign = if year < 0 { "-" } else { "" };
    format!("{sign}{:04}", year.unsigned_abs())
}

/// A UTC offset as Go writes it: `Z` for zero when `z_for_utc`, otherwise
/// `±hh:mm` (`colon`) or `±hhmm`; seconds of the offset are dropped.
pub(super) fn offset_text(offset: UtcOffset, z_for_utc: bool, colon: bool) -> String {
    let total = offset.whole_seconds();
    if z_for_utc && total == 0 {
        return "Z".into();
    }
    let minutes = total / 60;
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    let sep = if colon { ":" } else { "" };
    format!("{sign}{:02}{sep}{:02}", m / 60, m % 60)
}

/// Go's `time.ParseDuration`: nanoseconds, or its error message.
pub(super) fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(orig.as_bytes()));
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let (whole, rest) = leading_int(s).ok_or_else(invalid)?;
        let had_whole = rest.len() != s.len();
        s = rest;
        let (mut frac, mut scale, mut had_frac) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            let (f, sc, rest) = leading_fraction(&s[1..]);
            had_frac = rest.len() != s.len() - 1;
            (frac, scale, s) = (f, sc, rest);
        }
        if !had_whole && !had_frac {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                go_quote(orig.as_bytes())
            ));
        }
        let (unit_text, rest) = s.split_at(unit_len);
        s = rest;
        let unit: u64 = match unit_text {
            b"ns" => 1,
            // `µs` with the micro sign or the Greek mu.
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60 * 1_000_000_000,
            b"h" => 3600 * 1_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit_text),
                    go_quote(orig.as_bytes())
                ));
            }
        };
        if whole > LIMIT / unit {
            return Err(invalid());
        }
        let mut v = whole * unit;
        if frac > 0 {
            // Go adds the fraction in floating point, truncating.
            v += (frac as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        total += v;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    if total > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(total as i64)
}

/// Go's `leadingInt`: the digits at the start, None past 2^63.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + (s[i] - b'0') as u64;
        if x > 1 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Go's `leadingFraction`: digits after the point, and their scale;
/// digits past the precision of a u64 are read and ignored.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        let c = s[i];
        i += 1;
        if overflow {
            continue;
        }
        if x > ((1u64 << 63) - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + (c - b'0') as u64;
        if y > 1 << 63 {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[i..])
}

/// Go's `time` package quoting: ASCII as is (with `"` and `\` escaped),
/// every other byte as `\xNN`.
fn go_quote(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in s {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7f => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}
