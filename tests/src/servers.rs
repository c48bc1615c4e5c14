//! The real servers a fleet needs: `nats-server` (JetStream) and an
//! S3-compatible store (moto), each on free ports in a temp dir.

use crate::*;
use anyhow::bail;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A JetStream-enabled nats-server.
pub struct Nats {
    pub url: String,
    proc: Proc,
    port: u16,
    dir: PathBuf,
    /// The network namespace it runs in ([`Nats::start_in`]).
    host: Option<crate::netns::Host>,
}

impl Nats {
    /// Where the server listens (for a proxy in front of it).
    pub fn addr(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    pub fn start(dir: &Path) -> anyhow::Result<Nats> {
        let port = free_port();
        let proc = Nats::spawn(dir, port, None)?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
            host: None,
        })
    }

    /// A server inside `host` (a network namespace), listening on the
    /// host's address, so that the other hosts reach it over the bridge
    /// and a partition cuts it off.
    pub fn start_in(dir: &Path, host: &crate::netns::Host) -> anyhow::Result<Nats> {
        let port = 4222;
        let proc = Nats::spawn(dir, port, Some(host))?;
        Ok(Nats {
            url: format!("nats://{}:{port}", host.addr),
            proc,
            port,
            dir: dir.to_path_buf(),
            host: Some(host.clone()),
        })
    }

    fn spawn(dir: &Path, port: u16, host: Option<&crate::netns::Host>) -> anyhow::Result<Proc> {
        let store = dir.join("nats");
        let program = tool("nats-server")?;
        let (mut cmd, addr) = match host {
            Some(h) => (h.command(&program), h.addr),
            None => (Command::new(&program), std::net::Ipv4Addr::LOCALHOST),
        };
        cmd.args([
            "-a",
            &addr.to_string(),
            "-p",
            &port.to_string(),
            "-js",
            "-sd",
        ])
        .arg(&store);
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_addr(addr, port, Duration::from_secs(10))?;
        Ok(proc)
    }

    /// A JetStream cluster of one server per host in `hosts` (nodes
    /// `n1`, `n2`, ...), each listening for clients on its host's address
    /// (port 4222) and for its peers on port 6222, its store under
    /// `dir/nats-<node>`; returned once every node reports healthy.
    pub fn start_cluster_in(dir: &Path, hosts: &[crate::netns::Host]) -> anyhow::Result<Vec<Nats>> {
        let program = tool("nats-server")?;
        let routes: String = hosts
            .iter()
            .map(|h| format!("    nats-route://{}:6222\n", h.addr))
            .collect();
        let mut nodes = Vec::new();
        for (i, h) in hosts.iter().enumerate() {
            let name = format!("n{}", i + 1);
            let node_dir = dir.join(format!("nats-{name}"));
            std::fs::create_dir_all(&node_dir)?;
            let conf = node_dir.join("nats.conf");
            std::fs::write(
                &conf,
                format!(
                    "server_name: {name}\nlisten: {addr}:4222\nhttp: {addr}:8222\njetstream {{\n  store_dir: {store:?}\n  sync_interval: always\n}}\ncluster {{\n  name: fleetform-test\n  listen: {addr}:6222\n  routes: [\n{routes}  ]\n}}\n",
                    addr = h.addr,
                    store = node_dir.join("nats"),
                ),
            )?;
            let mut cmd = h.command(&program);
            cmd.arg("-c").arg(&conf);
            let (proc, _stdout) = Proc::spawn(&format!("nats-{name}"), cmd, &node_dir)?;
            nodes.push(Nats {
                url: format!("nats://{}:4222", h.addr),
                proc,
                port: 4222,
                dir: node_dir,
                host: Some(h.clone()),
            });
        }
        // Healthy: JetStream is current with the cluster's meta leader.
        for (n, h) in nodes.iter().zip(hosts) {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                let ok = h
                    .command("curl")
                    .args(["-sf", &format!("http://{}:8222/healthz", h.addr)])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if ok {
                    break;
                }
                anyhow::ensure!(
                    std::time::Instant::now() < deadline,
                    "{} never became healthy; its log:\n{}",
                    n.url,
                    n.proc.log_text()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        Ok(nodes)
    }

    /// A nats-server without JetStream (a misconfigured fleet's).
    pub fn start_without_jetstream(dir: &Path) -> anyhow::Result<Nats> {
        let port = free_port();
        let mut cmd = Command::new(tool("nats-server")?);
        cmd.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(10))?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
            host: None,
        })
    }

    /// A server with `config` (nats-server's configuration format) added to
    /// the address, port and JetStream store set here, and `env` in its
    /// environment (for `$VARIABLE` references in the configuration).
    pub fn start_configured(
        dir: &Path,
        config: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Nats> {
        let port = free_port();
        let file = dir.join("nats-server.conf");
        std::fs::write(
            &file,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: {:?}\n}}\n{config}\n",
                dir.join("nats")
            ),
        )?;
        let mut cmd = Command::new(tool("nats-server")?);
        cmd.arg("-c").arg(&file);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(10))?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
            host: None,
        })
    }

    /// Kills the server (SIGKILL) and, after `down`, starts it again on
    /// the same port and store, as a crashed and restarted NATS would be.
    /// Kills nats-server (SIGKILL); [`Nats::start_again`] brings it back.
    pub fn kill(&mut self) {
        self.proc.kill();
    }

    /// Starts nats-server again on the same port and store.
    pub fn start_again(&mut self) -> anyhow::Result<()> {
        self.proc = Nats::spawn(&self.dir, self.port, self.host.as_ref())?;
        Ok(())
    }

    /// Copies the JetStream store as it is now (a running server's files,
    /// as a disk holds them when the power goes), for [`Nats::roll_back`].
    pub fn snapshot(&self) -> anyhow::Result<PathBuf> {
        let copy = self.dir.join("nats-snapshot");
        let _ = std::fs::remove_dir_all(&copy);
        let status = Command::new("cp")
            .arg("-a")
            .arg(self.dir.join("nats"))
            .arg(&copy)
            .status()?;
        anyhow::ensure!(status.success(), "cp -a of the JetStream store failed");
        Ok(copy)
    }

    /// Kills the server, puts the store back to `snapshot` (every write
    /// acknowledged since is lost, as with lazy fsync and a power loss) and
    /// starts it again on the same port.
    pub fn roll_back(&mut self, snapshot: &Path) -> anyhow::Result<()> {
        self.proc.kill();
        let store = self.dir.join("nats");
        std::fs::remove_dir_all(&store)?;
        let status = Command::new("cp")
            .arg("-a")
            .arg(snapshot)
            .arg(&store)
            .status()?;
        anyhow::ensure!(status.success(), "cp -a of the snapshot failed");
        self.proc = Nats::spawn(&self.dir, self.port, self.host.as_ref())?;
        Ok(())
    }

    /// Kills the server and cuts the newest message block (`*.blk`) of
    /// every stream in half, as a crash before the disk was flushed leaves
    /// it; [`Nats::start_again`] brings it back. Returns the files cut.
    pub fn kill_and_truncate_blocks(&mut self) -> anyhow::Result<Vec<PathBuf>> {
        self.proc.kill();
        let mut blocks: Vec<PathBuf> = Vec::new();
        let mut dirs = vec![self.dir.join("nats")];
        while let Some(d) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut here: Vec<PathBuf> = Vec::new();
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "blk") {
                    here.push(p);
                }
            }
            // Blocks are numbered 1.blk, 2.blk, ...: the newest is the
            // highest number.
            let newest = here.into_iter().max_by_key(|p| {
                p.file_stem()
                    .and_then(|s| s.to_str())
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0)
            });
            blocks.extend(newest);
        }
        let mut cut = Vec::new();
        for b in blocks {
            let len = std::fs::metadata(&b)?.len();
            if len > 1 {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&b)?
                    .set_len(len / 2)?;
                cut.push(b);
            }
        }
        Ok(cut)
    }

    pub fn restart(&mut self, down: Duration) -> anyhow::Result<()> {
        self.proc.kill();
        std::thread::sleep(down);
        self.proc = Nats::spawn(&self.dir, self.port, self.host.as_ref())?;
        Ok(())
    }
}

