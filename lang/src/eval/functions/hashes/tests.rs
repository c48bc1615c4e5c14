//! Golden tests for the hash and crypto functions: Terraform's documented
//! digests and UUIDs, bcrypt hashes verified against their password, and
//! rsadecrypt on throwaway keys made with openssl for these tests
//! (testdata/: `openssl genrsa -traditional 1024`, its PKCS #8 form, a
//! second key, the same key passphrase-protected, and "message" encrypted
//! with `openssl pkeyutl -pkeyopt rsa_padding_mode:pkcs1`).

use crate::eval::functions::testing::{applying, err, err_in, lit, ok, ok_in, s};
use fleetform_shared::value::Value;

const KEY: &str = include_str!("testdata/key.pem");
const KEY_PKCS8: &str = include_str!("testdata/key_pkcs8.pem");
const WRONG_KEY: &str = include_str!("testdata/wrong_key.pem");
const ENCRYPTED_KEY: &str = include_str!("testdata/encrypted_key.pem");
const CIPHERTEXT: &str = include_str!("testdata/ciphertext.b64");

#[test]
fn documented_digests() {
    for (src, want) in [
        ("md5(\"hello world\")", "5eb63bbbe01eeed093cb22bb8f5acdc3"),
        (
            "sha1(\"hello world\")",
            "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed",
        ),
        (
            "sha512(\"hello world\")",
            "309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f",
        ),
        (
            "base64sha256(\"hello world\")",
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
        ),
        (
            "base64sha512(\"hello world\")",
            "MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==",
        ),
        // Numbers are hashed as their string form, as after conversion.
        ("md5(1)", "c4ca4238a0b923820dcc509a6f75849b"),
        ("md5(\"\")", "d41d8cd98f00b204e9800998ecf8427e"),
    ] {
        assert_eq!(ok(src), s(want), "{src}");
    }
}

#[test]
fn digests_of_unknown_and_null() {
    for f in ["md5", "sha1", "sha512", "base64sha256", "base64sha512"] {
        assert_eq!(ok(&format!("{f}(var.unknown)")), Value::unknown(), "{f}");
        assert_eq!(
            err(&format!("{f}(null)")),
            "Invalid value for \"str\" parameter: argument must not be null.",
        );
        assert_eq!(
            err(&format!("{f}([])")),
            "Invalid value for \"str\" parameter: string required.",
        );
    }
}

