//! Differential test of expressions against Terraform 1.11: a seeded
//! generator (`fleetform_tests::exprgen`) writes expressions as root module
//! outputs, both `terraform apply` and `fleetform apply` evaluate them, and
//! every output's value, type and sensitivity (from `output -json`), and
//! for failing outputs which ones fail and their error summary and detail,
//! must agree (`fleetform_tests::exprdiff`).
//!
//! Unknown values are not covered: a configuration without resources has
//! none, and with `terraform_data` the outputs would only be unknown in a
//! plan, which `output -json` does not show.
//!
//! The CI form runs seed 1 with 300 cases (about 10 s here).
//! `FLEETFORM_EXPR_CASES` and `FLEETFORM_EXPR_SEED` run more, e.g.
//! `FLEETFORM_EXPR_CASES=1500 FLEETFORM_EXPR_SEED=3`. The known
//! divergences found are counted by reason; `FLEETFORM_EXPR_SHOW_KNOWN=1`
//! prints each of them too.
//!
//! Counts when this was written (Terraform 1.11.4): 6,300 cases run (seed 1
//! with 300; seeds 2 to 5 with 1,500 each), about 30% failing in
//! Terraform. The first runs found some 200 divergences of about 40
//! kinds; those fixed are pinned by unit tests in
//! lang/src/eval/differential_tests.rs, the rest are listed in KNOWN with
//! their reason. Once nulls carried types, seeds 1 to 5 gave 171 known
//! divergences where they had given 191 (three reasons about typed nulls
//! gone), and seed 2 still its one unlisted divergence (`format` refusing
//! a null argument its format does not use), as before.
//!
//! With cty 1.16's typing rules for values of no type yet (per-parameter
//! AllowDynamicType, unification with a dynamic type, `lookup`'s result
//! type, the types of failing conditional results and of unknowns), seeds
//! 1 to 7 (300, then 1,500 each) gave 8/29/24/35/39/23/36 known
//! divergences and none unlisted, where they had given 7/39/30/40/42/24/44
//! and 4 unlisted; the `transpose` reason varies from run to run by a few
//! (Go's map order in Terraform).
//!
//! Terraform prints nothing for null outputs, so the type of a null result
//! (a string for `true ? null : "a"`, in both tools now that nulls carry
//! types) is out of this test's sight; lang's `eval::typed_null_tests` and
//! cli_tf111's `typed_nulls_have_terraforms_types_in_outputs` check it.
//! Some generated objects repeat a key (`{a = 1, a = 2}`: the last wins in
//! both tools).

use fleetform_tests::exprdiff::{Bench, Divergence, Tally};
use fleetform_tests::exprgen::Gen;
use std::process::{Command, Stdio};

/// Whether a known divergence describes a divergence found.
type Describes = fn(&Divergence) -> bool;

