//! Golden tests for the IP network functions: Terraform's documented
//! examples and its own test table (inputs and expected texts), the parser's
//! Go quirks, and unknown and null arguments.

use super::{ip_string, parse_cidr};
use crate::eval::functions::testing::{err, ok, s};
use fleetform_shared::value::Value;

fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|i| s(i)).collect())
}

#[test]
fn cidrhost_examples() {
    for (src, want) in [
        ("cidrhost(\"10.12.112.0/20\", 16)", "10.12.112.16"),
        ("cidrhost(\"10.12.112.0/20\", 268)", "10.12.113.12"),
        (
            "cidrhost(\"fd00:fd12:3456:7890:00a2::/72\", 34)",
            "fd00:fd12:3456:7890::22",
        ),
        ("cidrhost(\"10.1.2.240/28\", 1)", "10.1.2.241"),
        ("cidrhost(\"10.1.2.240/28\", 14)", "10.1.2.254"),
        ("cidrhost(\"192.168.1.0/24\", 5)", "192.168.1.5"),
        ("cidrhost(\"192.168.1.0/24\", -5)", "192.168.1.251"),
        ("cidrhost(\"192.168.1.0/24\", -256)", "192.168.1.0"),
        ("cidrhost(\"010.001.0.0/24\", 6)", "10.1.0.6"),
        ("cidrhost(\"192.168.1.77/24\", 1)", "192.168.1.1"),
        ("cidrhost(\"0.0.0.0/0\", 4294967295)", "255.255.255.255"),
        (
            "cidrhost(\"::/0\", -1)",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ),
        (
            "cidrhost(\"::/0\", 340282366920938463463374607431768211455)",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ),
        ("cidrhost(\"::/64\", 281470681743365)", "0.0.0.5"),
        ("cidrhost(\"10.0.0.0/8\", \"3\")", "10.0.0.3"),
    ] {
        assert_eq!(ok(src), s(want), "{src}");
    }
}

#[test]
fn cidrhost_errors() {
    for (src, want) in [
        (
            "cidrhost(\"192.168.1.0/30\", 255)",
            "prefix of 30 does not accommodate a host numbered 255",
        ),
        // Terraform reports the number it computed from the negative one.
        (
            "cidrhost(\"192.168.1.0/30\", -255)",
            "prefix of 30 does not accommodate a host numbered -251",
        ),
        (
            "cidrhost(\"not-a-cidr\", 6)",
            "invalid CIDR expression: invalid CIDR address: not-a-cidr",
        ),
        (
            "cidrhost(\"10.256.0.0/8\", 6)",
            "invalid CIDR expression: invalid CIDR address: 10.256.0.0/8",
        ),
        (
            "cidrhost(\"10.0.0.0/8\", 0.75)",
            "value must be a whole number",
        ),
        (
            "cidrhost(\"10.0.0.0/33\", 1)",
            "invalid CIDR expression: invalid CIDR address: 10.0.0.0/33",
        ),
        (
            "cidrhost(\"::/0\", 340282366920938463463374607431768211456)",
            "prefix of 0 does not accommodate a host numbered 340282366920938463463374607431768211456",
        ),
    ] {
        assert_eq!(
            err(src),
            format!("Call to function \"cidrhost\" failed: {want}."),
            "{src}"
        );
    }
    assert_eq!(ok("cidrhost(var.unknown, 1)"), Value::unknown());
    assert_eq!(
        ok("cidrhost(\"10.0.0.0/8\", var.unknown)"),
        Value::unknown()
    );
    assert_eq!(
        err("cidrhost(null, 1)"),
        "Invalid value for \"prefix\" parameter: argument must not be null."
    );
    assert_eq!(
        err("cidrhost(\"10.0.0.0/8\", null)"),
        "Invalid value for \"hostnum\" parameter: argument must not be null."
    );
}

#[test]
fn cidrnetmask_examples_and_errors() {
    for (src, want) in [
        ("cidrnetmask(\"172.16.0.0/12\")", "255.240.0.0"),
        ("cidrnetmask(\"192.168.1.0/24\")", "255.255.255.0"),
        ("cidrnetmask(\"192.168.1.0/32\")", "255.255.255.255"),
        ("cidrnetmask(\"0.0.0.0/0\")", "0.0.0.0"),
        ("cidrnetmask(\"010.001.0.0/24\")", "255.255.255.0"),
    ] {
        assert_eq!(ok(src), s(want), "{src}");
    }
    for (src, want) in [
        (
            "cidrnetmask(\"not-a-cidr\")",
            "invalid CIDR expression: invalid CIDR address: not-a-cidr",
        ),
        (
            "cidrnetmask(\"110.256.0.0/8\")",
            "invalid CIDR expression: invalid CIDR address: 110.256.0.0/8",
        ),
        (
            "cidrnetmask(\"1::/64\")",
            "IPv6 addresses cannot have a netmask: 1::/64",
        ),
    ] {
        assert_eq!(
            err(src),
            format!("Call to function \"cidrnetmask\" failed: {want}."),
            "{src}"
        );
    }
    assert_eq!(ok("cidrnetmask(var.unknown)"), Value::unknown());
}