#[test]
fn uuidv5_documented_examples() {
    for (ns, name, want) in [
        (
            "dns",
            "www.terraform.io",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
        (
            "url",
            "https://www.terraform.io/",
            "9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5",
        ),
        ("oid", "1.3.6.1.4", "af9d40a5-7a36-5c07-b23a-851cd99fbfa5"),
        (
            "x500",
            "CN=Example,C=GB",
            "84e09961-4aa4-57f8-95b7-03edb1073253",
        ),
        (
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            "www.terraform.io",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
        (
            "743ac3c0-3bf7-4a5b-9e6c-59360447c757",
            "LIBS:diskfont.library",
            "ede1a974-df7e-5f17-84b9-76208818b2c8",
        ),
        // The other spellings of a namespace UUID.
        (
            "6ba7b8109dad11d180b400c04fd430c8",
            "www.terraform.io",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
        (
            "{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}",
            "www.terraform.io",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
        (
            "URN:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            "www.terraform.io",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
    ] {
        let src = format!("uuidv5({}, {})", lit(ns), lit(name));
        assert_eq!(ok(&src), s(want), "{src}");
    }
}

#[test]
fn uuidv5_errors() {
    for (ns, why) in [
        ("tld", "invalid UUID length: 3"),
        (
            "6ba7b810-9dad-11d1-80b4-00c04fd430cZ",
            "invalid UUID format",
        ),
        (
            "6ba7b810_9dad-11d1-80b4-00c04fd430c8",
            "invalid UUID format",
        ),
        (
            "urn:uidd:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            "invalid urn prefix: \"urn:uidd:\"",
        ),
    ] {
        assert_eq!(
            err(&format!("uuidv5({}, \"x\")", lit(ns))),
            format!(
                "Call to function \"uuidv5\" failed: uuidv5() doesn't support namespace {ns} ({why})."
            )
        );
    }
    assert_eq!(ok("uuidv5(\"dns\", var.unknown)"), Value::unknown());
    assert_eq!(
        err("uuidv5(\"dns\", null)"),
        "Invalid value for \"name\" parameter: argument must not be null."
    );
}

#[test]
fn uuid_is_unknown_while_planning_and_random_v4_when_applying() {
    assert_eq!(ok("uuid()"), Value::unknown());
    let env = applying();
    let a = ok_in(&env, "uuid()");
    let b = ok_in(&env, "uuid()");
    assert_ne!(a, b);
    let text = a.as_str().unwrap();
    let parsed = uuid::Uuid::parse_str(text).expect("a UUID");
    assert_eq!(parsed.get_version_num(), 4);
    assert_eq!(
        parsed.hyphenated().to_string(),
        text,
        "lowercase, hyphenated"
    );
}

#[test]
fn bcrypt_hashes_verify_and_respect_the_cost() {
    assert_eq!(ok("bcrypt(\"hello world\")"), Value::unknown());
    let env = applying();
    for (src, password, cost) in [
        ("bcrypt(\"hello world\")", "hello world", "10"),
        ("bcrypt(\"test\", 5)", "test", "05"),
        // Below the minimum, Go's bcrypt uses its default.
        ("bcrypt(\"test\", 3)", "test", "10"),
    ] {
        let hash = ok_in(&env, src);
        let hash = hash.as_str().unwrap();
        assert!(hash.starts_with(&format!("$2a${cost}$")), "{src}: {hash}");
        assert_eq!(hash.len(), 60, "{hash}");
        assert!(::bcrypt::verify(password, hash).unwrap(), "{src}");
        assert!(!::bcrypt::verify("other", hash).unwrap(), "{src}");
    }
    assert_ne!(
        ok_in(&env, "bcrypt(\"x\", 4)"),
        ok_in(&env, "bcrypt(\"x\", 4)"),
        "a new salt each call"
    );
    for (src, want) in [
        (
            "bcrypt(\"test\", 10, 11)",
            "Call to function \"bcrypt\" failed: bcrypt() takes no more than two arguments.",
        ),
        (
            "bcrypt(\"test\", 32)",
            "Call to function \"bcrypt\" failed: error occured generating password crypto/bcrypt: cost 32 is outside allowed range (4,31).",
        ),
        (
            "bcrypt(\"test\", 4.5)",
            "Call to function \"bcrypt\" failed: value must be a whole number, between -9223372036854775808 and 9223372036854775807.",
        ),
        (
            "bcrypt(null)",
            "Invalid value for \"str\" parameter: argument must not be null.",
        ),
    ] {
        assert_eq!(err_in(&env, src), want, "{src}");
    }
    let long = "x".repeat(73);
    assert_eq!(
        err_in(&env, &format!("bcrypt(\"{long}\")")),
        "Call to function \"bcrypt\" failed: error occured generating password bcrypt: password length exceeds 72 bytes."
    );
    assert!(
        ok_in(&env, &format!("bcrypt(\"{}\", 4)", &long[1..]))
            .as_str()
            .is_some()
    );
    assert_eq!(ok_in(&env, "bcrypt(var.unknown)"), Value::unknown());
}

fn rsadecrypt(ciphertext: &str, key: &str) -> String {
    format!("rsadecrypt({}, {})", lit(ciphertext), lit(key))
}

#[test]
fn rsadecrypt_decrypts_with_pkcs1_and_pkcs8_keys() {
    assert_eq!(ok(&rsadecrypt(CIPHERTEXT, KEY)), s("message"));
    assert_eq!(ok(&rsadecrypt(CIPHERTEXT, KEY_PKCS8)), s("message"));
    // Text around the PEM block and line breaks in the base64 are ignored.
    let wrapped = format!("{}\n{}", &CIPHERTEXT[..60], &CIPHERTEXT[60..]);
    assert_eq!(
        ok(&rsadecrypt(&wrapped, &format!("key:\n{KEY}\n"))),
        s("message")
    );
    assert_eq!(ok("rsadecrypt(var.unknown, \"k\")"), Value::unknown());
}

#[test]
fn rsadecrypt_errors() {
    let arg = |i: usize, m: &str| {
        format!(
            "Invalid value for \"{}\" parameter: {m}.",
            ["ciphertext", "privatekey"][i - 1]
        )
    };
    for (ciphertext, key, want) in [
        (
            CIPHERTEXT,
            WRONG_KEY,
            "Call to function \"rsadecrypt\" failed: failed to decrypt: crypto/rsa: decryption error."
                .to_string(),
        ),
        (
            "",
            KEY,
            "Call to function \"rsadecrypt\" failed: failed to decrypt: crypto/rsa: decryption error."
                .to_string(),
        ),
        (
            "bad",
            KEY,
            arg(1, "failed to decode input \"bad\": cipher text must be base64-encoded"),
        ),
        (CIPHERTEXT, "", arg(2, "invalid private key: ssh: no key found")),
        (
            CIPHERTEXT,
            ENCRYPTED_KEY,
            arg(2, "invalid private key: ssh: this private key is passphrase protected"),
        ),
        (
            CIPHERTEXT,
            "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
            arg(2, "invalid private key: ssh: unsupported key type \"EC PRIVATE KEY\""),
        ),
    ] {
        assert_eq!(err(&rsadecrypt(ciphertext, key)), want, "{key}");
    }
    let truncated = KEY.replace("-----END", "\n-----END").replacen('A', "", 40);
    assert!(
        err(&rsadecrypt(CIPHERTEXT, &truncated))
            .starts_with("Invalid value for \"privatekey\" parameter: invalid private key: "),
    );
    let openssh =
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----";
    assert!(err(&rsadecrypt(CIPHERTEXT, openssh)).contains("not supported yet"));
}
