//! Arithmetic on [`Number`]s, exact like cty's: integers stay integers at
//! any size, decimals add and multiply without rounding, and only a
//! division whose quotient does not terminate is rounded (to
//! [`DIVISION_DIGITS`]). `i64` operands take a fast path that does not
//! allocate; infinities and NaN fall back to `f64` arithmetic.

use super::number::Number;
use bigdecimal::num_bigint::BigInt;
use bigdecimal::{BigDecimal, RoundingMode, Signed, Zero};
use std::num::NonZeroU64;

/// Significant decimal digits a non-terminating quotient is rounded to
/// (half to even).
///
/// cty divides 512-bit binary floats: a quotient is exact to 512 bits,
/// which is 154 decimal digits (10^154 < 2^512 < 10^155), and Terraform
/// prints `1/3` with about that many 3s. We compute in decimal, where a
/// quotient either terminates (and is then kept exactly, like `7/2`) or
/// repeats forever; rounding the repeating ones to the same 154 digits
/// gives the precision cty has without pretending to more.
pub const DIVISION_DIGITS: u64 = 154;

impl Number {
    pub fn add(&self, other: &Number) -> Number {
        if let (Number::Int(a), Number::Int(b)) = (self, other)
            && let Some(r) = a.checked_add(*b)
        {
            return Number::Int(r);
        }
        self.decimal_op(other, |a, b| a + b, |a, b| a + b)
    }

    pub fn sub(&self, other: &Number) -> Number {
        if let (Number::Int(a), Number::Int(b)) = (self, other)
            && let Some(r) = a.checked_sub(*b)
        {
            return Number::Int(r);
        }
        self.decimal_op(other, |a, b| a - b, |a, b| a - b)
    }

    pub fn mul(&self, other: &Number) -> Number {
        if let (Number::Int(a), Number::Int(b)) = (self, other)
            && let Some(r) = a.checked_mul(*b)
        {
            return Number::Int(r);
        }
        self.decimal_op(other, |a, b| a * b, |a, b| a * b)
    }

    /// The quotient, rounded to [`DIVISION_DIGITS`] when it does not
    /// terminate; `None` when dividing by zero.
    pub fn div(&self, other: &Number) -> Option<Number> {
        if other.is_zero() {
            return None;
        }
        if let (Number::Int(a), Number::Int(b)) = (self, other)
            && a.checked_rem(*b) == Some(0)
        {
            return a.checked_div(*b).map(Number::Int);
        }
        Some(self.decimal_op(other, divide, |a, b| a / b))
    }

    /// cty's modulo: `a - b * trunc(a / b)`, so the sign follows `a`;
    /// exact for decimals too. `None` when `other` is zero.
    pub fn rem(&self, other: &Number) -> Option<Number> {
        if other.is_zero() {
            return None;
        }
        if let (Number::Int(a), Number::Int(b)) = (self, other) {
            // i64::MIN % -1 overflows; its remainder is 0 all the same.
            return Some(Number::Int(a.checked_rem(*b).unwrap_or(0)));
        }
        Some(self.decimal_op(other, |a, b| a % b, |a, b| a % b))
    }

    pub fn neg(&self) -> Number {
        match self {
            Number::Int(i) if *i != i64::MIN => Number::Int(-i),
            Number::Float(f) => Number::from_f64(-f),
            _ => self.unary_decimal(|d| -d, |f| -f),
        }
    }

    pub fn abs(&self) -> Number {
        match self {
            Number::Int(i) if *i != i64::MIN => Number::Int(i.abs()),
            Number::Float(f) => Number::from_f64(f.abs()),
            _ => self.unary_decimal(|d| d.abs(), f64::abs),
        }
    }

    /// The greatest integer not above the number.
    pub fn floor(&self) -> Number {
        match self {
            Number::Int(_) => self.clone(),
            _ => self.unary_decimal(|d| d.with_scale_round(0, RoundingMode::Floor), f64::floor),
        }
    }

