//! Conditionals and `for` expressions, as HCL evaluates them: both results
//! of a conditional are evaluated and unified to a common type, and a `for`
//! checks its `if` clause once with unknown variables before iterating.

use super::super::convert::{convert, unify};
use super::super::expr::{Expr, ForExpr};
use super::super::ops::{self, err};
use super::{Evaluator, R, item_step};
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::marks::Marks;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

impl Evaluator<'_> {
    /// `c ? a : b`. Both results are evaluated; errors are reported only for
    /// the one taken (none with an unknown condition), and the one taken is
    /// converted to the type both unify to (`true ? 1 : "a"` is `"1"`).
    ///
    /// Like HCL, the result is sensitive when the condition is, or when
    /// either result as a whole is. With an unknown condition, any mark in
    /// either result marks the unknown result.
    pub(super) fn conditional(&mut self, c: &Expr, a: &Expr, b: &Expr) -> R {
        let t = self.eval(a);
        let f = self.eval(b);
        // A result with errors has the type HCL gives it failing (an
        // operator's, a template's string…); it is unified all the same,
        // and its errors are reported only when it is taken.
        let tt = self.branch_type(&t, a);
        let ft = self.branch_type(&f, b);
        let Ok(target) = result_type(&t, &tt, &f, &ft) else {
            let range = SourceRange {
                end: b.range.end,
                ..a.range.clone()
            };
            return Err(err(
                &range,
                "Inconsistent conditional result types",
                &format!(
                    "The true and false result expressions must have consistent types. {}.",
                    describe_mismatch(&tt, &ft)
                ),
            ));
        };
        let (cond, cm) = self.eval(c)?;
        let cm = cm.collapse();
        let top = |r: &R| r.as_ref().map(|(_, m)| m.top()).unwrap_or_default();
        let Some(which) = ops::condition(&cond, &c.range)? else {
            let both_null = matches!((&t, &f), (Ok((Value::Null(_), _)), Ok((Value::Null(_), _))));
            let all = |r: &R| r.as_ref().map(|(_, m)| m.collapse()).unwrap_or_default();
            let marks = cm.with(all(&t)).with(all(&f));
            let ty = target.clone().unwrap_or(Type::Dynamic);
            let v = if both_null {
                Value::null_of(ty)
            } else {
                Value::unknown_of(ty)
            };
            return Ok((v, marks));
        };
        let (taken, other, expr, side) = if which {
            (t, f, a, "true")
        } else {
            (f, t, b, "false")
        };
        let other = top(&other);
        let (v, m) = taken?;
        let v = match &target {
            Some(ty) => convert(v, ty).map_err(|e| {
                err(
                    &expr.range,
                    "Inconsistent conditional result types",
                    &format!("The {side} result value has the wrong type: {e}."),
                )
            })?,
            None => v,
        };
        Ok((v, m.with(cm).with(other)))
    }

    /// Elements keep their marks in the result; a sensitive collection,
    /// key or condition makes the whole result sensitive.
    pub(super) fn for_expr(&mut self, fe: &ForExpr) -> R {
        let (coll, cm) = self.eval(&fe.collection)?;
        if coll.is_null() {
            return Err(err(
                &fe.collection.range,
                "Iteration over null value",
                "A null value cannot be used as the collection in a 'for' expression.",
            ));
        }
        if coll.is_unknown() {
            return Ok((Value::unknown(), cm.collapse()));
        }
        let items = ops::iterate(&coll, &fe.collection.range)?.unwrap_or_default();
        if let Some(c) = &fe.cond {
            self.check_condition(fe, c)?;
        }
        let mut acc = ForResult {
            list: Vec::new(),
            map: BTreeMap::new(),
            marks: cm.top(),
            unknown: false,
        };
        for (k, v) in items {
            let n = self.bound.len();
            let vm = cm.child(&item_step(&k));
            if let Some(kv) = &fe.key_var {
                self.bind(kv, k, Marks::none());
            }
            self.bind(&fe.value_var, v, vm);
            let r = self.for_item(fe, &mut acc);
            self.bound.truncate(n);
            r?;
        }
        Ok(match (acc.unknown, &fe.key_expr) {
            (true, _) => (Value::unknown(), acc.marks.collapse()),
            (false, None) => (Value::tuple(acc.list), acc.marks),
            // Gathered in a tree, whose keys may come in any order, then
            // sorted into the value's map at once.
            (false, Some(_)) => (Value::Map(acc.map.into()), acc.marks),
        })
    }

    /// HCL evaluates the `if` clause once with unknown iteration variables
    /// to catch a clause that can never be valid before iterating.
    fn check_condition(&mut self, fe: &ForExpr, c: &Expr) -> Result<(), Diagnostics> {
        let n = self.bound.len();
        if let Some(kv) = &fe.key_var {
            self.bind(kv, Value::unknown(), Marks::none());
        }
        self.bind(&fe.value_var, Value::unknown(), Marks::none());
        let r = self.eval(c);
        self.bound.truncate(n);
        match r?.0 {
            Value::Null(_) => Err(err(
                &c.range,
                "Condition is null",
                "The value of the 'if' clause must not be null.",
            )),
            Value::Unknown(_) => Ok(()),
            v => ops::as_bool(&v)
                .map(|_| ())
                .map_err(|e| invalid_condition(c, &e)),
        }
    }

    fn for_item(&mut self, fe: &ForExpr, acc: &mut ForResult) -> Result<(), Diagnostics> {
        if let Some(c) = &fe.cond {
            let (cv, cm) = self.eval(c)?;
            acc.marks.extend(cm.collapse());
            let include = match cv {
                Value::Unknown(_) => None,
                // Like HCL, problems after an unknown result are not reported.
                Value::Null(_) if acc.unknown => None,
                Value::Null(_) => {
                    return Err(err(
                        &c.range,
                        "Invalid 'for' condition",
                        "The value of the 'if' clause must not be null.",
                    ));
                }
                v => match ops::as_bool(&v) {
                    Ok(b) => Some(b),
                    Err(_) if acc.unknown => None,
                    Err(e) => return Err(invalid_condition(c, &e)),
                },
            };
            match include {
                None => {
                    acc.unknown = true;
                    return Ok(());
                }
                Some(false) => return Ok(()),
                Some(true) => {}
            }
        }
        let Some(key_expr) = &fe.key_expr else {
            let (v, m) = self.eval(&fe.value_expr)?;
            acc.marks
                .extend(m.nest(PathStep::Index(acc.list.len() as i64)));
            acc.list.push(v);
            return Ok(());
        };
        let (key, km) = self.eval(key_expr)?;
        acc.marks.extend(km.collapse());
        let key = match key {
            Value::Unknown(_) => {
                acc.unknown = true;
                return Ok(());
            }
            _ if acc.unknown => return Ok(()),
            Value::Null(_) => {
                return Err(err(
                    &key_expr.range,
                    "Invalid object key",
                    "Key expression in 'for' expression must not produce a null value.",
                ));
            }
            k => match convert(k, &Type::String) {
                Ok(Value::String(s)) => s,
                Ok(_) => {
                    acc.unknown = true;
                    return Ok(());
                }
                Err(e) => {
                    return Err(err(
                        &key_expr.range,
                        "Invalid object key",
                        &format!("The key expression produced an invalid result: {e}."),
                    ));
                }
            },
        };
        let (value, vm) = self.eval(&fe.value_expr)?;
        let step = PathStep::Key(key.clone());
        match (acc.map.entry(key), fe.grouping) {
            (Entry::Occupied(mut o), true) => {
                if let Value::List(items) = o.get_mut() {
                    let i = PathStep::Index(items.len() as i64);
                    acc.marks.extend(vm.nest(i).nest(step));
                    items.push(value);
                }
            }
            (Entry::Vacant(v), true) => {
                acc.marks.extend(vm.nest(PathStep::Index(0)).nest(step));
                v.insert(Value::tuple(vec![value]));
            }
            (Entry::Occupied(o), false) => {
                return Err(err(
                    &key_expr.range,
                    "Duplicate object key",
                    &format!(
                        "Two different items produced the key {} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.",
                        // Quoted as Go's %q: escapes in the key show.
                        super::super::functions::go_fmt::quote(o.key())
                    ),
                ));
            }
            (Entry::Vacant(v), false) => {
                acc.marks.extend(vm.nest(step));
                v.insert(value);
            }
        }
        Ok(())
    }
}

