//! Encryption at rest of what holds resource values: state snapshots and
//! run archives in the object store, the local state cache and journal,
//! and saved plan files. In the spirit of OpenTofu's state encryption:
//! AES-256-GCM, with a key given directly or derived from a passphrase
//! (PBKDF2-HMAC-SHA256, the salt stored with each object), a fallback key
//! for rotation, and an enforced mode that refuses plaintext.
//!
//! Configured from the environment of the process that reads and writes
//! (the coordinator, or the CLI in embedded mode and for plan files):
//! - `FLEETFORM_ENCRYPTION_KEY` (32 bytes in base64) or
//!   `FLEETFORM_ENCRYPTION_KEY_FILE` (a file holding that), or
//!   `FLEETFORM_ENCRYPTION_PASSPHRASE` (16 characters or more): the key
//!   everything is written with;
//! - the same names with `_FALLBACK` after `ENCRYPTION` (e.g.
//!   `FLEETFORM_ENCRYPTION_FALLBACK_KEY`): a previous key, still read, so
//!   keys rotate by making the old one the fallback (objects are
//!   re-encrypted with the new key as they are written again);
//! - `FLEETFORM_ENCRYPTION_ENFORCED=true`: plaintext is neither read nor
//!   written (without it, plaintext written before encryption was turned on
//!   still reads, which is how encryption is adopted).
//!
//! The sealed form: `FFSEAL1\0`, the kind (1: key, 2: passphrase), an
//! 8-byte key id (the start of the key's SHA-256), a 16-byte salt
//! (passphrase only; zeros otherwise), a 12-byte random nonce, then the
//! AES-256-GCM ciphertext with its tag; the header is authenticated too.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"FFSEAL1\0";
const HEADER: usize = 8 + 1 + 8 + 16 + 12;
const KIND_KEY: u8 = 1;
const KIND_PASSPHRASE: u8 = 2;
/// OWASP's 2023 advice for PBKDF2-HMAC-SHA256. A derivation costs about
/// a third of a second: it is made once per salt (once per process for
/// writing), not once per object.
const PBKDF2_ROUNDS: u32 = 600_000;

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum SealError {
    #[error(
        "{what} is encrypted with a key this process does not have (key id {found}); set FLEETFORM_ENCRYPTION_FALLBACK_KEY (or _PASSPHRASE) to the key it was written with"
    )]
    UnknownKey { what: String, found: String },
    #[error(
        "{what} is encrypted and no encryption key is set: set FLEETFORM_ENCRYPTION_KEY, _KEY_FILE or _PASSPHRASE"
    )]
    NoKey { what: String },
    #[error(
        "{what} is not encrypted, and FLEETFORM_ENCRYPTION_ENFORCED refuses plaintext: push an encrypted state (with the key set, `state pull` and `state push -force` re-encrypt one)"
    )]
    Plaintext { what: String },
    #[error("{what} does not decrypt: it was altered or damaged ({reason})")]
    Damaged { what: String, reason: String },
    #[error("encryption settings: {0}")]
    Config(String),
}

#[derive(Clone)]
enum Secret {
    Key([u8; 32]),
    Passphrase(String),
}

/// What seals and opens; [`Sealer::none`] passes plaintext through.
pub struct Sealer {
    primary: Option<Secret>,
    fallback: Option<Secret>,
    enforced: bool,
    /// Derived keys by salt (passphrases), and the salt written with.
    derived: Mutex<HashMap<[u8; 16], [u8; 32]>>,
    write_salt: [u8; 16],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("encrypts", &self.primary.is_some())
            .field("fallback", &self.fallback.is_some())
            .field("enforced", &self.enforced)
            .finish()
    }
}

fn key_id(key: &[u8; 32]) -> [u8; 8] {
    let d = Sha256::digest(key);
    let mut id = [0u8; 8];
    id.copy_from_slice(&d[..8]);
    id
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn random<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let mut filled = 0;
    while filled < N {
        let u = uuid::Uuid::new_v4();
        let bytes = u.as_bytes();
        let n = (N - filled).min(bytes.len());
        out[filled..filled + n].copy_from_slice(&bytes[..n]);
        filled += n;
    }
    out
}

