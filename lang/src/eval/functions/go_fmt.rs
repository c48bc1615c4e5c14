//! Text conventions of Go's standard library that Terraform's function
//! results inherit: `fmt` number verbs over big numbers (`%e %f %g` as
//! `big.Float` prints them, `%b %d %o %x` as `big.Int` does), `%q` quoting
//! in error messages, and `encoding/json`'s HTML-safe string escapes.

use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::{BigInt, Sign};
use fleetform_shared::value::Number;
use std::cmp::Ordering;

/// The `fmt` flags and sizes of one verb.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Spec {
    pub zero: bool,
    pub sharp: bool,
    pub plus: bool,
    pub minus: bool,
    pub space: bool,
    pub width: Option<usize>,
    pub prec: Option<usize>,
}

impl Spec {
    /// Go's `fmt` clears the zero flag when `-` is present: zeros never pad
    /// on the right for numbers.
    fn zero_pads(&self) -> bool {
        self.zero && !self.minus
    }
}

/// A decimal as Go's `math/big` formats it: value = 0.`digits` × 10^`exp`,
/// `digits` without leading or trailing zeros (empty for zero).
#[derive(Clone, Debug, PartialEq)]
struct Decimal {
    digits: Vec<u8>,
    exp: i64,
}

impl Decimal {
    fn of(d: &BigDecimal) -> Decimal {
        let (int, scale) = d.as_bigint_and_exponent();
        let text = int.magnitude().to_str_radix(10);
        if text == "0" {
            return Decimal {
                digits: Vec::new(),
                exp: 0,
            };
        }
        let mut digits = text.into_bytes();
        let exp = digits.len() as i64 - scale;
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        Decimal { digits, exp }
    }

    /// Rounds to `n` significant digits, half to even as `big.Float` does.
    /// An exact decimal tie is broken the way cty's 512-bit binary float
    /// of the same number would break it: it sits just above or below the
    /// decimal unless the decimal is exactly binary.
    fn round(&mut self, n: i64) {
        if n < 0 || n as usize >= self.digits.len() {
            return;
        }
        let n = n as usize;
        let up = if self.digits[n] == b'5' && n + 1 == self.digits.len() {
            match binary_tie_side(&self.digits, self.exp) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => n > 0 && (self.digits[n - 1] - b'0') % 2 == 1,
            }
        } else {
            self.digits[n] >= b'5'
        };
        if up {
            self.round_up(n);
        } else {
            self.digits.truncate(n);
            while self.digits.last() == Some(&b'0') {
                self.digits.pop();
            }
            if self.digits.is_empty() {
                self.exp = 0;
            }
        }
    }

    fn round_up(&mut self, mut n: usize) {
        while n > 0 && self.digits[n - 1] == b'9' {
            n -= 1;
        }
        if n == 0 {
            self.digits = vec![b'1'];
            self.exp += 1;
            return;
        }
        self.digits[n - 1] += 1;
        self.digits.truncate(n);
    }
}

/// Where cty's 512-bit binary float for the decimal 0.`digits`×10^`exp`
/// lies relative to that decimal (Equal when it is exact).
fn binary_tie_side(digits: &[u8], exp: i64) -> Ordering {
    let scale = digits.len() as i64 - exp;
    if scale <= 0 {
        return Ordering::Equal;
    }
    let d = BigInt::parse_bytes(digits, 10).unwrap_or_default();
    let ten_s = BigInt::from(10u8).pow(scale as u32);
    let five_s = BigInt::from(5u8).pow(scale as u32);
    if (&d % &five_s) == BigInt::from(0u8) {
        // d / 10^s has only powers of two in its denominator.
        return Ordering::Equal;
    }
    // Scale so the quotient has exactly 512 bits, then round half to even.
    let mut e = 512 - (d.bits() as i64 - ten_s.bits() as i64);
    loop {
        let num = if e >= 0 {
            &d << (e as usize)
        } else {
            &d >> ((-e) as usize)
        };
        let (q, r) = (&num / &ten_s, &num % &ten_s);
        let bits = q.bits();
        if bits > 512 {
            e -= 1;
            continue;
        }
        if bits < 512 {
            e += 1;
            continue;
        }
        let twice = &r * 2u8;
        let q = match twice.cmp(&ten_s) {
            Ordering::Greater => q + 1u8,
            Ordering::Equal if q.bit(0) => q + 1u8,
            _ => q,
        };
        return (&q * &ten_s).cmp(&num);
    }
}

