//! Leases on the memory store (conditional updates, as S3) and on files
//! (conditional creates only).

use super::*;

fn info(id: &str, run: &str) -> LockInfo {
    LockInfo {
        id: id.into(),
        owner: format!("test@host:{id}"),
        run_id: run.into(),
        operation: "apply".into(),
        created: "2026-11-24T00:00:00Z".into(),
        expires: 0,
        ttl_ms: None,
    }
}

fn stores() -> Vec<(LeaseStore, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let fs = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    vec![
        (
            LeaseStore::new(Arc::new(object_store::memory::InMemory::new()), "p", true),
            None,
        ),
        (LeaseStore::new(Arc::new(fs), "", false), Some(dir)),
    ]
}

#[tokio::test]
async fn one_holder_at_a_time_until_release_or_expiry() {
    for (leases, _dir) in stores() {
        let ttl = Duration::from_secs(30);
        let mut a = leases
            .acquire("ws", info("a", "r1"), ttl, None)
            .await
            .unwrap();
        match leases.acquire("ws", info("b", "r2"), ttl, None).await {
            Err(LeaseError::Held(held)) => assert_eq!(held.id, "a"),
            other => panic!("{other:?}"),
        }
        // Another workspace is free.
        leases
            .acquire("other", info("c", "r3"), ttl, None)
            .await
            .unwrap();
        leases.renew(&mut a, ttl).await.unwrap();
        assert!(leases.holds(&a).await.unwrap());
        assert_eq!(leases.holder("ws").await.unwrap().unwrap().id, "a");
        leases.release(&a).await.unwrap();
        assert_eq!(leases.holder("ws").await.unwrap(), None);
        let b = leases
            .acquire("ws", info("b", "r2"), ttl, None)
            .await
            .unwrap();
        assert!(leases.holds(&b).await.unwrap());
        assert!(!leases.holds(&a).await.unwrap(), "a released it");
    }
}

/// A renewal whose write landed but whose answer was lost (the object
/// store client retries it, and the retry finds the version it replaced)
/// leaves the holder an old version of its own lock: that is no loss.
#[tokio::test]
async fn a_renewal_that_landed_unseen_keeps_the_lock() {
    for (leases, _dir) in stores() {
        let ttl = Duration::from_secs(30);
        let mut a = leases
            .acquire("ws", info("a", "r1"), ttl, None)
            .await
            .unwrap();
        // The write that landed: the holder never learns its version.
        let mut landed = a.clone();
        leases.renew(&mut landed, ttl).await.unwrap();
        assert!(leases.holds(&a).await.unwrap(), "still a's lock");
        leases.renew(&mut a, ttl).await.unwrap();
        assert!(leases.holds(&a).await.unwrap());
        // Another holder's lock is a loss, whatever the version.
        leases.release(&a).await.unwrap();
        leases
            .acquire("ws", info("b", "r2"), ttl, None)
            .await
            .unwrap();
        assert!(!leases.holds(&a).await.unwrap());
        assert!(matches!(
            leases.renew(&mut a, ttl).await,
            Err(LeaseError::Lost)
        ));
    }
}

#[tokio::test]
async fn an_expired_lease_is_taken_over_and_its_holder_is_fenced_off() {
    for (leases, _dir) in stores() {
        // A zero TTL is rounded up to one second.
        let mut a = leases
            .acquire("ws", info("a", "r1"), Duration::ZERO, None)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert_eq!(leases.holder("ws").await.unwrap(), None, "expired");
        let b = leases
            .acquire("ws", info("b", "r2"), Duration::from_secs(30), None)
            .await
            .unwrap();
        assert!(!leases.holds(&a).await.unwrap(), "a may not write");
        assert!(matches!(
            leases.renew(&mut a, Duration::from_secs(30)).await,
            Err(LeaseError::Lost)
        ));
        // a's late release leaves b's lock alone.
        leases.release(&a).await.unwrap();
        assert!(leases.holds(&b).await.unwrap());
    }
}

#[tokio::test]
async fn a_resumed_run_takes_over_its_own_lock_and_force_unlock_needs_the_id() {
    for (leases, _dir) in stores() {
        let ttl = Duration::from_secs(30);
        leases
            .acquire("ws", info("a", "r1"), ttl, None)
            .await
            .unwrap();
        // The process that held it died; its successor resumes run r1.
        let again = leases
            .acquire("ws", info("a2", "r1"), ttl, Some("r1"))
            .await
            .unwrap();
        assert_eq!(leases.holder("ws").await.unwrap().unwrap().id, "a2");
        assert!(matches!(
            leases.force_unlock("ws", "a").await,
            Err(LeaseError::NotHeld(_))
        ));
        assert_eq!(leases.force_unlock("ws", "a2").await.unwrap().run_id, "r1");
        assert!(!leases.holds(&again).await.unwrap());
        assert_eq!(leases.holder("ws").await.unwrap(), None);

        // Taken over by another coordinator (after expiry): a restarted
        // first one does not take it back while it is held.
        let mut other = info("b", "r2");
        other.owner = "standby@elsewhere:7".into();
        leases.acquire("ws", other, ttl, None).await.unwrap();
        assert!(matches!(
            leases.acquire("ws", info("a3", "r2"), ttl, Some("r2")).await,
            Err(LeaseError::Held(h)) if h.id == "b"
        ));
    }
}

