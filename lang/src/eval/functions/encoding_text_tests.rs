//! Golden tests for the text encoding functions: Terraform's documented
//! examples and its own test cases, Go's base64 and gzip bytes, and the
//! character-set names it accepts.

use super::super::text_test_support::{check, check_errors, s};
use fleetform_shared::value::Value;

#[test]
fn base64() {
    check(&[
        ("base64encode(\"Hello World\")", s("SGVsbG8gV29ybGQ=")),
        ("base64decode(\"SGVsbG8gV29ybGQ=\")", s("Hello World")),
        (
            "base64decode(\"YWJjMTIzIT8kKiYoKSctPUB+\")",
            s("abc123!?$*&()'-=@~"),
        ),
        (
            "base64encode(\"abc123!?$*&()'-=@~\")",
            s("YWJjMTIzIT8kKiYoKSctPUB+"),
        ),
        // Go skips line breaks anywhere and ignores stray trailing bits.
        ("base64decode(\"SGVs\\r\\nbG8=\")", s("Hello")),
        ("base64decode(\"SGVsbG9=\")", s("Hello")),
        ("base64decode(\"\")", s("")),
        ("base64encode(var.unknown)", Value::unknown()),
    ]);
    check_errors(&[
        (
            "base64decode(\"this-is-an-invalid-base64-data\")",
            "Call to function \"base64decode\" failed: failed to decode base64 data \
             \"this-is-an-invalid-base64-data\".",
        ),
        (
            "base64decode(\"dfg\")",
            "Call to function \"base64decode\" failed: failed to decode base64 data \"dfg\".",
        ),
        (
            "base64decode(\"wyg=\")",
            "Call to function \"base64decode\" failed: the result of decoding the provided \
             string is not valid UTF-8.",
        ),
        (
            "base64encode(var.nothing)",
            "Invalid value for \"str\" parameter: argument must not be null.",
        ),
    ]);
}

#[test]
fn base64_decode_offsets_are_gos() {
    use super::go_base64_decode as d;
    assert_eq!(d("YQ=="), Ok(b"a".to_vec()));
    assert_eq!(d("dfg"), Err(0));
    assert_eq!(d("YWJj$"), Err(4));
    assert_eq!(d("YQ="), Err(3));
    assert_eq!(d("YQ==YQ=="), Err(4));
    assert_eq!(d("=AAA"), Err(0));
    assert_eq!(d("YQ=x"), Err(2));
}

#[test]
fn base64gzip_writes_gos_gzip_bytes() {
    check(&[
        // Terraform's own test case.
        (
            "base64gzip(\"test\")",
            s("H4sIAAAAAAAA/ypJLS4BAAAA//8BAAD//wx+f9gEAAAA"),
        ),
        ("base64gzip(var.unknown)", Value::unknown()),
    ]);
    // Longer input still decompresses to itself.
    let Ok(Value::String(b64)) = super::super::text_test_support::eval(
        "base64gzip(join(\"\", [for i in range(300) : \"abc\"]))",
    ) else {
        panic!("base64gzip failed");
    };
    use base64::Engine as _;
    let gz = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut out).unwrap();
    assert_eq!(out, "abc".repeat(300));
}

#[test]
fn urlencode_is_gos_query_escape() {
    check(&[
        ("urlencode(\"Hello World!\")", s("Hello+World%21")),
        ("urlencode(\"☃\")", s("%E2%98%83")),
        (
            "\"http://example.com/search?q=${urlencode(\"terraform urlencode\")}\"",
            s("http://example.com/search?q=terraform+urlencode"),
        ),
        ("urlencode(\"abc123-_.~\")", s("abc123-_.~")),
        (
            "urlencode(\"foo:bar@localhost?foo=bar&bar=baz\")",
            s("foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz"),
        ),
        (
            "urlencode(\"mailto:email?subject=this+is+my+subject\")",
            s("mailto%3Aemail%3Fsubject%3Dthis%2Bis%2Bmy%2Bsubject"),
        ),
        ("urlencode(\"foo/bar\")", s("foo%2Fbar")),
        ("urlencode(var.unknown)", Value::unknown()),
    ]);
}

