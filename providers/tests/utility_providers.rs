//! The random, local and time provider binaries and the sim provider's new
//! settings, as real plugin processes over the go-plugin handshake:
//! schema, plan, apply (create), read, import and delete.

mod client;

use anyhow::Result;
use client::conn::{Conn, obj, set};
use fleetform_proto::ToProto;
use fleetform_providers::sim::oplog::{self, Op};
use fleetform_shared::provider::*;
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const RANDOM: &str = env!("CARGO_BIN_EXE_terraform-provider-random");
const LOCAL: &str = env!("CARGO_BIN_EXE_terraform-provider-local");
const TIME: &str = env!("CARGO_BIN_EXE_terraform-provider-time");
const SIM: &str = env!("CARGO_BIN_EXE_terraform-provider-sim");

fn str_of<'a>(v: &'a Value, name: &str) -> &'a str {
    v.get_attr(name).as_str().unwrap_or_default()
}

#[tokio::test]
async fn random_resources_generate_at_apply_and_keepers_replace() -> Result<()> {
    let mut c = Conn::start(RANDOM, true, Value::null()).await?;
    let names: Vec<&str> = c.schema.resources.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "random_id",
            "random_integer",
            "random_password",
            "random_pet",
            "random_string",
            "random_uuid"
        ]
    );
    assert!(c.schema.resources["random_password"].block.attributes["result"].sensitive);

    let keepers = |k: &str| obj(&[("k", Value::from(k))]);
    let config = obj(&[
        ("length", Value::int(20)),
        ("special", Value::Bool(false)),
        ("keepers", keepers("1")),
    ]);
    let plan = c.plan("random_string", &Value::null(), &config).await?;
    assert!(plan.planned_state.get_attr("result").is_unknown());
    assert_eq!(plan.planned_state.get_attr("upper"), &Value::Bool(true));
    let state = c
        .apply(
            "random_string",
            &Value::null(),
            &plan.planned_state,
            &config,
        )
        .await?;
    let result = str_of(&state, "result");
    assert!(
        result.len() == 20 && result.chars().all(|ch| ch.is_ascii_alphanumeric()),
        "{result}"
    );
    assert_eq!(str_of(&state, "id"), result);
    assert_eq!(c.read("random_string", &state).await?, state);
    let again = c.plan("random_string", &state, &config).await?;
    assert!(again.requires_replace.is_empty());
    assert_eq!(
        again.planned_state, state,
        "no change without a config change"
    );
    let rekeyed = c
        .plan(
            "random_string",
            &state,
            &set(&config, "keepers", keepers("2")),
        )
        .await?;
    assert_eq!(
        rekeyed.requires_replace,
        vec![vec![PathStep::Key("keepers".into())]]
    );
    assert!(rekeyed.planned_state.get_attr("result").is_unknown());
    c.destroy("random_string", &state).await?;
    assert!(
        !c.validate(
            "random_string",
            &obj(&[("length", Value::int(2)), ("min_lower", Value::int(3))])
        )
        .await?
    );

    let pw = c
        .create("random_password", &obj(&[("length", Value::int(12))]))
        .await?;
    assert_eq!(str_of(&pw, "id"), "none");
    assert_eq!(str_of(&pw, "result").chars().count(), 12);

    let int = c
        .create(
            "random_integer",
            &obj(&[
                ("min", Value::int(10)),
                ("max", Value::int(12)),
                ("seed", Value::from("s")),
            ]),
        )
        .await?;
    let n: i64 = str_of(&int, "id").parse()?;
    assert!((10..=12).contains(&n));
    assert_eq!(int.get_attr("result"), &Value::int(n));
    let same_seed = c
        .create(
            "random_integer",
            &obj(&[
                ("min", Value::int(10)),
                ("max", Value::int(12)),
                ("seed", Value::from("s")),
            ]),
        )
        .await?;
    assert_eq!(same_seed.get_attr("result"), int.get_attr("result"));

    let id = c
        .create(
            "random_id",
            &obj(&[
                ("byte_length", Value::int(4)),
                ("prefix", Value::from("x-")),
            ]),
        )
        .await?;
    assert_eq!(str_of(&id, "hex").len(), 2 + 8);
    assert_eq!(str_of(&id, "b64_url"), format!("x-{}", str_of(&id, "id")));
    let n = u32::from_str_radix(&str_of(&id, "hex")[2..], 16)?;
    assert_eq!(str_of(&id, "dec"), format!("x-{n}"));

    let pet = c
        .create(
            "random_pet",
            &obj(&[("length", Value::int(3)), ("separator", Value::from("."))]),
        )
        .await?;
    assert_eq!(str_of(&pet, "id").split('.').count(), 3, "{pet:?}");

    let uuid = c.create("random_uuid", &Value::null()).await?;
    assert!(uuid::Uuid::parse_str(str_of(&uuid, "result")).is_ok());
    assert_eq!(uuid.get_attr("id"), uuid.get_attr("result"));
    let imported = c.import("random_uuid", str_of(&uuid, "id")).await?;
    assert_eq!(imported.get_attr("result"), uuid.get_attr("result"));
    c.shutdown().await
}

