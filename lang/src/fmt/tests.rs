//! The golden corpus (`tests/fixtures/fmt`: each `NAME.tf` with the
//! `NAME.tf.golden` Terraform v1.11.4's `terraform fmt -` made of it) and
//! unit tests of the parts.

use super::format;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fmt")
}

/// How a directory of golden pairs fared.
struct Outcome {
    cases: usize,
    matched: usize,
    /// One report per failing case.
    failures: Vec<String>,
}

/// Formats every `*.tf` of `dir` and compares with its `.golden`; also
/// checks that every golden is a fixed point. An input with a `.error`
/// file (what Terraform said) instead of a golden must fail to format.
fn check_dir(dir: &Path) -> Outcome {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf"))
        .collect();
    inputs.sort();
    let mut out = Outcome {
        cases: 0,
        matched: 0,
        failures: Vec::new(),
    };
    for input in inputs {
        out.cases += 1;
        match check_case(&input) {
            Ok(()) => out.matched += 1,
            Err(e) => out.failures.push(e),
        }
    }
    out
}

/// One golden pair (or input and `.error`); Err: what is wrong.
fn check_case(input: &Path) -> Result<(), String> {
    let name = input
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let src = std::fs::read_to_string(input).map_err(|e| format!("{name}: {e}"))?;
    let golden_path = input.with_extension("tf.golden");
    let Ok(golden) = std::fs::read_to_string(&golden_path) else {
        if input.with_extension("tf.error").exists() {
            return match format(&src) {
                Err(_) => Ok(()),
                Ok(_) => Err(format!("{name}: Terraform rejects it, we formatted it")),
            };
        }
        return Err(format!("{name}: no {}", golden_path.display()));
    };
    match format(&src) {
        Ok(got) if got == golden => {}
        Ok(got) => {
            return Err(format!(
                "{name}: differs from its golden\n{}",
                diff(&golden, &got)
            ));
        }
        Err(e) => return Err(format!("{name}: error {e}")),
    }
    match format(&golden) {
        Ok(again) if again == golden => Ok(()),
        Ok(again) => Err(format!(
            "{name}: the golden is not a fixed point\n{}",
            diff(&golden, &again)
        )),
        Err(e) => Err(format!("{name}: the golden does not parse: {e}")),
    }
}

/// The first differing lines of `want` and `got` with a little context:
/// `-` the expected line, `+` ours, line endings shown.
fn diff(want: &str, got: &str) -> String {
    let w: Vec<&str> = want.split_inclusive('\n').collect();
    let g: Vec<&str> = got.split_inclusive('\n').collect();
    let first = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(0);
    let mut s = String::new();
    for (i, l) in w
        .iter()
        .enumerate()
        .take(first)
        .skip(first.saturating_sub(3))
    {
        let _ = writeln!(s, "   {:4}  {l:?}", i + 1);
    }
    for i in first..first + 6 {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => {
                let _ = writeln!(s, "   {:4}  {a:?}", i + 1);
            }
            (a, b) => {
                if let Some(a) = a {
                    let _ = writeln!(s, "-  {:4}  {a:?}", i + 1);
                }
                if let Some(b) = b {
                    let _ = writeln!(s, "+  {:4}  {b:?}", i + 1);
                }
            }
        }
    }
    s
}

fn assert_all_match(dir: &Path) {
    let o = check_dir(dir);
    for f in &o.failures {
        eprintln!("FAIL {f}");
    }
    eprintln!(
        "fmt golden: {} of {} cases match ({})",
        o.matched,
        o.cases,
        dir.display()
    );
    assert!(o.cases > 0, "no cases in {}", dir.display());
    assert!(
        o.failures.is_empty(),
        "{} of {} golden cases match; failures above",
        o.matched,
        o.cases
    );
}

#[test]
fn golden_corpus_matches_terraform_fmt() {
    assert_all_match(&fixture_dir());
}

/// The same check on another directory of `NAME.tf` / `NAME.tf.golden`
/// pairs: `FLEETFORM_FMT_GOLDEN_DIR=/path cargo test -p fleetform-lang
/// fmt::tests::golden_dir_from_env -- --ignored --nocapture`.
#[test]
#[ignore = "needs FLEETFORM_FMT_GOLDEN_DIR"]
fn golden_dir_from_env() {
    let dir = std::env::var("FLEETFORM_FMT_GOLDEN_DIR").expect("FLEETFORM_FMT_GOLDEN_DIR");
    assert_all_match(Path::new(&dir));
}

// ---- unit tests: what the golden corpus cannot hold ----