#[test]
fn cidrsubnet_examples() {
    for (src, want) in [
        ("cidrsubnet(\"172.16.0.0/12\", 4, 2)", "172.18.0.0/16"),
        ("cidrsubnet(\"10.1.2.0/24\", 4, 15)", "10.1.2.240/28"),
        (
            "cidrsubnet(\"fd00:fd12:3456:7890::/56\", 16, 162)",
            "fd00:fd12:3456:7800:a200::/72",
        ),
        ("cidrsubnet(\"192.168.2.0/20\", 4, 6)", "192.168.6.0/24"),
        ("cidrsubnet(\"fe80::/48\", 16, 6)", "fe80:0:0:6::/64"),
        (
            "cidrsubnet(\"::ffff:192.168.0.0/112\", 8, 6)",
            "192.168.6.0/24",
        ),
        ("cidrsubnet(\"fe80::/48\", 33, 6)", "fe80::3:0:0:0/81"),
        ("cidrsubnet(\"010.001.0.0/24\", 4, 1)", "10.1.0.16/28"),
        ("cidrsubnet(\"10.0.0.0/8\", 0, 0)", "10.0.0.0/8"),
        ("cidrsubnet(\"::/0\", 128, 1)", "::1/128"),
        // Unsupported supernetting: the prefix shrinks, the address stays.
        ("cidrsubnet(\"12.34.56.78/32\", -8, 0)", "12.34.56.78/24"),
        ("cidrsubnet(\"10.2.0.0/16\", -8, 1)", "11.2.0.0/8"),
    ] {
        assert_eq!(ok(src), s(want), "{src}");
    }
}

#[test]
fn cidrsubnet_errors() {
    for (src, want) in [
        (
            "cidrsubnet(\"192.168.0.0/30\", 4, 6)",
            "insufficient address space to extend prefix of 30 by 4",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", 2, 16)",
            "prefix extension of 2 does not accommodate a subnet numbered 16",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", 4, 16)",
            "prefix extension of 4 does not accommodate a subnet numbered 16",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", 4, -1)",
            "prefix extension of 4 does not accommodate a subnet numbered -1",
        ),
        (
            "cidrsubnet(\"not-a-cidr\", 4, 6)",
            "invalid CIDR expression: invalid CIDR address: not-a-cidr",
        ),
        (
            "cidrsubnet(\"192.168.0.0/168\", 2, 16)",
            "invalid CIDR expression: invalid CIDR address: 192.168.0.0/168",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", 0.5, 1)",
            "value must be a whole number, between -9223372036854775808 and 9223372036854775807",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", 2, 0.75)",
            "value must be a whole number",
        ),
        (
            "cidrsubnet(\"10.0.0.0/8\", -9, 0)",
            "insufficient address space to extend prefix of 8 by -9",
        ),
    ] {
        assert_eq!(
            err(src),
            format!("Call to function \"cidrsubnet\" failed: {want}."),
            "{src}"
        );
    }
    assert_eq!(
        ok("cidrsubnet(\"10.0.0.0/8\", var.unknown, 1)"),
        Value::unknown()
    );
    assert_eq!(
        err("cidrsubnet(\"10.0.0.0/8\", 4, null)"),
        "Invalid value for \"netnum\" parameter: argument must not be null."
    );
}

#[test]
fn cidrsubnets_examples() {
    for (src, want) in [
        (
            "cidrsubnets(\"10.1.0.0/16\", 4, 4, 8, 4)",
            list(&[
                "10.1.0.0/20",
                "10.1.16.0/20",
                "10.1.32.0/24",
                "10.1.48.0/20",
            ]),
        ),
        (
            "cidrsubnets(\"fd00:fd12:3456:7890::/56\", 16, 16, 16, 32)",
            list(&[
                "fd00:fd12:3456:7800::/72",
                "fd00:fd12:3456:7800:100::/72",
                "fd00:fd12:3456:7800:200::/72",
                "fd00:fd12:3456:7800:300::/88",
            ]),
        ),
        (
            "cidrsubnets(\"10.0.0.0/21\", 3, 3, 3, 4, 4, 4, 7, 7, 7)",
            list(&[
                "10.0.0.0/24",
                "10.0.1.0/24",
                "10.0.2.0/24",
                "10.0.3.0/25",
                "10.0.3.128/25",
                "10.0.4.0/25",
                "10.0.4.128/28",
                "10.0.4.144/28",
                "10.0.4.160/28",
            ]),
        ),
        ("cidrsubnets(\"010.0.0.0/21\", 3)", list(&["10.0.0.0/24"])),
        ("cidrsubnets(\"10.0.0.0/8\")", list(&[])),
        (
            "[for b in cidrsubnets(\"10.0.0.0/8\", 8, 8) : cidrsubnets(b, 4, 4)]",
            Value::tuple(vec![
                list(&["10.0.0.0/20", "10.0.16.0/20"]),
                list(&["10.1.0.0/20", "10.1.16.0/20"]),
            ]),
        ),
        (
            "cidrsubnets(\"10.0.0.0/8\", 4, var.unknown)",
            Value::unknown(),
        ),
    ] {
        assert_eq!(ok(src), want, "{src}");
    }
}

