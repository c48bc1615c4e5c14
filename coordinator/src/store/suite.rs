//! One test suite every [`StateStore`] implementation passes.

use super::{Origin, StateStore, StoreError};
use fleetform_shared::ProviderAddr;
use fleetform_shared::state::{ObjectState, State, StateDelta};
use fleetform_shared::value::Value;

pub(crate) fn sample(serial: u64, n: usize) -> State {
    let mut s = State::new("lineage-1");
    s.serial = serial;
    for i in 0..n {
        s.apply_delta(&StateDelta::SetCurrent {
            addr: format!("sim_object.x[{i}]").parse().unwrap(),
            provider: ProviderAddr::new("fleetform", "sim"),
            object: Some(ObjectState::new(Value::object([(
                "id",
                Value::from(format!("id-{i}")),
            )]))),
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
    store
        .save("ws", &first, &Origin::new("run-1", "apply"))
        .await
        .unwrap();
    assert_eq!(store.load("ws").await.unwrap().unwrap(), first);

    // A writer that did not see serial 1 loses and changes nothing.
    let stale = sample(1, 5);
    assert!(matches!(
        store.save("ws", &stale, &Origin::default()).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(store.load("ws").await.unwrap().unwrap(), first);

    let second = sample(2, 4);
    store
        .save("ws", &second, &Origin::new("run-2", "destroy"))
        .await
        .unwrap();
    assert_eq!(store.head("ws").await.unwrap().unwrap().serial, 2);
    assert_eq!(store.load("ws").await.unwrap().unwrap(), second);

    // Skipping a serial is refused too.
    assert!(matches!(
        store.save("ws", &sample(4, 1), &Origin::default()).await,
        Err(StoreError::Conflict { .. })
    ));
    // Workspaces are independent.
    assert!(store.load("other").await.unwrap().is_none());

    // Every snapshot stays readable by serial, and the history says who
    // wrote each; the stale writer left nothing in it.
    assert_eq!(store.load_serial("ws", 1).await.unwrap().unwrap(), first);
    assert!(store.load_serial("ws", 3).await.unwrap().is_none());
    let history = store.history("ws").await.unwrap();
    let brief: Vec<_> = history
        .iter()
        .map(|h| {
            (
                h.serial,
                h.run_id.as_str(),
                h.operation.as_str(),
                h.lineage.as_str(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            (1, "run-1", "apply", "lineage-1"),
            (2, "run-2", "destroy", "lineage-1")
        ]
    );
    assert!(
        history
            .iter()
            .all(|h| h.bytes > 0 && h.written_at.ends_with('Z'))
    );

    // Workspaces: those with a state or created empty; created once.
    assert_eq!(store.workspaces(None).await.unwrap(), ["ws"]);
    assert!(store.create_workspace("b-2").await.unwrap());
    assert!(!store.create_workspace("b-2").await.unwrap());
    assert!(!store.create_workspace("ws").await.unwrap(), "has a state");
    assert_eq!(store.workspaces(None).await.unwrap(), ["b-2", "ws"]);
    assert!(store.load("b-2").await.unwrap().is_none(), "created empty");

    // The record of refreshed objects sits beside the state, per
    // workspace, and is not a workspace of its own.
    assert!(store.load_refreshed("ws").await.unwrap().entries.is_empty());
    let mut record = super::Refreshed::default();
    let read = second.current(&"sim_object.x[1]".parse().unwrap()).cloned();
    record.record(
        "sim_object.x[1]".parse().unwrap(),
        &second,
        read.map(|o| fleetform_shared::wire::PriorObject {
            value: o.value,
            private: o.private,
            schema_version: o.schema_version,
        }),
        1_700_000_000_000,
    );
    assert_eq!(record.entries.len(), 1);
    store.save_refreshed("ws", &record).await.unwrap();
    assert_eq!(store.load_refreshed("ws").await.unwrap(), record);
    assert!(
        store
            .load_refreshed("b-2")
            .await
            .unwrap()
            .entries
            .is_empty()
    );
    assert_eq!(store.workspaces(None).await.unwrap(), ["b-2", "ws"]);

    // Deleting forgets everything; the name can be used again from scratch.
    store.delete_workspace("ws").await.unwrap();
    assert!(store.load_refreshed("ws").await.unwrap().entries.is_empty());
    assert_eq!(store.workspaces(None).await.unwrap(), ["b-2"]);
    assert!(store.load("ws").await.unwrap().is_none());
    assert!(store.history("ws").await.unwrap().is_empty());
    store
        .save("ws", &sample(1, 1), &Origin::new("run-3", "apply"))
        .await
        .unwrap();
    assert_eq!(store.load("ws").await.unwrap().unwrap(), sample(1, 1));

    // Projects keep their own workspaces: a project's `ws` is not the bare
    // `ws`, and listings stay within their project.
    assert!(store.load("app/ws").await.unwrap().is_none());
    store
        .save(
            "app/ws",
            &sample(1, 9),
            &Origin::new("run-4", "apply").from_source("host:/src/app"),
        )
        .await
        .unwrap();
    assert!(store.create_workspace("app/b-2").await.unwrap());
    assert!(store.create_workspace("other/ws").await.unwrap());
    assert_eq!(store.load("app/ws").await.unwrap().unwrap(), sample(1, 9));
    assert_eq!(store.load("ws").await.unwrap().unwrap(), sample(1, 1));
    assert_eq!(
        store.workspaces(Some("app")).await.unwrap(),
        ["app/b-2", "app/ws"]
    );
    assert_eq!(store.workspaces(Some("other")).await.unwrap(), ["other/ws"]);
    assert_eq!(store.workspaces(None).await.unwrap(), ["b-2", "ws"]);
    let history = store.history("app/ws").await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].source, "host:/src/app");
}
