//! Faults on purpose: a TCP proxy that can drop or cut connections, and
//! a seeded random generator so chosen faults repeat.

use std::net::{TcpListener, TcpStream};

/// A TCP proxy in front of a server (the S3 server) that can refuse
/// service: while down, every open connection is cut and new ones are
/// closed at once, as a failing or unreachable object store behaves.
pub struct FlakyProxy {
    pub port: u16,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
}

impl FlakyProxy {
    pub fn start(upstream_port: u16) -> anyhow::Result<FlakyProxy> {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let (d, o) = (down.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                {
                    let mut o = o.lock().expect("proxy lock");
                    o.retain(|s| s.peer_addr().is_ok());
                    for s in [&client, &server] {
                        if let Ok(c) = s.try_clone() {
                            o.push(c);
                        }
                    }
                }
                for (mut from, mut to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ]
                .into_iter()
                .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    });
                }
            }
        });
        Ok(FlakyProxy { port, down, open })
    }

    /// Refuses service (cutting every open connection) or serves again.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
        if down {
            for s in self.open.lock().expect("proxy lock").drain(..) {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// A small deterministic generator (xorshift), so seeded choices repeat.
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}