#[test]
fn cidrsubnets_errors_blame_the_argument() {
    for (src, n, want) in [
        (
            "cidrsubnets(\"10.0.0.0/30\", 1, 3)",
            3,
            "would extend prefix to 33 bits, which is too long for an IPv4 address",
        ),
        (
            "cidrsubnets(\"10.0.0.0/8\", 1, 1, 1)",
            4,
            "not enough remaining address space for a subnet with a prefix of 9 bits after 10.128.0.0/9",
        ),
        (
            "cidrsubnets(\"10.0.0.0/8\", 1, 0)",
            3,
            "must extend prefix by at least one bit",
        ),
        (
            "cidrsubnets(\"10.0.0.0/8\", 1, -1)",
            3,
            "must extend prefix by at least one bit",
        ),
        (
            "cidrsubnets(\"fe80::/48\", 1, 33)",
            3,
            "may not extend prefix by more than 32 bits",
        ),
        (
            "cidrsubnets(\"fe80::/120\", 9)",
            2,
            "would extend prefix to 129 bits, which is too long for an IPv6 address",
        ),
        (
            "cidrsubnets(\"10.0.0.0/8\", 1.5)",
            2,
            "value must be a whole number, between -9223372036854775808 and 9223372036854775807",
        ),
        (
            "cidrsubnets(\"not-a-cidr\", 1)",
            1,
            "invalid CIDR expression: invalid CIDR address: not-a-cidr",
        ),
        // Terraform's own bug (its issue #35486): a network at address
        // zero has no room; kept for identical results.
        (
            "cidrsubnets(\"0.0.0.0/1\", 1, 1)",
            2,
            "not enough remaining address space for a subnet with a prefix of 2 bits after 192.0.0.0/2",
        ),
    ] {
        assert_eq!(
            err(src),
            format!(
                "Invalid value for \"{}\" parameter: {want}.",
                if n == 1 { "prefix" } else { "newbits" }
            ),
            "{src}"
        );
    }
    assert_eq!(
        ok("[cidrsubnet(\"0.0.0.0/1\", 1, 0), cidrsubnet(\"0.0.0.0/1\", 1, 1)]"),
        list(&["0.0.0.0/2", "64.0.0.0/2"])
    );
}

#[test]
fn go_address_syntax() {
    let net = |s: &str| parse_cidr(s).map(|n| n.to_string());
    for (input, want) in [
        ("1.2.3.4/8", "1.0.0.0/8"),
        ("::/0", "::/0"),
        ("::1/128", "::1/128"),
        ("1::/16", "1::/16"),
        ("1:2:3:4:5:6:7:8/128", "1:2:3:4:5:6:7:8/128"),
        ("1:0:0:2::/64", "1:0:0:2::/64"),
        ("::ffff:10.1.2.3/120", "10.1.2.0/24"),
        ("::ffff:10.1.2.3/64", "::/64"),
        ("64:ff9b::192.0.2.33/128", "64:ff9b::c000:221/128"),
        ("FE80::/10", "fe80::/10"),
        ("1.2.3.4/008", "1.0.0.0/8"),
    ] {
        assert_eq!(net(input).as_deref(), Ok(want), "{input}");
    }
    for bad in [
        "1.2.3.4",
        "1.2.3/8",
        "1.2.3.4.5/8",
        "1.2.3.4/+8",
        "1.2.3.4/",
        "::1::/8",
        ":/8",
        "1:2:3:4:5:6:7:8:9/64",
        "1::2::3/64",
        "1.2.3.4::/64",
        "12345::/16",
        "1.2.3.4/33",
        "::/129",
        "1:2:3:4:5:6:7:8::/64",
        " 1.2.3.4/8",
    ] {
        assert_eq!(
            parse_cidr(bad),
            Err(format!("invalid CIDR address: {bad}")),
            "{bad}"
        );
    }
    // Go prints IPv4-compatible addresses in hex, only mapped ones dotted.
    assert_eq!(ip_string(0x0102_0304, 128), "::102:304");
    assert_eq!(ip_string(0xffff_0102_0304, 128), "1.2.3.4");
    assert_eq!(ip_string(1 << 112, 128), "1::");
}
