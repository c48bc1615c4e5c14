//! `time_offset`: a timestamp some years, months, days, hours, minutes and
//! seconds away from a base timestamp (`base_rfc3339`, or the time of
//! creation), and its parts.
//!
//! Values follow upstream's: the base keeps its own UTC offset (as Go's
//! `time.Parse` does), the offsets are applied one unit at a time in
//! upstream's order (see [`Offsets::apply`]), the parts are the offset
//! timestamp's fields in the base's offset, and `id` is the base timestamp.
//!
//! Planning follows upstream's too. A create plans every computed value
//! unknown, even with `base_rfc3339` given (upstream's plan modifier leaves
//! creates alone). An update first marks the unset computed attributes
//! unknown, as the plugin framework does for every changed object; when an
//! offset changed, the new values are then planned known from the base,
//! so the plan shows the new timestamp. Changing `triggers` replaces the
//! object and so takes a new base.

use super::clock::{MAX_YEAR, Timestamp, format_rfc3339, now_unix, parse_rfc3339};
use super::triggers;
use crate::defaults::set_attr;
use crate::framework::{CallResult, Resource, default_plan, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct TimeOffset;

/// The offset arguments, largest unit first (the order of the import ID).
const OFFSETS: [&str; 6] = [
    "offset_years",
    "offset_months",
    "offset_days",
    "offset_hours",
    "offset_minutes",
    "offset_seconds",
];

const PARTS: [&str; 7] = ["year", "month", "day", "hour", "minute", "second", "unix"];

/// The six offsets of a configuration, plan or state; unset ones are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Offsets {
    years: i64,
    months: i64,
    days: i64,
    hours: i64,
    minutes: i64,
    seconds: i64,
}

impl Offsets {
    /// The offsets set in `v`: `Ok(None)` while one of them is unknown, an
    /// error for a number that is not a whole `i64` (upstream's attributes
    /// are `Int64`).
    fn of(v: &Value) -> Result<Option<Offsets>, String> {
        let mut n = [0i64; 6];
        for (slot, name) in n.iter_mut().zip(OFFSETS) {
            match v.get_attr(name) {
                Value::Null(_) => {}
                Value::Unknown(_) => return Ok(None),
                Value::Number(x) => {
                    *slot = x
                        .as_i64()
                        .ok_or_else(|| format!("{name} must be a whole number, not {x}"))?;
                }
                other => return Err(format!("{name} must be a number, not {other:?}")),
            }
        }
        let [years, months, days, hours, minutes, seconds] = n;
        Ok(Some(Offsets {
            years,
            months,
            days,
            hours,
            minutes,
            seconds,
        }))
    }

    /// `base` moved by the offsets, in upstream's order: days, hours,
    /// minutes, months, seconds, years. The order shows where months of
    /// different lengths meet: January 30 plus one day and one month is
    /// March 3 in 2023 (the day first gives January 31, whose month later
    /// is "February 31"), not March 2. Days, months and years are Go's
    /// `AddDate` (overflowing days roll over), the rest exact seconds.
    /// `None` when the result is out of range. (Go counts hours and minutes
    /// as nanosecond durations, which wrap silently past about 292 years;
    /// that wrap is not reproduced.)
    fn apply(&self, base: &Timestamp) -> Option<Timestamp> {
        base.add_date(0, 0, self.days)?
            .add_seconds(self.hours.checked_mul(3600)?)?
            .add_seconds(self.minutes.checked_mul(60)?)?
            .add_date(0, self.months, 0)?
            .add_seconds(self.seconds)?
            .add_date(self.years, 0, 0)
    }
}

