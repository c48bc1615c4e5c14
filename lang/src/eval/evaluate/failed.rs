//! The types HCL gives expressions it cannot evaluate, and the types of
//! splats over unknown sequences.
//!
//! HCL evaluates an expression to a value even when it reports errors: an
//! operator to an unknown of its result type (a number, a bool), a
//! template to an unknown string, a tuple or object constructor to a
//! structure of what its items gave, a splat whose items fail to an unknown
//! of the type its items would have, most else to an unknown of no type.
//! A conditional unifies both results' types before it looks at the
//! condition, so the type of a branch that fails decides whether
//! `false ? "a" : "text"[*].b` is a type mismatch (it is: a string and a
//! tuple) before the branch's own error would be reported.

use super::super::expr::{BinaryOp, Expr, ExprKind, ForExpr, TemplatePart, UnaryOp};
use super::super::ops;
use super::Evaluator;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::marks::Marks;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

impl Evaluator<'_> {
    /// The type of the value HCL returns beside its errors for `e`, whose
    /// evaluation failed.
    pub(super) fn failed_type(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Parens(inner) => self.failed_type(inner),
            // `"${x}"` is `x` itself; any other template is a string.
            ExprKind::Template(parts) => match parts.as_slice() {
                [TemplatePart::Interpolation(x)] => self.failed_type(x),
                _ => Type::String,
            },
            ExprKind::Unary(UnaryOp::Neg, _) => Type::Number,
            ExprKind::Unary(UnaryOp::Not, _) => Type::Bool,
            ExprKind::Binary(op, ..) => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                    Type::Number
                }
                _ => Type::Bool,
            },
            ExprKind::Tuple(items) => {
                Type::Tuple(items.iter().map(|i| self.type_or_failed(i)).collect())
            }
            ExprKind::Object(items) => self.failed_object_type(items),
            ExprKind::Splat { source, each } => match self.eval(source) {
                Ok((v, _)) => self.splat_type(&v.ty(), each).0,
                Err(_) => Type::Dynamic,
            },
            // Failing with a type mismatch, a conditional is of no type;
            // otherwise of the type its results unify to.
            ExprKind::Conditional(_, a, b) => {
                let (t, f) = (self.eval(a), self.eval(b));
                let tt = self.branch_type(&t, a);
                let ft = self.branch_type(&f, b);
                super::control::result_type(&t, &tt, &f, &ft)
                    .ok()
                    .flatten()
                    .unwrap_or(Type::Dynamic)
            }
            ExprKind::For(fe) => self.failed_for_type(fe),
            // A traversal of a value that itself failed traverses what that
            // value would be (`[1, x.bad][0]` is a number).
            ExprKind::GetAttr(inner, name) => match self.eval(inner) {
                Ok(_) => Type::Dynamic,
                Err(_) => {
                    let v = Value::unknown_of(self.failed_type(inner));
                    ops::get_attr(&v, name, &e.range).map_or(Type::Dynamic, |v| v.ty())
                }
            },
            ExprKind::Index(inner, key) => match (self.eval(inner), self.eval(key)) {
                (Err(_), Ok((k, _))) => {
                    let v = Value::unknown_of(self.failed_type(inner));
                    ops::index(&v, &k, &e.range).map_or(Type::Dynamic, |v| v.ty())
                }
                _ => Type::Dynamic,
            },
            // Function calls (their arguments' errors too), references,
            // and what else fails give an unknown of no type.
            _ => Type::Dynamic,
        }
    }

    /// A conditional's result's type: the value's when it evaluated, else
    /// the type HCL gives it failing.
    pub(super) fn branch_type(&mut self, r: &super::R, e: &Expr) -> Type {
        match r {
            Ok((v, _)) => v.ty(),
            Err(_) => self.failed_type(e),
        }
    }

    fn type_or_failed(&mut self, e: &Expr) -> Type {
        match self.eval(e) {
            Ok((v, _)) => v.ty(),
            Err(_) => self.failed_type(e),
        }
    }

    /// An object constructor: of no type when a key is not a known
    /// string, else an object of its attributes (the last of a repeated
    /// key wins).
    fn failed_object_type(&mut self, items: &[(Expr, Expr)]) -> Type {
        let mut attrs = BTreeMap::new();
        let mut keys_known = true;
        for (k, v) in items {
            let key = self.eval(k).ok().and_then(|(key, _)| match key {
                Value::Null(_) | Value::Unknown(_) => None,
                key => match super::super::convert::convert(key, &Type::String) {
                    Ok(Value::String(s)) => Some(s),
                    _ => None,
                },
            });
            let ty = self.type_or_failed(v);
            match key {
                Some(key) => {
                    attrs.insert(key, ty);
                }
                None => keys_known = false,
            }
        }
        if keys_known {
            Type::Object {
                attrs,
                optional: Default::default(),
            }
        } else {
            Type::Dynamic
        }
    }

    /// The type of a splat's result over a value of type `source` whose
    /// elements are not known (an unknown sequence, or items that failed):
    /// `each` evaluated with an unknown of each element's type, with the
    /// errors that gives. A list or set gives a list, a tuple a tuple;
    /// anything else is taken as a one-element tuple; `dynamic` gives
    /// `dynamic`.
    pub(super) fn splat_type(&mut self, source: &Type, each: &Expr) -> (Type, Diagnostics) {
        let mut diags = Diagnostics::new();
        let mut item_type = |ev: &mut Self, ty: &Type| {
            ev.splat
                .push((Value::unknown_of(ty.clone()), Marks::none()));
            let r = ev.eval(each);
            let ty = ev.branch_type(&r, each);
            ev.splat.pop();
            if let Err(d) = r {
                diags.extend(d);
            }
            ty
        };
        let ty = match source {
            Type::Dynamic => Type::Dynamic,
            Type::List(e) | Type::Set(e) => Type::list(item_type(self, e)),
            Type::Tuple(es) => Type::Tuple(es.iter().map(|e| item_type(self, e)).collect()),
            other => Type::Tuple(vec![item_type(self, other)]),
        };
        (ty, diags)
    }

    /// A `for` expression: of no type when its collection, condition or a
    /// key cannot be used; else a tuple (an object) of what its items gave.
    fn failed_for_type(&mut self, fe: &ForExpr) -> Type {
        let Ok((coll, _)) = self.eval(&fe.collection) else {
            return Type::Dynamic;
        };
        if coll.is_null() || coll.is_unknown() {
            return Type::Dynamic;
        }
        let Ok(Some(items)) = ops::iterate(&coll, &fe.collection.range) else {
            return Type::Dynamic;
        };
        let mut list = Vec::new();
        let mut map: BTreeMap<String, Vec<Type>> = BTreeMap::new();
        for (k, v) in items {
            let n = self.bound.len();
            if let Some(kv) = &fe.key_var {
                self.bind(kv, k, Marks::none());
            }
            self.bind(&fe.value_var, v, Marks::none());
            let item = self.failed_for_item(fe);
            self.bound.truncate(n);
            match item {
                None => return Type::Dynamic,
                Some(None) => {}
                Some(Some((None, ty))) => list.push(ty),
                Some(Some((Some(key), ty))) => map.entry(key).or_default().push(ty),
            }
        }
        if fe.key_expr.is_none() {
            return Type::Tuple(list);
        }
        let attrs = map
            .into_iter()
            .map(|(k, mut tys)| {
                let ty = if fe.grouping {
                    Type::Tuple(tys)
                } else {
                    tys.swap_remove(0)
                };
                (k, ty)
            })
            .collect();
        Type::Object {
            attrs,
            optional: Default::default(),
        }
    }

    /// One item of a failed `for`: None when it makes the whole of no
    /// type, Some(None) when the condition leaves it out, else its key (for
    /// the object form) and its value's type.
    #[allow(clippy::type_complexity)]
    fn failed_for_item(&mut self, fe: &ForExpr) -> Option<Option<(Option<String>, Type)>> {
        if let Some(c) = &fe.cond {
            let include = match self.eval(c) {
                Ok((v, _)) if !v.is_null() && !v.is_unknown() => ops::as_bool(&v).ok()?,
                _ => return None,
            };
            if !include {
                return Some(None);
            }
        }
        let key = match &fe.key_expr {
            None => None,
            Some(k) => match self.eval(k) {
                Ok((Value::Null(_) | Value::Unknown(_), _)) | Err(_) => return None,
                Ok((key, _)) => match super::super::convert::convert(key, &Type::String) {
                    Ok(Value::String(s)) => Some(s),
                    _ => return None,
                },
            },
        };
        Some(Some((key, self.type_or_failed(&fe.value_expr))))
    }
}
