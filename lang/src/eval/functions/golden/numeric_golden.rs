//! `min`, `max`, `abs`, `ceil`, `floor`, `pow`, `log`, `signum`,
//! `parseint`, `sum`.

use super::{Fails, Is, Unknown, check};

#[test]
fn min_max_abs_ceil_floor_pow_signum() {
    check(&[
        (r#"min(12, 54, 3)"#, Is("3")),
        (r#"min([12, 54, 3]...)"#, Is("3")),
        (r#"max(12, 54, 3)"#, Is("54")),
        (r#"max([12, 54, 3]...)"#, Is("54")),
        (r#"max("5", 3)"#, Is("5")),
        (r#"max(1, var.u)"#, Unknown),
        (
            r#"min()"#,
            Fails(r#"Call to function "min" failed: must pass at least one number."#),
        ),
        (
            r#"max([]...)"#,
            Fails(r#"Call to function "max" failed: must pass at least one number."#),
        ),
        (
            r#"min(true)"#,
            Fails(r#"Invalid value for "numbers" parameter: number required."#),
        ),
        (
            r#"min(1, "x")"#,
            Fails(r#"Invalid value for "numbers" parameter: a number is required."#),
        ),
        (
            r#"min(1, null)"#,
            Fails(r#"Invalid value for "numbers" parameter: argument must not be null."#),
        ),
        (r#"abs(23)"#, Is("23")),
        (r#"abs(0)"#, Is("0")),
        (r#"abs(-12.4)"#, Is("12.4")),
        (r#"ceil(5)"#, Is("5")),
        (r#"ceil(5.1)"#, Is("6")),
        (r#"floor(5)"#, Is("5")),
        (r#"floor(4.9)"#, Is("4")),
        (r#"floor(-4.1)"#, Is("-5")),
        (r#"pow(3, 2)"#, Is("9")),
        (r#"pow(4, 0)"#, Is("1")),
        (r#"pow(2, -1)"#, Is("0.5")),
        (r#"signum(-13)"#, Is("-1")),
        (r#"signum(0)"#, Is("0")),
        (r#"signum(344)"#, Is("1")),
        (r#"signum(var.u)"#, Unknown),
    ]);
}

#[test]
fn log() {
    check(&[
        (r#"log(50, 10)"#, Is("1.6989700043360185")),
        (r#"log(16, 2)"#, Is("4")),
        (r#"ceil(log(15, 2))"#, Is("4")),
        (r#"ceil(log(16, 2))"#, Is("4")),
        (r#"ceil(log(17, 2))"#, Is("5")),
        (r#"log(1, 10)"#, Is("0")),
        (r#"log(var.u, 2)"#, Unknown),
        (
            r#"log(-1, 10)"#,
            Fails(r#"Call to function "log" failed: the result is not a number."#),
        ),
        (
            r#"log("x", 2)"#,
            Fails(r#"Invalid value for "num" parameter: a number is required."#),
        ),
    ]);
}

#[test]
fn parseint() {
    check(&[
        (r#"parseint("100", 10)"#, Is("100")),
        (r#"parseint("FF", 16)"#, Is("255")),
        (r#"parseint("ff", 16)"#, Is("255")),
        (r#"parseint("-10", 16)"#, Is("-16")),
        (r#"parseint("+7", 8)"#, Is("7")),
        (r#"parseint("1011111011101111", 2)"#, Is("48879")),
        (r#"parseint("aA", 62)"#, Is("656")),
        (r#"parseint("zZ", 62)"#, Is("2231")),
        (r#"parseint("Zz", 36)"#, Is("1295")),
        (r#"parseint(var.u, 10)"#, Unknown),
        (
            r#"parseint("12", 2)"#,
            Fails(
                r#"Invalid value for "number" parameter: cannot parse "12" as a base 2 integer."#,
            ),
        ),
        (
            r#"parseint("", 10)"#,
            Fails(r#"Invalid value for "number" parameter: cannot parse "" as a base 10 integer."#),
        ),
        (
            r#"parseint("-", 10)"#,
            Fails(
                r#"Invalid value for "number" parameter: cannot parse "-" as a base 10 integer."#,
            ),
        ),
        (
            r#"parseint("1_000", 10)"#,
            Fails(
                r#"Invalid value for "number" parameter: cannot parse "1_000" as a base 10 integer."#,
            ),
        ),
        (
            r#"parseint("0x10", 16)"#,
            Fails(
                r#"Invalid value for "number" parameter: cannot parse "0x10" as a base 16 integer."#,
            ),
        ),
        (
            r#"parseint(10, 10)"#,
            Fails(
                r#"Invalid value for "number" parameter: first argument must be a string, not number."#,
            ),
        ),
        (
            r#"parseint("1", 63)"#,
            Fails(
                r#"Invalid value for "base" parameter: base must be a whole number between 2 and 62 inclusive."#,
            ),
        ),
        (
            r#"parseint("1", 2.5)"#,
            Fails(
                r#"Invalid value for "base" parameter: value must be a whole number, between -9223372036854775808 and 9223372036854775807."#,
            ),
        ),
    ]);
}

#[test]
fn sum() {
    let not_numbers = r#"Invalid value for "list" parameter: argument must be list, set, or tuple of number values."#;
    check(&[
        (r#"sum([10, 13, 6, 4.5])"#, Is("33.5")),
        (r#"sum(["1", 2])"#, Is("3")),
        (r#"sum(toset([1, 1]))"#, Is("1")),
        (r#"sum([1, var.u])"#, Unknown),
        (r#"sum(var.u)"#, Unknown),
        (
            r#"sum([])"#,
            Fails(r#"Invalid value for "list" parameter: cannot sum an empty list."#),
        ),
        (r#"sum([1, null])"#, Fails(not_numbers)),
        (r#"sum([1, "x"])"#, Fails(not_numbers)),
        (r#"sum([true])"#, Fails(not_numbers)),
        (
            r#"sum("a")"#,
            Fails(r#"Invalid value for "list" parameter: cannot sum noniterable."#),
        ),
        (
            r#"sum({a = 1})"#,
            Fails(
                r#"Invalid value for "list" parameter: argument must be list, set, or tuple. Received object."#,
            ),
        ),
    ]);
}
