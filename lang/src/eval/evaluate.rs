//! The tree-walking evaluator: scope lookups, traversals, object
//! constructors and splats; conditionals and `for` expressions are in
//! [`control`], templates in [`template`], function calls in [`super::call`].
//!
//! Every expression evaluates to a value and its sensitivity [`Marks`]:
//! traversals narrow the marks to the element they take, constructors keep
//! each element's marks, and anything computed from a sensitive operand is
//! sensitive as a whole.

mod control;
mod failed;
mod paths;
mod template;

use super::Scope;
use super::expr::{Expr, ExprKind};
use super::ops::{self, err};
use super::references::Reference;
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::marks::Marks;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

pub(super) type R = Result<(Value, Marks), Diagnostics>;

fn plain(v: Value) -> (Value, Marks) {
    (v, Marks::none())
}

pub(crate) struct Evaluator<'s> {
    pub(super) scope: &'s dyn Scope,
    /// Names bound by `for` expressions and directives, innermost last.
    bound: Vec<(String, Value, Marks)>,
    /// The current element of enclosing splats, innermost last.
    splat: Vec<(Value, Marks)>,
}

impl<'s> Evaluator<'s> {
    pub(crate) fn new(scope: &'s dyn Scope) -> Evaluator<'s> {
        Evaluator {
            scope,
            bound: Vec::new(),
            splat: Vec::new(),
        }
    }

    fn is_bound(&self, name: &str) -> bool {
        self.lookup_bound(name).is_some()
    }

    fn lookup_bound(&self, name: &str) -> Option<(&Value, &Marks)> {
        self.bound
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, v, m)| (v, m))
    }

    pub(crate) fn bind(&mut self, name: &str, value: Value, marks: Marks) {
        self.bound.push((name.to_string(), value, marks));
    }

    pub(crate) fn eval(&mut self, e: &Expr) -> R {
        match &e.kind {
            ExprKind::Literal(v) => Ok(plain(v.clone())),
            ExprKind::Parens(inner) => self.eval(inner),
            ExprKind::Template(parts) => self.template(parts),
            ExprKind::Tuple(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut marks = Marks::none();
                let mut diags = Diagnostics::new();
                for (i, item) in items.iter().enumerate() {
                    match self.eval(item) {
                        Ok((v, m)) => {
                            marks.extend(m.nest(PathStep::Index(i as i64)));
                            out.push(v);
                        }
                        Err(d) => diags.extend(d),
                    }
                }
                if diags.has_errors() {
                    Err(diags)
                } else {
                    Ok((Value::tuple(out), marks))
                }
            }
            ExprKind::Object(items) => self.object(items),
            ExprKind::Variable(name) => self.variable(name, &e.range),
            ExprKind::GetAttr(..) | ExprKind::Index(..) if let Some(r) = self.static_path(e) => {
                Ok(r)
            }
            ExprKind::GetAttr(inner, name) => {
                if let Some(v) = self.root_reference(inner, name, &e.range) {
                    return v;
                }
                let (v, m) = self.eval(inner)?;
                let out = ops::get_attr(&v, name, &e.range)?;
                Ok((out, m.child(&PathStep::Key(name.clone()))))
            }
            ExprKind::Index(inner, key) => {
                let (v, m) = self.eval(inner)?;
                let (k, km) = self.eval(key)?;
                let out = ops::index(&v, &k, &e.range)?;
                let marks = match index_step(&v, &k) {
                    Some(step) => m.child(&step),
                    None => m.collapse(),
                };
                Ok((out, marks.with(km.collapse())))
            }
            ExprKind::Splat { source, each } => self.splat(source, each),
            ExprKind::SplatItem => Ok(self
                .splat
                .last()
                .cloned()
                .unwrap_or_else(|| plain(Value::null()))),
            ExprKind::Call {
                name,
                args,
                expand_final,
            } => self.call(name, args, *expand_final, &e.range),
            ExprKind::Unary(op, inner) => {
                let (v, m) = self.eval(inner)?;
                Ok((ops::unary(*op, v, &inner.range, &e.range)?, m.collapse()))
            }
            ExprKind::Binary(op, left, right) => {
                // Both sides are evaluated: Terraform 1.9 does not short-circuit.
                let (a, b) = (self.eval(left), self.eval(right));
                match (a, b) {
                    (Ok((a, am)), Ok((b, bm))) => {
                        let at = ops::Ranges {
                            left: &left.range,
                            right: &right.range,
                            whole: &e.range,
                        };
                        Ok((
                            ops::binary(*op, a, b, at)?,
                            am.collapse().with(bm.collapse()),
                        ))
                    }
                    (Err(mut d), Err(d2)) => {
                        d.extend(d2);
                        Err(d)
                    }
                    (Err(d), _) | (_, Err(d)) => Err(d),
                }
            }
            ExprKind::Conditional(c, a, b) => self.conditional(c, a, b),
            ExprKind::For(fe) => self.for_expr(fe),
        }
    }

    fn object(&mut self, items: &[(Expr, Expr)]) -> R {
        let mut out = fleetform_shared::value::ValueMap::new();
        let mut marks = Marks::none();
        let mut unknown_key = false;
        for (k, v) in items {
            let (key, km) = self.eval(k)?;
            let (value, vm) = self.eval(v)?;
            // A sensitive key makes the object's shape sensitive.
            marks.extend(km.collapse());
            match key {
                Value::Unknown(_) => unknown_key = true,
                Value::Null(_) => {
                    return Err(err(
                        &k.range,
                        "Null value as key",
                        "Can't use a null value as a key.",
                    ));
                }
                other => match super::convert::convert(other, &Type::String) {
                    Ok(Value::String(s)) => {
                        marks.set_child(&PathStep::Key(s.clone()), vm);
                        out.insert(s, value);
                    }
                    Ok(_) => unknown_key = true,
                    Err(e) => {
                        return Err(err(
                            &k.range,
                            "Incorrect key type",
                            &format!("Can't use this value as a key: {e}."),
                        ));
                    }
                },
            }
        }
        Ok(if unknown_key {
            (Value::unknown(), marks.collapse())
        } else {
            (Value::Map(out), marks)
        })
    }

    fn variable(&self, name: &str, range: &SourceRange) -> R {
        if let Some((v, m)) = self.lookup_bound(name) {
            return Ok((v.clone(), m.clone()));
        }
        if name == "self" {
            // `self` alone is the whole object, where there is one.
            return match self.scope.self_value() {
                Some(v) => Ok((v, self.scope.self_marks())),
                None => Err(invalid_self(range)),
            };
        }
        let detail = match name {
            "var" | "local" | "count" | "each" | "path" | "terraform" => {
                format!("The \"{name}\" object cannot be accessed directly. Instead, access one of its attributes.")
            }
            "data" => "The \"data\" object must be followed by two attribute names: the data source type and the resource name.".into(),
            "ephemeral" => "The \"ephemeral\" object must be followed by two attribute names: the ephemeral resource type and the resource name.".into(),
            "module" => "The \"module\" object cannot be accessed directly. Instead, access one of its attributes.".into(),
            _ => "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.".into(),
        };
        Err(err(range, "Invalid reference", &detail))
    }

    /// `root.attr` (and `data.type.name`) when `root` is not a `for` variable.
    fn root_reference(&mut self, inner: &Expr, attr: &str, range: &SourceRange) -> Option<R> {
        match &inner.kind {
            ExprKind::Variable(root)
                if self.lookup_bound(root).is_none() && root != "data" && root != "ephemeral" =>
            {
                Some(self.lookup_root(root, attr, range))
            }
            ExprKind::GetAttr(data, type_name)
                if matches!(&data.kind, ExprKind::Variable(d) if d == "data")
                    && self.lookup_bound("data").is_none() =>
            {
                let addr = Resource::data(type_name, attr);
                Some(self.resource(addr, range))
            }
            ExprKind::GetAttr(root, type_name)
                if matches!(&root.kind, ExprKind::Variable(d) if d == "ephemeral")
                    && self.lookup_bound("ephemeral").is_none() =>
            {
                let addr = Resource::ephemeral(type_name, attr);
                Some(self.resource(addr, range))
            }
            _ => None,
        }
    }

    fn lookup_root(&self, root: &str, attr: &str, range: &SourceRange) -> R {
        let scope = self.scope;
        let missing = |summary: &str, detail: String| err(range, summary, &detail);
        let marked = |v: Value, r: Reference| (v, scope.marks(&r));
        match root {
            "var" => scope
                .variable(attr)
                .map(|v| marked(v, Reference::Variable(attr.to_string())))
                .ok_or_else(|| {
                missing(
                    "Reference to undeclared input variable",
                    format!("An input variable with the name \"{attr}\" has not been declared. This variable can be declared with a variable \"{attr}\" {{}} block."),
                )
            }),
            "local" => scope
                .local(attr)
                .map(|v| marked(v, Reference::Local(attr.to_string())))
                .ok_or_else(|| {
                missing(
                    "Reference to undeclared local value",
                    format!("A local value with the name \"{attr}\" has not been declared."),
                )
            }),
            "count" if attr == "index" => scope.count_index().map(plain).ok_or_else(|| {
                missing(
                    "Reference to \"count\" in non-counted context",
                    "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.".into(),
                )
            }),
            "each" if attr == "key" || attr == "value" => match scope.each() {
                Some((k, _)) if attr == "key" => Ok(plain(k)),
                Some((_, v)) => Ok(marked(v, Reference::EachValue)),
                None => Err(missing(
                    "Reference to \"each\" in context without for_each",
                    "The \"each\" object can be used only in \"module\" or \"resource\" blocks, and only when the \"for_each\" argument is set.".into(),
                )),
            },
            "path" => scope.path(attr).map(plain).ok_or_else(|| {
                missing("Invalid \"path\" attribute", format!("The \"path\" object does not have an attribute named \"{attr}\"."))
            }),
            // Ephemeral: the configuration check keeps it out of anything recorded.
            "terraform" if attr == "applying" => Ok(plain(Value::Bool(scope.env().apply))),
            "terraform" if attr == "workspace" => Ok(plain(scope.workspace().unwrap_or_else(|| Value::from("default")))),
            "module" => scope
                .module_call(attr)
                .map(|v| marked(v, Reference::ModuleCall(attr.to_string())))
                .ok_or_else(|| {
                    missing(
                        "Reference to undeclared module",
                        format!("No module call named \"{attr}\" is declared in this module."),
                    )
                }),
            "self" => match scope.self_value() {
                Some(v) => {
                    let out = ops::get_attr(&v, attr, range)?;
                    Ok((out, scope.self_marks().child(&PathStep::Key(attr.to_string()))))
                }
                None => Err(invalid_self(range)),
            },
            "count" | "each" | "terraform" => Err(missing(
                "Invalid reference",
                format!("The \"{root}\" object does not have an attribute named \"{attr}\"."),
            )),
            _ => self.resource(Resource::managed(root, attr), range),
        }
    }

    fn resource(&self, addr: Resource, range: &SourceRange) -> R {
        let v = self
            .scope
            .resource(&addr)
            .ok_or_else(|| undeclared_resource(&addr, range))?;
        Ok((v, self.scope.marks(&Reference::Resource(addr))))
    }

    fn splat(&mut self, source: &Expr, each: &Expr) -> R {
        let (source, sm) = self.eval(source)?;
        // HCL's splat over a list or set makes a list; over anything else
        // (a tuple, or a single value taken as one) a tuple.
        let from_collection = matches!(&source, Value::List(l)
            if matches!(l.ty(), Some(Type::List(_) | Type::Set(_))));
        let source_type = source.ty();
        let items: Vec<(Value, Marks)> = match source {
            // HCL types the result of a splat over an unknown sequence from
            // its elements' type; over an unknown of another type (which
            // may turn out null, so zero or one items) it cannot.
            Value::Unknown(t) => {
                let ty = match t.get() {
                    Some(ty @ (Type::List(_) | Type::Set(_) | Type::Tuple(_))) => {
                        let (ty, diags) = self.splat_type(&ty.clone(), each);
                        if diags.has_errors() {
                            return Err(diags);
                        }
                        ty
                    }
                    _ => Type::Dynamic,
                };
                return Ok((Value::unknown_of(ty), sm.collapse()));
            }
            Value::Null(_) => return Ok((Value::tuple(Vec::new()), sm.top())),
            Value::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (v, sm.child(&PathStep::Index(i as i64))))
                .collect(),
            // A splat on a single value treats it as a one-element list.
            other => vec![(other, sm.clone())],
        };
        let mut out = Vec::with_capacity(items.len());
        let mut marks = sm.top();
        for (i, item) in items.into_iter().enumerate() {
            self.splat.push(item);
            let r = self.eval(each);
            self.splat.pop();
            let (v, m) = r?;
            marks.extend(m.nest(PathStep::Index(i as i64)));
            out.push(v);
        }
        if from_collection {
            let types: Vec<Type> = out.iter().map(Value::ty).collect();
            // An empty list's items are typed as over an unknown one.
            let elem = if out.is_empty() {
                let (ty, diags) = self.splat_type(&source_type, each);
                if diags.has_errors() {
                    return Err(diags);
                }
                ty.element().cloned()
            } else {
                super::convert::unify_known(&types)
            };
            if let Some(elem) = elem {
                return Ok((Value::typed_list(out, Type::list(elem)), marks));
            }
        }
        Ok((Value::tuple(out), marks))
    }
}

