//! The character encodings `textencodebase64` and `textdecodebase64` know,
//! by their IANA names and aliases as Go's `ianaindex.IANA` reads them
//! (case-insensitively, surrounding spaces ignored). UTF-8, UTF-16,
//! US-ASCII, ISO-8859-1 and ISO-8859-9 are coded here (the WHATWG tables of
//! `encoding_rs` treat the last three as windows-1252/1254 and encode
//! UTF-16 as UTF-8); the other legacy encodings use `encoding_rs`, whose
//! tables are the WHATWG ones Go's `x/text` is built from (less the C1
//! controls, which `x/text` leaves undefined). IBM/EBCDIC code pages
//! and HZ-GB-2312, which Terraform also accepts, are not supported.

use encoding_rs::Encoding;

/// An encoding and its canonical IANA name (for error messages).
pub(super) struct Charset {
    pub name: &'static str,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Utf8,
    /// `bom`: "UTF-16" writes a big-endian BOM and honours one when reading.
    Utf16 {
        little: bool,
        bom: bool,
    },
    Ascii,
    Latin1,
    /// ISO-8859-9: Latin-1 with six Turkish letters.
    Latin5,
    Whatwg(&'static Encoding),
}

/// (canonical IANA name, lower-case aliases, kind)
const TABLE: &[(&str, &[&str], Kind)] = &[
    ("UTF-8", &["utf-8", "csutf8"], Kind::Utf8),
    (
        "UTF-16",
        &["utf-16", "csutf16"],
        Kind::Utf16 {
            little: false,
            bom: true,
        },
    ),
    (
        "UTF-16BE",
        &["utf-16be", "csutf16be"],
        Kind::Utf16 {
            little: false,
            bom: false,
        },
    ),
    (
        "UTF-16LE",
        &["utf-16le", "csutf16le"],
        Kind::Utf16 {
            little: true,
            bom: false,
        },
    ),
    (
        "US-ASCII",
        &[
            "us-ascii",
            "iso-ir-6",
            "ansi_x3.4-1968",
            "ansi_x3.4-1986",
            "iso_646.irv:1991",
            "iso646-us",
            "us",
            "ibm367",
            "cp367",
            "csascii",
        ],
        Kind::Ascii,
    ),
    (
        "ISO_8859-1:1987",
        &[
            "iso_8859-1:1987",
            "iso-ir-100",
            "iso_8859-1",
            "iso-8859-1",
            "latin1",
            "l1",
            "ibm819",
            "cp819",
            "csisolatin1",
        ],
        Kind::Latin1,
    ),
    (
        "ISO_8859-2:1987",
        &[
            "iso_8859-2:1987",
            "iso-ir-101",
            "iso_8859-2",
            "iso-8859-2",
            "latin2",
            "l2",
            "csisolatin2",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_2),
    ),
    (
        "ISO_8859-3:1988",
        &[
            "iso_8859-3:1988",
            "iso-ir-109",
            "iso_8859-3",
            "iso-8859-3",
            "latin3",
            "l3",
            "csisolatin3",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_3),
    ),
    (
        "ISO_8859-4:1988",
        &[
            "iso_8859-4:1988",
            "iso-ir-110",
            "iso_8859-4",
            "iso-8859-4",
            "latin4",
            "l4",
            "csisolatin4",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_4),
    ),
    (
        "ISO_8859-5:1988",
        &[
            "iso_8859-5:1988",
            "iso-ir-144",
            "iso_8859-5",
            "iso-8859-5",
            "cyrillic",
            "csisolatincyrillic",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_5),
    ),
    (
        "ISO_8859-6:1987",
        &[
            "iso_8859-6:1987",
            "iso-ir-127",
            "iso_8859-6",
            "iso-8859-6",
            "ecma-114",
            "asmo-708",
            "arabic",
            "csisolatinarabic",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_6),
    ),
    (
        "ISO_8859-6-E",
        &["iso_8859-6-e", "csiso88596e", "iso-8859-6-e"],
        Kind::Whatwg(encoding_rs::ISO_8859_6),
    ),
    (
        "ISO_8859-6-I",
        &["iso_8859-6-i", "csiso88596i", "iso-8859-6-i"],
        Kind::Whatwg(encoding_rs::ISO_8859_6),
    ),
    (
        "ISO_8859-7:1987",
        &[
            "iso_8859-7:1987",
            "iso-ir-126",
            "iso_8859-7",
            "iso-8859-7",
            "elot_928",
            "ecma-118",
            "greek",
            "greek8",
            "csisolatingreek",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_7),
    ),
    (
        "ISO_8859-8:1988",
        &[
            "iso_8859-8:1988",
            "iso-ir-138",
            "iso_8859-8",
            "iso-8859-8",
            "hebrew",
            "csisolatinhebrew",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_8),
    ),
    (
        "ISO_8859-8-E",
        &["iso_8859-8-e", "csiso88598e", "iso-8859-8-e"],
        Kind::Whatwg(encoding_rs::ISO_8859_8),
    ),
    (
        "ISO_8859-8-I",
        &["iso_8859-8-i", "csiso88598i", "iso-8859-8-i"],
        Kind::Whatwg(encoding_rs::ISO_8859_8_I),
    ),
    (
        "ISO_8859-9:1989",
        &[
            "iso_8859-9:1989",
            "iso-ir-148",
            "iso_8859-9",
            "iso-8859-9",
            "latin5",
            "l5",
            "csisolatin5",
        ],
        Kind::Latin5,
    ),
    (
        "ISO-8859-10",
        &[
            "iso-8859-10",
            "iso-ir-157",
            "l6",
            "iso_8859-10:1992",
            "csisolatin6",
            "latin6",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_10),
    ),
    (
        "ISO-8859-13",
        &["iso-8859-13", "csiso885913"],
        Kind::Whatwg(encoding_rs::ISO_8859_13),
    ),
    (
        "ISO-8859-14",
        &[
            "iso-8859-14",
            "iso-ir-199",
            "iso_8859-14:1998",
            "iso_8859-14",
            "latin8",
            "iso-celtic",
            "l8",
            "csiso885914",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_14),
    ),
    (
        "ISO-8859-15",
        &["iso-8859-15", "iso_8859-15", "latin-9", "csiso885915"],
        Kind::Whatwg(encoding_rs::ISO_8859_15),
    ),
    (
        "ISO-8859-16",
        &[
            "iso-8859-16",
            "iso-ir-226",
            "iso_8859-16:2001",
            "iso_8859-16",
            "latin10",
            "l10",
            "csiso885916",
        ],
        Kind::Whatwg(encoding_rs::ISO_8859_16),
    ),
    (
        "KOI8-R",
        &["koi8-r", "cskoi8r"],
        Kind::Whatwg(encoding_rs::KOI8_R),
    ),
    (
        "KOI8-U",
        &["koi8-u", "cskoi8u"],
        Kind::Whatwg(encoding_rs::KOI8_U),
    ),
    (
        "macintosh",
        &["macintosh", "mac", "csmacintosh"],
        Kind::Whatwg(encoding_rs::MACINTOSH),
    ),
    (
        "IBM866",
        &["ibm866", "cp866", "866", "csibm866"],
        Kind::Whatwg(encoding_rs::IBM866),
    ),
    (
        "windows-874",
        &["windows-874", "cswindows874"],
        Kind::Whatwg(encoding_rs::WINDOWS_874),
    ),
    (
        "windows-1250",
        &["windows-1250", "cswindows1250"],
        Kind::Whatwg(encoding_rs::WINDOWS_1250),
    ),
    (
        "windows-1251",
        &["windows-1251", "cswindows1251"],
        Kind::Whatwg(encoding_rs::WINDOWS_1251),
    ),
    (
        "windows-1252",
        &["windows-1252", "cswindows1252"],
        Kind::Whatwg(encoding_rs::WINDOWS_1252),
    ),
    (
        "windows-1253",
        &["windows-1253", "cswindows1253"],
        Kind::Whatwg(encoding_rs::WINDOWS_1253),
    ),
    (
        "windows-1254",
        &["windows-1254", "cswindows1254"],
        Kind::Whatwg(encoding_rs::WINDOWS_1254),
    ),
    (
        "windows-1255",
        &["windows-1255", "cswindows1255"],
        Kind::Whatwg(encoding_rs::WINDOWS_1255),
    ),
    (
        "windows-1256",
        &["windows-1256", "cswindows1256"],
        Kind::Whatwg(encoding_rs::WINDOWS_1256),
    ),
    (
        "windows-1257",
        &["windows-1257", "cswindows1257"],
        Kind::Whatwg(encoding_rs::WINDOWS_1257),
    ),
    (
        "windows-1258",
        &["windows-1258", "cswindows1258"],
        Kind::Whatwg(encoding_rs::WINDOWS_1258),
    ),
    (
        "Extended_UNIX_Code_Packed_Format_for_Japanese",
        &[
            "extended_unix_code_packed_format_for_japanese",
            "cseucpkdfmtjapanese",
            "euc-jp",
        ],
        Kind::Whatwg(encoding_rs::EUC_JP),
    ),
    (
        "ISO-2022-JP",
        &["iso-2022-jp", "csiso2022jp"],
        Kind::Whatwg(encoding_rs::ISO_2022_JP),
    ),
    (
        "Shift_JIS",
        &["shift_jis", "ms_kanji", "csshiftjis"],
        Kind::Whatwg(encoding_rs::SHIFT_JIS),
    ),
    (
        "EUC-KR",
        &["euc-kr", "cseuckr"],
        Kind::Whatwg(encoding_rs::EUC_KR),
    ),
    (
        "GB18030",
        &["gb18030", "csgb18030"],
        Kind::Whatwg(encoding_rs::GB18030),
    ),
    (
        "GBK",
        &["gbk", "cp936", "ms936", "windows-936", "csgbk"],
        Kind::Whatwg(encoding_rs::GBK),
    ),
    ("Big5", &["big5", "csbig5"], Kind::Whatwg(encoding_rs::BIG5)),
];

/// The ISO-8859-9 letters that differ from ISO-8859-1.
const LATIN5: &[(u8, char)] = &[
    (0xD0, 'Ğ'),
    (0xDD, 'İ'),
    (0xDE, 'Ş'),
    (0xF0, 'ğ'),
    (0xFD, 'ı'),
    (0xFE, 'ş'),
];

/// Go's `x/text` leaves the C1 controls out of the WHATWG single-byte
/// tables it is built from, so they neither decode nor encode.
fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// The encoding an IANA name or alias stands for.
pub(super) fn lookup(name: &str) -> Option<Charset> {
    let key = name.trim().to_lowercase();
    TABLE
        .iter()
        .find(|(_, aliases, _)| aliases.contains(&key.as_str()))
        .map(|&(name, _, kind)| Charset { name, kind })
}

impl Charset {
    /// The text's bytes; None when some character has no encoding.
    pub(super) fn encode(&self, text: &str) -> Option<Vec<u8>> {
        match self.kind {
            Kind::Utf8 => Some(text.as_bytes().to_vec()),
            Kind::Utf16 { little, bom } => {
                let mut out = Vec::with_capacity(text.len() * 2 + 2);
                if bom {
                    out.extend_from_slice(&[0xFE, 0xFF]);
                }
                for unit in text.encode_utf16() {
                    let b = if little {
                        unit.to_le_bytes()
                    } else {
                        unit.to_be_bytes()
                    };
                    out.extend_from_slice(&b);
                }
                Some(out)
            }
            Kind::Ascii => text.is_ascii().then(|| text.as_bytes().to_vec()),
            Kind::Latin1 => text.chars().map(|c| u8::try_from(c as u32).ok()).collect(),
            Kind::Latin5 => text
                .chars()
                .map(|c| match LATIN5.iter().find(|(_, l)| *l == c) {
                    Some((b, _)) => Some(*b),
                    None if LATIN5.iter().any(|(b, _)| *b as u32 == c as u32) => None,
                    None => u8::try_from(c as u32).ok(),
                })
                .collect(),
            Kind::Whatwg(enc) => {
                if enc.is_single_byte() && text.chars().any(is_c1) {
                    return None;
                }
                let (bytes, _, unmappable) = enc.encode(text);
                (!unmappable).then(|| bytes.into_owned())
            }
        }
    }

