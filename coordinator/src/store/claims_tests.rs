use super::{ClaimError, ClaimStore, Fence};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn open() -> Fence {
    Arc::new(|| true)
}

fn memory() -> Arc<object_store::memory::InMemory> {
    Arc::new(object_store::memory::InMemory::new())
}

/// The objects under `claims/<run>/log/`, by name after the run.
async fn log_objects(store: &Arc<object_store::memory::InMemory>, run: &str) -> Vec<String> {
    use futures::TryStreamExt;
    use object_store::ObjectStore;
    let dir = object_store::path::Path::from(format!("p/claims/{run}"));
    let listed: Vec<_> = store.list(Some(&dir)).try_collect().await.unwrap();
    listed
        .into_iter()
        .map(|m| {
            m.location
                .as_ref()
                .trim_start_matches(&format!("p/claims/{run}/"))
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_task_is_claimed_first_once() {
    let claims = ClaimStore::new(memory(), "p/");
    let _r1 = claims.own("r1", "c1", open());
    let _r2 = claims.own("r2", "c1", open());
    let id = "r1:apply:mod.a/b.sim_object.x[\"k\"]";
    assert!(claims.claim("r1", id, "w1 a1").await.unwrap());
    assert!(!claims.claim("r1", id, "w2 a2").await.unwrap());
    // The same claimant asking again (its answer was lost): still its.
    assert!(claims.claim("r1", id, "w1 a1").await.unwrap());
    // The same worker on another delivery is someone else.
    assert!(!claims.claim("r1", id, "w1 a3").await.unwrap());
    assert!(claims.claim("r1", "r1:apply:other", "w2").await.unwrap());
    assert!(claims.claim("r2", id, "w2").await.unwrap());
    // A request without an attempt id is first once, and never again.
    assert!(claims.claim("r1", "r1:apply:anon", "").await.unwrap());
    assert!(!claims.claim("r1", "r1:apply:anon", "").await.unwrap());
    assert_eq!(
        claims.holder("r1", id).await.unwrap().as_deref(),
        Some("w1 a1")
    );
    assert_eq!(claims.holder("r1", "r1:apply:none").await.unwrap(), None);
    assert_eq!(super::claimant_worker("w1 a1"), "w1");
}

#[tokio::test]
async fn only_a_run_owned_here_is_answered_and_only_while_its_lease_is_safe() {
    let claims = ClaimStore::new(memory(), "p");
    assert!(matches!(
        claims.claim("r", "t", "w a").await,
        Err(ClaimError::NotOwned(_))
    ));
    assert!(matches!(
        claims.holder("r", "t").await,
        Err(ClaimError::NotOwned(_))
    ));
    let safe = Arc::new(AtomicBool::new(false));
    let fence: Fence = {
        let safe = safe.clone();
        Arc::new(move || safe.load(Ordering::SeqCst))
    };
    let guard = claims.own("r", "c1", fence);
    // Written, but the lease is overdue: no answer (the worker asks again).
    assert!(matches!(
        claims.claim("r", "t", "w a").await,
        Err(ClaimError::NotYet(_))
    ));
    safe.store(true, Ordering::SeqCst);
    // Renewed: the claim written meanwhile is the worker's.
    assert!(claims.claim("r", "t", "w a").await.unwrap());
    assert!(!claims.claim("r", "t", "v b").await.unwrap());
    drop(guard);
    assert!(matches!(
        claims.claim("r", "t", "w a").await,
        Err(ClaimError::NotOwned(_))
    ));
}

#[tokio::test]
async fn claims_that_come_together_are_written_together() {
    let store = memory();
    let claims = ClaimStore::new(store.clone(), "p");
    let _g = claims.own("r", "c1", open());
    let asked = (0..200).map(|i| {
        let claims = claims.clone();
        async move {
            claims
                .claim("r", &format!("t{i}"), &format!("w{i} a"))
                .await
        }
    });
    let answers = futures::future::join_all(asked).await;
    assert!(answers.iter().all(|a| matches!(a, Ok(true))), "{answers:?}");
    let objects = log_objects(&store, "r").await;
    let batches = objects.iter().filter(|o| !o.ends_with("/owner")).count();
    assert!(
        (1..=10).contains(&batches),
        "200 claims asked at once took {batches} objects: {objects:?}"
    );
    assert!(
        objects.contains(&"log/0000000001/owner".to_string()),
        "{objects:?}"
    );
}

#[tokio::test]
async fn a_new_owner_reads_the_claims_of_those_before_it() {
    let store = memory();
    let claims = ClaimStore::new(store.clone(), "p");
    let first = claims.own("r", "c1", open());
    assert!(claims.claim("r", "a", "w1 x").await.unwrap());
    assert!(claims.claim("r", "b/c", "w1 y").await.unwrap());
    drop(first);
    // Another process (a restart, a standby taking the run over).
    let other = ClaimStore::new(store.clone(), "p");
    let _second = other.own("r", "c2", open());
    assert!(!other.claim("r", "a", "w2 z").await.unwrap());
    assert!(other.claim("r", "a", "w1 x").await.unwrap());
    assert_eq!(
        other.holder("r", "b/c").await.unwrap().as_deref(),
        Some("w1 y")
    );
    assert!(other.claim("r", "d", "w2 z").await.unwrap());
    let objects = log_objects(&store, "r").await;
    assert!(
        objects.contains(&"log/0000000002/owner".to_string()),
        "{objects:?}"
    );
}

#[tokio::test]
async fn a_stale_owners_unanswered_claim_yields_to_the_next_owners() {
    let store = memory();
    // Owner A, whose lease became overdue: what it writes is not answered.
    let a = ClaimStore::new(store.clone(), "p");
    let a_safe = Arc::new(AtomicBool::new(true));
    let a_fence: Fence = {
        let s = a_safe.clone();
        Arc::new(move || s.load(Ordering::SeqCst))
    };
    let _ga = a.own("r", "A", a_fence);
    assert!(a.claim("r", "warmup", "wa 0").await.unwrap());
    a_safe.store(false, Ordering::SeqCst);
    // Owner B took the run over and read the log before A's late write.
    let b = ClaimStore::new(store.clone(), "p");
    let gb = b.own("r", "B", open());
    assert!(!b.claim("r", "warmup", "wb 0").await.unwrap());
    assert!(matches!(
        a.claim("r", "x", "wa 1").await,
        Err(ClaimError::NotYet(_))
    ));
    assert!(b.claim("r", "x", "wb 1").await.unwrap());
    drop(gb);
    // Owner C reads both: the later epoch's claim is the answered one.
    let c = ClaimStore::new(store.clone(), "p");
    let _gc = c.own("r", "C", open());
    assert!(c.claim("r", "x", "wb 1").await.unwrap());
    assert!(!c.claim("r", "x", "wa 1").await.unwrap());
    assert_eq!(
        c.holder("r", "warmup").await.unwrap().as_deref(),
        Some("wa 0")
    );
}

#[tokio::test]
async fn an_ended_runs_claims_are_collected_only_once_none_is_young() {
    let store = memory();
    let claims = ClaimStore::new(store.clone(), "p");
    let r1 = claims.own("r1", "c", open());
    let _r2 = claims.own("r2", "c", open());
    claims.claim("r1", "a", "w1 x").await.unwrap();
    claims.claim("r1", "b/c", "w1 y").await.unwrap();
    claims.claim("r2", "a", "w1 z").await.unwrap();
    // Not while the run is owned here.
    assert_eq!(claims.collect("r1", Duration::ZERO).await.unwrap(), None);
    drop(r1);
    assert_eq!(
        claims
            .collect("r1", Duration::from_secs(3600))
            .await
            .unwrap(),
        None
    );
    assert!(!log_objects(&store, "r1").await.is_empty());
    assert!(claims.collect("r1", Duration::ZERO).await.unwrap().unwrap() >= 2);
    assert!(log_objects(&store, "r1").await.is_empty());
    // Another run's are left alone.
    assert!(!log_objects(&store, "r2").await.is_empty());
    assert_eq!(
        claims.holder("r2", "a").await.unwrap().as_deref(),
        Some("w1 z")
    );
}

#[tokio::test]
async fn a_released_claim_is_free_again_for_whoever_asks_next() {
    let store = memory();
    let claims = ClaimStore::new(store.clone(), "p");
    let guard = claims.own("r", "c1", open());
    assert!(claims.claim("r", "t", "w1 direct.i1").await.unwrap());
    // Only its holder's claim is released.
    assert!(!claims.release("r", "t", "w2 a").await.unwrap());
    assert!(!claims.release("r", "none", "w1 direct.i1").await.unwrap());
    assert!(!claims.claim("r", "t", "w2 a").await.unwrap());
    assert!(claims.release("r", "t", "w1 direct.i1").await.unwrap());
    assert_eq!(claims.holder("r", "t").await.unwrap(), None);
    // Released twice is not released again.
    assert!(!claims.release("r", "t", "w1 direct.i1").await.unwrap());
    assert!(claims.claim("r", "t", "w2 a").await.unwrap());
    assert!(!claims.claim("r", "t", "w1 direct.i1").await.unwrap());
    assert_eq!(
        claims.holder("r", "t").await.unwrap().as_deref(),
        Some("w2 a")
    );
    // A new owner reads the log to the same end: the claim after the
    // release holds it.
    drop(guard);
    let other = ClaimStore::new(store.clone(), "p");
    let _g = other.own("r", "c2", open());
    assert_eq!(
        other.holder("r", "t").await.unwrap().as_deref(),
        Some("w2 a")
    );
    assert!(!other.claim("r", "t", "w1 direct.i1").await.unwrap());
}

#[tokio::test]
async fn a_release_read_from_the_log_leaves_the_task_free() {
    let store = memory();
    let claims = ClaimStore::new(store.clone(), "p");
    let guard = claims.own("r", "c1", open());
    assert!(claims.claim("r", "t", "w1 direct.i1").await.unwrap());
    assert!(claims.release("r", "t", "w1 direct.i1").await.unwrap());
    drop(guard);
    let other = ClaimStore::new(store.clone(), "p");
    let _g = other.own("r", "c2", open());
    assert_eq!(other.holder("r", "t").await.unwrap(), None);
    assert!(other.claim("r", "t", "w2 a").await.unwrap());
}

#[tokio::test]
async fn a_release_is_answered_only_while_the_lease_is_safe() {
    let safe = Arc::new(AtomicBool::new(true));
    let fence: Fence = {
        let safe = safe.clone();
        Arc::new(move || safe.load(Ordering::SeqCst))
    };
    let claims = ClaimStore::new(memory(), "p");
    let _g = claims.own("r", "c1", fence);
    assert!(claims.claim("r", "t", "w1 direct.i1").await.unwrap());
    safe.store(false, Ordering::SeqCst);
    assert!(matches!(
        claims.release("r", "t", "w1 direct.i1").await,
        Err(ClaimError::NotYet(_))
    ));
    assert!(matches!(
        claims.release("unowned", "t", "w1 direct.i1").await,
        Err(ClaimError::NotOwned(_))
    ));
}

#[tokio::test]
async fn a_claim_asked_while_a_release_is_written_gets_the_task_once_it_is() {
    let claims = ClaimStore::new(memory(), "p");
    let _g = claims.own("r", "c1", open());
    assert!(claims.claim("r", "t", "w1 direct.i1").await.unwrap());
    // On this one thread the release goes as far as its write and waits;
    // the claim then finds the release not yet written.
    let (released, claimed) = tokio::join!(
        claims.release("r", "t", "w1 direct.i1"),
        claims.claim("r", "t", "w2 a")
    );
    assert!(released.unwrap());
    assert!(
        claimed.unwrap(),
        "the task was free once the release was written"
    );
    assert_eq!(
        claims.holder("r", "t").await.unwrap().as_deref(),
        Some("w2 a")
    );
}
