//! Hash and crypto functions: md5, sha1, sha512, base64sha256,
//! base64sha512, uuid, uuidv5, bcrypt, rsadecrypt (`sha256` is in
//! encoding.rs). The file-reading variants are in files.rs.

#[cfg(test)]
mod tests;

use super::{Def, FnError, FnResult, Unknowns::Deep, def, def_impure, num_arg, str_arg};
use crate::eval::env::EvalEnv;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use fleetform_shared::value::Value;
use sha2::{Digest, Sha256, Sha512};

pub(super) const DEFS: &[Def] = &[
    def("md5", Deep, md5),
    def("sha1", Deep, sha1),
    def("sha512", Deep, sha512),
    def("base64sha256", Deep, base64sha256),
    def("base64sha512", Deep, base64sha512),
    def_impure("uuid", uuid),
    def("uuidv5", Deep, uuidv5),
    // Terraform declares the cost as a variadic parameter and rejects a
    // third argument itself, with its own message.
    def_impure("bcrypt", bcrypt),
    def("rsadecrypt", Deep, rsadecrypt),
];

pub(super) fn md5_bytes(b: &[u8]) -> Vec<u8> {
    use md5::Digest as _;
    md5::Md5::digest(b).to_vec()
}

pub(super) fn sha1_bytes(b: &[u8]) -> Vec<u8> {
    sha1_smol::Sha1::from(b).digest().bytes().to_vec()
}

pub(super) fn sha256_bytes(b: &[u8]) -> Vec<u8> {
    Sha256::digest(b).to_vec()
}

pub(super) fn sha512_bytes(b: &[u8]) -> Vec<u8> {
    Sha512::digest(b).to_vec()
}

pub(super) fn base64(b: &[u8]) -> String {
    BASE64.encode(b)
}

fn hashed(a: &[Value], hash: fn(&[u8]) -> Vec<u8>, encode: fn(&[u8]) -> String) -> FnResult {
    Ok(Value::String(encode(&hash(str_arg(a, 0)?.as_bytes()))))
}

fn hex(b: &[u8]) -> String {
    hex::encode(b)
}

fn md5(a: &[Value]) -> FnResult {
    hashed(a, md5_bytes, hex)
}

fn sha1(a: &[Value]) -> FnResult {
    hashed(a, sha1_bytes, hex)
}

fn sha512(a: &[Value]) -> FnResult {
    hashed(a, sha512_bytes, hex)
}

fn base64sha256(a: &[Value]) -> FnResult {
    hashed(a, sha256_bytes, base64)
}

fn base64sha512(a: &[Value]) -> FnResult {
    hashed(a, sha512_bytes, base64)
}

fn uuid(_: &EvalEnv, _: &[Value]) -> FnResult {
    Ok(Value::String(uuid::Uuid::new_v4().to_string()))
}

/// A name-based (SHA-1) UUID in a well-known namespace or one given as a UUID.
fn uuidv5(a: &[Value]) -> FnResult {
    let (ns, name) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let namespace = match ns.as_str() {
        "dns" => uuid::Uuid::NAMESPACE_DNS,
        "url" => uuid::Uuid::NAMESPACE_URL,
        "oid" => uuid::Uuid::NAMESPACE_OID,
        "x500" => uuid::Uuid::NAMESPACE_X500,
        other => parse_uuid(other).map_err(|e| {
            FnError::call(format!("uuidv5() doesn't support namespace {other} ({e})"))
        })?,
    };
    Ok(Value::String(
        uuid::Uuid::new_v5(&namespace, name.as_bytes()).to_string(),
    ))
}

/// A UUID in the forms Terraform's parser (google/uuid) takes, with its
/// error texts: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, that inside any
/// two bracketing characters (it checks neither), with a `urn:uuid:`
/// prefix, or 32 hex digits.
fn parse_uuid(s: &str) -> Result<uuid::Uuid, String> {
    let b = s.as_bytes();
    let hex_pair = |i: usize, b: &[u8]| -> Result<u8, String> {
        let d = |c: u8| (c as char).to_digit(16);
        match (d(b[i]), d(b[i + 1])) {
            (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
            _ => Err("invalid UUID format".into()),
        }
    };
    let body: &[u8] = match b.len() {
        36 => b,
        45 => {
            if !b[..9].eq_ignore_ascii_case(b"urn:uuid:") {
                return Err(format!(
                    "invalid urn prefix: {:?}",
                    String::from_utf8_lossy(&b[..9])
                ));
            }
            &b[9..]
        }
        38 => &b[1..37],
        32 => {
            let mut out = [0u8; 16];
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = hex_pair(i * 2, b)?;
            }
            return Ok(uuid::Uuid::from_bytes(out));
        }
        n => return Err(format!("invalid UUID length: {n}")),
    };
    if [8, 13, 18, 23].iter().any(|&i| body[i] != b'-') {
        return Err("invalid UUID format".into());
    }
    let mut out = [0u8; 16];
    let starts = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    for (byte, &i) in out.iter_mut().zip(&starts) {
        *byte = hex_pair(i, body)?;
    }
    Ok(uuid::Uuid::from_bytes(out))
}

