//! Numbers as cty has them: arbitrary precision, compared by their decimal value.
//!
//! cty keeps numbers as 512-bit `big.Float`s and calls two numbers equal
//! when they print the same shortest decimal text, so what a user (or a
//! provider) sees of a number is its decimal value. [`Number`] stores that
//! decimal value in one of three representations:
//!
//! * [`Number::Int`]: an integer that fits `i64` (the common case, kept
//!   cheap: counts, ports, sizes);
//! * [`Number::Float`]: an `f64` that stands for its shortest round-trip
//!   decimal text (`0.1` is the decimal 0.1, not the binary fraction the
//!   `f64` holds), so decimals of up to 17 digits stay as cheap as floats;
//! * [`Number::Big`]: any other decimal, exact (`bigdecimal`, a decimal
//!   mantissa over `num-bigint`). A decimal type rather than a binary one
//!   because HCL and cty JSON write numbers in decimal and cty's equality
//!   is decimal: `0.1 + 0.2 == 0.3` holds in Terraform and must here.
//!
//! Every value has one canonical representation, the first of the list that
//! holds it exactly ([`Number::from_f64`], [`Number::parse`] and all
//! arithmetic produce it), so the common comparisons stay cheap; equality
//! still compares decimal values, so a hand-built `Float(2.0)` equals
//! `Int(2)`. Arithmetic lives in `number_ops`.

use bigdecimal::num_bigint::BigInt;
use bigdecimal::{BigDecimal, ToPrimitive, Zero};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A number: see the module documentation for the three representations.
///
/// The `Int` and `Float` variants keep the shape older states were written
/// with; `Big` was added after them and serialises as its decimal text.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Number {
    Int(i64),
    Float(f64),
    Big(BigNumber),
}

// Every `Value` embeds a `Number`: it must stay as small as before `Big`.
const _: () = assert!(std::mem::size_of::<Number>() == 16);

/// A decimal that neither `i64` nor (the shortest text of) an `f64` holds.
/// Boxed so that [`Number`], and with it every `Value`, stays two words.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BigNumber(Box<BigDecimal>);

/// Decimal exponents beyond this are refused when parsing: a number is
/// printed without an exponent (as cty prints it), so `1e999999999` would
/// otherwise become a gigabyte of zeros. cty's own limit is far larger, but
/// no configuration or provider has a use for numbers past 10^±100000.
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000;

/// An `f64`'s shortest round-trip text has at most this many significant digits.
const MAX_F64_DIGITS: u64 = 17;

impl Number {
    /// The number an `f64` stands for: its shortest round-trip decimal.
    /// Integral values that fit `i64` become [`Number::Int`]; infinities
    /// (which cty has) and NaN stay floats.
    pub fn from_f64(f: f64) -> Number {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            // Below 2^53 an integral float is exactly its own shortest text.
            return Number::Int(f as i64);
        }
        if f.fract() == 0.0 && f.abs() < 1.0e19 {
            // Its shortest text is an integer, maybe not the float's exact
            // value (2^60 prints as 1152921504606847000) nor within i64.
            if let Ok(i) = format!("{f}").parse::<i64>() {
                return Number::Int(i);
            }
        }
        Number::Float(f)
    }

    /// The canonical number of an exact decimal.
    pub fn from_decimal(d: BigDecimal) -> Number {
        if d.is_integer()
            && let Some(i) = d.to_i64()
        {
            return Number::Int(i);
        }
        let d = d.normalized();
        if let Some(f) = shortest_f64(&d) {
            return Number::Float(f);
        }
        Number::Big(BigNumber(Box::new(d)))
    }

    /// Parses decimal text as cty does (`12`, `-1.5`, `1e3`, `.5`, `5.`,
    /// with any number of digits), exactly. Surrounding whitespace is
    /// ignored; `inf`, `NaN`, hex and digit separators are not numbers.
    pub fn parse(text: &str) -> Option<Number> {
        let text = text.trim();
        if let Ok(i) = text.parse::<i64>() {
            return Some(Number::Int(i));
        }
        if !is_decimal_text(text) {
            return None;
        }
        let d = BigDecimal::from_str(text).ok()?;
        let magnitude = if d.is_zero() {
            0
        } else {
            d.order_of_magnitude()
        };
        if magnitude.abs() > MAX_DECIMAL_EXPONENT {
            return None;
        }
        Some(Number::from_decimal(d))
    }

    /// The nearest `f64` (for functions cty itself computes in floating point).
    pub fn as_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
            Number::Big(b) => b.to_f64(),
        }
    }

    /// The value as an `i64` when it is a whole number that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(*i),
            Number::Float(f) => match Number::from_f64(*f) {
                Number::Int(i) => Some(i),
                _ => None,
            },
            Number::Big(b) => b.0.is_integer().then(|| b.0.to_i64()).flatten(),
        }
    }

    /// True for whole numbers of any size.
    pub fn is_integer(&self) -> bool {
        match self {
            Number::Int(_) => true,
            Number::Float(f) => f.is_finite() && f.fract() == 0.0,
            Number::Big(b) => b.0.is_integer(),
        }
    }

    /// The exact decimal value; `None` for infinities and NaN.
    pub fn to_decimal(&self) -> Option<Cow<'_, BigDecimal>> {
        match self {
            Number::Int(i) => Some(Cow::Owned(BigDecimal::from(*i))),
            Number::Float(f) => f64_decimal(*f).map(Cow::Owned),
            Number::Big(b) => Some(Cow::Borrowed(&b.0)),
        }
    }

    /// Compares decimal values; `None` only when NaN is involved.
    pub fn compare(&self, other: &Number) -> Option<Ordering> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(b)),
            // Shortest texts order like the floats they stand for.
            (Number::Float(a), Number::Float(b)) => a.partial_cmp(b),
            // Up to 2^53 an i64 is exactly an f64, and no other float's
            // shortest text lies between the two.
            (Number::Int(i), Number::Float(f)) if i.unsigned_abs() <= 1 << 53 => {
                (*i as f64).partial_cmp(f)
            }
            (Number::Float(f), Number::Int(i)) if i.unsigned_abs() <= 1 << 53 => {
                f.partial_cmp(&(*i as f64))
            }
            _ => match (self.to_decimal(), other.to_decimal()) {
                (Some(a), Some(b)) => Some(a.cmp(&b)),
                // An infinity or NaN is involved: it orders against any
                // finite number as against zero.
                _ => {
                    let key = |n: &Number| match n {
                        Number::Float(f) if !f.is_finite() => *f,
                        _ => 0.0,
                    };
                    key(self).partial_cmp(&key(other))
                }
            },
        }
    }
}