/// `%e %E %f %g %G` of a number, as `fmt.Sprintf` prints a `*big.Float`.
pub(super) fn float_verb(verb: char, n: &Number, spec: &Spec) -> String {
    let neg = n.signum() < 0;
    let body = match n.to_decimal() {
        None => "Inf".to_string(),
        Some(d) => {
            let mut dec = Decimal::of(&d);
            let lower = verb.to_ascii_lowercase();
            let upper = verb.is_ascii_uppercase();
            match (lower, spec.prec) {
                ('g', None) => fmt_g_shortest(&dec, upper),
                ('g', Some(p)) => fmt_g(&mut dec, p.max(1), upper),
                ('e', p) => {
                    let p = p.unwrap_or(6);
                    dec.round(1 + p as i64);
                    fmt_e(&dec, p as i64, upper)
                }
                (_, p) => {
                    let p = p.unwrap_or(6);
                    dec.round(dec.exp + p as i64);
                    fmt_f(&dec, p)
                }
            }
        }
    };
    let inf = n.to_decimal().is_none();
    let sign = if neg {
        "-"
    } else if inf {
        if spec.space { " " } else { "+" }
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let pad = spec
        .width
        .unwrap_or(0)
        .saturating_sub(sign.len() + body.len());
    if spec.zero_pads() && !inf {
        format!("{sign}{}{body}", "0".repeat(pad))
    } else if spec.minus {
        format!("{sign}{body}{}", " ".repeat(pad))
    } else {
        format!("{}{sign}{body}", " ".repeat(pad))
    }
}

/// `%g` without a precision: the shortest digits, in `%e` form when the
/// exponent is below -4 or at least 6 (Go's `big.Float.Text('g', -1)`).
pub(super) fn fmt_g_shortest_number(n: &Number) -> String {
    match n.to_decimal() {
        None if n.signum() < 0 => "-Inf".into(),
        None => "+Inf".into(),
        Some(d) => {
            let s = fmt_g_shortest(&Decimal::of(&d), false);
            if n.signum() < 0 { format!("-{s}") } else { s }
        }
    }
}

fn fmt_g_shortest(dec: &Decimal, upper: bool) -> String {
    let prec = dec.digits.len() as i64;
    let exp = dec.exp - 1;
    if !(-4..6).contains(&exp) {
        return fmt_e(dec, prec - 1, upper);
    }
    fmt_f(dec, (prec - dec.exp).max(0) as usize)
}

fn fmt_g(dec: &mut Decimal, prec: usize, upper: bool) -> String {
    dec.round(prec as i64);
    let len = dec.digits.len() as i64;
    let mut prec = prec as i64;
    let mut eprec = prec;
    if eprec > len && len >= dec.exp {
        eprec = len;
    }
    let exp = dec.exp - 1;
    if exp < -4 || exp >= eprec {
        if prec > len {
            prec = len;
        }
        return fmt_e(dec, prec - 1, upper);
    }
    if prec > dec.exp {
        prec = len;
    }
    fmt_f(dec, (prec - dec.exp).max(0) as usize)
}

fn fmt_e(dec: &Decimal, prec: i64, upper: bool) -> String {
    let mut out = String::new();
    out.push(dec.digits.first().map_or('0', |&b| b as char));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec as usize {
            out.push(dec.digits.get(i).map_or('0', |&b| b as char));
        }
    }
    out.push(if upper { 'E' } else { 'e' });
    let exp = if dec.digits.is_empty() {
        0
    } else {
        dec.exp - 1
    };
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.unsigned_abs()));
    out
}

fn fmt_f(dec: &Decimal, prec: usize) -> String {
    let mut out = String::new();
    if dec.exp > 0 {
        for i in 0..dec.exp as usize {
            out.push(dec.digits.get(i).map_or('0', |&b| b as char));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec as i64 {
            let j = dec.exp + i;
            let c = if j >= 0 {
                dec.digits.get(j as usize).map_or('0', |&b| b as char)
            } else {
                '0'
            };
            out.push(c);
        }
    }
    out
}

/// `%b %d %o %x %X` of a whole number, as `fmt.Sprintf` prints a `*big.Int`.
pub(super) fn int_verb(verb: char, n: &BigInt, spec: &Spec) -> String {
    let radix = match verb {
        'b' => 2,
        'o' => 8,
        'x' | 'X' => 16,
        _ => 10,
    };
    let mut digits = n.magnitude().to_str_radix(radix);
    if verb == 'X' {
        digits = digits.to_ascii_uppercase();
    }
    let sign = if n.sign() == Sign::Minus {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let prefix = match (spec.sharp, verb) {
        (true, 'b') => "0b",
        (true, 'o') => "0",
        (true, 'x') => "0x",
        (true, 'X') => "0X",
        _ => "",
    };
    let mut zeros = 0;
    if let Some(p) = spec.prec {
        if digits.len() < p {
            zeros = p - digits.len();
        } else if digits == "0" && p == 0 {
            // A zero precision prints nothing at all for zero.
            return String::new();
        }
    }
    let len = sign.len() + prefix.len() + zeros + digits.len();
    let (mut left, mut right) = (0, 0);
    if let Some(w) = spec.width
        && len < w
    {
        let d = w - len;
        if spec.minus {
            right = d;
        } else if spec.zero && spec.prec.is_none() {
            zeros = d;
        } else {
            left = d;
        }
    }
    format!(
        "{}{sign}{prefix}{}{digits}{}",
        " ".repeat(left),
        "0".repeat(zeros),
        " ".repeat(right)
    )
}

/// A string quoted as Go's `strconv.Quote` (`%q` in Go error messages).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        push_quoted_char(&mut out, c, '"');
    }
    out.push('"');
    out
}

/// A character quoted as Go's `strconv.QuoteRune`.
pub(super) fn quote_rune(c: char) -> String {
    let mut out = String::from("'");
    push_quoted_char(&mut out, c, '\'');
    out.push('\'');
    out
}

fn push_quoted_char(out: &mut String, c: char, quote: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if is_go_printable(c) => out.push(c),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `unicode.IsPrint` approximated: not a control, format, separator
/// (other than the space) or unassigned private-use character.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// JSON text as Go's `encoding/json` writes it, which Terraform's
/// `jsonencode` and `format`'s `%q`/`%#v` inherit: `<`, `>`, `&`, U+2028
/// and U+2029 are escaped. Those characters can only occur inside JSON
/// strings, so rewriting the whole text is safe.
pub(crate) fn html_safe_json(json: String) -> String {
    if !json.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
