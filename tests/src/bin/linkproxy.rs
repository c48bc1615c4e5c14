//! `fleetform-linkproxy`: the tests crate's simulated network link
//! ([`fleetform_tests::LinkProxy`]) as a program, so the benchmark (a
//! Python script) can put latency and loss between a fleet's "hosts".
//!
//! Each `LISTEN=UPSTREAM` pair is one link: connections made to LISTEN are
//! forwarded to UPSTREAM, every chunk held for half the round trip in each
//! direction. It runs until it is killed.

use clap::Parser;
use fleetform_tests::{Link, LinkProxy};
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "fleetform-linkproxy",
    about = "Forward TCP connections over a simulated network link (latency, loss)",
    long_about = "Forward TCP connections over a simulated network link: every chunk of \
                  bytes is delivered half the round trip after it was read, in each \
                  direction, in order; a lost chunk is delivered a retransmission timeout \
                  (200 ms) late and holds back what follows it, as TCP does. Used by \
                  bench/network.py to model hosts that are milliseconds apart on a machine \
                  without netem."
)]
struct Args {
    /// Round trip added to each link, in milliseconds (half each way).
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Share of chunks lost once (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Seed of the losses, so that runs repeat.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Links, each LISTEN=UPSTREAM (e.g. 127.0.0.1:14222=127.0.0.1:4222).
    #[arg(required = true, value_parser = parse_pair)]
    links: Vec<(SocketAddr, SocketAddr)>,
}

fn parse_pair(s: &str) -> Result<(SocketAddr, SocketAddr), String> {
    let (listen, upstream) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected LISTEN=UPSTREAM"))?;
    let parse = |a: &str| {
        a.parse::<SocketAddr>()
            .map_err(|e| format!("{a:?}: not an address and port: {e}"))
    };
    Ok((parse(listen)?, parse(upstream)?))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(0.0..=1.0).contains(&args.loss) {
        anyhow::bail!("--loss {}: must be between 0 and 1", args.loss);
    }
    if !(0.0..=60_000.0).contains(&args.rtt_ms) {
        anyhow::bail!("--rtt-ms {}: must be between 0 and 60000", args.rtt_ms);
    }
    let link = Link {
        one_way: Duration::from_secs_f64(args.rtt_ms / 2000.0),
        loss: args.loss,
        ..Link::default()
    };
    let mut proxies = Vec::new();
    for (i, (listen, upstream)) in args.links.iter().enumerate() {
        let proxy = LinkProxy::start(*listen, *upstream, args.seed.wrapping_add(i as u64))?;
        proxy.set(link);
        println!("link {} -> {upstream}", proxy.addr);
        proxies.push(proxy);
    }
    println!("ready");
    loop {
        std::thread::park();
    }
}
