//! Which provider errors are throttling errors. The plugin protocol has no
//! "retryable" flag, so the diagnostics' text decides: an error whose
//! summary or detail holds one of [`MARKERS`] (any case).

use fleetform_shared::diag::{Diagnostic, Diagnostics};

/// What throttling errors say, lowercased. Kept small and specific: a
/// false match only costs bounded retries of a call that is safe to
/// repeat, but a long list drifts into words that mean something else.
/// - `throttling`, `throttled`: AWS's `Throttling`, `ThrottlingException`,
///   `RequestThrottled`, and most other APIs' wording;
/// - `requestlimitexceeded`: EC2's `RequestLimitExceeded`;
/// - `toomanyrequests`: `TooManyRequestsException` (Lambda, API Gateway),
///   Azure's `TooManyRequests`;
/// - `too many requests`: HTTP 429's reason phrase (`429 Too Many
///   Requests`), as HTTP clients print it;
/// - `rate exceeded`: AWS's generic `Rate exceeded`;
/// - `rate limit exceeded`, `ratelimitexceeded`: GitHub's `API rate limit
///   exceeded`, Google's `rateLimitExceeded` and `userRateLimitExceeded`.
pub const MARKERS: &[&str] = &[
    "throttling",
    "throttled",
    "requestlimitexceeded",
    "toomanyrequests",
    "too many requests",
    "rate exceeded",
    "rate limit exceeded",
    "ratelimitexceeded",
];

/// Whether one diagnostic is a throttling error.
pub fn is_throttling(d: &Diagnostic) -> bool {
    d.is_error() && {
        let text = format!("{}\n{}", d.summary, d.detail).to_lowercase();
        MARKERS.iter().any(|m| text.contains(m))
    }
}

/// The throttling error that makes a response worth retrying: there is at
/// least one error and every error is a throttling one. A call that also
/// failed for another reason is reported as it is.
pub fn throttling(diags: &Diagnostics) -> Option<&Diagnostic> {
    let mut errors = diags.iter().filter(|d| d.is_error()).peekable();
    errors.peek()?;
    let mut first = None;
    for d in errors {
        if !is_throttling(d) {
            return None;
        }
        first.get_or_insert(d);
    }
    first
}

/// The wait a throttling error asks for, where it says one: "retry after
/// 1.5s", "Retry-After: 2" (seconds, as HTTP's header), "retry after
/// 300ms". At most a minute: a provider's word does not hold a run longer.
pub fn retry_after(d: &Diagnostic) -> Option<std::time::Duration> {
    let text = format!("{}\n{}", d.summary, d.detail).to_lowercase();
    let at = ["retry after", "retry-after"]
        .iter()
        .filter_map(|m| text.find(m).map(|i| i + m.len()))
        .min()?;
    let rest = text[at..].trim_start_matches([':', ' ']);
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let value: f64 = number.parse().ok()?;
    let unit = rest[number.len()..].trim_start();
    let seconds = if unit.starts_with("ms") || unit.starts_with("millisecond") {
        value / 1000.0
    } else if unit.starts_with('m') && !unit.starts_with("more") {
        value * 60.0
    } else {
        value
    };
    seconds
        .is_finite()
        .then(|| std::time::Duration::from_secs_f64(seconds.clamp(0.0, 60.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(texts: &[(&str, &str)]) -> Diagnostics {
        let mut d = Diagnostics::new();
        for (summary, detail) in texts {
            d.push(Diagnostic::error(*summary, *detail));
        }
        d
    }

    #[test]
    fn cloud_throttling_errors_are_recognised_in_any_case() {
        for (summary, detail) in [
            ("ThrottlingException: Rate exceeded", ""),
            (
                "creating EC2 Instance",
                "api error RequestLimitExceeded: Request limit exceeded.",
            ),
            (
                "Error: reading Lambda",
                "TooManyRequestsException: Rate exceeded",
            ),
            ("unexpected status", "429 Too Many Requests"),
            ("GitHub", "API rate limit exceeded for user ID 1."),
            (
                "googleapi: Error 403",
                "Quota exceeded, userRateLimitExceeded",
            ),
            ("request throttled", ""),
            ("THROTTLING", ""),
        ] {
            assert!(
                throttling(&errors(&[(summary, detail)])).is_some(),
                "{summary} / {detail}"
            );
        }
    }

    #[test]
    fn other_errors_warnings_and_mixed_failures_are_not_retried() {
        for (summary, detail) in [
            ("Invalid value", "name must not be empty"),
            ("AccessDenied", "not authorized to perform ec2:RunInstances"),
            ("Simulated failure", "sim: create failed (failure_rate 1)"),
            ("operation error", "rate must be positive"),
        ] {
            assert!(
                throttling(&errors(&[(summary, detail)])).is_none(),
                "{summary}"
            );
        }
        assert!(throttling(&Diagnostics::new()).is_none(), "no error at all");
        let warning: Diagnostics =
            Diagnostic::warning("Throttling", "slowed down, but it worked").into();
        assert!(throttling(&warning).is_none(), "a warning is not a failure");
        let mixed = errors(&[
            ("ThrottlingException", "Rate exceeded"),
            ("Invalid value", "size must be positive"),
        ]);
        assert!(throttling(&mixed).is_none(), "another error besides");
        let both = errors(&[("Throttling", "a"), ("Rate exceeded", "b")]);
        assert_eq!(throttling(&both).map(|d| d.detail.as_str()), Some("a"));
    }

    #[test]
    fn a_throttling_error_may_say_when_to_retry() {
        use std::time::Duration;
        let d = |summary: &str, detail: &str| Diagnostic::error(summary, detail);
        let cases = [
            (
                d(
                    "ThrottlingException: Rate exceeded",
                    "sim: retry after 0.42s. The call did nothing.",
                ),
                Some(Duration::from_millis(420)),
            ),
            (
                d("429 Too Many Requests", "Retry-After: 2"),
                Some(Duration::from_secs(2)),
            ),
            (
                d("Rate exceeded", "please retry after 300ms"),
                Some(Duration::from_millis(300)),
            ),
            (
                d("Rate exceeded", "retry after 2 minutes"),
                Some(Duration::from_secs(60)),
            ),
            (d("Rate exceeded", "retry after a while"), None),
            (d("Rate exceeded", ""), None),
        ];
        for (diag, want) in cases {
            assert_eq!(retry_after(&diag), want, "{diag:?}");
        }
    }
}
