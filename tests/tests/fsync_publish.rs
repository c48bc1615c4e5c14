//! Publishes per second to a JetStream stream with nats-server's default
//! fsync policy and with `sync_interval: always`: one publish at a time
//! (each awaits its ack, as a worker's result does) and 1,000 in flight
//! (as the coordinator's task window does). A measurement for
//! docs/operations.md, not a check, so ignored in the normal test run:
//! `cargo nextest run -p fleetform-tests --test fsync_publish --run-ignored
//! all --no-capture`.

use async_nats::jetstream::{self, stream};
use fleetform_tests::{Proc, free_port, tool, wait_for_port};
use std::future::IntoFuture;
use std::process::Command;
use std::time::{Duration, Instant};

async fn measure(url: &str) -> (f64, f64) {
    let client = async_nats::connect(url).await.unwrap();
    let js = jetstream::new(client);
    js.create_stream(stream::Config {
        name: "FSYNC".into(),
        subjects: vec!["fsync.>".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    let payload = vec![b'x'; 512];
    let n = 2_000;
    let t = Instant::now();
    for _ in 0..n {
        let ack = js
            .publish("fsync.one", payload.clone().into())
            .await
            .unwrap();
        ack.await.unwrap();
    }
    let serial = f64::from(n) / t.elapsed().as_secs_f64();
    let n = 20_000;
    let t = Instant::now();
    for _ in 0..n / 1000 {
        let mut acks = Vec::with_capacity(1000);
        for _ in 0..1000 {
            let ack = js
                .publish("fsync.many", payload.clone().into())
                .await
                .unwrap();
            acks.push(ack.into_future());
        }
        for a in acks {
            a.await.unwrap();
        }
    }
    let windowed = f64::from(n) / t.elapsed().as_secs_f64();
    (serial, windowed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn publishes_per_second_by_fsync_policy() {
    for (name, policy) in [("default", ""), ("always", "sync_interval: always")] {
        let tmp = tempfile::tempdir().unwrap();
        let port = free_port();
        let file = tmp.path().join("nats.conf");
        std::fs::write(
            &file,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: {:?}\n  {policy}\n}}\n",
                tmp.path().join("js")
            ),
        )
        .unwrap();
        let mut cmd = Command::new(tool("nats-server").unwrap());
        cmd.arg("-c").arg(&file);
        let (_proc, _out): (Proc, _) = Proc::spawn("nats-server", cmd, tmp.path()).unwrap();
        wait_for_port(port, Duration::from_secs(10)).unwrap();
        let (serial, windowed) = measure(&format!("nats://127.0.0.1:{port}")).await;
        println!(
            "{name:8} publishes/s: {serial:8.0} one at a time, {windowed:8.0} with 1,000 in flight"
        );
    }
}
