//! The hosts fault tests run their fleets on (`fleetform_tests::netns`):
//! namespaces on one bridge, a partition between two of them that leaves
//! the rest connected, a host cut off from all, and both healed. A server
//! in one host is reached (or not) from the others and from the test.

use fleetform_tests::netns::Net;
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn partitions_cut_only_the_pair_and_heal() {
    let Some(net) = Net::create("network namespaces") else {
        return;
    };
    let (server, w1, w2) = (net.host("srv"), net.host("w1"), net.host("w2"));
    let port = 8411;
    let mut listening = server
        .command("python3")
        .args(["-m", "http.server", &port.to_string(), "--bind", "0.0.0.0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a server in its host");
    let quick = Duration::from_secs(1);
    let started = Instant::now();
    while !w1.can_connect(server.addr, port, quick) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server never listened"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(w2.can_connect(server.addr, port, quick));
    // The test process reaches hosts through the bridge.
    let outside = SocketAddr::from((server.addr, port));
    assert!(TcpStream::connect_timeout(&outside, quick).is_ok());

    net.partition(&w1, &server);
    assert!(
        !w1.can_connect(server.addr, port, quick),
        "w1 is cut off from srv"
    );
    assert!(w2.can_connect(server.addr, port, quick), "w2 is not");
    net.heal(&w1, &server);
    assert!(w1.can_connect(server.addr, port, quick), "healed");

    net.isolate(&server);
    assert!(
        !w2.can_connect(server.addr, port, quick),
        "srv is cut off from all"
    );
    assert!(TcpStream::connect_timeout(&outside, quick).is_err());
    net.rejoin(&server);
    let back = Instant::now();
    while !w2.can_connect(server.addr, port, quick) {
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "srv never came back"
        );
    }
    let _ = listening.kill();
    let _ = listening.wait();
}
