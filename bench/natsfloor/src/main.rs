//! The floor under a chain link's messaging in a fleet: a task published
//! to a work-queue stream, taken by a worker's pull consumer (a batch
//! request, as fleetform's workers make), its result published to a
//! second stream with its PubAck awaited and consumed by a durable pull
//! consumer, one after the other; and, for comparison, a core NATS request
//! and reply. No provider, no journal, no evaluation: what is left of a
//! link once fleetform's own work is taken out.
//!
//! ```sh
//! cargo run --release --manifest-path bench/natsfloor/Cargo.toml -- nats://127.0.0.1:4222 worker &
//! cargo run --release --manifest-path bench/natsfloor/Cargo.toml -- nats://127.0.0.1:4222 echo &
//! cargo run --release --manifest-path bench/natsfloor/Cargo.toml -- nats://127.0.0.1:4222 jetstream 2000
//! cargo run --release --manifest-path bench/natsfloor/Cargo.toml -- nats://127.0.0.1:4222 core 2000
//! ```
//!
//! The server needs JetStream (`nats-server -js`). Streams `FLOOR_TASKS`
//! and `FLOOR_RESULTS` are made if missing.

use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: natsfloor NATS_URL worker|echo|jetstream [N]|core [N]");
        std::process::exit(2);
    }
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let client = async_nats::connect(&args[1])
        .await
        .expect("connecting to NATS");
    let js = jetstream::new(client.clone());
    let tasks = js
        .get_or_create_stream(stream::Config {
            name: "FLOOR_TASKS".into(),
            subjects: vec!["floor.tasks".into()],
            retention: stream::RetentionPolicy::WorkQueue,
            ..Default::default()
        })
        .await
        .expect("tasks stream");
    let results = js
        .get_or_create_stream(stream::Config {
            name: "FLOOR_RESULTS".into(),
            subjects: vec!["floor.results".into()],
            ..Default::default()
        })
        .await
        .expect("results stream");
    match args[2].as_str() {
        "worker" => {
            let pull: consumer::PullConsumer = tasks
                .get_or_create_consumer(
                    "floor-worker",
                    consumer::pull::Config {
                        durable_name: Some("floor-worker".into()),
                        ack_policy: consumer::AckPolicy::Explicit,
                        ..Default::default()
                    },
                )
                .await
                .expect("worker consumer");
            loop {
                let mut batch = pull
                    .batch()
                    .max_messages(64)
                    .expires(Duration::from_secs(5))
                    .messages()
                    .await
                    .expect("pull request");
                while let Some(Ok(msg)) = batch.next().await {
                    let js = js.clone();
                    tokio::spawn(async move {
                        let ack = js
                            .publish("floor.results", msg.payload.clone())
                            .await
                            .expect("publishing a result");
                        ack.await.expect("result PubAck");
                        msg.ack().await.expect("acking a task");
                    });
                }
            }
        }
        "echo" => {
            let mut sub = client.subscribe("floor.echo").await.expect("subscribing");
            while let Some(msg) = sub.next().await {
                if let Some(reply) = msg.reply {
                    client.publish(reply, msg.payload).await.expect("replying");
                }
            }
        }
        "core" => {
            let start = Instant::now();
            for _ in 0..n {
                client
                    .request("floor.echo", "x".into())
                    .await
                    .expect("request (is `echo` running?)");
            }
            println!(
                "core NATS request and reply: {:.0} µs each ({n} in a row)",
                start.elapsed().as_micros() as f64 / n as f64
            );
        }
        "jetstream" => {
            let name = format!("floor-{}", std::process::id());
            let pull: consumer::PullConsumer = results
                .create_consumer(consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    deliver_policy: consumer::DeliverPolicy::New,
                    ack_policy: consumer::AckPolicy::Explicit,
                    ..Default::default()
                })
                .await
                .expect("results consumer");
            let mut messages = pull.messages().await.expect("consuming results");
            // A task about the size of a small plan task.
            let payload = vec![7u8; 600];
            let start = Instant::now();
            for _ in 0..n {
                let ack = js
                    .publish("floor.tasks", payload.clone().into())
                    .await
                    .expect("publishing a task");
                let (ack, result) = tokio::join!(ack, messages.next());
                ack.expect("task PubAck");
                let result = result
                    .expect("results stream ended")
                    .expect("result (is `worker` running?)");
                tokio::spawn(async move {
                    let _ = result.ack().await;
                });
            }
            println!(
                "JetStream task to a worker and its result back: {:.0} µs each ({n} in a row)",
                start.elapsed().as_micros() as f64 / n as f64
            );
            let _ = results.delete_consumer(&name).await;
        }
        other => {
            eprintln!("unknown role {other}: worker, echo, jetstream or core");
            std::process::exit(2);
        }
    }
}
