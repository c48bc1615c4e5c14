//! Text encodings: `base64encode`, `base64decode`, `base64gzip`,
//! `urlencode`, `textencodebase64` and `textdecodebase64`, byte for byte as
//! Terraform's Go implementations produce them (Go's base64 decoder with
//! its error offsets, Go's gzip framing, `url.QueryEscape`).

use super::charsets::{self, Charset};
use super::{Def, FnError, FnResult, Unknowns::Deep, def, go_fmt, str_arg};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use fleetform_shared::value::Value;

#[cfg(test)]
#[path = "encoding_text_tests.rs"]
mod tests;

pub(super) const DEFS: &[Def] = &[
    def("base64encode", Deep, base64encode),
    def("base64decode", Deep, base64decode),
    def("base64gzip", Deep, base64gzip),
    def("urlencode", Deep, urlencode),
    def("textencodebase64", Deep, textencodebase64),
    def("textdecodebase64", Deep, textdecodebase64),
];

fn base64encode(a: &[Value]) -> FnResult {
    Ok(Value::String(STANDARD.encode(str_arg(a, 0)?)))
}

fn base64decode(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let bytes = go_base64_decode(&text).map_err(|_| {
        FnError::call(format!(
            "failed to decode base64 data {}",
            go_fmt::quote(&text)
        ))
    })?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| FnError::call("the result of decoding the provided string is not valid UTF-8"))
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r` and `\n`
/// skipped anywhere, stray bits after the last symbol allowed. An error
/// carries Go's `CorruptInputError` offset.
pub(super) fn go_base64_decode(src: &str) -> Result<Vec<u8>, usize> {
    let src = src.as_bytes();
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let skip_newlines = |si: &mut usize| {
        while *si < src.len() && matches!(src[*si], b'\n' | b'\r') {
            *si += 1;
        }
    };
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0usize;
    loop {
        let mut quantum = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if let Some(v) = value(c) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            // Padding: "=" after two symbols needs a second one.
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    skip_newlines(&mut si);
                    if si == src.len() {
                        return Err(src.len());
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            skip_newlines(&mut si);
            if si < src.len() {
                // Nothing may follow the padding.
                return Err(si);
            }
            len = j;
            break;
        }
        let n = (quantum[0] as u32) << 18
            | (quantum[1] as u32) << 12
            | (quantum[2] as u32) << 6
            | quantum[3] as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if len < 4 {
            return Ok(out);
        }
    }
}

/// Gzip as Go's `compress/gzip` writes it and Terraform calls it: no name,
/// no time, OS "unknown", then a flush (an empty stored block) before the
/// final empty stored block.
fn base64gzip(a: &[Value]) -> FnResult {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    let data = str_arg(a, 0)?.into_bytes();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut deflate = Compress::new(Compression::new(6), false);
    let mut body = Vec::with_capacity(data.len() + 64);
    let mut input = &data[..];
    loop {
        body.reserve(256);
        let before_in = deflate.total_in();
        deflate
            .compress_vec(input, &mut body, FlushCompress::Sync)
            .map_err(|e| FnError::call(format!("failed to write gzip raw data: {e}")))?;
        input = &input[(deflate.total_in() - before_in) as usize..];
        // Done once all input is taken and the flush fitted in the buffer.
        if input.is_empty() && body.len() < body.capacity() {
            break;
        }
    }
    out.extend_from_slice(&body);
    // The final block: stored, empty.
    out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    let mut crc = Crc::new();
    crc.update(&data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    Ok(Value::String(STANDARD.encode(out)))
}

/// Go's `url.QueryEscape`: unreserved characters stay, spaces become `+`,
/// every other byte is `%XX`.
fn urlencode(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    Ok(Value::String(out))
}

fn charset_arg(a: &[Value]) -> Result<Charset, FnError> {
    let name = str_arg(a, 1)?;
    charsets::lookup(&name).ok_or_else(|| {
        FnError::arg(
            1,
            format!(
                "{} is not a supported IANA encoding name or alias in this Terraform version",
                go_fmt::quote(&name)
            ),
        )
    })
}

fn textencodebase64(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let charset = charset_arg(a)?;
    let bytes = charset.encode(&text).ok_or_else(|| {
        FnError::arg(
            0,
            format!(
                "the given string contains characters that cannot be represented in {}",
                charset.name
            ),
        )
    })?;
    Ok(Value::String(STANDARD.encode(bytes)))
}

fn textdecodebase64(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let charset = charset_arg(a)?;
    let bytes = go_base64_decode(&text).map_err(|at| {
        FnError::arg(
            0,
            format!("the given value has an invalid base64 symbol at offset {at}"),
        )
    })?;
    // Go's decoders put U+FFFD where bytes mean nothing, and Terraform
    // rejects any U+FFFD in the result.
    match charset.decode(&bytes) {
        Some(s) if !s.contains('\u{fffd}') => Ok(Value::String(s)),
        _ => Err(FnError::arg(
            0,
            format!(
                "the given string contains symbols that are not defined for {}",
                charset.name
            ),
        )),
    }
}