#[tokio::test]
async fn local_files_are_written_read_back_and_removed() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sub/hello.txt");
    let mut c = Conn::start(LOCAL, false, Value::null()).await?;
    let config = obj(&[
        ("filename", Value::String(path.display().to_string())),
        ("content", Value::from("hello")),
    ]);
    let plan = c.plan("local_file", &Value::null(), &config).await?;
    assert!(plan.planned_state.get_attr("id").is_unknown());
    assert_eq!(
        plan.planned_state.get_attr("file_permission"),
        &Value::from("0777")
    );
    let state = c
        .apply("local_file", &Value::null(), &plan.planned_state, &config)
        .await?;
    assert_eq!(std::fs::read_to_string(&path)?, "hello");
    assert_eq!(
        str_of(&state, "id"),
        "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"
    );
    assert_eq!(
        str_of(&state, "content_md5"),
        "5d41402abc4b2a76b9719d911017c592"
    );
    assert_eq!(
        str_of(&state, "content_base64sha256"),
        "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
    );
    assert_eq!(c.read("local_file", &state).await?, state);

    let again = c.plan("local_file", &state, &config).await?;
    assert!(again.requires_replace.is_empty());
    assert_eq!(again.planned_state, state);
    let changed = c
        .plan(
            "local_file",
            &state,
            &set(&config, "content", Value::from("bye")),
        )
        .await?;
    assert_eq!(
        changed.requires_replace,
        vec![vec![PathStep::Key("content".into())]]
    );

    let data = c
        .read_data(
            "local_file",
            &obj(&[("filename", Value::String(path.display().to_string()))]),
        )
        .await?;
    assert!(!data.diagnostics.has_errors(), "{:?}", data.diagnostics);
    assert_eq!(data.state.get_attr("content"), &Value::from("hello"));
    assert_eq!(data.state.get_attr("id"), state.get_attr("id"));

    c.destroy("local_file", &state).await?;
    assert!(!path.exists());
    assert_eq!(
        c.read("local_file", &state).await?,
        Value::null(),
        "a gone file reads as gone"
    );
    let missing = c
        .read_data(
            "local_file",
            &obj(&[("filename", Value::String(path.display().to_string()))]),
        )
        .await?;
    assert!(missing.diagnostics.has_errors());

    let secret = dir.path().join("secret");
    let s = c
        .create(
            "local_sensitive_file",
            &obj(&[
                ("filename", Value::String(secret.display().to_string())),
                ("content_base64", Value::from("c2VjcmV0")),
            ]),
        )
        .await?;
    assert_eq!(std::fs::read_to_string(&secret)?, "secret");
    assert_eq!(str_of(&s, "file_permission"), "0700");
    assert!(c.schema.resources["local_sensitive_file"].block.attributes["content"].sensitive);
    assert!(
        !c.validate("local_file", &obj(&[("filename", Value::from("f"))]))
            .await?
    );
    Ok(())
}