/// Inputs Terraform v1.11.4's `terraform fmt` rejects (each checked with
/// it): we must not format them either.
#[test]
fn files_terraform_rejects_are_errors() {
    let cases = [
        "a = 1 b = 2\n",
        "b { a = 1 b = 2 }\n",
        "b { a = 1, }\n",
        "b { c {} }\n",
        "a = {a = 1 b = 2}\n",
        "a = [1 2]\n",
        "a = foo(1 2)\n",
        "a = 'x'\n",
        "a = \"x\n",
        "a = x[\n",
        "b \"${x}\" {}\n",
        "a = 1.\n",
        "a = .5\n",
        "a = 1e\n",
        "a = x.1.2\n",
        "a = [for x in y: x...]\n",
        "a = foo(x..., y)\n",
        "a = x ? y\n",
        "a = \"%{if x}a\"\n",
        "a = \"%{endif}\"\n",
        "a = <<EOT\nx\n",
        "a = -\n",
        "a = b..c\n",
        "a = x.\n",
        "a = x\n\"a\" = 1\n",
        "b {\na = 1 }\n",
        "b { a = 1\n}\n",
        "b {\n}\nb\n{\n}\n",
        "a = x.*.*\n",
        "1 = 1\n",
        "a = 0x10\n",
        "a = true\na = false\n",
        "a = x.-1\n",
        "a = foo::bar\n",
        "a = (1, 2)\n",
        "a = ()\n",
        "a = foo(,)\n",
        "a = [,]\n",
        "a = {,}\n",
        "a = { a = 1,, }\n",
        "a = 1 +\n2\n",
        "a = x ?\ny : z\n",
        "a = {\nb = 1 +\n2 }\n",
        "a = {\nb =\n2 }\n",
        "a = {\nb\n= 2 }\n",
        "a = !\nx\n",
        "b \"x\"\n{\n}\n",
        "a = <<EOT\nx\nEOT b\n",
        "a = <<EOT\nx\nEOT\n, b\n",
        "a = [<<EOT\nx\nEOT , 1]\n",
        "a = <<EOT\nx\nEOT",
        "a = <<EOT x\nEOT\n",
        "a = \"\\u00\"\n",
        "a = \"%{if x}a%{else}b%{else}c%{endif}\"\n",
        "a = 1\rb = 2\n",
        "a = \"\\$\"\n",
        "a = 1 +\n",
        "a = \"${}\"\n",
        "a = 1 /* x\n",
        "}\n",
        "a = 1\n}\n",
        "b {\n",
        "a = \"%{for x in y}a\"\n",
        "a = \"%{for x y}a%{endfor}\"\n",
        "a = \"%{bogus}\"\n",
        "a = [for x in y]\n",
        "a = {for x in y: x}\n",
        "a = x[*\n",
        "a = a ? b : c : d\n",
        "a = 1 = 2\n",
        "a = ${x}\n",
        "b \"a\" c \"d\" e\n",
        "a = \"x\" \"y\"\n",
        "a = foo(x)(y)\n",
        "a = x..\n",
        "a = x[\n*]\n",
        "a = x[*\n]\n",
        "a = {\nb = x[\n*] }\n",
        "a = x.\n*\n",
        "a = [for]\n",
        "a = [for, 1]\n",
        "a = {for = 1}\n",
        "a = {\nfor = 1\n}\n",
        "a = x.*.a.*\n",
        "a = x.*.0.*\n",
    ];
    let accepted: Vec<&str> = cases
        .iter()
        .copied()
        .filter(|c| format(c).is_ok())
        .collect();
    assert!(
        accepted.is_empty(),
        "formatted, though Terraform rejects them: {accepted:#?}"
    );
}

/// Inputs close to the ones above that Terraform accepts.
#[test]
fn line_breaks_where_terraform_allows_them() {
    for c in [
        "a = (x[\n*])\n",
        "a = (x[*\n])\n",
        "a = [x[\n*]]\n",
        "a = (x.\n*)\n",
        "a = x[\n0]\n",
        "a = x[0\n]\n",
        "a = {\nfor k, v in x :\nk => v }\n",
        "a = \"${1 +\n2}\"\n",
        "a = [<<EOT\nx\nEOT\n, 1]\n",
        "a = {\"for\" = 1, if = 2, in = 3}\n",
        "a = [1, for]\n",
        "a = [(for)]\n",
        "a = x.*[0].*\n",
        "a = x[*].a.*\n",
        "a = x.*[*].*\n",
    ] {
        assert!(format(c).is_ok(), "{c:?}: {:?}", format(c));
    }
}

#[test]
fn errors_name_line_and_column() {
    let e = format("locals {\n  a = 1\n  b = [1 2]\n}\n").unwrap_err();
    assert_eq!((e.line, e.column), (3, 10), "{e}");
    assert_eq!(e.to_string(), format!("line 3, column 10: {}", e.message));
    // Columns count characters, not bytes.
    let e = format("a = \"äö\" b\n").unwrap_err();
    assert_eq!((e.line, e.column), (1, 10), "{e}");
    let e = format("a = 1\nb = \"unterminated\n").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
}

