//! The simulated cloud account's rate limits: reads and writes per second
//! for everything that uses one `store_dir`, across every provider process
//! (a cloud's limits are its account's, whoever calls). A call over the
//! limit is refused at once with a throttling error that says when to
//! retry, and does nothing, as a cloud API's `ThrottlingException` does.
//!
//! The buckets live in files beside the objects (`.account/reads`,
//! `.account/writes`: the tokens left and when they were counted), each
//! read and rewritten under an exclusive file lock, so processes share
//! them. The clock is the wall clock: processes share no other.

use crate::framework::{CallResult, fail};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a call does to the account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// ReadResource, ReadDataSource, opening an ephemeral resource.
    Read,
    /// Creating, updating, deleting.
    Write,
}

impl CallKind {
    fn name(self) -> &'static str {
        match self {
            CallKind::Read => "reads",
            CallKind::Write => "writes",
        }
    }
}

/// The limits of one account (one store directory).
#[derive(Clone, Debug)]
pub struct AccountLimits {
    dir: PathBuf,
    reads_per_second: Option<f64>,
    writes_per_second: Option<f64>,
}

impl AccountLimits {
    pub fn new(store: &Path, reads: Option<f64>, writes: Option<f64>) -> AccountLimits {
        AccountLimits {
            dir: store.join(".account"),
            reads_per_second: reads,
            writes_per_second: writes,
        }
    }

    /// Takes a token for a call of `kind`, or refuses it with the
    /// throttling error (when to retry in its detail).
    pub async fn admit(&self, kind: CallKind) -> CallResult<()> {
        let Some(rate) = (match kind {
            CallKind::Read => self.reads_per_second,
            CallKind::Write => self.writes_per_second,
        }) else {
            return Ok(());
        };
        let path = self.dir.join(kind.name());
        let taken = tokio::task::spawn_blocking(move || take(&path, rate, now_s()))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|r| r);
        match taken {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => fail(
                "ThrottlingException: Rate exceeded",
                format!(
                    "sim: the account allows {rate} {} per second; retry after {:.3}s. The call did nothing.",
                    kind.name(),
                    // Rounded up, so that a call made after the wait said
                    // finds a token (rounded down, a wait of 4 ms read
                    // "0.00s": callers asked again at once, and were
                    // refused again).
                    (wait.as_secs_f64() * 1000.0).ceil().max(1.0) / 1000.0
                ),
            ),
            Err(e) => fail(
                "sim: the account's rate limit could not be read",
                format!("{}: {e}", self.dir.display()),
            ),
        }
    }
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Takes one token from the bucket in `path` (`rate` per second, holding
/// at most one second's worth) at time `now`: `None` when there was one,
/// else how long until there is.
fn take(path: &Path, rate: f64, now: f64) -> std::io::Result<Option<Duration>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.lock()?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let capacity = rate.max(1.0);
    let (tokens, last) = parse(&text).unwrap_or((capacity, now));
    // A clock stepped back counts no time, never negative time.
    let tokens = (tokens + (now - last).max(0.0) * rate).min(capacity);
    let (left, wait) = if tokens >= 1.0 {
        (tokens - 1.0, None)
    } else {
        (tokens, Some(Duration::from_secs_f64((1.0 - tokens) / rate)))
    };
    file.seek(SeekFrom::Start(0))?;
    file.set_len(0)?;
    write!(file, "{left} {}", now.max(last))?;
    // The lock goes with the file.
    Ok(wait)
}

fn parse(text: &str) -> Option<(f64, f64)> {
    let mut parts = text.split_whitespace();
    let tokens = parts.next()?.parse().ok()?;
    let last = parts.next()?.parse().ok()?;
    Some((tokens, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_file_lets_a_second_s_worth_through_then_says_when_to_retry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reads");
        let t0 = 1_000.0;
        let passed = (0..15)
            .filter(|_| take(&path, 10.0, t0).unwrap().is_none())
            .count();
        assert_eq!(passed, 10, "a burst of one second's worth");
        let wait = take(&path, 10.0, t0).unwrap().expect("over the limit");
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // Half a second later: five more.
        let passed = (0..15)
            .filter(|_| take(&path, 10.0, t0 + 0.5).unwrap().is_none())
            .count();
        assert_eq!(passed, 5);
        // A clock stepped back gives nothing back and takes nothing.
        assert!(take(&path, 10.0, t0 - 100.0).unwrap().is_some());
        assert!(take(&path, 10.0, t0 + 0.6).unwrap().is_none());
    }

    /// Two processes' worth of callers on one account share its limit.
    #[test]
    fn callers_in_many_threads_share_one_account() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writes");
        let t0 = 5_000.0;
        let passed: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..50)
                            .filter(|_| take(&path, 20.0, t0).unwrap().is_none())
                            .count()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(passed, 20);
    }
}