fn invalid_condition(c: &Expr, why: &str) -> Diagnostics {
    err(
        &c.range,
        "Invalid 'for' condition",
        &format!("The 'if' clause value is invalid: {why}."),
    )
}

/// What a `for` expression has produced so far.
struct ForResult {
    list: Vec<Value>,
    map: BTreeMap<String, Value>,
    marks: Marks,
    unknown: bool,
}

/// The type both results of a conditional convert to, as HCL decides it:
/// a literal `null` (a null of no type) takes the other result's type
/// (`true ? null : "a"` is a null string); a result of no type leaves the
/// type open (None); otherwise the two types unify, or Err when they do not.
pub(super) fn result_type(t: &R, tt: &Type, f: &R, ft: &Type) -> Result<Option<Type>, ()> {
    let untyped_null = |r: &R| matches!(r, Ok((Value::Null(t), _)) if t.is_dynamic());
    if untyped_null(t) {
        Ok(Some(ft.clone()))
    } else if untyped_null(f) {
        Ok(Some(tt.clone()))
    } else if *tt == Type::Dynamic || *ft == Type::Dynamic {
        Ok(None)
    } else {
        unify(&[tt.clone(), ft.clone()]).map(Some).ok_or(())
    }
}

/// Why two result types have no common type, as HCL explains it.
fn describe_mismatch(t: &Type, f: &Type) -> String {
    match (t, f) {
        (Type::Object { attrs: ta, .. }, Type::Object { attrs: fa, .. }) => {
            for (name, aty) in ta {
                match fa.get(name) {
                    None => {
                        return format!(
                            "The 'true' value includes object attribute {name:?}, which is absent in the 'false' value"
                        );
                    }
                    Some(fty) if fty != aty => {
                        return format!(
                            "Type mismatch for object attribute {name:?}: {}",
                            describe_mismatch(aty, fty)
                        );
                    }
                    Some(_) => {}
                }
            }
            if let Some(name) = fa.keys().find(|k| !ta.contains_key(*k)) {
                return format!(
                    "The 'false' value includes object attribute {name:?}, which is absent in the 'true' value"
                );
            }
        }
        (Type::Tuple(te), Type::Tuple(fe)) => {
            if te.len() != fe.len() {
                return format!(
                    "The 'true' tuple has length {}, but the 'false' tuple has length {}",
                    te.len(),
                    fe.len()
                );
            }
            if let Some((i, (a, b))) = te.iter().zip(fe).enumerate().find(|(_, (a, b))| a != b) {
                return format!(
                    "Type mismatch for tuple element {i}: {}",
                    describe_mismatch(a, b)
                );
            }
        }
        _ => {}
    }
    let (tn, fname) = (t.friendly_name(), f.friendly_name());
    if tn == fname {
        return "At least one deeply-nested attribute or element is not compatible across both the 'true' and the 'false' value".into();
    }
    format!("The 'true' value is {tn}, but the 'false' value is {fname}")
}