impl Sealer {
    /// No encryption: plaintext in and out.
    pub fn none() -> Sealer {
        Sealer::new(None, None, false).expect("no settings are valid settings")
    }

    fn new(
        primary: Option<Secret>,
        fallback: Option<Secret>,
        enforced: bool,
    ) -> Result<Sealer, SealError> {
        if enforced && primary.is_none() {
            return Err(SealError::Config(
                "FLEETFORM_ENCRYPTION_ENFORCED needs a key: set FLEETFORM_ENCRYPTION_KEY, _KEY_FILE or _PASSPHRASE".into(),
            ));
        }
        Ok(Sealer {
            primary,
            fallback,
            enforced,
            derived: Mutex::default(),
            write_salt: random(),
        })
    }

    /// From `FLEETFORM_ENCRYPTION_*` settings: `var` gives a setting's
    /// value, `read_file` a key file's text (the caller reads the process's
    /// environment and files; this crate does no I/O).
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        read_file: impl Fn(&str) -> std::io::Result<String>,
    ) -> Result<Sealer, SealError> {
        let secret = |infix: &str| -> Result<Option<Secret>, SealError> {
            let name = |s: &str| format!("FLEETFORM_ENCRYPTION{infix}_{s}");
            let given: Vec<String> = ["KEY", "KEY_FILE", "PASSPHRASE"]
                .iter()
                .map(|s| name(s))
                .filter(|n| var(n).is_some())
                .collect();
            if given.len() > 1 {
                return Err(SealError::Config(format!(
                    "set one of {}, not several",
                    given.join(", ")
                )));
            }
            let decode_key = |text: &str, from: &str| -> Result<[u8; 32], SealError> {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .map_err(|e| SealError::Config(format!("{from} is not base64: {e}")))?;
                bytes.try_into().map_err(|b: Vec<u8>| {
                    SealError::Config(format!(
                        "{from} must be 32 bytes (base64 of them, e.g. from `openssl rand -base64 32`), not {}",
                        b.len()
                    ))
                })
            };
            if let Some(k) = var(&name("KEY")) {
                return Ok(Some(Secret::Key(decode_key(&k, &name("KEY"))?)));
            }
            if let Some(path) = var(&name("KEY_FILE")) {
                let text = read_file(&path)
                    .map_err(|e| SealError::Config(format!("{}={path}: {e}", name("KEY_FILE"))))?;
                return Ok(Some(Secret::Key(decode_key(&text, &path)?)));
            }
            if let Some(p) = var(&name("PASSPHRASE")) {
                if p.chars().count() < 16 {
                    return Err(SealError::Config(format!(
                        "{} must be at least 16 characters",
                        name("PASSPHRASE")
                    )));
                }
                return Ok(Some(Secret::Passphrase(p)));
            }
            Ok(None)
        };
        let enforced = match var("FLEETFORM_ENCRYPTION_ENFORCED").as_deref() {
            None | Some("false" | "0") => false,
            Some("true" | "1") => true,
            Some(other) => {
                return Err(SealError::Config(format!(
                    "FLEETFORM_ENCRYPTION_ENFORCED={other}: use true or false"
                )));
            }
        };
        Sealer::new(secret("")?, secret("_FALLBACK")?, enforced)
    }

    /// Whether new data is written encrypted.
    pub fn encrypts(&self) -> bool {
        self.primary.is_some()
    }

    fn derive(&self, passphrase: &str, salt: [u8; 16]) -> [u8; 32] {
        if let Some(k) = self.derived.lock().expect("derived keys").get(&salt) {
            return *k;
        }
        let mut key = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(passphrase.as_bytes(), &salt, PBKDF2_ROUNDS, &mut key);
        self.derived.lock().expect("derived keys").insert(salt, key);
        key
    }

    /// The key of `secret` for `salt`, with its kind.
    fn key_of(&self, secret: &Secret, salt: [u8; 16]) -> (u8, [u8; 32]) {
        match secret {
            Secret::Key(k) => (KIND_KEY, *k),
            Secret::Passphrase(p) => (KIND_PASSPHRASE, self.derive(p, salt)),
        }
    }

    /// `plain`, sealed when a key is set; `what` names it in errors.
    pub fn seal(&self, what: &str, plain: Vec<u8>) -> Result<Vec<u8>, SealError> {
        let Some(secret) = &self.primary else {
            return if self.enforced {
                Err(SealError::NoKey { what: what.into() })
            } else {
                Ok(plain)
            };
        };
        let salt = match secret {
            Secret::Key(_) => [0u8; 16],
            Secret::Passphrase(_) => self.write_salt,
        };
        let (kind, key) = self.key_of(secret, salt);
        let nonce: [u8; 12] = random();
        let mut out = Vec::with_capacity(HEADER + plain.len() + 16);
        out.extend_from_slice(MAGIC);
        out.push(kind);
        out.extend_from_slice(&key_id(&key));
        out.extend_from_slice(&salt);
        out.extend_from_slice(&nonce);
        let cipher = Aes256Gcm::new_from_slice(&key).expect("32-byte key");
        let sealed = cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: &plain,
                    aad: &out[..HEADER],
                },
            )
            .map_err(|_| SealError::Config("encryption failed".into()))?;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Whether `data` (or its first 8 bytes) is sealed by a fleetform,
    /// with whatever key.
    pub fn is_sealed(data: &[u8]) -> bool {
        data.starts_with(MAGIC)
    }

    /// The plaintext of `data` (as it is when it was never sealed and
    /// plaintext is allowed).
    pub fn open<'a>(&self, what: &str, data: &'a [u8]) -> Result<Cow<'a, [u8]>, SealError> {
        if !data.starts_with(MAGIC) {
            return if self.enforced {
                Err(SealError::Plaintext { what: what.into() })
            } else {
                Ok(Cow::Borrowed(data))
            };
        }
        let damaged = |reason: &str| SealError::Damaged {
            what: what.into(),
            reason: reason.into(),
        };
        if data.len() < HEADER + 16 {
            return Err(damaged("too short"));
        }
        let kind = data[8];
        let id: [u8; 8] = data[9..17].try_into().expect("8 bytes");
        let salt: [u8; 16] = data[17..33].try_into().expect("16 bytes");
        let nonce = &data[33..HEADER];
        let secrets = [&self.primary, &self.fallback];
        if secrets.iter().all(|s| s.is_none()) {
            return Err(SealError::NoKey { what: what.into() });
        }
        for secret in secrets.into_iter().flatten() {
            let (k, key) = self.key_of(secret, salt);
            if k != kind || key_id(&key) != id {
                continue;
            }
            let cipher = Aes256Gcm::new_from_slice(&key).expect("32-byte key");
            return cipher
                .decrypt(
                    Nonce::from_slice(nonce),
                    Payload {
                        msg: &data[HEADER..],
                        aad: &data[..HEADER],
                    },
                )
                .map(Cow::Owned)
                .map_err(|_| damaged("the authentication tag does not match"));
        }
        Err(SealError::UnknownKey {
            what: what.into(),
            found: hex(&id),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(vars: &[(&str, &str)]) -> Result<Sealer, SealError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Sealer::from_vars(
            |k| vars.get(k).cloned(),
            |path| {
                Err(std::io::Error::other(format!(
                    "no file {path} in this test"
                )))
            },
        )
    }

    const KEY_A: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const KEY_B: &str = "HxweHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgE=";

    #[test]
    fn keys_seal_open_rotate_and_refuse() {
        let plain = b"secret state".to_vec();
        let a = sealer(&[("FLEETFORM_ENCRYPTION_KEY", KEY_A)]).unwrap();
        let sealed = a.seal("snapshot 1", plain.clone()).unwrap();
        assert!(sealed.starts_with(MAGIC));
        assert!(!sealed.windows(6).any(|w| w == b"secret"), "no plaintext");
        assert_eq!(a.open("snapshot 1", &sealed).unwrap().as_ref(), plain);
        // Two seals of the same data differ (random nonce).
        assert_ne!(a.seal("x", plain.clone()).unwrap(), sealed);

        // Another key: refused with the key id; as fallback: opens.
        let b = sealer(&[("FLEETFORM_ENCRYPTION_KEY", KEY_B)]).unwrap();
        let e = b.open("snapshot 1", &sealed).unwrap_err();
        assert!(matches!(e, SealError::UnknownKey { .. }), "{e}");
        assert!(e.to_string().contains("FLEETFORM_ENCRYPTION_FALLBACK_KEY"));
        let rotated = sealer(&[
            ("FLEETFORM_ENCRYPTION_KEY", KEY_B),
            ("FLEETFORM_ENCRYPTION_FALLBACK_KEY", KEY_A),
        ])
        .unwrap();
        assert_eq!(rotated.open("s", &sealed).unwrap().as_ref(), plain);
        let resealed = rotated.seal("s", plain.clone()).unwrap();
        assert!(b.open("s", &resealed).is_ok(), "written with the new key");

        // A flipped byte: damaged, not "wrong key".
        let mut bad = sealed.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(
            a.open("s", &bad).unwrap_err(),
            SealError::Damaged { .. }
        ));

        // Plaintext: read unless enforced; no key: sealed data refused.
        assert_eq!(a.open("s", &plain).unwrap().as_ref(), plain);
        let enforced = sealer(&[
            ("FLEETFORM_ENCRYPTION_KEY", KEY_A),
            ("FLEETFORM_ENCRYPTION_ENFORCED", "true"),
        ])
        .unwrap();
        assert!(matches!(
            enforced.open("s", &plain).unwrap_err(),
            SealError::Plaintext { .. }
        ));
        assert!(matches!(
            Sealer::none().open("s", &sealed).unwrap_err(),
            SealError::NoKey { .. }
        ));
        assert_eq!(Sealer::none().seal("s", plain.clone()).unwrap(), plain);
    }

    #[test]
    fn passphrases_derive_per_salt_and_settings_are_checked() {
        let p = sealer(&[("FLEETFORM_ENCRYPTION_PASSPHRASE", "correct horse battery")]).unwrap();
        let sealed = p.seal("plan", b"plan bytes".to_vec()).unwrap();
        assert_eq!(sealed[8], KIND_PASSPHRASE);
        // Another process (another salt for writing) reads it.
        let q = sealer(&[("FLEETFORM_ENCRYPTION_PASSPHRASE", "correct horse battery")]).unwrap();
        assert_eq!(q.open("plan", &sealed).unwrap().as_ref(), b"plan bytes");
        let wrong =
            sealer(&[("FLEETFORM_ENCRYPTION_PASSPHRASE", "incorrect horse battery")]).unwrap();
        assert!(matches!(
            wrong.open("plan", &sealed).unwrap_err(),
            SealError::UnknownKey { .. }
        ));

        let err = |vars: &[(&str, &str)]| sealer(vars).unwrap_err().to_string();
        assert!(err(&[("FLEETFORM_ENCRYPTION_PASSPHRASE", "short")]).contains("at least 16"));
        assert!(err(&[("FLEETFORM_ENCRYPTION_KEY", "abc")]).contains("base64"));
        assert!(err(&[("FLEETFORM_ENCRYPTION_KEY", "AAAA")]).contains("32 bytes"));
        assert!(err(&[("FLEETFORM_ENCRYPTION_ENFORCED", "true")]).contains("needs a key"));
        assert!(
            err(&[
                ("FLEETFORM_ENCRYPTION_KEY", KEY_A),
                ("FLEETFORM_ENCRYPTION_PASSPHRASE", "correct horse battery")
            ])
            .contains("not several")
        );
    }
}