/// moto's S3 server with one bucket created.
pub struct S3 {
    pub endpoint: String,
    pub bucket: String,
    _proc: Proc,
}

impl S3 {
    pub fn start(dir: &Path) -> anyhow::Result<S3> {
        S3::start_at(dir, None)
    }

    /// moto inside `host` (a network namespace), listening on the host's
    /// address.
    pub fn start_in(dir: &Path, host: &crate::netns::Host) -> anyhow::Result<S3> {
        S3::start_at(dir, Some(host))
    }

    fn start_at(dir: &Path, host: Option<&crate::netns::Host>) -> anyhow::Result<S3> {
        let program = tool("moto_server")?;
        let (mut cmd, addr, port) = match host {
            Some(h) => (h.command(&program), h.addr, 5000),
            None => (
                Command::new(&program),
                std::net::Ipv4Addr::LOCALHOST,
                free_port(),
            ),
        };
        cmd.args(["-H", &addr.to_string(), "-p", &port.to_string()]);
        let (proc, _stdout) = Proc::spawn("moto", cmd, dir)?;
        wait_for_addr(addr, port, Duration::from_secs(30))?;
        let bucket = "fleetform-test".to_string();
        // moto listens a moment before it answers: a connection reset then
        // (seen in a full run) is tried again.
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            match http_put_to(addr, port, &format!("/{bucket}")) {
                Ok(()) => break,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(S3 {
            endpoint: format!("http://{addr}:{port}"),
            bucket,
            _proc: proc,
        })
    }

    /// moto checking credentials as AWS does (`INITIAL_NO_AUTH_ACTION_COUNT=0`:
    /// IAM checks from the first request on), so keys it never issued,
    /// such as [`S3::env`]'s, are refused with `InvalidAccessKeyId`. No
    /// bucket is created (that would need credentials too).
    pub fn start_checking_credentials(dir: &Path) -> anyhow::Result<S3> {
        let port = free_port();
        let mut cmd = Command::new(tool("moto_server")?);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .env("INITIAL_NO_AUTH_ACTION_COUNT", "0");
        let (proc, _stdout) = Proc::spawn("moto", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(30))?;
        Ok(S3 {
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: "fleetform-test".to_string(),
            _proc: proc,
        })
    }

    /// Deletes the bucket (a bare DeleteBucket; moto deletes only an empty
    /// one), as an operator who removed it by mistake would.
    pub fn delete_bucket(&self) -> anyhow::Result<()> {
        self.delete(&format!("/{}", self.bucket))
    }

    /// Creates the bucket (again, after [`S3::remove_bucket_and_objects`]).
    pub fn create_bucket(&self) -> anyhow::Result<()> {
        http_put(self.port(), &format!("/{}", self.bucket))
    }

    /// Removes the bucket with everything in it, at once: moto's reset
    /// (`POST /moto-api/reset`; moto refuses unsigned object deletes).
    pub fn remove_bucket_and_objects(&self) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "POST /moto-api/reset HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 200"),
            "resetting moto failed: {resp}"
        );
        Ok(())
    }

    /// A bare DELETE of `path`.
    fn delete(&self, path: &str) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "DELETE {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 204") || resp.starts_with("HTTP/1.1 200"),
            "deleting {path} failed: {resp}"
        );
        Ok(())
    }

    /// Waits until `n` tasks are claimed under `prefix` (the state URL's
    /// path): a worker's create runs only once its claim is there. A claim
    /// released since (written again with no claimant, for a task sent to
    /// a worker directly that never reached it) does not count.
    pub fn wait_for_claims(&self, prefix: &str, n: usize, timeout: Duration) -> anyhow::Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        while self.held_claims(prefix)? < n {
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "fewer than {n} claims within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// The task claims recorded under `prefix`, every run's, as (task id,
    /// claimant): the batches coordinators write
    /// (`claims/<run_id>/log/<epoch>/<seq>`, a MessagePack list of pairs).
    pub fn claims(&self, prefix: &str) -> anyhow::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for key in self.keys(&format!("{prefix}/claims/"))? {
            // Batches only: not the owners' epoch markers, nor `_now`.
            if !key.contains("/log/") || key.ends_with("/owner") {
                continue;
            }
            let body = self.get(&key)?;
            let batch: Vec<(String, String)> = rmp_serde::from_slice(&body)
                .map_err(|e| anyhow::anyhow!("claim batch {key} does not read: {e}"))?;
            out.extend(batch);
        }
        Ok(out)
    }

    /// How many tasks the claims under `prefix` hold: by the last word of
    /// the log on each (batches in the order of their keys).
    pub fn held_claims(&self, prefix: &str) -> anyhow::Result<usize> {
        let mut last = std::collections::HashMap::new();
        for (task, claimant) in self.claims(prefix)? {
            last.insert(task, claimant);
        }
        Ok(last.values().filter(|c| !c.is_empty()).count())
    }

    /// The body at `key` (a bare GetObject). moto refuses an unsigned
    /// read of an object but, unless it checks credentials
    /// ([`S3::start_checking_credentials`]), takes any signature.
    pub fn get(&self, key: &str) -> anyhow::Result<Vec<u8>> {
        let port = self.port();
        let mut s = TcpStream::connect((self.addr(), port))?;
        write!(
            s,
            "GET /{}/{key} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: AWS testing:unchecked\r\nConnection: close\r\n\r\n",
            self.bucket
        )?;
        let mut resp = Vec::new();
        s.read_to_end(&mut resp)?;
        let split = resp
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| anyhow::anyhow!("reading {key}: no response head"))?;
        let head = String::from_utf8_lossy(&resp[..split]).to_string();
        anyhow::ensure!(
            head.starts_with("HTTP/1.1 200"),
            "reading {key} failed: {head}"
        );
        anyhow::ensure!(
            !head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked"),
            "reading {key}: a chunked answer is not read here"
        );
        Ok(resp[split + 4..].to_vec())
    }

    /// Keys in the bucket under `prefix` (a bare, unsigned ListObjectsV2).
    pub fn keys(&self, prefix: &str) -> anyhow::Result<Vec<String>> {
        let port = self.port();
        let mut s = TcpStream::connect((self.addr(), port))?;
        write!(
            s,
            "GET /{}?list-type=2&prefix={prefix} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n",
            self.bucket
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(resp.starts_with("HTTP/1.1 200"), "listing failed: {resp}");
        Ok(resp
            .split("<Key>")
            .skip(1)
            .filter_map(|k| k.split("</Key>").next())
            .map(str::to_string)
            .collect())
    }

    /// Writes `body` at `key` (a bare, unsigned PutObject): what another
    /// writer, or a process killed mid-write, leaves in the bucket.
    pub fn put(&self, key: &str, body: &[u8]) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "PUT /{}/{key} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.bucket,
            body.len()
        )?;
        s.write_all(body)?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 200"),
            "writing {key} failed: {resp}"
        );
        Ok(())
    }

    /// Environment for object_store's S3 client.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }
}

