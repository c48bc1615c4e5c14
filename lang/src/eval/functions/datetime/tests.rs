//! Golden tests for the date and time functions: Terraform's documented
//! examples, cty's and Terraform's own test tables (inputs and expected
//! texts), unknown and null arguments, and the phase rules of `timestamp`.

use super::rfc3339::{Strictness, parse_duration, parse_timestamp};
use crate::eval::EvalEnv;
use crate::eval::functions::testing::{applying, err, err_in, lit, ok, ok_in, s};
use fleetform_shared::value::Value;

#[test]
fn formatdate_documented_examples() {
    for (spec, ts, want) in [
        (
            "DD MMM YYYY hh:mm ZZZ",
            "2018-01-02T23:12:01Z",
            "02 Jan 2018 23:12 UTC",
        ),
        (
            "EEEE, DD-MMM-YY hh:mm:ss ZZZ",
            "2018-01-02T23:12:01Z",
            "Tuesday, 02-Jan-18 23:12:01 UTC",
        ),
        (
            "EEE, DD MMM YYYY hh:mm:ss ZZZ",
            "2018-01-02T23:12:01-08:00",
            "Tue, 02 Jan 2018 23:12:01 -0800",
        ),
        ("MMM DD, YYYY", "2018-01-02T23:12:01Z", "Jan 02, 2018"),
        ("HH:mmaa", "2018-01-02T23:12:01Z", "11:12pm"),
        ("h'h'mm", "2018-01-02T23:12:01-08:00", "23h12"),
        ("H 'o''clock'", "2018-01-02T23:12:01-08:00", "11 o'clock"),
    ] {
        let src = format!("formatdate({}, {})", lit(spec), lit(ts));
        assert_eq!(ok(&src), s(want), "{src}");
    }
}

#[test]
fn formatdate_every_verb() {
    // cty's table, on Go's reference time (a Monday afternoon).
    let reference = "2006-01-02T15:04:05Z";
    for (spec, want) in [
        ("", ""),
        ("YYYY-MM-DD", "2006-01-02"),
        ("EEE, MMM D ''YY", "Mon, Jan 2 '06"),
        ("hh:mm:ss", "15:04:05"),
        ("H 'o''clock' AA", "3 o'clock PM"),
        ("hh:mm:ssZZZZ", "15:04:05+0000"),
        ("hh:mm:ssZZZZZ", "15:04:05+00:00"),
        ("MMMM", "January"),
        ("EEEE", "Monday"),
        ("aa", "pm"),
        ("YYYY-MM-DD'T'hh:mm:ssZ", "2006-01-02T15:04:05Z"),
        (
            "EEEE, DD-MMM-YY hh:mm:ss ZZZ",
            "Monday, 02-Jan-06 15:04:05 UTC",
        ),
        ("M/D h:m:s", "1/2 15:4:5"),
        ("'it''s' YY", "it's 06"),
        ("'abc''", "abc'"),
        ("-- : ,", "-- : ,"),
    ] {
        let src = format!("formatdate({}, {})", lit(spec), lit(reference));
        assert_eq!(ok(&src), s(want), "{src}");
    }
    let early = "2021-03-04T00:05:06.789+05:30";
    for (spec, want) in [
        ("HH AA h aa", "12 AM 0 am"),
        ("Z ZZZ ZZZZ ZZZZZ", "+05:30 +0530 +0530 +05:30"),
        ("s ss", "6 06"),
    ] {
        let src = format!("formatdate({}, {})", lit(spec), lit(early));
        assert_eq!(ok(&src), s(want), "{src}");
    }
}

