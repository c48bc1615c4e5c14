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
}
