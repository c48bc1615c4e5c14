//! The tree-walking evaluator: scope lookups, traversals, templates, `for`
//! expressions and function calls.

use super::Scope;
use super::expr::{Expr, ExprKind, ForExpr, TemplatePart};
use super::functions;
use super::ops::{self, err};
use crate::addr::Resource;
use crate::diag::{Diagnostics, SourceRange};
use crate::value::Value;
use std::collections::BTreeMap;

type R = Result<Value, Diagnostics>;

pub(crate) struct Evaluator<'s> {
    scope: &'s dyn Scope,
    /// Names bound by `for` expressions and directives, innermost last.
    bound: Vec<(String, Value)>,
    /// The current element of enclosing splats, innermost last.
    splat: Vec<Value>,
}

impl<'s> Evaluator<'s> {
    pub(crate) fn new(scope: &'s dyn Scope) -> Evaluator<'s> {
        Evaluator {
            scope,
            bound: Vec::new(),
            splat: Vec::new(),
        }
    }

    fn lookup_bound(&self, name: &str) -> Option<&Value> {
        self.bound
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    pub(crate) fn eval(&mut self, e: &Expr) -> R {
        match &e.kind {
            ExprKind::Literal(v) => Ok(v.clone()),
            ExprKind::Parens(inner) => self.eval(inner),
            ExprKind::Template(parts) => self.template(parts),
            ExprKind::Tuple(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut diags = Diagnostics::new();
                for item in items {
                    match self.eval(item) {
                        Ok(v) => out.push(v),
                        Err(d) => diags.extend(d),
                    }
                }
                if diags.has_errors() {
                    Err(diags)
                } else {
                    Ok(Value::List(out))
                }
            }
            ExprKind::Object(items) => self.object(items),
            ExprKind::Variable(name) => self.variable(name, &e.range),
            ExprKind::GetAttr(inner, name) => {
                if let Some(v) = self.root_reference(inner, name, &e.range) {
                    return v;
                }
                let v = self.eval(inner)?;
                ops::get_attr(&v, name, &e.range)
            }
            ExprKind::Index(inner, key) => {
                let v = self.eval(inner)?;
                let k = self.eval(key)?;
                ops::index(&v, &k, &e.range)
            }
            ExprKind::Splat { source, each } => self.splat(source, each),
            ExprKind::SplatItem => Ok(self.splat.last().cloned().unwrap_or(Value::Null)),
            ExprKind::Call {
                name,
                args,
                expand_final,
            } => self.call(name, args, *expand_final, &e.range),
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner)?;
                ops::unary(*op, v, &e.range)
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                match (a, b) {
                    (Ok(a), Ok(b)) => ops::binary(*op, a, b, &e.range),
                    (Err(mut d), Err(d2)) => {
                        d.extend(d2);
                        Err(d)
                    }
                    (Err(d), _) | (_, Err(d)) => Err(d),
                }
            }
            ExprKind::Conditional(c, a, b) => {
                let cond = self.eval(c)?;
                match ops::to_bool(&cond, &c.range, "Incorrect condition type")? {
                    None => {
                        // Both branches must still be valid.
                        self.eval(a)?;
                        self.eval(b)?;
                        Ok(Value::Unknown)
                    }
                    Some(true) => self.eval(a),
                    Some(false) => self.eval(b),
                }
            }
            ExprKind::For(fe) => self.for_expr(fe, &e.range),
        }
    }

    fn object(&mut self, items: &[(Expr, Expr)]) -> R {
        let mut out = BTreeMap::new();
        let mut unknown_key = false;
        for (k, v) in items {
            let key = self.eval(k)?;
            let value = self.eval(v)?;
            match key {
                Value::Unknown => unknown_key = true,
                Value::Null => {
                    return Err(err(
                        &k.range,
                        "Invalid object key",
                        "Object keys must not be null.",
                    ));
                }
                other => match ops::to_string(&other) {
                    Some(s) => {
                        out.insert(s, value);
                    }
                    None => {
                        return Err(err(
                            &k.range,
                            "Invalid object key",
                            "Object keys must be strings.",
                        ));
                    }
                },
            }
        }
        Ok(if unknown_key {
            Value::Unknown
        } else {
            Value::Map(out)
        })
    }

    fn variable(&self, name: &str, range: &SourceRange) -> R {
        if let Some(v) = self.lookup_bound(name) {
            return Ok(v.clone());
        }
        let detail = match name {
            "var" | "local" | "count" | "each" | "path" | "terraform" | "self" => {
                format!("The \"{name}\" object cannot be accessed directly. Instead, access one of its attributes.")
            }
            "data" => "The \"data\" object must be followed by two attribute names: the data source type and the resource name.".into(),
            "module" => "The \"module\" object cannot be accessed directly. Instead, access one of its attributes.".into(),
            _ => "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.".into(),
        };
        Err(err(range, "Invalid reference", &detail))
    }

