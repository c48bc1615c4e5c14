//! A network link between two hosts, simulated in user space: one-way
//! latency, loss and partitions, for TCP connections that go through a
//! [`LinkProxy`].
//!
//! This machine's kernel has no `netem`, so the link is a proxy that holds
//! every chunk of bytes it forwards until the chunk is due. What TCP makes
//! of a real network's faults is modelled at that level:
//! - latency: each chunk is due `one_way` after it was read, in each
//!   direction (a round trip costs twice that);
//! - loss: a lost segment is sent again after a retransmission timeout,
//!   and TCP delivers in order, so a chunk "lost" (with probability
//!   `loss`) is due a retransmission timeout later, and every chunk behind
//!   it waits for it (head-of-line blocking);
//! - a partition: nothing is delivered, in either direction, and new
//!   connections are not made, until it heals; then what was held flows
//!   (TCP retransmitting), unless the partition was cut short by
//!   [`LinkProxy::cut`], which resets every connection as an endpoint that
//!   gave up would.

use crate::Rng;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Linux's minimum retransmission timeout: what one lost segment costs.
pub const RETRANSMISSION_TIMEOUT: Duration = Duration::from_millis(200);

/// How the link behaves now.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Link {
    /// Added to each direction.
    pub one_way: Duration,
    /// The share of chunks that are lost once (0 to 1).
    pub loss: f64,
    pub partitioned: bool,
    /// A partition one way: what the upstream sends toward the client is
    /// held (until it heals, or [`LinkProxy::cut`] loses it), while what
    /// the client sends goes on.
    pub downstream_held: bool,
}

impl Link {
    /// A link with `round_trip` split evenly between the directions.
    pub fn round_trip(round_trip: Duration) -> Link {
        Link {
            one_way: round_trip / 2,
            ..Link::default()
        }
    }
}

struct Shared {
    link: Mutex<Link>,
    /// Woken when the link changes (a partition heals).
    changed: Condvar,
    rng: Mutex<Rng>,
    open: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn link(&self) -> Link {
        *self.link.lock().expect("link lock")
    }

    /// Waits while the link is partitioned (`downstream`: the direction
    /// toward the client, which a one-way partition holds too).
    fn wait_connected(&self, downstream: bool) {
        let mut link = self.link.lock().expect("link lock");
        while link.partitioned || (downstream && link.downstream_held) {
            link = self.changed.wait(link).expect("link lock");
        }
    }

    fn lost(&self, loss: f64) -> bool {
        if loss <= 0.0 {
            return false;
        }
        let draw = self.rng.lock().expect("rng lock").below(1_000_000) as f64 / 1_000_000.0;
        draw < loss
    }
}