/// Creates a bucket with a bare HTTP PUT (moto accepts unsigned requests).
pub(crate) fn http_put(port: u16, path: &str) -> anyhow::Result<()> {
    http_put_to(std::net::Ipv4Addr::LOCALHOST, port, path)
}

fn http_put_to(addr: std::net::Ipv4Addr, port: u16, path: &str) -> anyhow::Result<()> {
    let mut s = TcpStream::connect((addr, port))?;
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nHost: {addr}:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    if !resp.starts_with("HTTP/1.1 200") {
        bail!(
            "creating bucket {path} failed: {}",
            resp.lines().next().unwrap_or("")
        );
    }
    Ok(())
}

impl S3 {
    /// The server's address (the loopback, or its host's).
    pub fn addr(&self) -> std::net::Ipv4Addr {
        self.endpoint
            .trim_start_matches("http://")
            .split(':')
            .next()
            .and_then(|a| a.parse().ok())
            .expect("endpoint address")
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.endpoint
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("endpoint port")
    }

    /// [`S3::env`] pointing at `port` (a proxy) instead of the server.
    pub fn env_via(&self, port: u16) -> Vec<(&'static str, String)> {
        let mut env = self.env();
        for (k, v) in &mut env {
            if *k == "AWS_ENDPOINT_URL" {
                *v = format!("http://127.0.0.1:{port}");
            }
        }
        env
    }
}