    /// `root.attr` (and `data.type.name`) when `root` is not a `for` variable.
    fn root_reference(&mut self, inner: &Expr, attr: &str, range: &SourceRange) -> Option<R> {
        match &inner.kind {
            ExprKind::Variable(root) if self.lookup_bound(root).is_none() && root != "data" => {
                Some(self.lookup_root(root, attr, range))
            }
            ExprKind::GetAttr(data, type_name)
                if matches!(&data.kind, ExprKind::Variable(d) if d == "data")
                    && self.lookup_bound("data").is_none() =>
            {
                let addr = Resource::data(type_name, attr);
                Some(
                    self.scope
                        .resource(&addr)
                        .ok_or_else(|| undeclared_resource(&addr, range)),
                )
            }
            _ => None,
        }
    }

    fn lookup_root(&self, root: &str, attr: &str, range: &SourceRange) -> R {
        let scope = self.scope;
        let missing = |summary: &str, detail: String| err(range, summary, &detail);
        match root {
            "var" => scope.variable(attr).ok_or_else(|| {
                missing(
                    "Reference to undeclared input variable",
                    format!("An input variable with the name \"{attr}\" has not been declared. This variable can be declared with a variable \"{attr}\" {{}} block."),
                )
            }),
            "local" => scope.local(attr).ok_or_else(|| {
                missing(
                    "Reference to undeclared local value",
                    format!("A local value with the name \"{attr}\" has not been declared."),
                )
            }),
            "count" if attr == "index" => scope.count_index().ok_or_else(|| {
                missing(
                    "Reference to \"count\" in non-counted context",
                    "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.".into(),
                )
            }),
            "each" if attr == "key" || attr == "value" => match scope.each() {
                Some((k, v)) => Ok(if attr == "key" { k } else { v }),
                None => Err(missing(
                    "Reference to \"each\" in context without for_each",
                    "The \"each\" object can be used only in \"module\" or \"resource\" blocks, and only when the \"for_each\" argument is set.".into(),
                )),
            },
            "path" => scope.path(attr).ok_or_else(|| {
                missing("Invalid \"path\" attribute", format!("The \"path\" object does not have an attribute named \"{attr}\"."))
            }),
            "terraform" if attr == "workspace" => Ok(scope.workspace().unwrap_or_else(|| Value::from("default"))),
            "count" | "each" | "terraform" | "self" | "module" => Err(missing(
                "Invalid reference",
                format!("The \"{root}\" object does not have an attribute named \"{attr}\"."),
            )),
            _ => {
                let addr = Resource::managed(root, attr);
                scope.resource(&addr).ok_or_else(|| undeclared_resource(&addr, range))
            }
        }
    }

    fn splat(&mut self, source: &Expr, each: &Expr) -> R {
        let items = match self.eval(source)? {
            Value::Unknown => return Ok(Value::Unknown),
            Value::Null => return Ok(Value::List(Vec::new())),
            Value::List(items) => items,
            // A splat on a single value treats it as a one-element list.
            other => vec![other],
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            self.splat.push(item);
            let r = self.eval(each);
            self.splat.pop();
            out.push(r?);
        }
        Ok(Value::List(out))
    }

    fn call(&mut self, name: &str, args: &[Expr], expand_final: bool, range: &SourceRange) -> R {
        match name {
            "try" => {
                let mut last = None;
                for a in args {
                    match self.eval(a) {
                        Ok(v) if v.is_wholly_known() => return Ok(v),
                        Ok(_) => return Ok(Value::Unknown),
                        Err(d) => last = Some(d),
                    }
                }
                return Err(last.unwrap_or_else(|| {
                    err(
                        range,
                        "Invalid function argument",
                        "At least one argument is required.",
                    )
                }));
            }
            "can" => {
                if args.len() != 1 {
                    return Err(err(
                        range,
                        "Invalid function argument",
                        "Function \"can\" expects exactly 1 argument.",
                    ));
                }
                return Ok(match self.eval(&args[0]) {
                    Ok(v) if !v.is_wholly_known() => Value::Unknown,
                    Ok(_) => Value::Bool(true),
                    Err(_) => Value::Bool(false),
                });
            }
            _ => {}
        }
        let mut values = Vec::with_capacity(args.len());
        let mut diags = Diagnostics::new();
        for a in args {
            match self.eval(a) {
                Ok(v) => values.push(v),
                Err(d) => diags.extend(d),
            }
        }
        if diags.has_errors() {
            return Err(diags);
        }
        if expand_final {
            match values.pop() {
                Some(Value::List(items)) => values.extend(items),
                Some(Value::Unknown) => return Ok(Value::Unknown),
                _ => {
                    let r = args.last().map(|a| &a.range).unwrap_or(range);
                    return Err(err(
                        r,
                        "Invalid expanding argument value",
                        "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                    ));
                }
            }
        }
        functions::call(name, values, args, range)
    }

    fn template(&mut self, parts: &[TemplatePart]) -> R {
        // A template that is a single interpolation yields the value itself.
        if let [TemplatePart::Interpolation(e)] = parts {
            return self.eval(e);
        }
        let mut out = String::new();
        let mut unknown = false;
        self.render(parts, &mut out, &mut unknown)?;
        Ok(if unknown {
            Value::Unknown
        } else {
            Value::String(out)
        })
    }

    fn render(
        &mut self,
        parts: &[TemplatePart],
        out: &mut String,
        unknown: &mut bool,
    ) -> Result<(), Diagnostics> {
        for p in parts {
            match p {
                TemplatePart::Literal(s) => out.push_str(s),
                TemplatePart::Interpolation(e) => match self.eval(e)? {
                    Value::Unknown => *unknown = true,
                    Value::Null => {
                        return Err(err(
                            &e.range,
                            "Invalid template interpolation value",
                            "The expression result is null. Cannot include a null value in a string template.",
                        ));
                    }
                    v => match ops::to_string(&v) {
                        Some(s) => out.push_str(&s),
                        None => {
                            return Err(err(
                                &e.range,
                                "Invalid template interpolation value",
                                &format!(
                                    "Cannot include the given value in a string template: string required, but have {}.",
                                    v.kind()
                                ),
                            ));
                        }
                    },
                },
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let c = self.eval(cond)?;
                    match ops::to_bool(&c, &cond.range, "Invalid template if directive")? {
                        None => *unknown = true,
                        Some(true) => self.render(then, out, unknown)?,
                        Some(false) => self.render(otherwise, out, unknown)?,
                    }
                }
                TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                } => {
                    let coll = self.eval(collection)?;
                    let Some(items) = ops::iterate(&coll, &collection.range)? else {
                        *unknown = true;
                        continue;
                    };
                    for (k, v) in items {
                        let n = self.bound.len();
                        if let Some(kv) = key_var {
                            self.bound.push((kv.clone(), k));
                        }
                        self.bound.push((value_var.clone(), v));
                        let r = self.render(body, out, unknown);
                        self.bound.truncate(n);
                        r?;
                    }
                }
            }
        }
        Ok(())
    }