/// Terraform keeps the spaces after the last token when the file has no
/// final line break (and then adds one), but removes trailing spaces
/// before a line break: so its output for such a file is not a fixed
/// point, and cannot be a golden. We do as it does (observed with
/// v1.11.4).
#[test]
fn spaces_at_the_end_of_a_file_without_a_final_line_break() {
    assert_eq!(
        format("locals {\n  a = 1\n}   ").unwrap(),
        "locals {\n  a = 1\n}   \n"
    );
    assert_eq!(format("a = 1\n\n   ").unwrap(), "a = 1\n\n   \n");
    assert_eq!(format("   ").unwrap(), "   \n");
    assert_eq!(format("a=1 # c").unwrap(), "a = 1 # c\n");
    // A block comment the end of the file follows is a trailing comment,
    // lined up with the line comments above it; once a line break follows
    // it, it is not.
    assert_eq!(
        format("a = max(1, # one\n2) /* end */").unwrap(),
        "a = max(1, # one\n2)         /* end */\n"
    );
    assert_eq!(
        format("a = max(1, # one\n2)         /* end */\n").unwrap(),
        "a = max(1, # one\n2) /* end */\n"
    );
    // The second run, as Terraform's, trims them.
    assert_eq!(
        format("locals {\n  a = 1\n}   \n").unwrap(),
        "locals {\n  a = 1\n}\n"
    );
}

/// An interpolation-only value whose expression is itself an
/// interpolation-only template is unwrapped once per run, as Terraform
/// does (so its output is not a fixed point either).
#[test]
fn nested_interpolation_only_values_unwrap_one_level_per_run() {
    let once = format("a = \"${\"${x}\"}\"\n").unwrap();
    assert_eq!(once, "a = \"${x}\"\n");
    assert_eq!(format(&once).unwrap(), "a = x\n");
}

/// Deliberately not as Terraform v1.11.4: it drops a block label whose
/// text holds `$` or `%` (`b "a$b" {` becomes `b {`), which changes the
/// configuration's meaning. Such a label stays as written; the others are
/// written anew as Terraform does.
#[test]
fn labels_with_dollar_or_percent_are_kept() {
    assert_eq!(
        format("b \"a$b\" \"c%d\" \"$${x}\" x \"\\u0041\" {\n}\n").unwrap(),
        "b \"a$b\" \"c%d\" \"$${x}\" \"x\" \"A\" {\n}\n"
    );
}

#[test]
fn empty_and_blank_inputs() {
    assert_eq!(format("").unwrap(), "\n");
    assert_eq!(format("\n").unwrap(), "\n");
    assert_eq!(format("\n\n").unwrap(), "\n\n");
    assert_eq!(format("\u{feff}").unwrap(), "\n");
}

/// Deep nesting is an error, not a stack overflow (the limit is far above
/// real configurations).
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let ok = format!("a = {}1{}\n", "[".repeat(150), "]".repeat(150));
    assert!(format(&ok).is_ok());
    for src in [
        format!("a = {}1{}\n", "[".repeat(5000), "]".repeat(5000)),
        format!("a = {}1\n", "-".repeat(5000)),
        format!("a = {}1{}\n", "\"${".repeat(3000), "}\"".repeat(3000)),
    ] {
        let e = format(&src).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{e}");
    }
}

/// Names are Unicode identifiers, as in HCL, and widths are grapheme
/// clusters (output checked with Terraform v1.11.4).
#[test]
fn unicode_names() {
    assert_eq!(
        format("e\u{301}x = 1\n\u{212a}x = 2\na\u{b7}b = 3\n").unwrap(),
        "e\u{301}x  = 1\n\u{212a}x  = 2\na\u{b7}b = 3\n"
    );
}

/// Deliberately not as Terraform v1.11.4: it deletes a `true`, `false` or
/// `null` index (`x[false]` becomes `x[]`, which does not even parse).
/// We keep it.
#[test]
fn keyword_indexes_are_kept() {
    assert_eq!(
        format("a = x[false]\nb = x[ null ].y\nc = x[/* c */ true]\n").unwrap(),
        "a = x[false]\nb = x[null].y\nc = x[/* c */ true]\n"
    );
}

/// The layout changes whitespace only: the formatted file has exactly the
/// tokens (text and line breaks included) of the input after the
/// rewrites, for every input of the corpus, but for the line break added
/// at the end.
#[test]
fn layout_changes_only_whitespace() {
    use super::{lexer, parser, rewrite};
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("fixture directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty());
    // The tokens without the final line break (a newline token, or the one
    // ending a last line comment).
    let keys = |mut tokens: Vec<lexer::Token>| {
        if tokens
            .last()
            .is_some_and(|t| t.kind == lexer::Kind::Newline)
        {
            tokens.pop();
        }
        if let Some(t) = tokens.last_mut()
            && t.kind == lexer::Kind::LineComment
        {
            t.text = t.text.trim_end_matches(['\r', '\n']).to_string();
        }
        tokens
            .into_iter()
            .map(|t| (t.kind, t.text))
            .collect::<Vec<_>>()
    };
    for input in inputs {
        let src = std::fs::read_to_string(&input).expect("input is UTF-8");
        let src = src.strip_prefix('\u{feff}').unwrap_or(&src);
        let lexed = lexer::lex(src).expect("the input lexes");
        let structure = parser::parse(src, &lexed.tokens).expect("the input parses");
        let want = keys(rewrite::apply(lexed.tokens, &structure));
        let out = format(src).expect("the input formats");
        let got = keys(lexer::lex(&out).expect("the output lexes").tokens);
        assert_eq!(got, want, "{}", input.display());
    }
}
