//! IP network functions: cidrhost, cidrnetmask, cidrsubnet, cidrsubnets,
//! for IPv4 and IPv6, with Terraform's results and error texts.
//!
//! Terraform parses prefixes with a copy of Go's pre-1.17 parser (octets
//! with leading zeros are decimal, `010.1.0.0` is `10.1.0.0`), keeps an
//! IPv4 prefix as 32 bits and an IPv6 one (even `::ffff:a.b.c.d`) as 128,
//! and prints as Go's `net` package does: IPv4-mapped addresses in dotted
//! form. The arithmetic is go-cidr's, on `u128` here.

#[cfg(test)]
mod tests;

use super::{Def, FnError, FnResult, Unknowns::Deep, def, num_arg, str_arg};
use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::{ToPrimitive, Zero};
use fleetform_shared::value::Value;
use std::net::{Ipv4Addr, Ipv6Addr};

pub(super) const DEFS: &[Def] = &[
    def("cidrhost", Deep, cidrhost),
    def("cidrnetmask", Deep, cidrnetmask),
    def("cidrsubnet", Deep, cidrsubnet),
    def("cidrsubnets", Deep, cidrsubnets),
];

/// A network as Go's `net.IPNet` holds it after parsing: an address of
/// `bits` (32 or 128) bits and a prefix length. The address is not always
/// aligned to the prefix (`cidrsubnet` with negative `newbits` leaves it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Net {
    addr: u128,
    bits: u32,
    prefix: u32,
}

/// The mask of a `prefix`-bit network among `bits` bits (clamped to `bits`).
fn mask(prefix: u32, bits: u32) -> u128 {
    let all = all_ones(bits);
    match prefix {
        0 => 0,
        p if p >= bits => all,
        p => all & !(all >> p),
    }
}

fn all_ones(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// `::ffff:a.b.c.d`, which Go prints (and treats) as IPv4.
fn is_v4_mapped(addr: u128, bits: u32) -> bool {
    bits == 128 && addr >> 32 == 0xffff
}

/// An address as Go's `IP.String` prints it.
fn ip_string(addr: u128, bits: u32) -> String {
    if bits == 32 || is_v4_mapped(addr, bits) {
        Ipv4Addr::from(addr as u32).to_string()
    } else {
        Ipv6Addr::from(addr).to_string()
    }
}

impl std::fmt::Display for Net {
    /// Go's `IPNet.String`: a mapped IPv6 network prints as IPv4 with the
    /// prefix counted within the last 32 bits.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if is_v4_mapped(self.addr, self.bits) {
            let prefix = self.prefix.saturating_sub(96);
            return write!(f, "{}/{prefix}", Ipv4Addr::from(self.addr as u32));
        }
        write!(f, "{}/{}", ip_string(self.addr, self.bits), self.prefix)
    }
}