impl BigNumber {
    fn to_f64(&self) -> f64 {
        decimal_to_f64(&self.0)
    }

    /// The exact decimal.
    pub fn decimal(&self) -> &BigDecimal {
        &self.0
    }
}

/// The nearest `f64` to a decimal, correctly rounded by the standard parser.
pub(crate) fn decimal_to_f64(d: &BigDecimal) -> f64 {
    let (mantissa, scale) = d.as_bigint_and_exponent();
    format!("{mantissa}e{}", -scale).parse().unwrap_or(f64::NAN)
}

/// The decimal a finite `f64` stands for: its shortest round-trip text.
fn f64_decimal(f: f64) -> Option<BigDecimal> {
    if !f.is_finite() {
        return None;
    }
    BigDecimal::from_str(&format!("{f:e}")).ok()
}

/// The `f64` whose shortest text is exactly `d`, if there is one.
fn shortest_f64(d: &BigDecimal) -> Option<f64> {
    if d.digits() > MAX_F64_DIGITS {
        return None;
    }
    let f = decimal_to_f64(d);
    (f64_decimal(f).as_ref() == Some(d)).then_some(f)
}

/// Decimal number syntax: `[+-] digits [. digits] [e [+-] digits]`, where
/// either side of the point may be empty but not both.
fn is_decimal_text(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a == b,
            _ => self.compare(other) == Some(Ordering::Equal),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        self.compare(other)
    }
}

/// Full decimal notation, never an exponent, as cty prints numbers.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
            Number::Big(b) => b.fmt(f),
        }
    }
}

impl fmt::Display for BigNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_plain_string(f)
    }
}

impl fmt::Debug for BigNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BigNumber({self})")
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Number {
        Number::Int(i)
    }
}

impl From<u64> for Number {
    fn from(u: u64) -> Number {
        match i64::try_from(u) {
            Ok(i) => Number::Int(i),
            Err(_) => Number::from_decimal(BigDecimal::from(BigInt::from(u))),
        }
    }
}