/// The path step of a `for` iteration's key: an index into a list, a key into a map.
fn item_step(key: &Value) -> PathStep {
    match key {
        Value::Number(n) => PathStep::Index(n.as_i64().unwrap_or_default()),
        other => PathStep::Key(ops::to_string(other).unwrap_or_default()),
    }
}

/// The element `key` selects in `v`, as a path step; None when it is unknown.
fn index_step(v: &Value, key: &Value) -> Option<PathStep> {
    match v {
        Value::List(_) => ops::to_number(key)
            .and_then(|n| n.as_i64())
            .map(PathStep::Index),
        Value::Map(_) => ops::to_string(key).map(PathStep::Key),
        _ => None,
    }
}

fn invalid_self(range: &SourceRange) -> Diagnostics {
    err(
        range,
        "Invalid \"self\" reference",
        "The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.",
    )
}

fn undeclared_resource(addr: &Resource, range: &SourceRange) -> Diagnostics {
    let kind = match addr.mode {
        fleetform_shared::addr::ResourceMode::Data => "data",
        fleetform_shared::addr::ResourceMode::Managed => "managed",
        fleetform_shared::addr::ResourceMode::Ephemeral => "ephemeral",
    };
    let detail = format!(
        "A {kind} resource \"{}\" \"{}\" has not been declared in the root module.",
        addr.type_name, addr.name
    );
    err(range, "Reference to undeclared resource", &detail)
}
