//! The go-plugin handshake: the environment a plugin expects and the one
//! line it prints on stdout, `core|app|network|address|protocol[|cert]`.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use std::path::PathBuf;

/// go-plugin's core protocol version; anything else is a different protocol.
pub const CORE_PROTOCOL_VERSION: u32 = 1;
/// The cookie Terraform's plugins check before serving (go-plugin `MagicCookieValue`).
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// Where the plugin listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    /// `host:port`.
    Tcp(String),
    Unix(PathBuf),
}

/// What the plugin announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// The application protocol version the plugin chose (tfplugin 5 or 6).
    pub protocol_version: u32,
    pub network: Network,
    /// The DER of the certificate the plugin serves with, when AutoMTLS is on.
    pub server_cert: Option<Vec<u8>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid handshake line {line:?}: {reason}")]
pub struct HandshakeError {
    pub line: String,
    pub reason: String,
}

/// Parses the handshake line, accepting only the given protocol versions.
pub fn parse_handshake(line: &str, accepted_versions: &[u32]) -> Result<Handshake, HandshakeError> {
    let line = line.trim();
    let fail = |reason: String| HandshakeError {
        line: line.chars().take(200).collect(),
        reason,
    };
    let parts: Vec<&str> = line.split('|').collect();
    if parts.len() < 4 {
        return Err(fail(format!(
            "expected at least 4 fields separated by '|', found {}",
            parts.len()
        )));
    }
    let core: u32 = parts[0].parse().map_err(|_| {
        fail(format!(
            "core protocol version {:?} is not a number",
            parts[0]
        ))
    })?;
    if core != CORE_PROTOCOL_VERSION {
        return Err(fail(format!(
            "core protocol version {core} is not supported (want {CORE_PROTOCOL_VERSION})"
        )));
    }
    let app: u32 = parts[1]
        .parse()
        .map_err(|_| fail(format!("protocol version {:?} is not a number", parts[1])))?;
    if !accepted_versions.contains(&app) {
        return Err(fail(format!(
            "plugin protocol version {app} is not one of {accepted_versions:?}"
        )));
    }
    let network = match parts[2] {
        "tcp" => Network::Tcp(parts[3].to_string()),
        "unix" => Network::Unix(PathBuf::from(parts[3])),
        other => return Err(fail(format!("unsupported network {other:?}"))),
    };
    // go-plugin defaults a missing protocol field to net/rpc, which
    // Terraform providers have not used since 0.12.
    match parts.get(4).copied().unwrap_or("netrpc") {
        "grpc" => {}
        other => {
            return Err(fail(format!(
                "unsupported plugin protocol {other:?} (want grpc)"
            )));
        }
    }
    let server_cert = match parts.get(5).map(|s| s.trim()).filter(|s| !s.is_empty()) {
        None => None,
        Some(b64) => {
            // go-plugin uses unpadded standard base64; accept padding too.
            let der = STANDARD_NO_PAD
                .decode(b64)
                .or_else(|_| STANDARD.decode(b64))
                .map_err(|e| fail(format!("server certificate is not base64: {e}")))?;
            Some(der)
        }
    };
    Ok(Handshake {
        protocol_version: app,
        network,
        server_cert,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_line_with_certificate() {
        let der = vec![0x30, 0x82, 0x01, 0x02, 0xff];
        let line = format!(
            "1|6|tcp|127.0.0.1:10042|grpc|{}\n",
            STANDARD_NO_PAD.encode(&der)
        );
        let h = parse_handshake(&line, &[6]).unwrap();
        assert_eq!(h.protocol_version, 6);
        assert_eq!(h.network, Network::Tcp("127.0.0.1:10042".into()));
        assert_eq!(h.server_cert, Some(der));
    }

    #[test]
    fn unix_line_without_certificate() {
        let h = parse_handshake("1|6|unix|/tmp/plugin123|grpc|", &[5, 6]).unwrap();
        assert_eq!(h.network, Network::Unix("/tmp/plugin123".into()));
        assert_eq!(h.server_cert, None);
        let h = parse_handshake("1|5|unix|/tmp/p|grpc", &[5, 6]).unwrap();
        assert_eq!(h.protocol_version, 5);
    }

    #[test]
    fn bad_lines_say_why() {
        let cases = [
            ("hello world", "at least 4 fields"),
            ("2|6|tcp|x:1|grpc", "core protocol version 2"),
            ("1|5|tcp|x:1|grpc", "protocol version 5 is not one of [6]"),
            ("1|6|udp|x:1|grpc", "unsupported network"),
            ("1|6|tcp|x:1", "net"),
            ("1|6|tcp|x:1|grpc|!!!", "not base64"),
        ];
        for (line, reason) in cases {
            let err = parse_handshake(line, &[6]).unwrap_err();
            assert!(err.reason.contains(reason), "{line}: {}", err.reason);
        }
    }
}