/// A TCP proxy on `listen` that forwards to `upstream` over a simulated
/// [`Link`].
pub struct LinkProxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl LinkProxy {
    /// Listens on `listen` (port 0: any free port of that address) and
    /// forwards each connection to `upstream`. `seed` makes the losses
    /// repeat.
    pub fn start(listen: SocketAddr, upstream: SocketAddr, seed: u64) -> anyhow::Result<LinkProxy> {
        let listener = TcpListener::bind(listen)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            link: Mutex::new(Link::default()),
            changed: Condvar::new(),
            rng: Mutex::new(Rng(seed.max(1))),
            open: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    // A partitioned network makes no new connection either.
                    s.wait_connected(false);
                    let Ok(server) = TcpStream::connect(upstream) else {
                        let _ = client.shutdown(Shutdown::Both);
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    {
                        let mut open = s.open.lock().expect("open lock");
                        open.retain(|c| c.peer_addr().is_ok());
                        open.extend(
                            [client.try_clone(), server.try_clone()]
                                .into_iter()
                                .flatten(),
                        );
                    }
                    for (from, to, downstream) in [
                        (client.try_clone(), server.try_clone(), false),
                        (server.try_clone(), client.try_clone(), true),
                    ] {
                        if let (Ok(from), Ok(to)) = (from, to) {
                            pump(s.clone(), from, to, downstream);
                        }
                    }
                });
            }
        });
        Ok(LinkProxy { addr, shared })
    }

    /// A proxy on a free port of 127.0.0.1 to `upstream`, already set to
    /// `link`.
    pub fn local(upstream: SocketAddr, seed: u64, link: Link) -> anyhow::Result<LinkProxy> {
        let proxy = LinkProxy::start(([127, 0, 0, 1], 0).into(), upstream, seed)?;
        proxy.set(link);
        Ok(proxy)
    }

    /// Changes the link; held chunks keep the times they were given.
    pub fn set(&self, link: Link) {
        *self.shared.link.lock().expect("link lock") = link;
        self.shared.changed.notify_all();
    }

    pub fn link(&self) -> Link {
        self.shared.link()
    }

    pub fn partition(&self) {
        self.set(Link {
            partitioned: true,
            ..self.link()
        });
    }

    pub fn heal(&self) {
        self.set(Link {
            partitioned: false,
            downstream_held: false,
            ..self.link()
        });
    }

    /// Holds what the upstream sends toward the client, and only that.
    pub fn hold_downstream(&self) {
        self.set(Link {
            downstream_held: true,
            ..self.link()
        });
    }

    /// Resets every connection through the link, as endpoints that gave
    /// up on a long partition would find them.
    pub fn cut(&self) {
        for c in self.shared.open.lock().expect("open lock").drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

/// Forwards `from` to `to` through the link: a reader that stamps each
/// chunk with the time it is due, a writer that delivers it then.
/// `downstream`: toward the client.
fn pump(shared: Arc<Shared>, mut from: TcpStream, mut to: TcpStream, downstream: bool) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader_shared = shared.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut last_due = Instant::now();
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let link = reader_shared.link();
            let mut due = Instant::now() + link.one_way;
            if reader_shared.lost(link.loss) {
                due += RETRANSMISSION_TIMEOUT;
            }
            // In order: nothing overtakes a chunk that is late.
            due = due.max(last_due);
            last_due = due;
            if tx.send((due, buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            shared.wait_connected(downstream);
            if to.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free port.
    fn echo() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for c in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut r = c.try_clone().unwrap();
                    let mut w = c;
                    let _ = std::io::copy(&mut r, &mut w);
                });
            }
        });
        addr
    }

    fn proxy(upstream: SocketAddr) -> LinkProxy {
        LinkProxy::start("127.0.0.1:0".parse().unwrap(), upstream, 7).unwrap()
    }

    /// Sends one byte and times its echo.
    fn round_trip(c: &mut TcpStream) -> Duration {
        let start = Instant::now();
        c.write_all(b"x").unwrap();
        let mut b = [0u8; 1];
        c.read_exact(&mut b).unwrap();
        start.elapsed()
    }

    #[test]
    fn a_round_trip_costs_twice_the_one_way_latency() {
        let p = proxy(echo());
        p.set(Link::round_trip(Duration::from_millis(60)));
        let mut c = TcpStream::connect(p.addr).unwrap();
        c.set_nodelay(true).unwrap();
        for _ in 0..3 {
            let rtt = round_trip(&mut c);
            assert!(rtt >= Duration::from_millis(60), "{rtt:?}");
            assert!(
                rtt < Duration::from_millis(60) + RETRANSMISSION_TIMEOUT,
                "{rtt:?}"
            );
        }
        p.set(Link::default());
        assert!(round_trip(&mut c) < Duration::from_millis(60));
    }

    #[test]
    fn a_lost_chunk_costs_a_retransmission_timeout_and_holds_what_follows() {
        let p = proxy(echo());
        p.set(Link {
            loss: 1.0,
            ..Link::default()
        });
        let mut c = TcpStream::connect(p.addr).unwrap();
        c.set_nodelay(true).unwrap();
        // Lost once on the way there and once on the way back.
        let rtt = round_trip(&mut c);
        assert!(rtt >= 2 * RETRANSMISSION_TIMEOUT, "{rtt:?}");
    }

    #[test]
    fn a_partition_holds_traffic_until_it_heals_and_a_cut_resets_connections() {
        let p = proxy(echo());
        let mut c = TcpStream::connect(p.addr).unwrap();
        assert!(round_trip(&mut c) < Duration::from_millis(100));
        p.partition();
        c.write_all(b"y").unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut b = [0u8; 1];
        assert!(c.read_exact(&mut b).is_err(), "nothing crosses a partition");
        p.heal();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"y", "what was held arrives once healed");
        p.cut();
        c.write_all(b"z").ok();
        assert!(
            matches!(c.read(&mut b), Ok(0) | Err(_)),
            "a cut connection is closed"
        );
    }

    #[test]
    fn a_one_way_partition_holds_only_what_goes_toward_the_client() {
        // The upstream counts what it receives, and answers each byte.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = listener.local_addr().unwrap();
        let (got_tx, got) = mpsc::channel::<u8>();
        std::thread::spawn(move || {
            for c in listener.incoming().flatten() {
                let got_tx = got_tx.clone();
                std::thread::spawn(move || {
                    let mut r = c.try_clone().unwrap();
                    let mut w = c;
                    let mut b = [0u8; 1];
                    while r.read_exact(&mut b).is_ok() {
                        let _ = got_tx.send(b[0]);
                        let _ = w.write_all(&b);
                    }
                });
            }
        });
        let p = proxy(upstream);
        let mut c = TcpStream::connect(p.addr).unwrap();
        assert!(round_trip(&mut c) < Duration::from_millis(100));
        assert_eq!(got.recv().unwrap(), b'x');
        p.hold_downstream();
        c.write_all(b"y").unwrap();
        assert_eq!(
            got.recv_timeout(Duration::from_secs(5)).unwrap(),
            b'y',
            "what the client sends goes on"
        );
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut b = [0u8; 1];
        assert!(c.read_exact(&mut b).is_err(), "the answer is held");
        // Cut while held: the answer is lost with the connection.
        p.cut();
        p.heal();
        assert!(
            matches!(c.read(&mut b), Ok(0) | Err(_)),
            "nothing held arrives on a cut connection"
        );
    }
}