    /// The text of the bytes, with U+FFFD where they mean nothing (as Go's
    /// decoders do); None when the decoder fails outright.
    pub(super) fn decode(&self, bytes: &[u8]) -> Option<String> {
        match self.kind {
            Kind::Utf8 => Some(String::from_utf8_lossy(bytes).into_owned()),
            Kind::Utf16 { little, bom } => {
                let (little, body) = match (bom, bytes) {
                    (true, [0xFE, 0xFF, rest @ ..]) => (false, rest),
                    (true, [0xFF, 0xFE, rest @ ..]) => (true, rest),
                    _ => (little, bytes),
                };
                let units = body.chunks(2).map(|c| match c {
                    [a, b] if little => u16::from_le_bytes([*a, *b]),
                    [a, b] => u16::from_be_bytes([*a, *b]),
                    // An odd trailing byte decodes as U+FFFD.
                    _ => 0xFFFD,
                });
                Some(
                    char::decode_utf16(units)
                        .map(|c| c.unwrap_or('\u{fffd}'))
                        .collect(),
                )
            }
            Kind::Ascii => Some(
                bytes
                    .iter()
                    .map(|&b| if b < 0x80 { b as char } else { '\u{fffd}' })
                    .collect(),
            ),
            Kind::Latin1 => Some(bytes.iter().map(|&b| b as char).collect()),
            Kind::Latin5 => Some(
                bytes
                    .iter()
                    .map(|&b| {
                        LATIN5
                            .iter()
                            .find(|(x, _)| *x == b)
                            .map_or(b as char, |(_, c)| *c)
                    })
                    .collect(),
            ),
            Kind::Whatwg(enc) => {
                let text = enc.decode_without_bom_handling(bytes).0;
                if enc.is_single_byte() {
                    Some(
                        text.chars()
                            .map(|c| if is_c1(c) { '\u{fffd}' } else { c })
                            .collect(),
                    )
                } else {
                    Some(text.into_owned())
                }
            }
        }
    }
}
