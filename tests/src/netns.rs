//! Hosts for fault tests: each "host" a network namespace of its own,
//! joined to the others by a veth link into one bridge, as machines on one
//! switch. A test starts a fleet's processes inside hosts
//! ([`Host::command`]) and cuts the network between them:
//! - [`Net::partition`] between two hosts: each gets a blackhole route to
//!   the other, so packets between them vanish in both directions (TCP
//!   retransmits, as across a real partition) while both still reach
//!   everyone else; [`Net::heal`] removes the routes;
//! - [`Net::isolate`] one host from all: its link goes down;
//!   [`Net::rejoin`] brings it up.
//!
//! This machine's kernel has no `netem`, no packet filters (`iptables`,
//! `nft`) and no `prio` qdisc, so routes and links are the tools; latency
//! and loss come from [`crate::LinkProxy`] placed on a path.
//!
//! Namespaces need root. [`Net::create`] says `SKIP:` and gives `None`
//! where they cannot be made. Names and the subnet come from the test
//! process's id, so tests running at once do not meet; everything is
//! removed when the [`Net`] is dropped.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// A bridge and the hosts on it.
pub struct Net {
    tag: String,
    bridge: String,
    /// The third octet of the subnet, 10.77.N.0/24.
    subnet: u8,
    hosts: Mutex<Vec<Host>>,
}

/// One host: a namespace with one address on the bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    /// The namespace's name (`ip netns`).
    pub ns: String,
    pub addr: Ipv4Addr,
    /// The link's end on the bridge side (in the root namespace).
    outside: String,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Net {
    /// A bridge for a test's hosts, or `None` (having printed `SKIP:` and
    /// why) where network namespaces cannot be made here.
    pub fn create(scenario: &str) -> Option<Net> {
        let pid = std::process::id();
        let tag = format!("{}", pid % 100_000);
        let net = Net {
            bridge: format!("ffbr{tag}"),
            subnet: (pid % 200 + 20) as u8,
            tag,
            hosts: Mutex::new(Vec::new()),
        };
        // A bridge whose address was not set takes the lowest of its
        // ports' addresses, so adding a host during a test could change it,
        // and the hosts' cached neighbour entry for the gateway went stale:
        // the test process (the CLI) heard nothing from a coordinator host
        // for about 50 s (seen in tests/tests/partitions.rs, 2 runs in 12).
        // Set, it stays.
        let mac = format!(
            "02:77:{:02x}:{:02x}:{:02x}:01",
            net.subnet,
            (pid >> 8) & 0xff,
            pid & 0xff
        );
        let made = ip(&["link", "add", &net.bridge, "type", "bridge"])
            .and_then(|()| ip(&["link", "set", &net.bridge, "address", &mac]))
            .and_then(|()| {
                ip(&[
                    "addr",
                    "add",
                    &format!("10.77.{}.1/24", net.subnet),
                    "dev",
                    &net.bridge,
                ])
            })
            .and_then(|()| ip(&["link", "set", &net.bridge, "up"]));
        match made {
            Ok(()) => Some(net),
            Err(e) => {
                println!("SKIP: {scenario}: network namespaces are not available here ({e})");
                None
            }
        }
    }

    /// The bridge's own address: how the test process (outside every
    /// host) reaches them.
    pub fn gateway(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 77, self.subnet, 1)
    }

    /// A new host on the bridge, named `name` (a few letters).
    pub fn host(&self, name: &str) -> Host {
        let mut hosts = self.hosts.lock().expect("hosts lock");
        let n = hosts.len() as u8 + 2;
        let host = Host {
            name: name.to_string(),
            ns: format!("ff{}-{name}", self.tag),
            addr: Ipv4Addr::new(10, 77, self.subnet, n),
            outside: format!("ffo{}x{n}", self.tag),
        };
        let inside = format!("ffi{}x{n}", self.tag);
        let cidr = format!("{}/24", host.addr);
        let steps: [Vec<&str>; 9] = [
            vec!["netns", "add", &host.ns],
            vec![
                "link",
                "add",
                &host.outside,
                "type",
                "veth",
                "peer",
                "name",
                &inside,
            ],
            vec!["link", "set", &inside, "netns", &host.ns],
            vec!["link", "set", &host.outside, "master", &self.bridge],
            vec!["link", "set", &host.outside, "up"],
            vec!["-n", &host.ns, "addr", "add", &cidr, "dev", &inside],
            vec!["-n", &host.ns, "link", "set", &inside, "name", "eth0"],
            vec!["-n", &host.ns, "link", "set", "eth0", "up"],
            vec!["-n", &host.ns, "link", "set", "lo", "up"],
        ];
        for step in steps {
            ip(&step).unwrap_or_else(|e| panic!("making host {name}: {e}"));
        }
        hosts.push(host.clone());
        host
    }

    /// Packets between `a` and `b` vanish, both ways, until [`Net::heal`].
    pub fn partition(&self, a: &Host, b: &Host) {
        for (from, to) in [(a, b), (b, a)] {
            ip(&[
                "-n",
                &from.ns,
                "route",
                "add",
                "blackhole",
                &format!("{}/32", to.addr),
            ])
            .unwrap_or_else(|e| panic!("partitioning {} from {}: {e}", from.name, to.name));
        }
    }

    /// Ends a [`Net::partition`].
    pub fn heal(&self, a: &Host, b: &Host) {
        for (from, to) in [(a, b), (b, a)] {
            // Already healed is healed.
            let _ = ip(&[
                "-n",
                &from.ns,
                "route",
                "del",
                "blackhole",
                &format!("{}/32", to.addr),
            ]);
        }
    }

    /// Cuts `h` off from every other host and from the test process.
    pub fn isolate(&self, h: &Host) {
        ip(&["link", "set", &h.outside, "down"])
            .unwrap_or_else(|e| panic!("isolating {}: {e}", h.name));
    }

    /// Ends an [`Net::isolate`].
    pub fn rejoin(&self, h: &Host) {
        ip(&["link", "set", &h.outside, "up"])
            .unwrap_or_else(|e| panic!("rejoining {}: {e}", h.name));
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for h in self.hosts.lock().map(|h| h.clone()).unwrap_or_default() {
            // The namespace's processes were the test's to stop; its links
            // go with it.
            let _ = ip(&["netns", "del", &h.ns]);
            let _ = ip(&["link", "del", &h.outside]);
        }
        let _ = ip(&["link", "del", &self.bridge]);
    }
}

impl Host {
    /// `program` to be run inside this host (`ip netns exec`).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns]).arg(program);
        c
    }

    /// Whether a TCP connection from this host to `addr:port` is made
    /// within `timeout`.
    pub fn can_connect(&self, addr: Ipv4Addr, port: u16, timeout: std::time::Duration) -> bool {
        self.command("timeout")
            .arg(format!("{:.1}", timeout.as_secs_f64()))
            .args(["bash", "-c", &format!("exec 3<>/dev/tcp/{addr}/{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}
