//! Giving memory back to the system once a run has let it go.
//!
//! The binaries allocate with mimalloc (see their `main.rs`): measured on
//! this project's benchmark, an apply of 100,000 instances took 26.7 s at
//! 1.0 GB peak RSS with it, against 38.9 s at 1.26 GB with glibc's
//! allocator, whose arenas fragmented and whose `free` was a fifth of the
//! profile. mimalloc gives freed pages back to the system on its own after
//! a short delay; after a run it is also asked to do so at once. glibc's
//! `malloc_trim` still runs, for what C code allocates there.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts [`release_freed`] calls: each thread of the runtime collects its
/// own heap once per call ([`collect_when_idle`]).
static RELEASES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The last release this thread has collected for.
    static COLLECTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Returns freed heap memory to the system: this thread's at once, the
/// other runtime threads' when they next go idle.
pub fn release_freed() {
    RELEASES.fetch_add(1, Ordering::Relaxed);
    collect_when_idle();
    trim_glibc();
}

/// After a run has ended: [`release_freed`] at once, and again a second
/// later for what is let go only after the end has been told (the run's
/// own task, its watchers' streams and their connections). Measured on
/// the soak (1,000 instances applied and destroyed on a fleet, again and
/// again, mimalloc's default purge delay): with the second release the
/// coordinator held 11 to 15 MB of anonymous memory 0.5 s after each run
/// and 12 to 13 MB 2.5 s after; without it, 14 to 23 MB 0.5 s after (not
/// read later then, so the second release's own share is not known).
pub fn release_after_run() {
    release_freed();
    tokio::spawn(async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        release_freed();
    });
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (the version
/// `libmimalloc-sys` builds unless told `v2`); its Rust constants stop
/// short of it. The test below checks it names the option with v3's
/// default of 1000 ms.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// For a long-running server: memory mimalloc no longer uses goes back to
/// the system as it is freed, not a second later. Idle threads make no
/// allocator calls that would purge what is due, so a second's delay
/// left a run's last frees resident until the next run. Measured on the
/// soak, 2 s after each run: 7 to 8 MB of anonymous memory, flat over the
/// runs, against 12 to 13 MB with the default delay (glibc's allocator:
/// 7 to 8 MB); a fleet's apply of 10,000 instances took as much
/// coordinator CPU either way (2.61 and 2.64 s, against 2.61 and 2.45 s),
/// at a peak RSS of 82 to 101 MB against 106 to 129 MB. A
/// `MIMALLOC_PURGE_DELAY` in the environment still wins.
#[allow(unsafe_code)]
pub fn purge_promptly() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's option values; takes no pointer and
    // may be called at any time from any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

/// For the runtime's `on_thread_park`: a thread about to wait collects its
/// heap if a release was asked since it last did. mimalloc keeps memory
/// freed on a thread in that thread's heap, and purges it only as that
/// thread allocates again: the runtime's other threads, idle after a run,
/// kept theirs (a coordinator held 37 MB of anonymous memory after an
/// apply and a destroy of 10,000 instances).
/// Returns whether it collected.
pub fn collect_when_idle() -> bool {
    let wanted = RELEASES.load(Ordering::Relaxed);
    let due = COLLECTED.with(|c| c.replace(wanted)) != wanted;
    if due {
        collect();
    }
    due
}

#[allow(unsafe_code)]
fn collect() {
    // SAFETY: mi_collect takes no pointer; it frees what this thread's heap
    // and abandoned segments no longer use, and may be called from any
    // thread whatever the global allocator is.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim_glibc() {
    // SAFETY: malloc_trim takes no pointer and only walks the allocator's
    // own arenas under their locks; it is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_glibc() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option index is mimalloc's purge delay: its default is v3's,
    /// and [`purge_promptly`] sets it to 0.
    #[test]
    #[allow(unsafe_code)]
    fn the_purge_delay_option_is_the_one_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads an option value; no pointer.
        let get = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(get(), 1000, "mimalloc v3's default purge delay");
        purge_promptly();
        assert_eq!(get(), 0);
    }

    /// After a run: a release at once and another a second later.
    /// (Other tests of this process may ask for releases too, hence the
    /// lower bounds; nextest runs each test in its own process.)
    #[tokio::test]
    async fn a_run_end_asks_for_a_release_now_and_a_second_later() {
        let before = RELEASES.load(Ordering::Relaxed);
        release_after_run();
        assert!(RELEASES.load(Ordering::Relaxed) > before);
        let now = RELEASES.load(Ordering::Relaxed);
        tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
        assert!(
            RELEASES.load(Ordering::Relaxed) > now,
            "no second release a second later"
        );
    }

    /// Each thread collects once after each release, when it next goes idle.
    #[test]
    fn each_thread_collects_once_per_release() {
        release_freed();
        assert!(
            !collect_when_idle(),
            "the releasing thread collected at once"
        );
        let other = std::thread::spawn(|| (collect_when_idle(), collect_when_idle()));
        assert_eq!(other.join().unwrap(), (true, false));
        release_freed();
        let later = std::thread::spawn(collect_when_idle);
        assert!(later.join().unwrap());
    }
}