    fn for_expr(&mut self, fe: &ForExpr, range: &SourceRange) -> R {
        let coll = self.eval(&fe.collection)?;
        let Some(items) = ops::iterate(&coll, &fe.collection.range)? else {
            return Ok(Value::Unknown);
        };
        let mut list = Vec::new();
        let mut map: BTreeMap<String, Value> = BTreeMap::new();
        let mut unknown = false;
        for (k, v) in items {
            let n = self.bound.len();
            if let Some(kv) = &fe.key_var {
                self.bound.push((kv.clone(), k));
            }
            self.bound.push((fe.value_var.clone(), v));
            let r = self.for_item(fe, range, &mut list, &mut map, &mut unknown);
            self.bound.truncate(n);
            r?;
        }
        Ok(match (unknown, &fe.key_expr) {
            (true, _) => Value::Unknown,
            (false, None) => Value::List(list),
            (false, Some(_)) => Value::Map(map),
        })
    }

    fn for_item(
        &mut self,
        fe: &ForExpr,
        range: &SourceRange,
        list: &mut Vec<Value>,
        map: &mut BTreeMap<String, Value>,
        unknown: &mut bool,
    ) -> Result<(), Diagnostics> {
        if let Some(c) = &fe.cond {
            let cv = self.eval(c)?;
            match ops::to_bool(&cv, &c.range, "Invalid 'for' condition")? {
                None => {
                    *unknown = true;
                    return Ok(());
                }
                Some(false) => return Ok(()),
                Some(true) => {}
            }
        }
        let Some(key_expr) = &fe.key_expr else {
            list.push(self.eval(&fe.value_expr)?);
            return Ok(());
        };
        let key = self.eval(key_expr)?;
        let value = self.eval(&fe.value_expr)?;
        let key = match key {
            Value::Unknown => {
                *unknown = true;
                return Ok(());
            }
            Value::Null => {
                return Err(err(
                    &key_expr.range,
                    "Invalid object key",
                    "Key expression in 'for' expression must not produce a null value.",
                ));
            }
            k => ops::to_string(&k).ok_or_else(|| {
                err(
                    &key_expr.range,
                    "Invalid object key",
                    "The key expression produced an invalid result: string required.",
                )
            })?,
        };
        use std::collections::btree_map::Entry;
        match (map.entry(key), fe.grouping) {
            (Entry::Occupied(mut o), true) => match o.get_mut() {
                Value::List(items) => items.push(value),
                _ => unreachable!("grouped values are lists"),
            },
            (Entry::Vacant(v), true) => {
                v.insert(Value::List(vec![value]));
            }
            (Entry::Occupied(o), false) => {
                return Err(err(
                    range,
                    "Duplicate object key",
                    &format!(
                        "Two different items produced the key \"{}\" in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.",
                        o.key()
                    ),
                ));
            }
            (Entry::Vacant(v), false) => {
                v.insert(value);
            }
        }
        Ok(())
    }
}

fn undeclared_resource(addr: &Resource, range: &SourceRange) -> Diagnostics {
    let kind = match addr.mode {
        crate::addr::ResourceMode::Data => "data",
        crate::addr::ResourceMode::Managed => "managed",
    };
    let detail = format!(
        "A {kind} resource \"{}\" \"{}\" has not been declared in the root module.",
        addr.type_name, addr.name
    );
    err(range, "Reference to undeclared resource", &detail)
}
