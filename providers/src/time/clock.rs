//! RFC 3339 timestamps (parse any offset, format like Go's `time.RFC3339`
//! in UTC or in the timestamp's own offset), Go's calendar arithmetic
//! (`Time.Add` in whole seconds, `Time.AddDate`) and Go's duration syntax
//! (`"1h30m"`, `"500ms"`, `"1.5s"`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A parsed timestamp: the wall-clock fields in its own offset, the
/// instant as Unix seconds, and that offset. Fractions of a second are
/// dropped: nothing the time provider stores shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub unix: i64,
    /// Seconds east of UTC (`+02:00` is 7200), as Go's `time.Parse` keeps
    /// a parsed offset.
    pub offset: i64,
}

/// Years beyond this (either side of year 0) are out of range for the
/// arithmetic below. Go's own limit is about 292 billion years; this one
/// keeps every intermediate value of the calendar conversions well inside
/// `i64`, and no timestamp anyone stores comes near it.
pub const MAX_YEAR: i64 = 1_000_000_000;

impl Timestamp {
    /// The instant `unix` seen from `offset` seconds east of UTC; `None`
    /// when its year is beyond [`MAX_YEAR`].
    pub fn at_offset(unix: i64, offset: i64) -> Option<Timestamp> {
        let local = unix.checked_add(offset)?;
        let (year, month, day) = civil_from_days(local.div_euclid(86_400));
        if year.abs() > MAX_YEAR {
            return None;
        }
        let s = local.rem_euclid(86_400);
        Some(Timestamp {
            year,
            month,
            day,
            hour: s / 3600,
            minute: s / 60 % 60,
            second: s % 60,
            unix,
            offset,
        })
    }

    /// Go's `Time.Add` of whole seconds: the same offset, `seconds` later
    /// (earlier when negative); `None` out of range.
    pub fn add_seconds(&self, seconds: i64) -> Option<Timestamp> {
        Timestamp::at_offset(self.unix.checked_add(seconds)?, self.offset)
    }

    /// Go's `Time.AddDate`: adds to the year, month and day fields and
    /// normalises the result the way Go's `time.Date` does, so a day the
    /// month does not have rolls over into the next (January 31 plus one
    /// month is March 3, or March 2 in a leap year; February 29 plus one
    /// year is March 1). The clock fields and the offset stay; `None` out
    /// of range.
    pub fn add_date(&self, years: i64, months: i64, days: i64) -> Option<Timestamp> {
        let month0 = (self.month - 1).checked_add(months)?;
        let year = self
            .year
            .checked_add(years)?
            .checked_add(month0.div_euclid(12))?;
        if year.abs() > MAX_YEAR {
            return None;
        }
        // Days are linear in the day of the month, so overflowing days
        // (the 31st of a 30-day month, or `days` itself) simply count on.
        let day_number = days_from_civil(year, month0.rem_euclid(12) + 1, 1)
            .checked_add(self.day - 1)?
            .checked_add(days)?;
        let clock = self.hour * 3600 + self.minute * 60 + self.second;
        let local = day_number.checked_mul(86_400)?.checked_add(clock)?;
        Timestamp::at_offset(local.checked_sub(self.offset)?, self.offset)
    }