#[tokio::test]
async fn time_resources_sleep_and_keep_their_timestamp() -> Result<()> {
    let mut c = Conn::start(TIME, true, Value::null()).await?;
    let config = obj(&[
        ("create_duration", Value::from("50ms")),
        ("destroy_duration", Value::from("30ms")),
    ]);
    let plan = c.plan("time_sleep", &Value::null(), &config).await?;
    assert!(plan.planned_state.get_attr("id").is_unknown());
    let started = Instant::now();
    let sleep = c
        .apply("time_sleep", &Value::null(), &plan.planned_state, &config)
        .await?;
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(fleetform_providers::time::parse_rfc3339(str_of(&sleep, "id")).is_ok());
    let longer = c
        .plan(
            "time_sleep",
            &sleep,
            &set(&config, "create_duration", Value::from("1m")),
        )
        .await?;
    assert!(
        longer.requires_replace.is_empty(),
        "durations update in place"
    );
    let started = Instant::now();
    c.destroy("time_sleep", &sleep).await?;
    assert!(started.elapsed() >= Duration::from_millis(30));
    assert!(
        !c.validate(
            "time_sleep",
            &obj(&[("create_duration", Value::from("5 minutes"))])
        )
        .await?
    );

    let fixed = obj(&[("rfc3339", Value::from("2021-03-04T05:06:07Z"))]);
    let plan = c.plan("time_static", &Value::null(), &fixed).await?;
    assert_eq!(
        plan.planned_state.get_attr("unix"),
        &Value::int(1_614_834_367)
    );
    let state = c
        .apply("time_static", &Value::null(), &plan.planned_state, &fixed)
        .await?;
    assert_eq!(state, plan.planned_state);
    assert_eq!(state.get_attr("month"), &Value::int(3));
    assert_eq!(c.read("time_static", &state).await?, state);

    let now = c.create("time_static", &Value::null()).await?;
    assert_eq!(now.get_attr("id"), now.get_attr("rfc3339"));
    let again = c
        .plan(
            "time_static",
            &now,
            &Value::object([("rfc3339", Value::null())]),
        )
        .await?;
    assert!(again.requires_replace.is_empty());
    assert_eq!(again.planned_state, now, "the time stays what it was");
    let imported = c.import("time_static", "2021-03-04T05:06:07Z").await?;
    assert_eq!(imported.get_attr("unix"), state.get_attr("unix"));
    Ok(())
}

#[tokio::test]
async fn time_offset_is_planned_from_its_base_and_imported_from_an_id() -> Result<()> {
    let mut c = Conn::start(TIME, true, Value::null()).await?;
    let week = obj(&[
        ("base_rfc3339", Value::from("2021-03-04T05:06:07+01:00")),
        ("offset_days", Value::int(7)),
    ]);
    let plan = c.plan("time_offset", &Value::null(), &week).await?;
    assert!(plan.planned_state.get_attr("rfc3339").is_unknown());
    let state = c
        .apply("time_offset", &Value::null(), &plan.planned_state, &week)
        .await?;
    assert_eq!(str_of(&state, "rfc3339"), "2021-03-11T05:06:07+01:00");
    assert_eq!(state.get_attr("unix"), &Value::int(1_615_435_567));
    assert_eq!(str_of(&state, "id"), "2021-03-04T05:06:07+01:00");
    assert_eq!(c.read("time_offset", &state).await?, state);

    let no_base = set(&week, "base_rfc3339", Value::null());
    let month = set(&no_base, "offset_months", Value::int(1));
    let plan = c.plan("time_offset", &state, &month).await?;
    assert!(plan.requires_replace.is_empty());
    assert_eq!(
        str_of(&plan.planned_state, "rfc3339"),
        "2021-04-11T05:06:07+01:00",
        "known at plan, from the prior base"
    );
    let updated = c
        .apply("time_offset", &state, &plan.planned_state, &month)
        .await?;
    assert_eq!(updated, plan.planned_state);

    let retrigger = set(&month, "triggers", obj(&[("k", Value::from("v"))]));
    let plan = c.plan("time_offset", &updated, &retrigger).await?;
    assert_eq!(plan.requires_replace.len(), 1);
    assert!(plan.planned_state.get_attr("base_rfc3339").is_unknown());
    assert!(!c.validate("time_offset", &obj(&[])).await?);

    let imported = c
        .import("time_offset", "2021-03-04T05:06:07+01:00,,1,7,,,")
        .await?;
    assert_eq!(imported.get_attr("rfc3339"), updated.get_attr("rfc3339"));
    assert_eq!(imported.get_attr("offset_years"), &Value::null());
    c.destroy("time_offset", &updated).await?;
    Ok(())
}

