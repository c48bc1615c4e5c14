//! Which parts of a function's result are sensitive, given the marks of its
//! arguments. As in Terraform, a function marks its whole result when any
//! part of any argument is sensitive, except the few that only move values
//! around, which keep each element's own marks (`lookup`, `merge`,
//! `reverse`, `slice`, `tolist`, `tomap`), and `length` and `keys`, which are
//! sensitive only when their argument as a whole is: the secret inside an
//! element is neither in the count nor in the keys.
//!
//! `sensitive`, `nonsensitive`, `issensitive`, `try` and `can` see marks
//! themselves and are handled by the evaluator.

use crate::eval::ops::{to_number, to_string};
use fleetform_shared::marks::Marks;
use fleetform_shared::value::{PathStep, Value};

/// The marks of `result`, the value function `name` returned for `args`.
pub(crate) fn result_marks(name: &str, args: &[Value], marks: &[Marks], result: &Value) -> Marks {
    if marks.iter().all(Marks::is_empty) {
        return Marks::none();
    }
    let first = || marks.first().cloned().unwrap_or_default();
    match name {
        "length" | "keys" => first().top(),
        // An unknown result cannot keep marks by element.
        _ if !result.is_wholly_known() => any(marks),
        "lookup" => lookup(args, marks),
        "merge" => merge(args, marks),
        "reverse" => reverse(args, marks),
        "slice" => slice(args, marks),
        "tolist" | "tomap" => first(),
        _ => any(marks),
    }
}

/// The whole result, when any argument has any mark.
fn any(marks: &[Marks]) -> Marks {
    marks
        .iter()
        .fold(Marks::none(), |m, x| m.with(x.collapse()))
}

fn lookup(args: &[Value], marks: &[Marks]) -> Marks {
    let mut out = marks[0].top().with(marks[1].collapse());
    let key = to_string(&args[1]).unwrap_or_default();
    let found = args[0].as_map().is_some_and(|m| m.contains_key(&key));
    if found {
        out.extend(marks[0].child(&PathStep::Key(key)));
    } else if let Some(default) = marks.get(2) {
        out.extend(default.clone());
    }
    out
}

/// Each key keeps the marks it has in the last argument that sets it.
fn merge(args: &[Value], marks: &[Marks]) -> Marks {
    let mut out = Marks::none();
    for (arg, m) in args.iter().zip(marks) {
        if m.is_whole() {
            out.add_whole();
        }
        let inner = m.clone().without_whole();
        for k in arg.as_map().into_iter().flat_map(|m| m.keys()) {
            let step = PathStep::Key(k.to_string());
            out.set_child(&step, inner.child(&step));
        }
    }
    out
}

fn reverse(args: &[Value], marks: &[Marks]) -> Marks {
    let n = match &args[0] {
        Value::List(items) => items.len(),
        _ => return any(marks),
    };
    let inner = marks[0].clone().without_whole();
    let mut out = marks[0].top();
    for i in 0..n {
        let from = PathStep::Index((n - 1 - i) as i64);
        out.extend(inner.child(&from).nest(PathStep::Index(i as i64)));
    }
    out
}

fn slice(args: &[Value], marks: &[Marks]) -> Marks {
    let index = |v: Option<&Value>| v.and_then(to_number).and_then(|n| n.as_i64());
    let (Value::List(_), Some(start), Some(end)) =
        (&args[0], index(args.get(1)), index(args.get(2)))
    else {
        return any(marks);
    };
    let inner = marks[0].clone().without_whole();
    let mut out = marks[0].top().with(any(&marks[1..]));
    for j in 0..(end - start).max(0) {
        let from = PathStep::Index(start + j);
        out.extend(inner.child(&from).nest(PathStep::Index(j)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> PathStep {
        PathStep::Key(k.into())
    }

    #[test]
    fn most_functions_mark_their_whole_result() {
        let arg = Marks::whole().nest(key("a"));
        let r = result_marks(
            "jsonencode",
            &[Value::object([("a", Value::from("x"))])],
            &[arg],
            &Value::from("{}"),
        );
        assert!(r.is_whole());
    }

    #[test]
    fn length_and_keys_see_only_a_wholly_sensitive_argument() {
        let v = Value::object([("a", Value::from("x"))]);
        let element = Marks::whole().nest(key("a"));
        for f in ["length", "keys"] {
            let r = result_marks(
                f,
                std::slice::from_ref(&v),
                std::slice::from_ref(&element),
                &Value::int(1),
            );
            assert!(r.is_empty(), "{f}");
            assert!(
                result_marks(
                    f,
                    std::slice::from_ref(&v),
                    &[Marks::whole()],
                    &Value::int(1)
                )
                .is_whole()
            );
        }
    }

    #[test]
    fn merge_keeps_the_marks_of_the_winning_argument() {
        let a = Value::object([("x", Value::from("1")), ("y", Value::from("2"))]);
        let b = Value::object([("x", Value::from("3"))]);
        let a_marks = Marks::whole()
            .nest(key("x"))
            .with(Marks::whole().nest(key("y")));
        let r = result_marks("merge", &[a, b], &[a_marks, Marks::none()], &Value::null());
        assert_eq!(r, Marks::whole().nest(key("y")));
    }

    #[test]
    fn lookup_narrows_to_the_element_or_takes_the_default_s_marks() {
        let m = Value::object([("a", Value::from("1")), ("b", Value::from("2"))]);
        let marks = [Marks::whole().nest(key("a")), Marks::none(), Marks::whole()];
        let hit = |k: &str| {
            result_marks(
                "lookup",
                &[m.clone(), Value::from(k), Value::from("d")],
                &marks,
                &Value::from("1"),
            )
        };
        assert!(hit("a").is_whole());
        assert!(hit("b").is_empty());
        assert!(hit("c").is_whole(), "the default is sensitive");
    }

    #[test]
    fn reverse_and_slice_move_element_marks_with_their_elements() {
        let list = Value::tuple(vec![Value::int(0), Value::int(1), Value::int(2)]);
        let m = Marks::whole().nest(PathStep::Index(0));
        let r = result_marks(
            "reverse",
            std::slice::from_ref(&list),
            std::slice::from_ref(&m),
            &list,
        );
        assert_eq!(r, Marks::whole().nest(PathStep::Index(2)));
        let args = [list.clone(), Value::int(0), Value::int(2)];
        let r = result_marks(
            "slice",
            &args,
            &[m, Marks::none(), Marks::none()],
            &Value::tuple(vec![]),
        );
        assert_eq!(r, Marks::whole().nest(PathStep::Index(0)));
    }
}