/// `v` with every computed value set from the base timestamp `base_text`
/// and the offsets in `v`. `base_rfc3339` keeps `base_text` as it is: a
/// configured base is stored as written (upstream's framework keeps the
/// configured text when the value it computes is the same instant), which
/// also keeps plan and apply consistent. `id` is the base in Go's RFC 3339
/// layout, as upstream sets it.
fn with_values(v: &Value, base_text: &str) -> Result<Value, String> {
    let base = parse_rfc3339(base_text)?;
    let offsets = Offsets::of(v)?.ok_or("the offsets are not known yet")?;
    let t = offsets.apply(&base).ok_or_else(|| {
        format!("offsetting {base_text} by {offsets:?} goes past year {MAX_YEAR} (either side of year 0)")
    })?;
    let mut out = set_attr(v, "base_rfc3339", Value::from(base_text));
    out = set_attr(&out, "id", Value::from(base.to_rfc3339()));
    out = set_attr(&out, "rfc3339", Value::from(t.to_rfc3339()));
    let values = [t.year, t.month, t.day, t.hour, t.minute, t.second, t.unix];
    for (name, n) in PARTS.iter().zip(values) {
        out = set_attr(&out, name, Value::int(n));
    }
    Ok(out)
}

/// The plugin framework's rule for a changed object: every computed
/// attribute the configuration leaves unset becomes unknown, so the
/// provider may change it (our [`default_plan`] keeps prior values instead).
fn unset_computed_unknown(planned: &Value, config: &Value, schema: &Schema) -> Value {
    let mut out = planned.clone();
    for (name, attr) in &schema.block.attributes {
        if attr.computed && config.get_attr(name).is_null() {
            out = set_attr(&out, name, Value::unknown());
        }
    }
    out
}

/// The object an import ID describes: `BASETIMESTAMP,YEARS,MONTHS,DAYS,
/// HOURS,MINUTES,SECONDS`, empty offsets left unset, at least one set.
/// `triggers` is left null, as a configuration without `triggers` has it
/// (upstream imports an empty map, which such a configuration would then
/// replace for a change from `{}` to null; our `time_static` does the same).
fn imported(id: &str) -> CallResult<Value> {
    let parts: Vec<&str> = id.split(',').collect();
    let expected = "BASETIMESTAMP,YEARS,MONTHS,DAYS,HOURS,MINUTES,SECONDS";
    if parts.len() != 7 {
        return fail(
            "Unexpected Format of ID",
            format!(
                "The ID {id:?} has {} comma-separated parts; it must have 7: {expected}",
                parts.len()
            ),
        );
    }
    if parts[0].is_empty() || parts[1..].iter().all(|p| p.is_empty()) {
        return fail(
            "Unexpected Format of ID",
            format!(
                "The ID {id:?} needs a base timestamp and at least one offset that is not empty: {expected}"
            ),
        );
    }
    let mut v = Value::object([("triggers", Value::null())]);
    for (name, text) in OFFSETS.iter().zip(&parts[1..]) {
        let n = match *text {
            "" => Value::null(),
            t => match t.parse::<i64>() {
                Ok(n) => Value::int(n),
                Err(e) => {
                    return fail(
                        "Import time offset error",
                        format!("The {name} part of the ID, {t:?}, is not a whole number: {e}"),
                    );
                }
            },
        };
        v = set_attr(&v, name, n);
    }
    let base = match parse_rfc3339(parts[0]) {
        Ok(t) => t.to_rfc3339(),
        Err(e) => return fail("Import time offset error", e),
    };
    with_values(&v, &base).or_else(|e| fail("Import time offset error", e))
}

#[async_trait]
impl Resource<()> for TimeOffset {
    fn type_name(&self) -> &'static str {
        "time_offset"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "Manages an offset time resource: a UTC timestamp kept in the state, offset from a base timestamp taken locally when it is created. Unlike the `timestamp()` function it does not change on every plan.".into();
        let a = &mut s.block.attributes;
        a.insert(
            "base_rfc3339".into(),
            Attribute::new(Type::String)
                .optional()
                .computed()
                .describe("The timestamp to offset, in RFC3339 format (e.g. `YYYY-MM-DDTHH:MM:SSZ`). Defaults to the time of creation."),
        );
        a.insert(
            "triggers".into(),
            triggers("trigger a new base timestamp value to be saved"),
        );
        for name in OFFSETS {
            let unit = name.trim_start_matches("offset_");
            a.insert(
                name.into(),
                Attribute::new(Type::Number).optional().describe(&format!(
                    "Number of {unit} to add to the base timestamp (negative to subtract). At least one `offset_` argument must be set."
                )),
            );
        }
        for name in PARTS {
            let what = if name == "unix" {
                "Number of seconds since the Unix epoch of the offset timestamp, e.g. `1581489373`."
                    .to_string()
            } else {
                format!("Number {name} of the offset timestamp.")
            };
            a.insert(
                name.into(),
                Attribute::new(Type::Number).computed().describe(&what),
            );
        }
        a.insert(
            "rfc3339".into(),
            Attribute::new(Type::String)
                .computed()
                .describe("RFC3339 format of the offset timestamp, e.g. `2020-02-12T06:36:13Z`."),
        );
        a.insert(
            "id".into(),
            Attribute::new(Type::String)
                .computed()
                .describe("RFC3339 format of the base timestamp, e.g. `2020-02-12T06:36:13Z`."),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["triggers"]
    }