#[tokio::test]
async fn sim_logs_every_create_and_delete_and_hides_fresh_objects() -> Result<()> {
    let store = tempfile::tempdir()?;
    let config = obj(&[
        (
            "store_dir",
            Value::String(store.path().display().to_string()),
        ),
        ("latency_ms", Value::int(1)),
        ("latency_jitter_ms", Value::int(2)),
        ("rate_limit_per_second", Value::int(1000)),
        ("eventual_consistency_ms", Value::int(3_600_000)),
    ]);
    let mut c = Conn::start(SIM, false, config).await?;
    let mut states = BTreeMap::new();
    for i in 0..5 {
        let name = format!("obj{i}");
        let cfg = obj(&[("name", Value::String(name.clone()))]);
        states.insert(name, c.create("sim_object", &cfg).await?);
    }
    let first = &states["obj0"];
    assert_eq!(
        c.read("sim_object", first).await?,
        Value::null(),
        "not visible yet"
    );
    let lookup = c
        .read_data("sim_object", &obj(&[("name", Value::from("obj0"))]))
        .await?;
    assert!(
        lookup.diagnostics.has_errors(),
        "data lookups do not see it either"
    );
    for state in states.values().take(3) {
        c.destroy("sim_object", state).await?;
    }
    c.destroy("sim_object", first).await?;

    let log = oplog::read(store.path())?;
    let creates: Vec<_> = log.iter().filter(|o| o.op == Op::Create).collect();
    let deletes: Vec<_> = log.iter().filter(|o| o.op == Op::Delete).collect();
    assert_eq!(creates.len(), 5);
    assert_eq!(
        deletes.len(),
        3,
        "deleting an absent object is no operation"
    );
    for (name, state) in &states {
        let id = str_of(state, "id");
        assert_eq!(
            creates
                .iter()
                .filter(|o| o.id == id && &o.name == name)
                .count(),
            1
        );
    }
    let live: Vec<&str> = creates
        .iter()
        .filter(|c| !deletes.iter().any(|d| d.id == c.id))
        .map(|c| c.id.as_str())
        .collect();
    let mut stored: Vec<String> = std::fs::read_dir(store.path())?
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(String::from)
        })
        .collect();
    stored.sort();
    let mut live: Vec<String> = live.into_iter().map(String::from).collect();
    live.sort();
    assert_eq!(stored, live, "the log accounts for exactly what exists");

    let ty = c.schema.provider.block.implied_type();
    let zero_rate = ValidateProviderConfigRequest {
        config: obj(&[("rate_limit_per_second", Value::int(0))]),
    };
    let resp = c
        .client
        .validate_provider_config(zero_rate.to_proto(&ty)?)
        .await?
        .into_inner();
    assert!(!resp.diagnostics.is_empty(), "a zero rate limit is refused");
    Ok(())
}

/// `throttle_above_per_second`: calls beyond the rate are refused with a
/// cloud's throttling error, having done nothing; a zero rate is refused.
#[tokio::test]
async fn sim_refuses_calls_beyond_its_throttle_rate_without_doing_them() -> Result<()> {
    let store = tempfile::tempdir()?;
    let config = obj(&[
        (
            "store_dir",
            Value::String(store.path().display().to_string()),
        ),
        ("throttle_above_per_second", Value::int(3)),
    ]);
    let mut c = Conn::start(SIM, false, config).await?;
    let mut outcomes = Vec::new();
    for i in 0..6 {
        let cfg = obj(&[("name", Value::String(format!("t{i}")))]);
        outcomes.push(
            c.create("sim_object", &cfg)
                .await
                .map_err(|e| e.to_string()),
        );
    }
    let created = outcomes.iter().filter(|o| o.is_ok()).count();
    // A second's worth pass (a little more if the loop was slow).
    assert!((3..6).contains(&created), "{outcomes:?}");
    let refused: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        refused
            .iter()
            .all(|e| e.contains("ThrottlingException: Rate exceeded")),
        "{refused:?}"
    );
    let log = oplog::read(store.path())?;
    assert_eq!(log.len(), created, "refused calls did nothing");
    assert!(
        log.iter().all(|o| o.started_ms.is_some_and(|s| s <= o.ts)),
        "creates record when their call began"
    );
    let ty = c.schema.provider.block.implied_type();
    let zero = ValidateProviderConfigRequest {
        config: obj(&[("throttle_above_per_second", Value::int(0))]),
    };
    let resp = c
        .client
        .validate_provider_config(zero.to_proto(&ty)?)
        .await?
        .into_inner();
    assert!(!resp.diagnostics.is_empty(), "a zero rate is refused");
    Ok(())
}