    /// Go's `time.RFC3339` layout in the timestamp's own offset:
    /// `2006-01-02T15:04:05Z` at offset zero, else `…+02:00`; no fraction.
    pub fn to_rfc3339(&self) -> String {
        // Go pads the year to four digits after any minus sign.
        let year = if self.year < 0 {
            format!("-{:04}", -self.year)
        } else {
            format!("{:04}", self.year)
        };
        let zone = if self.offset == 0 {
            "Z".to_string()
        } else {
            let minutes = self.offset.abs() / 60;
            let sign = if self.offset < 0 { '-' } else { '+' };
            format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
        };
        format!(
            "{year}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
            self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn days_in_month(y: i64, m: i64) -> i64 {
    days_from_civil(
        if m == 12 { y + 1 } else { y },
        if m == 12 { 1 } else { m + 1 },
        1,
    ) - days_from_civil(y, m, 1)
}

/// `2006-01-02T15:04:05Z` for a Unix time, in UTC.
pub fn format_rfc3339(unix: i64) -> String {
    let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
    let s = unix.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The current time, whole seconds, as Unix time.
pub fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse_rfc3339(s: &str) -> Result<Timestamp, String> {
    let bad = || format!("{s:?} is not an RFC 3339 timestamp (e.g. 2020-02-12T06:36:13Z)");
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let part = &s[r];
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        rest = &frac[digits..];
    }
    let offset_minutes = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hm = [h1, h2, m1, m2];
            if !hm.iter().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            let v = |a: &u8, b: &u8| i64::from(a - b'0') * 10 + i64::from(b - b'0');
            let (oh, om) = (v(h1, h2), v(m1, m2));
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let total = oh * 60 + om;
            if *sign == b'-' { -total } else { total }
        }
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(bad());
    }
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Ok(Timestamp {
        year,
        month,
        day,
        hour,
        minute,
        second,
        unix: local - offset_minutes * 60,
        offset: offset_minutes * 60,
    })
}

/// Go's `time.ParseDuration` for non-negative durations: a sequence of
/// decimal numbers with units `ns`, `us` (`µs`), `ms`, `s`, `m`, `h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = |why: &str| format!("invalid duration {s:?}: {why}");
    let body = s.strip_prefix('+').unwrap_or(s);
    if body.starts_with('-') {
        return Err(bad("must not be negative"));
    }
    if body == "0" {
        return Ok(Duration::ZERO);
    }
    if body.is_empty() {
        return Err(bad("empty"));
    }
    let mut total = 0f64;
    let mut rest = body;
    while !rest.is_empty() {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        let value: f64 = rest[..n].parse().map_err(|_| bad("expected a number"))?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos_per = match &rest[..u] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(bad("missing unit")),
            other => return Err(bad(&format!("unknown unit {other:?}"))),
        };
        total += value * nanos_per;
        rest = &rest[u..];
    }
    Ok(Duration::from_nanos(total.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_go() {
        let ms = |s| parse_duration(s).map(|d| d.as_millis());
        assert_eq!(ms("1s"), Ok(1000));
        assert_eq!(ms("500ms"), Ok(500));
        assert_eq!(ms("1m"), Ok(60_000));
        assert_eq!(ms("1h30m"), Ok(5_400_000));
        assert_eq!(ms("1.5s"), Ok(1500));
        assert_eq!(ms("0"), Ok(0));
        assert_eq!(parse_duration("250us").unwrap().as_micros(), 250);
        assert_eq!(parse_duration("7ns").unwrap().as_nanos(), 7);
        for bad in ["", "10", "1x", "-1s", "s", "1..5s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rfc3339_round_trips_and_offsets() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(1_581_489_373), "2020-02-12T06:36:13Z");
        let t = parse_rfc3339("2020-02-12T06:36:13Z").unwrap();
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2020, 2, 12, 6, 36, 13)
        );
        assert_eq!(t.unix, 1_581_489_373);
        let t = parse_rfc3339("2020-02-12T08:36:13.25+02:00").unwrap();
        assert_eq!((t.hour, t.unix), (8, 1_581_489_373));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z").unwrap().unix, -1);
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z").unwrap().day, 29);
        for bad in [
            "2023-02-29T00:00:00Z",
            "2020-02-12 06:36:13Z",
            "2020-02-12T06:36:13",
            "2020-13-01T00:00:00Z",
            "2020-02-12T06:36:13+2:00",
        ] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
        let now = now_unix();
        assert_eq!(parse_rfc3339(&format_rfc3339(now)).unwrap().unix, now);
    }

    fn ts(text: &str) -> Timestamp {
        parse_rfc3339(text).unwrap()
    }

    #[test]
    fn offsets_are_kept_and_formatted_like_go() {
        let t = ts("2020-02-12T08:36:13+02:00");
        assert_eq!(t.offset, 7200);
        assert_eq!(t.to_rfc3339(), "2020-02-12T08:36:13+02:00");
        assert_eq!(
            ts("2020-02-12T06:36:13.999Z").to_rfc3339(),
            "2020-02-12T06:36:13Z"
        );
        // A zero offset is written `Z`, however it was given.
        assert_eq!(
            ts("2020-02-12T06:36:13+00:00").to_rfc3339(),
            "2020-02-12T06:36:13Z"
        );
        assert_eq!(
            ts("2020-02-12T06:36:13-00:00").to_rfc3339(),
            "2020-02-12T06:36:13Z"
        );
        assert_eq!(
            ts("2020-02-12T01:06:13-05:30").to_rfc3339(),
            "2020-02-12T01:06:13-05:30"
        );
        assert_eq!(
            Timestamp::at_offset(1_581_489_373, -3600).unwrap(),
            ts("2020-02-12T05:36:13-01:00")
        );
        let early = Timestamp::at_offset(-62_198_755_200, 0).unwrap();
        assert_eq!(
            (early.year, early.to_rfc3339().as_str()),
            (-1, "-0001-01-01T00:00:00Z")
        );
        assert_eq!(
            ts("0005-03-01T00:00:00Z").to_rfc3339(),
            "0005-03-01T00:00:00Z"
        );
    }

    #[test]
    fn add_date_normalises_like_go() {
        let add = |t: &str, y, m, d| ts(t).add_date(y, m, d).unwrap().to_rfc3339();
        assert_eq!(add("2023-01-31T10:00:00Z", 0, 1, 0), "2023-03-03T10:00:00Z");
        assert_eq!(add("2024-01-31T10:00:00Z", 0, 1, 0), "2024-03-02T10:00:00Z");
        assert_eq!(add("2024-02-29T00:00:00Z", 1, 0, 0), "2025-03-01T00:00:00Z");
        assert_eq!(add("2024-02-29T00:00:00Z", 4, 0, 0), "2028-02-29T00:00:00Z");
        assert_eq!(add("2020-12-15T00:00:00Z", 0, 1, 0), "2021-01-15T00:00:00Z");
        assert_eq!(
            add("2020-01-15T00:00:00Z", 0, -1, 0),
            "2019-12-15T00:00:00Z"
        );
        assert_eq!(
            add("2020-03-31T00:00:00Z", 0, -1, 0),
            "2020-03-02T00:00:00Z"
        );
        assert_eq!(
            add("2020-03-01T00:00:00Z", 0, 0, -1),
            "2020-02-29T00:00:00Z"
        );
        assert_eq!(
            add("2020-01-01T00:00:00Z", 0, 25, 400),
            "2023-03-08T00:00:00Z"
        );
        assert_eq!(
            add("2021-03-01T23:30:00+02:00", 0, 0, 1),
            "2021-03-02T23:30:00+02:00"
        );
        let t = ts("2021-03-01T23:30:00+02:00").add_date(0, 0, 1).unwrap();
        assert_eq!((t.unix, t.offset), (ts("2021-03-02T21:30:00Z").unix, 7200));
        assert_eq!(ts("2020-01-01T00:00:00Z").add_date(i64::MAX, 0, 0), None);
        assert_eq!(ts("2020-01-01T00:00:00Z").add_date(0, i64::MIN, 0), None);
        assert_eq!(ts("2020-01-01T00:00:00Z").add_date(0, 0, i64::MAX), None);
    }

    #[test]
    fn add_seconds_keeps_the_offset() {
        let t = ts("2020-12-31T23:59:59+01:00").add_seconds(3600).unwrap();
        assert_eq!(t.to_rfc3339(), "2021-01-01T00:59:59+01:00");
        assert_eq!((t.year, t.month, t.day, t.hour), (2021, 1, 1, 0));
        let t = ts("2020-01-01T00:00:00Z").add_seconds(-1).unwrap();
        assert_eq!(t.to_rfc3339(), "2019-12-31T23:59:59Z");
        assert_eq!(ts("2020-01-01T00:00:00Z").add_seconds(i64::MAX), None);
    }
}