#[test]
fn formatdate_spec_errors_blame_the_spec() {
    let ts = "2006-01-02T15:04:05Z";
    for (spec, want) in [
        (
            "Y",
            r#"invalid date format verb "Y": year must either be "YY" or "YYYY""#,
        ),
        (
            "YYYYY",
            r#"invalid date format verb "YYYYY": year must either be "YY" or "YYYY""#,
        ),
        ("A", r#"invalid date format verb "A": must be "AA""#),
        ("a", r#"invalid date format verb "a": must be "aa""#),
        (
            "MMMMM",
            r#"invalid date format verb "MMMMM": month must be "M", "MM", "MMM", or "MMMM""#,
        ),
        (
            "DDD",
            r#"invalid date format verb "DDD": day of month must either be "D" or "DD""#,
        ),
        (
            "EE",
            r#"invalid date format verb "EE": day of week must either be "EEE" or "EEEE""#,
        ),
        (
            "hhh",
            r#"invalid date format verb "hhh": 24-hour must either be "h" or "hh""#,
        ),
        (
            "ZZ",
            r#"invalid date format verb "ZZ": timezone must be Z, ZZZZ, or ZZZZZ"#,
        ),
        ("x", r#"invalid date format verb "x""#),
        ("'blah blah", "unterminated literal '"),
        ("'", "unterminated literal '"),
    ] {
        let src = format!("formatdate({}, {})", lit(spec), lit(ts));
        assert_eq!(
            err(&src),
            format!("Invalid value for \"format\" parameter: {want}."),
            "{src}"
        );
    }
}

#[test]
fn strict_timestamp_errors_match_cty() {
    for (ts, want) in [
        ("", "end of string before year"),
        ("2017-01-02", "missing required time introducer 'T'"),
        (
            "2017-12-02t00:00:00Z",
            "missing required time introducer 'T'",
        ),
        ("2017:01:02", r#"found ":01:02" where "-" is expected"#),
        ("2017", r#"end of string where "-" is expected"#),
        ("2017-01-02T", "end of string before hour"),
        ("2017-01-02T00", r#"end of string where ":" is expected"#),
        ("2017-01-02T00:00:00", "end of string before UTC offset"),
        (
            "2017-01-02T26:00:00Z",
            "hour must be between 0 and 23 inclusive",
        ),
        (
            "2017-13-02T00:00:00Z",
            r#"cannot use "-02T00:00:00Z" as month"#,
        ),
        ("2017-02-31T00:00:00Z", "day out of range"),
        (
            "\"2017-12-02T00:00:00Z\"",
            r#"cannot use "\"2017-12-02T00:00:00Z\"" as year"#,
        ),
        (
            "2-12-02T00:00:00Z",
            r#"cannot use "2-12-02T00:00:00Z" as year"#,
        ),
        ("2000-01-01T1:12:34Z", "hour must have exactly two digits"),
        ("2000-01-01T01:1:34Z", "minute must have exactly two digits"),
        ("2000-01-01T01:01:1Z", r#"cannot use "1Z" as second"#),
        (
            "2000-01-01T00:00:00,000Z",
            r#"cannot use "," as timestamp segment"#,
        ),
        (
            "2000-01-01T00:00:00+24:00",
            r#"cannot use "+24:00" as UTC offset"#,
        ),
        (
            "2000-01-01T00:00:00+00:60",
            r#"cannot use "+00:60" as UTC offset"#,
        ),
        (
            "2000-01-01T00:00:00Zjunk",
            r#"cannot use "junk" as timestamp segment"#,
        ),
        (
            "2000-01-01T00:00:00+0100",
            r#"cannot use "+0100" as UTC offset"#,
        ),
        (
            "2000-01-01T00:60:00Z",
            "minute must have exactly two digits",
        ),
        ("2000-01-01T00:00:60Z", r#"cannot use "Z" as second"#),
        (
            "2017-01-2T00:00:00Z",
            r#"cannot use "2T00:00:00Z" as day of month"#,
        ),
        ("2017-01-02T00:00:00.Z", r#"cannot use ".Z" as UTC offset"#),
        ("2100-02-29T00:00:00Z", "day out of range"),
    ] {
        let got = parse_timestamp(ts, Strictness::Strict).unwrap_err();
        assert_eq!(
            got,
            format!("not a valid RFC3339 timestamp: {want}"),
            "{ts}"
        );
    }
}

#[test]
fn lenient_reader_accepts_what_go_accepts() {
    let read = |ts: &str| parse_timestamp(ts, Strictness::Lenient);
    let same = |a: &str, b: &str| assert_eq!(read(a).unwrap(), read(b).unwrap(), "{a} = {b}");
    same("2000-01-01T1:12:34Z", "2000-01-01T01:12:34Z");
    same("2000-01-01T00:00:00,5Z", "2000-01-01T00:00:00.5Z");
    same("2000-01-01T00:00:00+24:00", "1999-12-31T00:00:00Z");
    // Fraction digits past nanoseconds are read and dropped, by both readers.
    same(
        "2000-01-01T00:00:00.1234567891Z",
        "2000-01-01T00:00:00.123456789Z",
    );
    assert_eq!(
        parse_timestamp("2000-01-01T00:00:00.1234567891Z", Strictness::Strict),
        read("2000-01-01T00:00:00.123456789Z")
    );
    assert!(parse_timestamp("2000-02-29T23:59:59-23:59", Strictness::Strict).is_ok());
    // Terraform's own wording lacks cty's special cases.
    assert_eq!(
        read("2017-01-02T26:00:00Z").unwrap_err(),
        r#"not a valid RFC3339 timestamp: cannot use ":00:00Z" as hour"#
    );
    assert_eq!(
        read("2000-01-01T00:00:00+25:00").unwrap_err(),
        "not a valid RFC3339 timestamp: end of string before UTC offset"
    );
}

#[test]
fn formatdate_blames_the_timestamp_and_handles_unknown_and_null() {
    assert_eq!(
        err(r#"formatdate("YYYY", "2017-02-31T00:00:00Z")"#),
        "Invalid value for \"time\" parameter: not a valid RFC3339 timestamp: day out of range."
    );
    assert_eq!(
        ok(r#"formatdate(var.unknown, "2017-01-01T00:00:00Z")"#),
        Value::unknown()
    );
    assert_eq!(ok(r#"formatdate("YYYY", var.unknown)"#), Value::unknown());
    assert_eq!(
        err(r#"formatdate(null, "2017-01-01T00:00:00Z")"#),
        "Invalid value for \"format\" parameter: argument must not be null."
    );
}

#[test]
fn timeadd_examples_and_errors() {
    for (ts, d, want) in [
        ("2017-11-22T00:00:00Z", "10m", "2017-11-22T00:10:00Z"),
        ("2017-11-22T00:00:00Z", "1s", "2017-11-22T00:00:01Z"),
        ("2017-11-22T00:00:00Z", "10m1s", "2017-11-22T00:10:01Z"),
        ("2017-11-22T00:00:00Z", "-1h", "2017-11-21T23:00:00Z"),
        ("2017-11-22T00:00:00Z", "1h30m", "2017-11-22T01:30:00Z"),
        ("2017-11-22T00:00:00Z", "1.5h", "2017-11-22T01:30:00Z"),
        ("2017-11-22T00:00:00Z", "-10s", "2017-11-21T23:59:50Z"),
        ("2017-11-22T00:00:00Z", "1500000µs", "2017-11-22T00:00:01Z"),
        ("2017-11-22T00:00:00Z", "1500ms", "2017-11-22T00:00:01Z"),
        ("2017-11-22T00:00:00Z", "0", "2017-11-22T00:00:00Z"),
        ("2017-11-22T00:00:00.9Z", "0s", "2017-11-22T00:00:00Z"),
        ("2020-02-28T23:00:00Z", "2h", "2020-02-29T01:00:00Z"),
        (
            "2017-11-22T00:00:00+01:00",
            "1h",
            "2017-11-22T01:00:00+01:00",
        ),
        ("2017-11-22T00:00:00+00:00", "0s", "2017-11-22T00:00:00Z"),
        (
            "2017-11-22T00:00:00-05:30",
            "-24h",
            "2017-11-21T00:00:00-05:30",
        ),
    ] {
        let src = format!("timeadd({}, {})", lit(ts), lit(d));
        assert_eq!(ok(&src), s(want), "{src}");
    }
    for (ts, d, want) in [
        (
            "2017-11-22",
            "-1h",
            "not a valid RFC3339 timestamp: missing required time introducer 'T'",
        ),
        (
            "2017-11-22T00:00:00Z",
            "1d",
            r#"time: unknown unit "d" in duration "1d""#,
        ),
        (
            "2017-11-22T00:00:00Z",
            "1",
            r#"time: missing unit in duration "1""#,
        ),
        ("2017-11-22T00:00:00Z", "", r#"time: invalid duration """#),
        ("2017-11-22T00:00:00Z", "h", r#"time: invalid duration "h""#),
        (
            "9999-12-31T23:00:00Z",
            "2h",
            "the resulting timestamp is after the year 9999",
        ),
    ] {
        let src = format!("timeadd({}, {})", lit(ts), lit(d));
        assert_eq!(
            err(&src),
            format!("Call to function \"timeadd\" failed: {want}."),
            "{src}"
        );
    }
    assert_eq!(ok(r#"timeadd(var.unknown, "1h")"#), Value::unknown());
}

#[test]
fn go_durations() {
    for (text, want) in [
        ("0", 0),
        ("-0", 0),
        ("+5s", 5_000_000_000),
        ("1h2m3s4ms5us6ns", 3_723_004_005_006),
        ("1μs", 1_000),
        (".5s", 500_000_000),
        ("5.s", 5_000_000_000),
        ("-2h45m", -9_900_000_000_000),
        ("2562047h47m16.854775807s", i64::MAX),
        ("-2562047h47m16.854775808s", i64::MIN),
    ] {
        assert_eq!(parse_duration(text), Ok(want), "{text}");
    }
    for (text, want) in [
        (
            "2562047h47m16.854775808s",
            r#"time: invalid duration "2562047h47m16.854775808s""#,
        ),
        ("1ss", r#"time: unknown unit "ss" in duration "1ss""#),
        (".s", r#"time: invalid duration ".s""#),
        (
            "1é",
            r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#,
        ),
        ("-", r#"time: invalid duration "-""#),
    ] {
        assert_eq!(parse_duration(text).unwrap_err(), want, "{text}");
    }
}

#[test]
fn timecmp_examples_and_errors() {
    for (a, b, want) in [
        ("2017-11-22T00:00:00Z", "2017-11-22T00:00:00Z", 0),
        ("2017-11-22T00:00:00Z", "2017-11-22T01:00:00Z", -1),
        ("2017-11-22T01:00:00Z", "2017-11-22T00:00:00Z", 1),
        ("2017-11-22T01:00:00Z", "2017-11-22T00:00:00-01:00", 0),
        ("2017-11-22T00:00:00Z", "2017-11-22T01:00:00+01:00", 0),
        ("2017-11-22T00:00:01Z", "2017-11-22T01:00:00+01:00", 1),
        ("2017-11-22T01:00:00Z", "2017-11-22T00:59:00-01:00", -1),
        ("2017-11-22T01:00:00+01:00", "2017-11-22T01:00:00-01:00", -1),
        ("2017-11-22T00:00:00.5Z", "2017-11-22T00:00:00Z", 1),
        ("2017-11-22T1:00:00Z", "2017-11-22T01:00:00Z", 0),
    ] {
        let src = format!("timecmp({}, {})", lit(a), lit(b));
        assert_eq!(ok(&src), Value::int(want), "{src}");
    }
    assert_eq!(
        err(r#"timecmp("2017-11-22T00:00:00Z", "bloop")"#),
        "Invalid value for \"timestamp_b\" parameter: not a valid RFC3339 timestamp: cannot use \"bloop\" as year."
    );
    assert_eq!(
        err(r#"timecmp("2017-11-22 00:00:00Z", "2017-11-22T00:00:00Z")"#),
        "Invalid value for \"timestamp_a\" parameter: not a valid RFC3339 timestamp: missing required time introducer 'T'."
    );
    assert_eq!(
        ok(r#"timecmp(var.unknown, "2017-11-22T00:00:00Z")"#),
        Value::unknown()
    );
    assert_eq!(
        err(r#"timecmp(null, "2017-11-22T00:00:00Z")"#),
        "Invalid value for \"timestamp_a\" parameter: argument must not be null."
    );
}

#[test]
fn timestamp_is_unknown_while_planning_and_now_when_applying() {
    assert_eq!(ok("timestamp()"), Value::unknown());
    let before = time::OffsetDateTime::now_utc().unix_timestamp();
    let got = ok_in(&applying(), "timestamp()");
    let after = time::OffsetDateTime::now_utc().unix_timestamp();
    let text = got.as_str().expect("a string").to_string();
    assert_eq!(text.len(), 20, "{text}");
    assert!(text.ends_with('Z'), "{text}");
    let t = parse_timestamp(&text, Strictness::Strict)
        .unwrap()
        .unix_timestamp();
    assert!(before <= t && t <= after, "{text}");
    assert_eq!(
        err("timestamp(1)"),
        "Function \"timestamp\" expects only 0 argument(s)."
    );
}

#[test]
fn plantimestamp_is_the_plans_time_or_unknown() {
    assert_eq!(ok("plantimestamp()"), Value::unknown());
    let env = EvalEnv {
        plan_timestamp: Some("2018-05-13T07:44:12Z".into()),
        ..EvalEnv::default()
    };
    assert_eq!(ok_in(&env, "plantimestamp()"), s("2018-05-13T07:44:12Z"));
    assert_eq!(
        ok_in(&env, r#"timecmp(plantimestamp(), "2018-05-13T07:44:11Z")"#),
        Value::int(1)
    );
    assert_eq!(
        err_in(&env, "plantimestamp(1)"),
        "Function \"plantimestamp\" expects only 0 argument(s)."
    );
}

/// What `now_rfc3339` writes, `parse_rfc3339` reads back as the moment it
/// names (the coordinator ages ended runs so); other text is none.
#[test]
fn rfc3339_timestamps_read_back_as_moments() {
    use super::{now_rfc3339, parse_rfc3339};
    let read = parse_rfc3339(&now_rfc3339()).expect("a timestamp");
    let off = std::time::SystemTime::now()
        .duration_since(read)
        .unwrap_or_default();
    assert!(off < std::time::Duration::from_secs(5), "{off:?}");
    let fixed = parse_rfc3339("2026-11-24T00:01:00Z").unwrap();
    let secs = fixed
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(secs, 1_795_478_460);
    assert_eq!(parse_rfc3339("yesterday"), None);
}
