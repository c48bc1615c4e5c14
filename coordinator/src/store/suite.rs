//! One test suite every [`StateStore`] implementation passes.

use super::{StateStore, StoreError};
use fleetform_shared::ProviderAddr;
use fleetform_shared::state::{ObjectState, ObjectStatus, State, StateDelta};
use fleetform_shared::value::Value;

fn sample(serial: u64, n: usize) -> State {
    let mut s = State::new("lineage-1");
    s.serial = serial;
    for i in 0..n {
        s.apply_delta(&StateDelta::SetCurrent {
            addr: format!("sim_object.x[{i}]").parse().unwrap(),
            provider: ProviderAddr::new("fleetform", "sim"),
            object: Some(ObjectState {
                value: Value::object([("id", Value::from(format!("id-{i}")))]),
                private: vec![],
                schema_version: 0,
                status: ObjectStatus::Ready,
                dependencies: vec![],
                create_before_destroy: false,
                sensitive_paths: vec![],
            }),
        });
    }
    s
}

pub(crate) async fn run(store: &dyn StateStore) {
    assert!(
        store.load("ws").await.unwrap().is_none(),
        "new workspace has no state"
    );
    assert!(store.head("ws").await.unwrap().is_none());

    let first = sample(1, 3);
    store.save("ws", &first).await.unwrap();
    assert_eq!(store.load("ws").await.unwrap().unwrap(), first);

    // A writer that did not see serial 1 loses and changes nothing.
    let stale = sample(1, 5);
    assert!(matches!(
        store.save("ws", &stale).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(store.load("ws").await.unwrap().unwrap(), first);

    let second = sample(2, 4);
    store.save("ws", &second).await.unwrap();
    assert_eq!(store.head("ws").await.unwrap().unwrap().serial, 2);
    assert_eq!(store.load("ws").await.unwrap().unwrap(), second);

    // Skipping a serial is refused too.
    assert!(matches!(
        store.save("ws", &sample(4, 1)).await,
        Err(StoreError::Conflict { .. })
    ));
    // Workspaces are independent.
    assert!(store.load("other").await.unwrap().is_none());
}