/// Go's `dtoi`: leading decimal digits (at least one), below 0xFFFFFF.
fn dtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        n = n * 10 + (s[i] - b'0') as u32;
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go's `xtoi`: leading hex digits (at least one), below 0xFFFFFF.
fn xtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut i = 0;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(16)) {
        n = n * 16 + d;
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Four decimal octets; leading zeros allowed and read as decimal.
fn parse_ipv4(mut s: &[u8]) -> Option<u32> {
    let mut addr = 0u32;
    for i in 0..4 {
        if i > 0 {
            s = s.strip_prefix(b".")?;
        }
        let (n, c) = dtoi(s)?;
        if n > 0xff {
            return None;
        }
        s = &s[c..];
        addr = addr << 8 | n;
    }
    s.is_empty().then_some(addr)
}

/// Eight hex groups, one `::`, an IPv4 tail in the last 32 bits.
fn parse_ipv6(mut s: &[u8]) -> Option<u128> {
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with(b"::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Some(0);
        }
    }
    let mut i = 0;
    while i < 16 {
        let (n, c) = xtoi(s)?;
        if n > 0xffff {
            return None;
        }
        if s.get(c) == Some(&b'.') {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return None;
            }
            let v4 = parse_ipv4(s)?;
            ip[i..i + 4].copy_from_slice(&v4.to_be_bytes());
            s = &[];
            i += 4;
            break;
        }
        ip[i] = (n >> 8) as u8;
        ip[i + 1] = n as u8;
        i += 2;
        s = &s[c..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    if i < 16 {
        // Move what follows the `::` to the end.
        let e = ellipsis?;
        let n = 16 - i;
        ip.copy_within(e..i, e + n);
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return None;
    }
    Some(u128::from_be_bytes(ip))
}

/// Go's `ParseCIDR` (Terraform's copy); the error is Go's.
fn parse_cidr(s: &str) -> Result<Net, String> {
    let invalid = || format!("invalid CIDR address: {s}");
    let (addr, len) = s.split_once('/').ok_or_else(invalid)?;
    let (addr, bits) = match parse_ipv4(addr.as_bytes()) {
        Some(a) => (a as u128, 32),
        None => (parse_ipv6(addr.as_bytes()).ok_or_else(invalid)?, 128),
    };
    let prefix = match dtoi(len.as_bytes()) {
        Some((n, used)) if used == len.len() && n <= bits => n,
        _ => return Err(invalid()),
    };
    Ok(Net {
        addr: addr & mask(prefix, bits),
        bits,
        prefix,
    })
}

/// A prefix argument's network; `blame` makes the parse error (Terraform
/// blames the call in some functions, the argument in others).
fn network(text: &str, blame: fn(String) -> FnError) -> Result<Net, FnError> {
    parse_cidr(text).map_err(|e| blame(format!("invalid CIDR expression: {e}")))
}

fn blame_call(msg: String) -> FnError {
    FnError::call(msg)
}

fn blame_prefix(msg: String) -> FnError {
    FnError::arg(0, msg)
}

/// A whole number of any size (cty's conversion to a Go `*big.Int`).
fn big_arg(a: &[Value], i: usize) -> Result<BigInt, FnError> {
    let n = num_arg(a, i)?;
    n.to_decimal()
        .filter(|d| d.is_integer())
        .map(|d| d.with_scale(0).into_bigint_and_exponent().0)
        .ok_or_else(|| FnError::call("value must be a whole number"))
}

/// A whole number that fits Go's `int`; the message is cty's.
fn int_value(a: &[Value], i: usize) -> Result<i64, FnError> {
    num_arg(a, i)?.as_i64().ok_or_else(|| {
        FnError::call(format!(
            "value must be a whole number, between {} and {}",
            i64::MIN,
            i64::MAX
        ))
    })
}

fn pow2(n: u32) -> BigInt {
    BigInt::from(1) << n
}

/// The address of host `hostnum` in the network; negative numbers count
/// back from the last address (-1 is the last).
fn cidrhost(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let mut num = big_arg(a, 1)?;
    let net = network(&text, blame_call)?;
    let max = pow2(net.bits - net.prefix) - 1;
    // go-cidr compares the distance from the end, but reports the number
    // it turned the negative one into.
    let magnitude = if num.sign() == Sign::Minus {
        let from_end = -num.clone() - 1;
        num = &max - &from_end;
        from_end
    } else {
        num.clone()
    };
    if magnitude > max {
        return Err(FnError::call(format!(
            "prefix of {} does not accommodate a host numbered {num}",
            net.prefix
        )));
    }
    // go-cidr places the number for 32 bits whenever the network reads as
    // IPv4, even when it is a mapped IPv6 network of 128.
    let width = if is_v4_mapped(net.addr, net.bits) {
        32
    } else {
        net.bits
    };
    let host = num.to_u128().expect("within the host bits") << (net.bits - width);
    Ok(Value::String(ip_string(net.addr | host, net.bits)))
}

fn cidrnetmask(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let net = network(&text, blame_call)?;
    if net.bits == 128 && !is_v4_mapped(net.addr, net.bits) {
        return Err(FnError::call(format!(
            "IPv6 addresses cannot have a netmask: {text}"
        )));
    }
    Ok(Value::String(ip_string(
        mask(net.prefix, net.bits),
        net.bits,
    )))
}

/// Subnet `netnum` of the network extended by `newbits` bits. Negative
/// `newbits` (unsupported but accepted by Terraform) shortens the prefix
/// and keeps the address as it is.
fn cidrsubnet(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let newbits = int_value(a, 1)?;
    let num = big_arg(a, 2)?;
    let net = network(&text, blame_call)?;
    let len = net.prefix as i64 + newbits;
    if len > net.bits as i64 || len < 0 {
        return Err(FnError::call(format!(
            "insufficient address space to extend prefix of {} by {newbits}",
            net.prefix
        )));
    }
    let len = len as u32;
    // Where Terraform would wrap a negative or oversized number into some
    // other address (or crash), it is refused.
    let room = if newbits >= 0 { newbits as u32 } else { len };
    if num.sign() == Sign::Minus || num >= pow2(room) {
        return Err(FnError::call(format!(
            "prefix extension of {newbits} does not accommodate a subnet numbered {num}"
        )));
    }
    let n = num.to_u128().expect("below 2^128");
    let part = if n.is_zero() {
        0
    } else {
        n << (net.bits - len)
    };
    Ok(Value::String(
        Net {
            addr: net.addr | part,
            bits: net.bits,
            prefix: len,
        }
        .to_string(),
    ))
}

/// The last address of a network (go-cidr's `AddressRange`).
fn last_address(n: &Net) -> u128 {
    n.addr | (all_ones(n.bits) & !mask(n.prefix, n.bits))
}

/// go-cidr's `NextSubnet`: the `len`-bit network after `current`, and
/// whether the address wrapped to zero (then there is none).
fn next_subnet(current: &Net, len: u32) -> (Net, bool) {
    let aligned = Net {
        addr: last_address(current) & mask(len, current.bits),
        bits: current.bits,
        prefix: len,
    };
    let after = last_address(&aligned).wrapping_add(1) & all_ones(current.bits);
    let next = Net {
        addr: after & mask(len, current.bits),
        bits: current.bits,
        prefix: len,
    };
    (next, after == 0)
}

/// Consecutive subnets, each extending the prefix by its argument's bits,
/// allocated in order (each aligned to its own size after the previous).
///
/// As in Terraform, the first subnet is found as the successor of the one
/// before the network's start; for a network at address zero that one
/// wraps around, and Terraform then reports no room left (its issue
/// #35486): kept so the same configuration fails the same way.
fn cidrsubnets(a: &[Value]) -> FnResult {
    let net = network(&str_arg(a, 0)?, blame_prefix)?;
    if a.len() == 1 {
        return Ok(Value::tuple(Vec::new()));
    }
    let arg_int = |i: usize| int_value(a, i).map_err(|e| FnError::arg(i, e.msg));
    let first = arg_int(1)? + net.prefix as i64;
    let first = first.clamp(0, net.bits as i64) as u32;
    let mut current = Net {
        addr: net.addr.wrapping_sub(1) & all_ones(net.bits) & mask(first, net.bits),
        bits: net.bits,
        prefix: first,
    };
    let mut out = Vec::with_capacity(a.len() - 1);
    for i in 1..a.len() {
        let extra = arg_int(i)?;
        if extra < 1 {
            return Err(FnError::arg(i, "must extend prefix by at least one bit"));
        }
        // Terraform keeps to 32 bits so that the numbers fit everywhere.
        if extra > 32 {
            return Err(FnError::arg(
                i,
                "may not extend prefix by more than 32 bits",
            ));
        }
        let len = extra as u32 + net.prefix;
        if len > net.bits {
            let family = if net.bits == 32 { "IPv4" } else { "IPv6" };
            return Err(FnError::arg(
                i,
                format!(
                    "would extend prefix to {len} bits, which is too long for an {family} address"
                ),
            ));
        }
        let (next, wrapped) = next_subnet(&current, len);
        if wrapped || next.addr & mask(net.prefix, net.bits) != net.addr {
            return Err(FnError::arg(
                i,
                format!(
                    "not enough remaining address space for a subnet with a prefix of {len} bits after {current}"
                ),
            ));
        }
        current = next;
        out.push(Value::String(current.to_string()));
    }
    Ok(Value::tuple(out))
}