impl Serialize for BigNumber {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BigNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BigNumber, D::Error> {
        let text = String::deserialize(d)?;
        if !is_decimal_text(&text) {
            return Err(serde::de::Error::custom(format!("invalid number {text:?}")));
        }
        BigDecimal::from_str(&text)
            .map(|d| BigNumber(Box::new(d.normalized())))
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn num(text: &str) -> Number {
        Number::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn parsing_picks_the_cheapest_exact_representation() {
        assert!(matches!(num("12"), Number::Int(12)));
        assert!(matches!(num("1e3"), Number::Int(1000)));
        assert!(matches!(num("-2.50"), Number::Float(f) if f == -2.5));
        assert!(matches!(num("0.1"), Number::Float(f) if f == 0.1));
        assert!(matches!(num("1e20"), Number::Float(f) if f == 1e20));
        assert!(matches!(num("12345678901234567890123"), Number::Big(_)));
        assert!(matches!(num("0.1000000000000000000001"), Number::Big(_)));
        assert!(matches!(num("18446744073709551615"), Number::Big(_)));
        assert!(matches!(num(".5"), Number::Float(f) if f == 0.5));
        assert!(matches!(num("5."), Number::Int(5)));
        for bad in [
            "", "-", ".", "1e", "e5", "inf", "NaN", "0x10", "1_000", "1.2.3", "--1",
        ] {
            assert_eq!(Number::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Number::parse("1e100001"), None);
    }

    #[test]
    fn big_numbers_print_every_digit_without_exponent() {
        for text in [
            "12345678901234567890123",
            "-12345678901234567890123",
            "0.1000000000000000000001",
            "18446744073709551615",
            "100000000000000000000",
            "0.0000001",
        ] {
            assert_eq!(num(text).to_string(), text);
        }
        assert_eq!(num("1.50e2").to_string(), "150");
        assert_eq!(num("1e-7").to_string(), "0.0000001");
    }

    #[test]
    fn equality_is_by_decimal_value() {
        assert_eq!(Number::from_f64(3.0), Number::Int(3));
        assert_eq!(Number::Float(2.0), Number::Int(2));
        assert_ne!(Number::Float(2.5), Number::Int(2));
        assert_eq!(num("1e20"), num("100000000000000000000.000"));
        assert_ne!(
            num("12345678901234567890123"),
            num("12345678901234567890124")
        );
        // A hand-built big that an f64 or i64 holds still equals them.
        let big = |t: &str| Number::Big(BigNumber(Box::new(BigDecimal::from_str(t).unwrap())));
        assert_eq!(big("7"), Number::Int(7));
        assert_eq!(big("0.25"), Number::Float(0.25));
        // 2^60 as a float stands for its shortest text, 1152921504606847000.
        assert_eq!(Number::from_f64(2f64.powi(60)), num("1152921504606847000"));
    }

    #[test]
    fn ordering_mixes_representations() {
        assert!(num("12345678901234567890123") > Number::Int(i64::MAX));
        assert!(num("-12345678901234567890123") < Number::Int(i64::MIN));
        assert!(num("0.1000000000000000000001") > Number::Float(0.1));
        assert!(Number::Float(f64::INFINITY) > num("1e1000"));
        assert_eq!(Number::Float(f64::NAN).compare(&Number::Int(1)), None);
    }

    #[test]
    fn conversions_to_machine_numbers() {
        assert_eq!(num("18446744073709551615").as_i64(), None);
        assert_eq!(num("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(
            num("12345678901234567890123").as_f64(),
            1.2345678901234568e22
        );
        assert_eq!(Number::from(u64::MAX), num("18446744073709551615"));
        assert!(num("1e30").is_integer());
        assert!(!num("0.1000000000000000000001").is_integer());
    }

    #[test]
    fn serde_keeps_old_shapes_and_adds_big_as_text() {
        let json = |n: &Number| serde_json::to_string(n).unwrap();
        assert_eq!(json(&Number::Int(3)), r#"{"Int":3}"#);
        assert_eq!(json(&Number::Float(2.5)), r#"{"Float":2.5}"#);
        let big = num("-12345678901234567890123.5");
        assert_eq!(json(&big), r#"{"Big":"-12345678901234567890123.5"}"#);
        let back: Number = serde_json::from_str(&json(&big)).unwrap();
        assert_eq!(back, big);
        let packed = rmp_serde::to_vec(&big).unwrap();
        assert_eq!(rmp_serde::from_slice::<Number>(&packed).unwrap(), big);
        let old = rmp_serde::to_vec(&Number::Float(0.5)).unwrap();
        assert_eq!(
            rmp_serde::from_slice::<Number>(&old).unwrap(),
            Number::Float(0.5)
        );
        assert!(serde_json::from_str::<Number>(r#"{"Big":"1_0"}"#).is_err());
    }

    proptest! {
        #[test]
        fn decimal_text_round_trips(int in "-?[0-9]{1,40}", frac in "[0-9]{0,40}") {
            let n = num(&format!("{int}.{frac}"));
            prop_assert_eq!(num(&n.to_string()), n.clone());
            // Canonical: the same value parsed from its own text is the same variant.
            prop_assert_eq!(
                std::mem::discriminant(&num(&n.to_string())),
                std::mem::discriminant(&n)
            );
        }

        #[test]
        fn mixed_comparisons_agree_with_exact_decimals(i in any::<i64>(), f in any::<f64>()) {
            prop_assume!(f.is_finite());
            let (a, b) = (Number::Int(i), Number::Float(f));
            let exact = a.to_decimal().unwrap().cmp(&b.to_decimal().unwrap());
            prop_assert_eq!(a.compare(&b), Some(exact));
            prop_assert_eq!(b.compare(&a), Some(exact.reverse()));
        }

        #[test]
        fn integer_arithmetic_matches_i128(a in any::<i64>(), b in any::<i64>()) {
            let (x, y) = (Number::Int(a), Number::Int(b));
            let wide = |r: i128| num(&r.to_string());
            prop_assert_eq!(x.add(&y), wide(i128::from(a) + i128::from(b)));
            prop_assert_eq!(x.sub(&y), wide(i128::from(a) - i128::from(b)));
            prop_assert_eq!(x.mul(&y), wide(i128::from(a) * i128::from(b)));
            if b != 0 {
                prop_assert_eq!(x.rem(&y), Some(wide(i128::from(a) % i128::from(b))));
            }
        }
    }
}