/// Divergences known and not fixed yet, each with why it is left: a
/// divergence that none of these describes fails the test.
const KNOWN: &[(&str, Describes)] = &[
    (
        "Terraform's `log` panics on a negative number (a NaN in go-cty)",
        |d| d.terraform.contains("panic in function implementation"),
    ),
    (
        "an infinite number crashes Terraform when it writes its state \
         (StatesMarshalEqual panics); fleetform stores -inf",
        |d| d.aspect == "batch" && d.terraform.contains("StatesMarshalEqual"),
    ),
    (
        "fleetform stops at an expression's first error; Terraform also reports the \
         errors of the other arguments or of a conditional's other parts",
        |d| d.aspect == "summary" && first_errors_only(&d.terraform, &d.fleetform),
    ),
    (
        "which element of an object `transpose` blames first: Go iterates a map in \
         random order",
        |d| {
            d.aspect == "detail"
                && d.expr.contains("transpose(")
                && d.terraform.contains("\"values\" parameter: element \"")
                && d.fleetform.contains("\"values\" parameter: element \"")
        },
    ),
    (
        "`setproduct` of a splat tuple and an empty list: Terraform types its result \
         so `zipmap` refuses the keys; fleetform's is a set",
        |d| d.aspect == "summary" && d.expr.contains("setproduct(") && d.expr.contains("zipmap("),
    ),
    (
        "a typed list whose element type does not convert is blamed on its element \
         type by Terraform (`incorrect list element type`), on its first element by \
         fleetform",
        |d| {
            d.terraform.contains("incorrect list element type")
                && d.fleetform.contains("element 0: ")
        },
    ),
    (
        "division and modulo by zero: Terraform gives an infinity without an error",
        |d| {
            d.aspect == "fails"
                && d.terraform == "no error"
                && (d.fleetform.contains("divide by zero")
                    || d.fleetform.contains("modulo with zero"))
        },
    ),
    (
        "how a conditional's type mismatch names `setproduct`'s result: cty a set of \
         tuples, fleetform a set of dynamic (see the `setproduct` result types below)",
        |d| {
            d.aspect == "detail"
                && d.expr.contains("setproduct(")
                && d.terraform
                    .contains("The true and false result expressions")
        },
    ),
    (
        "go-cty 1.16 converts a tuple of tuples unified with a list (unifyTuplesAsList) \
         from the original tuple rather than the list it made, so Terraform fails \
         (`element types must all match for conversion to list`) where fleetform converts",
        |d| {
            d.aspect == "fails"
                && d.fleetform == "no error"
                && d.terraform
                    .contains("element types must all match for conversion to list")
        },
    ),
    (
        "conversions of nested collections (`tolist`, `tomap` of lists and sets): cty \
         unifies inner collections into lists or sets, fleetform keeps tuples",
        |d| {
            matches!(d.aspect, "type" | "value")
                && (d.expr.contains("tolist([") || d.expr.contains("tomap({"))
        },
    ),
    (
        "`setproduct` of an empty or unknown-element collection: Terraform's result type \
         keeps each argument's element type (a tuple of them), fleetform's is dynamic",
        |d| d.aspect == "type" && d.expr.contains("setproduct("),
    ),
    (
        "checks cty makes on a whole argument before the function runs (all elements \
         of one type, sets refused by coalescelist, keys and searchset of one type): \
         fleetform makes them later or not at all",
        |d| {
            d.terraform
                .contains("all list elements must have the same type")
                || d.terraform
                    .contains("all set elements must have the same type")
                || d.terraform
                    .contains("coalescelist arguments must be lists or tuples")
                || d.terraform
                    .contains("keys and searchset must be of the same type")
        },
    ),
    (
        "a `for` condition that is false for every item: Terraform does not evaluate \
         the value expression's operands' types, fleetform checks them",
        |d| {
            d.aspect == "fails"
                && d.terraform == "no error"
                && d.expr.starts_with("[for ")
                && d.expr.contains(" if ")
        },
    ),
    (
        "a set of dynamic in a message: cty says `set of dynamic`, fleetform `set of any single type`",
        |d| d.aspect == "detail" && d.terraform.contains("set of dynamic"),
    ),
    (
        "YAML syntax errors come from go-yaml and fleetform's own parser, in their own words",
        |d| d.aspect == "detail" && d.terraform.contains("\"yamldecode\" failed"),
    ),
    (
        "an output with several errors: which ones beyond the first each tool \
         reports differs (evaluation order, what is checked before what)",
        |d| d.aspect == "summary" && (d.terraform.contains(" // ") || d.fleetform.contains(" // ")),
    ),
    (
        "a call whose arguments fail twice: Terraform converts every argument before \
         the call, fleetform fails on the one it reads first",
        |d| {
            d.aspect == "summary"
                && d.terraform.starts_with("Invalid function argument")
                && d.fleetform.starts_with("Error in function call")
        },
    ),
    (
        "`try` with every expression failing: Terraform reports `no expression \
         succeeded` with each error, fleetform the last one",
        |d| d.terraform.contains("no expression succeeded"),
    ),
    (
        "a typed list whose elements do not convert fails in Terraform before the call \
         (`incorrect list element type`); fleetform converts lazily",
        |d| d.aspect == "fails" && d.terraform.contains("incorrect list element type"),
    ),
    (
        "arithmetic with fractions: cty computes with 512-bit floats, fleetform's \
         result can differ in the last digits",
        |d| d.aspect == "value" && close_numbers(&d.terraform, &d.fleetform),
    ),
    (
        "an infinite result (`pow` past float range, `log(x, 1)`): Terraform leaves \
         the outputs out of its state, fleetform prints it as a null number",
        |d| {
            d.terraform
                .starts_with("(absent) Terraform: cannot serialize infinity")
        },
    ),
    (
        "`setunion` of sets whose element types do not unify: Terraform refuses them \
         (`given sets must all have compatible element types`), fleetform makes a set of any",
        |d| {
            d.terraform
                .contains("given sets must all have compatible element types")
        },
    ),
    (
        "negative zero: Terraform prints `-0` in a template, fleetform `0`",
        |d| d.aspect == "value" && d.terraform.contains("-0") && d.expr.contains("-0"),
    ),
    (
        "a division by zero beside another error: which one each tool reports",
        |d| d.aspect == "summary" && d.fleetform.contains("divide by zero"),
    ),
];