#[test]
fn one_holder_is_one_name_on_one_host_across_restarts() {
    assert!(same_holder("fleetform-a@h1:100", "fleetform-a@h1:200"));
    assert!(!same_holder("fleetform-a@h1:100", "fleetform-b@h1:100"));
    assert!(!same_holder("fleetform-a@h1:100", "fleetform-a@h2:100"));
}

/// An embedded process's lock ends with the process (on this host); a live
/// one, another host's, or a coordinator's waits for its lease.
#[tokio::test]
async fn an_embedded_holder_that_died_leaves_its_lock_free() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    // A process that has ended: its id is free (or reused by a program
    // that is not fleetform, which counts the same).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let alive = std::process::id(); // this test binary: fleetform_coordinator-…
    let owned = |owner: String| LockInfo {
        owner,
        ..info("x", "r1")
    };
    assert!(embedded_holder_gone(&format!("embedded@{host}:{dead}")));
    assert!(!embedded_holder_gone(&format!("embedded@{host}:{alive}")));
    assert!(!embedded_holder_gone(&format!(
        "embedded@another-host:{dead}"
    )));
    assert!(!embedded_holder_gone(&format!("coordinator@{host}:{dead}")));
    for (leases, _dir) in stores() {
        let ttl = Duration::from_secs(30);
        leases
            .acquire("ws", owned(format!("embedded@{host}:{dead}")), ttl, None)
            .await
            .unwrap();
        let b = leases
            .acquire("ws", info("b", "r2"), ttl, None)
            .await
            .expect("the dead process's lock is free at once");
        assert!(leases.holds(&b).await.unwrap());
        leases.release(&b).await.unwrap();
        leases
            .acquire("ws", owned(format!("embedded@{host}:{alive}")), ttl, None)
            .await
            .unwrap();
        assert!(matches!(
            leases.acquire("ws", info("c", "r3"), ttl, None).await,
            Err(LeaseError::Held(_))
        ));
    }
}

/// The lock object as a holder whose clock reads `offset` seconds away
/// from ours would write it: our clock cannot tell when it expires.
async fn write_skewed(leases: &LeaseStore, ws: &str, mut info: LockInfo, offset: i64) {
    info.expires = (now_unix() as i64 + offset) as u64;
    info.ttl_ms = Some(1000);
    let mode = if leases.read(ws).await.unwrap().is_some() {
        PutMode::Overwrite
    } else {
        PutMode::Create
    };
    leases.write(ws, &info, mode).await.unwrap().unwrap();
}

/// Expiry is watched, not read off clocks. A holder whose clock is an
/// hour ahead writes an `expires` an hour away: once it stops renewing, a
/// contender takes the lock after watching it unrenewed for its time to
/// live, not an hour later.
#[tokio::test]
async fn a_dead_holder_whose_clock_ran_ahead_loses_its_lock_after_its_time_to_live() {
    for (leases, _dir) in stores() {
        write_skewed(&leases, "ws", info("a", "r1"), 3600).await;
        // Another process: it has watched nothing yet.
        let other = LeaseStore::new(leases.store.clone(), &leases.prefix, leases.cas_update);
        let ttl = Duration::from_secs(1);
        assert!(matches!(
            other.acquire("ws", info("b", "r2"), ttl, None).await,
            Err(LeaseError::Held(h)) if h.id == "a"
        ));
        assert!(other.holder("ws").await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(other.holder("ws").await.unwrap(), None, "unrenewed for 1 s");
        let b = other
            .acquire("ws", info("b", "r2"), ttl, None)
            .await
            .unwrap();
        assert!(other.holds(&b).await.unwrap());
    }
}

/// A contender whose clock is an hour ahead sees a live holder's
/// `expires` long past: it watches the lock, sees it renewed, and leaves it
/// to its holder; once the holder stops, it takes the lock after one time
/// to live.
#[tokio::test]
async fn a_contender_whose_clock_ran_ahead_does_not_take_a_live_lock() {
    for (leases, _dir) in stores() {
        write_skewed(&leases, "ws", info("a", "r1"), -3600).await;
        let holder = leases.clone();
        let renewing = tokio::spawn(async move {
            for _ in 0..6 {
                tokio::time::sleep(Duration::from_millis(300)).await;
                write_skewed(&holder, "ws", info("a", "r1"), -3600).await;
            }
        });
        let other = LeaseStore::new(leases.store.clone(), &leases.prefix, leases.cas_update);
        let ttl = Duration::from_secs(1);
        match other.acquire("ws", info("b", "r2"), ttl, None).await {
            Err(LeaseError::Held(h)) => assert_eq!(h.id, "a"),
            other => panic!("a live lock was taken: {other:?}"),
        }
        renewing.await.unwrap();
        // The holder stopped renewing: watched for its time to live, taken.
        let started = Instant::now();
        let b = other
            .acquire("ws", info("b", "r2"), ttl, None)
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{:?}",
            started.elapsed()
        );
        assert!(other.holds(&b).await.unwrap());
    }
}