#[test]
fn textencodebase64() {
    check(&[
        (
            "textencodebase64(\"Hello World\", \"UTF-16LE\")",
            s("SABlAGwAbABvACAAVwBvAHIAbABkAA=="),
        ),
        (
            "textencodebase64(\"abc123!?$*&()'-=@~\", \"UTF-8\")",
            s("YWJjMTIzIT8kKiYoKSctPUB+"),
        ),
        (
            "textencodebase64(\"abc123!?$*&()'-=@~\", \"UTF-16LE\")",
            s("YQBiAGMAMQAyADMAIQA/ACQAKgAmACgAKQAnAC0APQBAAH4A"),
        ),
        (
            "textencodebase64(\"abc123!?$*&()'-=@~\", \"CP936\")",
            s("YWJjMTIzIT8kKiYoKSctPUB+"),
        ),
        // "UTF-16" writes a big-endian byte order mark.
        ("textencodebase64(\"A\", \"utf-16\")", s("/v8AQQ==")),
        ("textencodebase64(\"A\", \"UTF-16BE\")", s("AEE=")),
        ("textencodebase64(\"é\", \" LATIN1 \")", s("6Q==")),
        ("textencodebase64(\"ş\", \"latin5\")", s("/g==")),
        ("textencodebase64(\"日本\", \"Shift_JIS\")", s("k/qWew==")),
        ("textencodebase64(\"€\", \"windows-1252\")", s("gA==")),
        ("textencodebase64(var.unknown, \"UTF-8\")", Value::unknown()),
        ("textencodebase64(\"a\", var.unknown)", Value::unknown()),
    ]);
    check_errors(&[
        (
            "textencodebase64(\"abc\", \"NOT-EXISTS\")",
            "Invalid value for \"encoding\" parameter: \"NOT-EXISTS\" is not a \
             supported IANA encoding name or alias in this Terraform version.",
        ),
        (
            "textencodebase64(\"🤔\", \"windows-1252\")",
            "Invalid value for \"string\" parameter: the given string contains \
             characters that cannot be represented in windows-1252.",
        ),
        (
            "textencodebase64(\"€\", \"iso-8859-1\")",
            "Invalid value for \"string\" parameter: the given string contains \
             characters that cannot be represented in ISO_8859-1:1987.",
        ),
        (
            "textencodebase64(\"é\", \"us-ascii\")",
            "Invalid value for \"string\" parameter: the given string contains \
             characters that cannot be represented in US-ASCII.",
        ),
        (
            "textencodebase64(\"Ý\", \"ISO-8859-9\")",
            "Invalid value for \"string\" parameter: the given string contains \
             characters that cannot be represented in ISO_8859-9:1989.",
        ),
    ]);
}

#[test]
fn textdecodebase64() {
    check(&[
        (
            "textdecodebase64(\"SABlAGwAbABvACAAVwBvAHIAbABkAA==\", \"UTF-16LE\")",
            s("Hello World"),
        ),
        (
            "textdecodebase64(\"YWJjMTIzIT8kKiYoKSctPUB+\", \"UTF-8\")",
            s("abc123!?$*&()'-=@~"),
        ),
        (
            "textdecodebase64(\"YWJjMTIzIT8kKiYoKSctPUB+\", \"CP936\")",
            s("abc123!?$*&()'-=@~"),
        ),
        // "UTF-16" honours a little-endian byte order mark.
        ("textdecodebase64(\"//5BAA==\", \"UTF-16\")", s("A")),
        ("textdecodebase64(\"AEE=\", \"UTF-16\")", s("A")),
        ("textdecodebase64(\"/g==\", \"ISO-8859-9\")", s("ş")),
        ("textdecodebase64(\"k/qWew==\", \"csShiftJIS\")", s("日本")),
        ("textdecodebase64(\"gA==\", \"windows-1252\")", s("€")),
        ("textdecodebase64(var.unknown, \"UTF-8\")", Value::unknown()),
    ]);
    check_errors(&[
        (
            "textdecodebase64(\"doesn't matter\", \"NOT-EXISTS\")",
            "Invalid value for \"encoding\" parameter: \"NOT-EXISTS\" is not a \
             supported IANA encoding name or alias in this Terraform version.",
        ),
        (
            "textdecodebase64(\"<invalid base64>\", \"windows-1252\")",
            "Invalid value for \"source\" parameter: the given value has an \
             invalid base64 symbol at offset 0.",
        ),
        (
            // 0x81 is not defined in windows-1250.
            "textdecodebase64(\"gQ==\", \"windows-1250\")",
            "Invalid value for \"source\" parameter: the given string contains \
             symbols that are not defined for windows-1250.",
        ),
        (
            "textdecodebase64(\"AEFC\", \"UTF-16BE\")",
            "Invalid value for \"source\" parameter: the given string contains \
             symbols that are not defined for UTF-16BE.",
        ),
        (
            "textdecodebase64(\"gA==\", \"US-ASCII\")",
            "Invalid value for \"source\" parameter: the given string contains \
             symbols that are not defined for US-ASCII.",
        ),
    ]);
}

#[test]
fn jsonencode_escapes_html_characters_as_go_does() {
    check(&[
        (
            "jsonencode({a = \"<b> & \\u2028\"})",
            s("{\"a\":\"\\u003cb\\u003e \\u0026 \\u2028\"}"),
        ),
        ("jsonencode(\"plain\")", s("\"plain\"")),
    ]);
}