    /// A parseable `base_rfc3339`, whole-number offsets, and at least one
    /// offset set (an unknown one counts as set, as in the plugin framework).
    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        if let Some(Err(e)) = config.get_attr("base_rfc3339").as_str().map(parse_rfc3339) {
            d.push(Diagnostic::error("Invalid Attribute Value", e));
        }
        if OFFSETS.iter().all(|name| config.get_attr(name).is_null()) {
            d.push(Diagnostic::error(
                "Missing Attribute Configuration",
                format!(
                    "time_offset needs at least one of these arguments: {}",
                    OFFSETS.join(", ")
                ),
            ));
        }
        if let Err(e) = Offsets::of(config) {
            d.push(Diagnostic::error("Invalid Attribute Value", e));
        }
        d
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mut resp = default_plan(req, schema, self.replace_on_change());
        let updating = !req.prior_state.is_null()
            && !resp.planned_state.is_null()
            && resp.requires_replace.is_empty();
        if !updating || resp.planned_state == req.prior_state {
            return resp;
        }
        resp.planned_state = unset_computed_unknown(&resp.planned_state, &req.config, schema);
        let offsets_changed = OFFSETS
            .iter()
            .any(|name| req.prior_state.get_attr(name) != resp.planned_state.get_attr(name));
        if !offsets_changed {
            return resp;
        }
        // An unset base stays the prior one. A base configured from a value
        // not known yet leaves everything unknown: upstream plans from the
        // prior base then, which the base's real value contradicts at apply.
        let base = match req.config.get_attr("base_rfc3339") {
            Value::Null(_) => req.prior_state.get_attr("base_rfc3339"),
            configured => configured,
        };
        let (Value::String(base), Ok(Some(_))) = (base, Offsets::of(&resp.planned_state)) else {
            return resp;
        };
        match with_values(&resp.planned_state, base) {
            Ok(v) => resp.planned_state = v,
            Err(e) => resp
                .diagnostics
                .push(Diagnostic::error("Invalid time offset", e)),
        }
        resp
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let base = match planned.get_attr("base_rfc3339") {
            Value::String(s) => s.clone(),
            _ => format_rfc3339(now_unix()),
        };
        with_values(planned, &base).or_else(|e| fail("Invalid time offset", e))
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        Ok(state.clone())
    }

    /// Recomputes from the planned base, or the prior one when the plan
    /// left it unknown.
    async fn update(&self, _: &(), prior: &Value, planned: &Value) -> CallResult<Value> {
        let base = match (
            planned.get_attr("base_rfc3339"),
            prior.get_attr("base_rfc3339"),
        ) {
            (Value::String(s), _) | (_, Value::String(s)) => s.clone(),
            _ => {
                return fail(
                    "Invalid time offset",
                    "there is no base timestamp to offset",
                );
            }
        };
        with_values(planned, &base).or_else(|e| fail("Invalid time offset", e))
    }

    async fn delete(&self, _: &(), _prior: &Value) -> CallResult<()> {
        Ok(())
    }

    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        imported(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plans like core proposes: unset computed attributes keep their prior value.
    fn plan(prior: &Value, config: &Value) -> PlanResourceChangeResponse {
        let schema = TimeOffset.schema();
        let mut proposed = config.clone();
        for (name, attr) in &schema.block.attributes {
            if attr.computed && config.get_attr(name).is_null() {
                proposed = set_attr(&proposed, name, prior.get_attr(name).clone());
            }
        }
        let req = PlanResourceChangeRequest {
            type_name: "time_offset".into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed,
            config: config.clone(),
            prior_private: vec![],
        };
        TimeOffset.plan(&req, &schema)
    }

    /// A configuration: `base_rfc3339` (when given), the offsets given, the
    /// other offsets and `triggers` null.
    fn config(base: Option<&str>, offsets: &[(&str, i64)]) -> Value {
        let mut v = Value::object([
            ("triggers", Value::null()),
            ("base_rfc3339", base.map_or(Value::null(), Value::from)),
        ]);
        for name in OFFSETS {
            v = set_attr(&v, name, Value::null());
        }
        for (name, n) in offsets {
            v = set_attr(&v, &format!("offset_{name}"), Value::int(*n));
        }
        v
    }

    /// The `rfc3339` of `base` offset as `offsets` say.
    fn offset(base: &str, offsets: &[(&str, i64)]) -> String {
        let v = with_values(&config(None, offsets), base).unwrap();
        v.get_attr("rfc3339").as_str().unwrap().to_string()
    }

    fn parts(v: &Value) -> Vec<i64> {
        PARTS
            .iter()
            .map(|name| match v.get_attr(name) {
                Value::Number(n) => n.as_i64().unwrap(),
                other => panic!("{name} is {other:?}"),
            })
            .collect()
    }

    #[test]
    fn offsets_apply_in_upstreams_order_with_gos_normalisation() {
        let base = "2023-01-31T10:00:00Z";
        assert_eq!(offset(base, &[("months", 1)]), "2023-03-03T10:00:00Z");
        assert_eq!(
            offset("2024-01-31T10:00:00Z", &[("months", 1)]),
            "2024-03-02T10:00:00Z"
        );
        assert_eq!(
            offset("2024-02-29T12:00:00Z", &[("years", 1)]),
            "2025-03-01T12:00:00Z"
        );
        // Days before months: Jan 30 + 1 day is Jan 31, and "Feb 31" is Mar 3.
        let both = [("days", 1), ("months", 1)];
        assert_eq!(
            offset("2023-01-30T00:00:00Z", &both),
            "2023-03-03T00:00:00Z"
        );
        // Hours before months: the hour crosses into Jan 31 first.
        let both = [("hours", 2), ("months", 1)];
        assert_eq!(
            offset("2023-01-30T23:00:00Z", &both),
            "2023-03-03T01:00:00Z"
        );
        // Months before years: "Feb 31 2023" is Mar 3, a year on Mar 3 2024
        // (years first would give "Feb 31 2024", Mar 2).
        let both = [("years", 1), ("months", 1)];
        assert_eq!(
            offset("2023-01-31T00:00:00Z", &both),
            "2024-03-03T00:00:00Z"
        );
        let all = [
            ("years", 1),
            ("months", 2),
            ("days", 3),
            ("hours", 4),
            ("minutes", 5),
            ("seconds", 6),
        ];
        assert_eq!(offset("2020-01-01T00:00:00Z", &all), "2021-03-04T04:05:06Z");
    }

    #[test]
    fn negative_offsets_go_back() {
        let back = [("days", -1), ("hours", -1), ("seconds", -1)];
        assert_eq!(
            offset("2020-03-01T00:00:00Z", &back),
            "2020-02-28T22:59:59Z"
        );
        assert_eq!(
            offset("2020-01-15T00:00:00Z", &[("months", -13)]),
            "2018-12-15T00:00:00Z"
        );
        assert_eq!(
            offset("2020-01-01T00:00:30Z", &[("minutes", -1)]),
            "2019-12-31T23:59:30Z"
        );
        let v = with_values(&config(None, &[("years", -2020)]), "2020-06-01T00:00:00Z").unwrap();
        assert_eq!(v.get_attr("rfc3339"), &Value::from("0000-06-01T00:00:00Z"));
        let far = with_values(
            &config(None, &[("years", i64::MAX)]),
            "2020-06-01T00:00:00Z",
        );
        assert!(far.unwrap_err().contains("goes past year"));
    }

    #[test]
    fn a_base_keeps_its_utc_offset() {
        let base = "2020-02-29T23:30:00+02:00";
        let v = with_values(&config(Some(base), &[("hours", 1)]), base).unwrap();
        assert_eq!(
            v.get_attr("rfc3339"),
            &Value::from("2020-03-01T00:30:00+02:00")
        );
        assert_eq!(parts(&v), [2020, 3, 1, 0, 30, 0, 1_583_015_400]);
        assert_eq!(v.get_attr("base_rfc3339"), &Value::from(base));
        assert_eq!(v.get_attr("id"), &Value::from(base));
        // The configured text is kept; id is Go's layout of the same time.
        let v = with_values(&config(None, &[("days", 1)]), "2020-01-01T00:00:00+00:00").unwrap();
        assert_eq!(
            v.get_attr("base_rfc3339"),
            &Value::from("2020-01-01T00:00:00+00:00")
        );
        assert_eq!(v.get_attr("id"), &Value::from("2020-01-01T00:00:00Z"));
        assert_eq!(v.get_attr("rfc3339"), &Value::from("2020-01-02T00:00:00Z"));
    }

    #[tokio::test]
    async fn create_plans_unknown_and_takes_now_or_the_given_base() {
        let week = config(None, &[("days", 7)]);
        let planned = plan(&Value::null(), &week).planned_state;
        for name in ["base_rfc3339", "rfc3339", "unix", "id"] {
            assert!(planned.get_attr(name).is_unknown(), "{name}");
        }
        let before = now_unix();
        let state = TimeOffset.create(&(), &planned).await.unwrap();
        assert!(state.is_wholly_known());
        let base = parse_rfc3339(state.get_attr("base_rfc3339").as_str().unwrap()).unwrap();
        assert!(base.unix >= before && base.offset == 0);
        assert_eq!(parts(&state)[6], base.unix + 7 * 86_400);
        assert_eq!(state.get_attr("id"), state.get_attr("base_rfc3339"));

        let given = config(Some("2020-02-12T06:36:13Z"), &[("days", 7)]);
        let planned = plan(&Value::null(), &given).planned_state;
        assert_eq!(
            planned.get_attr("base_rfc3339"),
            &Value::from("2020-02-12T06:36:13Z")
        );
        assert!(planned.get_attr("rfc3339").is_unknown(), "like upstream");
        let state = TimeOffset.create(&(), &planned).await.unwrap();
        assert_eq!(
            state.get_attr("rfc3339"),
            &Value::from("2020-02-19T06:36:13Z")
        );
        assert_eq!(TimeOffset.read(&(), &state).await.unwrap(), state);
    }

    #[tokio::test]
    async fn changed_offsets_are_planned_known_from_the_prior_base() {
        let planned = plan(&Value::null(), &config(None, &[("days", 7)])).planned_state;
        let mut prior = TimeOffset.create(&(), &planned).await.unwrap();
        prior = set_attr(&prior, "base_rfc3339", Value::from("2020-02-12T06:36:13Z"));
        prior = with_values(&prior, "2020-02-12T06:36:13Z").unwrap();

        let unchanged = plan(&prior, &config(None, &[("days", 7)]));
        assert_eq!(unchanged.planned_state, prior);

        let eight = plan(&prior, &config(None, &[("days", 8)]));
        assert!(eight.requires_replace.is_empty());
        let planned = eight.planned_state;
        assert_eq!(
            planned.get_attr("base_rfc3339"),
            prior.get_attr("base_rfc3339")
        );
        assert_eq!(
            planned.get_attr("rfc3339"),
            &Value::from("2020-02-20T06:36:13Z")
        );
        assert_eq!(planned.get_attr("id"), &Value::from("2020-02-12T06:36:13Z"));
        let updated = TimeOffset.update(&(), &prior, &planned).await.unwrap();
        assert_eq!(updated, planned, "apply gives what was planned");

        // A new configured base is planned from, whatever the prior one.
        let moved = plan(
            &prior,
            &config(Some("2021-01-01T00:00:00Z"), &[("hours", 1)]),
        );
        let rfc = moved.planned_state.get_attr("rfc3339").clone();
        assert_eq!(rfc, Value::from("2021-01-01T01:00:00Z"));
        // Only the base changed: the values are left to the apply.
        let rebased = plan(
            &prior,
            &config(Some("2021-01-01T00:00:00Z"), &[("days", 7)]),
        );
        assert!(rebased.planned_state.get_attr("rfc3339").is_unknown());
        let updated = TimeOffset.update(&(), &prior, &rebased.planned_state).await;
        assert_eq!(
            updated.unwrap().get_attr("rfc3339"),
            &Value::from("2021-01-08T00:00:00Z")
        );
        // A base not known yet: nothing can be planned from it.
        let mut unknown_base = config(None, &[("days", 8)]);
        unknown_base = set_attr(&unknown_base, "base_rfc3339", Value::unknown());
        let later = plan(&prior, &unknown_base).planned_state;
        assert!(later.get_attr("rfc3339").is_unknown());

        let retriggered = plan(
            &prior,
            &set_attr(
                &config(None, &[("days", 8)]),
                "triggers",
                Value::object([("k", Value::from("v"))]),
            ),
        );
        assert_eq!(retriggered.requires_replace.len(), 1);
        assert!(
            retriggered
                .planned_state
                .get_attr("base_rfc3339")
                .is_unknown()
        );
        assert!(retriggered.planned_state.get_attr("rfc3339").is_unknown());
    }

    #[test]
    fn validation_wants_an_offset_and_a_valid_base() {
        let errors = |v: &Value| TimeOffset.validate(v).has_errors();
        assert!(errors(&config(None, &[])), "no offset at all");
        assert!(!errors(&config(None, &[("seconds", 0)])));
        assert!(!errors(&set_attr(
            &config(None, &[]),
            "offset_days",
            Value::unknown()
        )));
        assert!(errors(&config(Some("yesterday"), &[("days", 1)])));
        let half = Value::Number(fleetform_shared::value::Number::from_f64(1.5));
        let half = set_attr(&config(None, &[]), "offset_days", half);
        assert!(errors(&half));
    }

    #[test]
    fn import_ids_name_the_base_and_the_offsets() {
        let v = imported("2020-02-12T06:36:13+02:00,,1,,,,-5").unwrap();
        assert_eq!(v.get_attr("offset_months"), &Value::int(1));
        assert_eq!(v.get_attr("offset_seconds"), &Value::int(-5));
        assert!(v.get_attr("offset_years").is_null() && v.get_attr("triggers").is_null());
        assert_eq!(
            v.get_attr("base_rfc3339"),
            &Value::from("2020-02-12T06:36:13+02:00")
        );
        assert_eq!(
            v.get_attr("rfc3339"),
            &Value::from("2020-03-12T06:36:08+02:00")
        );
        assert_eq!(v.get_attr("id"), v.get_attr("base_rfc3339"));
        let v = imported("2020-02-12T06:36:13+00:00,1,,,,,").unwrap();
        assert_eq!(
            v.get_attr("base_rfc3339"),
            &Value::from("2020-02-12T06:36:13Z")
        );

        let summary = |id: &str| imported(id).unwrap_err().0[0].summary.clone();
        assert_eq!(
            summary("2020-02-12T06:36:13Z,1,2"),
            "Unexpected Format of ID"
        );
        assert_eq!(
            summary("2020-02-12T06:36:13Z,,,,,,"),
            "Unexpected Format of ID"
        );
        assert_eq!(summary(",1,,,,,"), "Unexpected Format of ID");
        assert_eq!(
            summary("2020-02-12T06:36:13Z,x,,,,,"),
            "Import time offset error"
        );
        assert_eq!(summary("yesterday,1,,,,,"), "Import time offset error");
    }
}
