//! Hosts a slow, lossy network apart: the coordinator's connections (to
//! NATS, to the object store) and each of two workers' (to NATS) go
//! through links of their own at a 50 ms round trip with 2 % of their
//! chunks lost once (each a retransmission timeout late, holding back what
//! follows, as TCP does). An apply of independent instances and a chain
//! ends as it would on loopback, each object once, a plan after it empty;
//! and it took at least what the chain's round trips cost, so the links
//! were slow. Real nats-server, moto S3, coordinator, workers and the sim
//! provider.

use fleetform_tests::{
    Coordinator, Link, LinkProxy, Nats, S3, Worker, objects_per_name, run_in, sim_config,
    sim_store_objects,
};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CHAIN: usize = 6;

fn resources() -> String {
    let mut out = String::from(
        r#"
resource "sim_object" "wide" {
  count = 30
  name  = "wide-${count.index}"
}
"#,
    );
    for i in 0..CHAIN {
        let after = if i == 0 {
            String::new()
        } else {
            format!("-after-${{sim_object.link{}.id}}", i - 1)
        };
        out.push_str(&format!(
            "\nresource \"sim_object\" \"link{i}\" {{\n  name = \"link{i}{after}\"\n}}\n"
        ));
    }
    out
}

#[test]
fn an_apply_across_a_slow_lossy_network_ends_with_every_object_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", &resources());
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let rtt = Duration::from_millis(50);
    let base = Link {
        loss: 0.02,
        ..Link::round_trip(rtt)
    };
    let store_addr: SocketAddr = ([127, 0, 0, 1], s3.port()).into();
    let link = |upstream, seed| LinkProxy::local(upstream, seed, base).unwrap();
    let c_nats = link(nats.addr(), 1);
    let c_store = link(store_addr, 2);
    let w_nats = [link(nats.addr(), 3), link(nats.addr(), 4)];
    let c = Coordinator::start_via(
        dir,
        &format!("nats://{}", c_nats.addr),
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[],
        &s3.env_via(c_store.addr.port()),
    )
    .unwrap();
    let _workers: Vec<Worker> = w_nats
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Worker::start_via(
                dir,
                &format!("nats://{}", l.addr),
                &format!("w{}", i + 1),
                16,
                &[],
                "info",
            )
            .unwrap()
        })
        .collect();
    let on = format!("--coordinator={}", c.url);

    let started = Instant::now();
    let apply = run_in(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
    );
    let took = started.elapsed();
    let total = 30 + CHAIN;
    assert_eq!(apply.code, 0, "{}", apply.all_output());
    assert!(
        apply
            .stdout
            .contains(&format!("Apply complete! Resources: {total} added")),
        "{}",
        apply.all_output()
    );
    // Each link of the chain after the first is sent to its worker
    // directly once its claim is written to the store (2 round trips) and
    // its result returned (1): the chain alone costs at least 3 round
    // trips a link.
    let floor = rtt * (3 * CHAIN as u32);
    assert!(
        took >= floor,
        "the apply took {took:?}, under the chain's round trips ({floor:?}): the links were not slow"
    );
    println!(
        "apply of {total} across 50 ms links with 2 % loss: {took:.1?} (chain floor {floor:?})"
    );

    let objects = sim_store_objects(&store_dir);
    assert_eq!(objects.len(), total, "{objects:?}");
    let per_name = objects_per_name(&store_dir);
    assert!(per_name.values().all(|n| *n == 1), "{per_name:?}");
    let plan = run_in(&config, &[&on, "plan", "-var", &store_var]);
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
}
