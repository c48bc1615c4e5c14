//! The hashes of a file's content that `local_file` reports: `id` is the
//! SHA-1 in hex, and `content_md5`, `content_sha1`, `content_sha256`,
//! `content_sha512` (hex) and `content_base64sha256`, `content_base64sha512`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use fleetform_shared::schema::{Attribute, Block};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use sha2::Digest;

pub const NAMES: [&str; 6] = [
    "content_md5",
    "content_sha1",
    "content_sha256",
    "content_base64sha256",
    "content_sha512",
    "content_base64sha512",
];

pub fn sha1_hex(content: &[u8]) -> String {
    sha1_smol::Sha1::from(content).digest().to_string()
}

/// Every hash of one content.
#[derive(Clone, Debug, PartialEq)]
pub struct Digests {
    pub md5: String,
    pub sha1: String,
    pub sha256: String,
    pub base64sha256: String,
    pub sha512: String,
    pub base64sha512: String,
}

impl Digests {
    pub fn of(content: &[u8]) -> Digests {
        let sha256 = sha2::Sha256::digest(content);
        let sha512 = sha2::Sha512::digest(content);
        let md5 = <md5::Md5 as md5::Digest>::digest(content);
        Digests {
            md5: hex::encode(md5.as_slice()),
            sha1: sha1_hex(content),
            sha256: hex::encode(sha256),
            base64sha256: STANDARD.encode(sha256),
            sha512: hex::encode(sha512),
            base64sha512: STANDARD.encode(sha512),
        }
    }

    /// `base` with `id` and the six hash attributes set.
    pub fn apply_to(&self, base: &Value) -> Value {
        let mut m = base.as_map().cloned().unwrap_or_default();
        let values = [
            &self.md5,
            &self.sha1,
            &self.sha256,
            &self.base64sha256,
            &self.sha512,
            &self.base64sha512,
        ];
        for (name, v) in NAMES.iter().zip(values) {
            m.insert((*name).to_string(), Value::String(v.clone()));
        }
        m.insert("id", Value::String(self.sha1.clone()));
        Value::Map(m)
    }
}

/// Adds `id` and the hash attributes, all computed, to a schema block.
pub fn add_attributes(block: &mut Block) {
    block.attributes.insert(
        "id".into(),
        Attribute::new(Type::String)
            .computed()
            .describe("The hexadecimal encoding of the SHA1 checksum of the file content."),
    );
    for name in NAMES {
        block.attributes.insert(
            name.into(),
            Attribute::new(Type::String)
                .computed()
                .describe("A checksum of the file content."),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        let d = Digests::of(b"abc");
        assert_eq!(d.md5, "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(d.sha1, "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            d.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            d.base64sha256,
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        assert_eq!(
            d.sha512,
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        assert_eq!(
            Digests::of(b"").sha1,
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        let v = d.apply_to(&Value::object([("filename", Value::from("f"))]));
        assert_eq!(v.get_attr("id"), &Value::from(d.sha1.as_str()));
        assert_eq!(v.get_attr("content_md5"), &Value::from(d.md5.as_str()));
        assert_eq!(v.get_attr("filename"), &Value::from("f"));
    }
}