    /// The least integer not below the number.
    pub fn ceil(&self) -> Number {
        match self {
            Number::Int(_) => self.clone(),
            _ => self.unary_decimal(|d| d.with_scale_round(0, RoundingMode::Ceiling), f64::ceil),
        }
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i64 {
        match self {
            Number::Int(i) => i.signum(),
            Number::Float(f) if *f == 0.0 || f.is_nan() => 0,
            Number::Float(f) => f.signum() as i64,
            Number::Big(b) => {
                if b.decimal().is_negative() {
                    -1
                } else {
                    1
                }
            }
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Number::Int(i) => *i == 0,
            Number::Float(f) => *f == 0.0,
            Number::Big(b) => b.decimal().is_zero(),
        }
    }

    /// Applies `exact` to the decimal values, or `float` when an infinity
    /// or NaN makes decimals meaningless.
    fn decimal_op(
        &self,
        other: &Number,
        exact: impl FnOnce(&BigDecimal, &BigDecimal) -> BigDecimal,
        float: impl FnOnce(f64, f64) -> f64,
    ) -> Number {
        match (self.to_decimal(), other.to_decimal()) {
            (Some(a), Some(b)) => Number::from_decimal(exact(&a, &b)),
            _ => Number::from_f64(float(self.as_f64(), other.as_f64())),
        }
    }

    fn unary_decimal(
        &self,
        exact: impl FnOnce(&BigDecimal) -> BigDecimal,
        float: impl FnOnce(f64) -> f64,
    ) -> Number {
        match self.to_decimal() {
            Some(d) => Number::from_decimal(exact(&d)),
            None => Number::from_f64(float(self.as_f64())),
        }
    }
}

/// `a / b` (b non-zero) exactly when the quotient terminates within
/// [`DIVISION_DIGITS`] digits, else rounded half to even to that many.
fn divide(a: &BigDecimal, b: &BigDecimal) -> BigDecimal {
    let (a_int, a_scale) = a.as_bigint_and_exponent();
    let (b_int, b_scale) = b.as_bigint_and_exponent();
    let digits = |i: &BigInt| i.magnitude().to_string().len() as i64;
    // Scale the dividend so that the integer quotient has more digits than
    // are kept: then its remainder only decides the rounding.
    let shift = (DIVISION_DIGITS as i64 + 1 + digits(&b_int) - digits(&a_int)).max(0);
    let dividend = a_int * BigInt::from(10u8).pow(shift as u32);
    let mut quotient = &dividend / &b_int;
    let mut scale = a_scale - b_scale + shift;
    if !(dividend % &b_int).is_zero() {
        // A sticky digit past the kept ones, so that a quotient just above
        // or below a half never rounds as if it were exactly half.
        quotient = quotient * 10 + if a.sign() == b.sign() { 1 } else { -1 };
        scale += 1;
    }
    let exact = BigDecimal::new(quotient, scale);
    let keep = NonZeroU64::new(DIVISION_DIGITS).expect("non-zero");
    if exact.digits() > DIVISION_DIGITS {
        exact.with_precision_round(keep, RoundingMode::HalfEven)
    } else {
        exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(text: &str) -> Number {
        Number::parse(text).unwrap()
    }

    #[test]
    fn integers_stay_exact_at_any_size() {
        let n = num("99999999999999999999").add(&Number::Int(1));
        assert_eq!(n, num("100000000000000000000"));
        assert_eq!(n.to_string(), "100000000000000000000");
        assert_eq!(
            Number::Int(i64::MAX).add(&Number::Int(1)).to_string(),
            "9223372036854775808"
        );
        assert_eq!(
            Number::Int(i64::MIN).sub(&Number::Int(1)).to_string(),
            "-9223372036854775809"
        );
        assert_eq!(
            num("12345678901234567890")
                .mul(&num("98765432109876543210"))
                .to_string(),
            "1219326311370217952237463801111263526900"
        );
        assert_eq!(
            Number::Int(i64::MIN).neg().to_string(),
            "9223372036854775808"
        );
        assert_eq!(
            Number::Int(i64::MIN).abs().to_string(),
            "9223372036854775808"
        );
        // Back within i64, a result is an Int again.
        assert!(matches!(
            num("9223372036854775808").sub(&Number::Int(1)),
            Number::Int(i64::MAX)
        ));
    }

    #[test]
    fn decimals_are_exact_like_cty() {
        assert_eq!(num("0.1").add(&num("0.2")), num("0.3"));
        assert_eq!(num("0.1").add(&num("0.2")).to_string(), "0.3");
        assert_eq!(
            num("0.1000000000000000000001").add(&num("0.1")).to_string(),
            "0.2000000000000000000001"
        );
        assert_eq!(num("1.1").mul(&num("1.1")).to_string(), "1.21");
        assert_eq!(num("0.3").sub(&num("0.1")), num("0.2"));
    }

    #[test]
    fn division_terminates_exactly_or_rounds_to_the_documented_digits() {
        assert_eq!(
            Number::Int(7).div(&Number::Int(2)),
            Some(Number::Float(3.5))
        );
        assert_eq!(Number::Int(6).div(&Number::Int(3)), Some(Number::Int(2)));
        assert_eq!(Number::Int(1).div(&Number::Int(0)), None);
        let third = Number::Int(1).div(&Number::Int(3)).unwrap();
        assert_eq!(third.to_string(), format!("0.{}", "3".repeat(154)));
        let two_thirds = Number::Int(-2).div(&Number::Int(3)).unwrap();
        assert_eq!(two_thirds.to_string(), format!("-0.{}7", "6".repeat(153)));
        assert_eq!(
            num("100000000000000000000")
                .div(&num("8"))
                .unwrap()
                .to_string(),
            "12500000000000000000"
        );
        assert_eq!(
            Number::Int(i64::MIN)
                .div(&Number::Int(-1))
                .unwrap()
                .to_string(),
            "9223372036854775808"
        );
    }

    #[test]
    fn modulo_follows_the_dividend_sign() {
        assert_eq!(Number::Int(-7).rem(&Number::Int(3)), Some(Number::Int(-1)));
        assert_eq!(
            Number::Int(i64::MIN).rem(&Number::Int(-1)),
            Some(Number::Int(0))
        );
        assert_eq!(num("5.5").rem(&Number::Int(2)), Some(num("1.5")));
        // 10^20 ≡ 2 (mod 7).
        assert_eq!(
            num("100000000000000000001").rem(&Number::Int(7)),
            Some(Number::Int(3))
        );
        assert_eq!(Number::Int(1).rem(&num("0.0")), None);
    }

    #[test]
    fn rounding_and_sign() {
        assert_eq!(num("2.5").floor(), Number::Int(2));
        assert_eq!(num("-2.5").floor(), Number::Int(-3));
        assert_eq!(num("-2.5").ceil(), Number::Int(-2));
        assert_eq!(
            num("12345678901234567890.5").floor().to_string(),
            "12345678901234567890"
        );
        assert_eq!(num("-12345678901234567890123").signum(), -1);
        assert_eq!(num("0.0").signum(), 0);
        assert_eq!(
            num("-0.1000000000000000000001").abs(),
            num("0.1000000000000000000001")
        );
    }

    #[test]
    fn infinities_use_float_arithmetic() {
        let inf = Number::Float(f64::INFINITY);
        assert_eq!(inf.add(&num("1e30")), inf);
        assert_eq!(inf.neg(), Number::Float(f64::NEG_INFINITY));
    }
}