/// Whether fleetform's errors are some of Terraform's, Terraform having more.
fn first_errors_only(terraform: &str, fleetform: &str) -> bool {
    let t: Vec<String> = terraform.split(" // ").map(normalize).collect();
    let f: Vec<String> = fleetform.split(" // ").map(normalize).collect();
    f.len() < t.len() && f.iter().all(|e| t.contains(e))
}
/// Whether two JSON numbers differ only in their last digits.
fn close_numbers(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= 1e-14 * x.abs().max(y.abs()),
        _ => false,
    }
}

/// An error text as compared between the tools: fleetform's `, but have
/// KIND` after what was required left out.
fn normalize(text: &str) -> String {
    let mut out = text.to_string();
    for kind in [
        "list", "object", "tuple", "map", "set", "bool", "number", "string",
    ] {
        out = out.replace(&format!(", but have {kind}"), "");
    }
    out
}

fn known(d: &Divergence) -> Option<&'static str> {
    KNOWN.iter().find(|(_, is)| is(d)).map(|(why, _)| *why)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn expressions_agree_with_terraform() {
    let present = Command::new("terraform")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !present {
        println!("SKIP: expressions are compared with Terraform, and `terraform` is absent");
        return;
    }
    let cases = env_number("FLEETFORM_EXPR_CASES", 300) as usize;
    let seed = env_number("FLEETFORM_EXPR_SEED", 1);
    let mut generator = Gen::new(seed);
    let bench = Bench::new();
    let mut tally = Tally::default();
    let mut done = 0;
    while done < cases {
        let n = (cases - done).min(150);
        let batch: Vec<_> = (0..n).map(|_| generator.case()).collect();
        bench.run_batch(&batch, &mut tally);
        done += n;
    }
    let (mut new, mut old) = (Vec::new(), 0);
    let mut by_reason: std::collections::BTreeMap<&str, usize> = Default::default();
    for d in &tally.divergences {
        match known(d) {
            Some(why) => {
                old += 1;
                *by_reason.entry(why).or_default() += 1;
            }
            None => new.push(d),
        }
    }
    println!(
        "seed {seed}: {} cases, {} failed in Terraform, {} values compared, {} known divergences, {} new",
        tally.cases,
        tally.failed_in_terraform,
        tally.compared_values,
        old,
        new.len()
    );
    for (why, n) in &by_reason {
        let short: String = why.chars().take(90).collect();
        println!("  {n} known: {short}");
    }
    if std::env::var_os("FLEETFORM_EXPR_SHOW_KNOWN").is_some() {
        for d in tally.divergences.iter().filter(|d| known(d).is_some()) {
            println!(
                "--- known {}\n{}\n  terraform: {}\n  fleetform: {}",
                d.aspect, d.expr, d.terraform, d.fleetform
            );
        }
    }
    for d in &new {
        println!(
            "--- {}\n{}\n  terraform: {}\n  fleetform: {}",
            d.aspect, d.expr, d.terraform, d.fleetform
        );
    }
    assert!(
        tally.compared_values > tally.cases / 3,
        "too few expressions evaluated without error to compare values"
    );
    assert!(
        new.is_empty(),
        "{} new divergences from Terraform (above)",
        new.len()
    );
}