/// A bcrypt hash (`$2a$`, as Go writes), with a fresh salt each call.
fn bcrypt(_: &EvalEnv, a: &[Value]) -> FnResult {
    let password = str_arg(a, 0)?;
    let mut cost = 10;
    if a.len() > 1 {
        cost = num_arg(a, 1)?.as_i64().ok_or_else(|| {
            FnError::call(format!(
                "value must be a whole number, between {} and {}",
                i64::MIN,
                i64::MAX
            ))
        })?;
    }
    if a.len() > 2 {
        return Err(FnError::call("bcrypt() takes no more than two arguments"));
    }
    let failed = |why: String| FnError::call(format!("error occured generating password {why}"));
    if password.len() > 72 {
        return Err(failed("bcrypt: password length exceeds 72 bytes".into()));
    }
    // Go's bcrypt quietly uses its default for a cost below the minimum.
    if cost < 4 {
        cost = 10;
    }
    if cost > 31 {
        return Err(failed(format!(
            "crypto/bcrypt: cost {cost} is outside allowed range (4,31)"
        )));
    }
    let parts = ::bcrypt::hash_with_result(password.as_bytes(), cost as u32)
        .map_err(|e| failed(e.to_string()))?;
    Ok(Value::String(
        parts.format_for_version(::bcrypt::Version::TwoA),
    ))
}

/// Decrypts base64 PKCS #1 v1.5 ciphertext with an RSA private key in PEM
/// (PKCS #1 `RSA PRIVATE KEY` or PKCS #8 `PRIVATE KEY`). Terraform also
/// reads OpenSSH-format keys; those are refused here for now.
fn rsadecrypt(a: &[Value]) -> FnResult {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::pkcs8::DecodePrivateKey;
    let (text, key) = (str_arg(a, 0)?, str_arg(a, 1)?);
    // Go's decoder skips line breaks in base64 text.
    let compact: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    let ciphertext = BASE64.decode(compact).map_err(|_| {
        FnError::arg(
            0,
            format!("failed to decode input {text:?}: cipher text must be base64-encoded"),
        )
    })?;
    let invalid = |why: String| FnError::arg(1, format!("invalid private key: {why}"));
    let (label, block) = pem_block(&key).ok_or_else(|| invalid("ssh: no key found".into()))?;
    if block.contains("Proc-Type:") && block.contains("ENCRYPTED") {
        return Err(invalid(
            "ssh: this private key is passphrase protected".into(),
        ));
    }
    let private = match label {
        "RSA PRIVATE KEY" => {
            rsa::RsaPrivateKey::from_pkcs1_pem(block).map_err(|e| invalid(e.to_string()))?
        }
        "PRIVATE KEY" => {
            rsa::RsaPrivateKey::from_pkcs8_pem(block).map_err(|e| invalid(e.to_string()))?
        }
        "OPENSSH PRIVATE KEY" => {
            return Err(invalid(
                "OpenSSH-format private keys are not supported yet; convert the key to PEM with \"ssh-keygen -p -m PEM\"".into(),
            ));
        }
        other => return Err(invalid(format!("ssh: unsupported key type {other:?}"))),
    };
    let plain = private
        .decrypt(rsa::Pkcs1v15Encrypt, &ciphertext)
        .map_err(|_| FnError::call("failed to decrypt: crypto/rsa: decryption error"))?;
    // Go makes a string of the bytes as they are; invalid UTF-8 cannot be
    // a string here, so it is replaced.
    Ok(Value::String(String::from_utf8_lossy(&plain).into_owned()))
}

/// The first PEM block in `text` (text around it is ignored, as Go's
/// `pem.Decode` does): its label and the block itself.
fn pem_block(text: &str) -> Option<(&str, &str)> {
    let start = text.find("-----BEGIN ")?;
    let label_start = start + "-----BEGIN ".len();
    let label_len = text[label_start..].find("-----")?;
    let label = &text[label_start..label_start + label_len];
    let end_marker = format!("-----END {label}-----");
    let end = text[label_start..].find(&end_marker)? + label_start + end_marker.len();
    Some((label, &text[start..end]))
}
