//! fleetform's own expression AST: every node carries the source range it came from.

use fleetform_shared::diag::SourceRange;
use fleetform_shared::value::Value;

/// One expression with the range of source text it was parsed from.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub range: SourceRange,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `null`, `true`, `1.5`, `"plain string"`.
    Literal(Value),
    /// A quoted template or heredoc with interpolations or directives.
    Template(Vec<TemplatePart>),
    /// `[a, b]`.
    Tuple(Vec<Expr>),
    /// `{ k = v, (expr) = v }`; a bare identifier key is a string literal.
    Object(Vec<(Expr, Expr)>),
    /// A root name: `var`, `local`, `null_resource`, or a `for` iterator.
    Variable(String),
    /// `expr.name`.
    GetAttr(Box<Expr>, String),
    /// `expr[key]`.
    Index(Box<Expr>, Box<Expr>),
    /// `source[*].rest`: `each` is evaluated per element, with
    /// [`ExprKind::SplatItem`] standing for the element.
    Splat {
        source: Box<Expr>,
        each: Box<Expr>,
    },
    /// The current element inside a splat's `each` expression.
    SplatItem,
    /// `name(args...)`; `expand_final` for `f(list...)`.
    Call {
        name: String,
        args: Vec<Expr>,
        expand_final: bool,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : otherwise`.
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    For(Box<ForExpr>),
    /// `( expr )`: kept so ranges and keyword detection behave like HCL.
    Parens(Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
}

/// `[for k, v in coll : value if cond]` or `{for k, v in coll : key => value... if cond}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForExpr {
    pub key_var: Option<String>,
    pub value_var: String,
    pub collection: Expr,
    /// Present for the object form.
    pub key_expr: Option<Expr>,
    pub value_expr: Expr,
    pub cond: Option<Expr>,
    /// `...` after the value: group values with equal keys into lists.
    pub grouping: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplatePart {
    Literal(String),
    Interpolation(Expr),
    If {
        cond: Expr,
        then: Vec<TemplatePart>,
        otherwise: Vec<TemplatePart>,
    },
    For {
        key_var: Option<String>,
        value_var: String,
        collection: Expr,
        body: Vec<TemplatePart>,
    },
}

impl Expr {
    pub fn new(kind: ExprKind, range: SourceRange) -> Expr {
        Expr { kind, range }
    }

    /// A literal expression without a source location, for defaults and tests.
    pub fn literal(value: Value) -> Expr {
        Expr {
            kind: ExprKind::Literal(value),
            range: SourceRange::default(),
        }
    }

    /// The single identifier this expression consists of (`string`, `all`),
    /// like HCL's `ExprAsKeyword`.
    pub fn as_keyword(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Variable(name) => Some(name),
            _ => None,
        }
    }

    /// The static traversal this expression is (`a.b[0]["k"]`), as a root name and steps.
    pub fn as_traversal(&self) -> Option<(String, Vec<TraversalStep>)> {
        self.traversal(false)
    }

    /// [`Expr::as_traversal`], where the root may also be one of the
    /// keywords `null`, `true` and `false`, as HCL reads an expression that
    /// must be a static address: `providers = { null = null.two }` names the
    /// `null` provider's configuration `two` (Terraform 1.11 accepts it).
    /// References in expressions never take this form.
    pub fn as_static_address(&self) -> Option<(String, Vec<TraversalStep>)> {
        self.traversal(true)
    }

    fn traversal(&self, keyword_root: bool) -> Option<(String, Vec<TraversalStep>)> {
        match &self.kind {
            ExprKind::Variable(name) => Some((name.clone(), Vec::new())),
            ExprKind::Literal(Value::Null(_)) if keyword_root => Some(("null".into(), Vec::new())),
            ExprKind::Literal(Value::Bool(b)) if keyword_root => Some((b.to_string(), Vec::new())),
            ExprKind::GetAttr(inner, name) => {
                let (root, mut steps) = inner.traversal(keyword_root)?;
                steps.push(TraversalStep::Attr(name.clone()));
                Some((root, steps))
            }
            ExprKind::Index(inner, key) => {
                let (root, mut steps) = inner.traversal(keyword_root)?;
                match &key.kind {
                    ExprKind::Literal(v) => steps.push(TraversalStep::Index(v.clone())),
                    _ => return None,
                }
                Some((root, steps))
            }
            _ => None,
        }
    }

    /// Calls `f` on every direct child expression (template parts included).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Variable(_) | ExprKind::SplatItem => {}
            ExprKind::Template(parts) => parts.iter().for_each(|p| p.for_each_expr(f)),
            ExprKind::Tuple(items) => items.iter().for_each(f),
            ExprKind::Object(items) => items.iter().for_each(|(k, v)| {
                f(k);
                f(v);
            }),
            ExprKind::GetAttr(inner, _) | ExprKind::Unary(_, inner) | ExprKind::Parens(inner) => {
                f(inner)
            }
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                f(a);
                f(b);
            }
            ExprKind::Splat { source, each } => {
                f(source);
                f(each);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(f),
            ExprKind::Conditional(a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
            ExprKind::For(fe) => {
                f(&fe.collection);
                if let Some(k) = &fe.key_expr {
                    f(k);
                }
                f(&fe.value_expr);
                if let Some(c) = &fe.cond {
                    f(c);
                }
            }
        }
    }
}

impl TemplatePart {
    fn for_each_expr<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interpolation(e) => f(e),
            TemplatePart::If {
                cond,
                then,
                otherwise,
            } => {
                f(cond);
                then.iter()
                    .chain(otherwise)
                    .for_each(|p| p.for_each_expr(f));
            }
            TemplatePart::For {
                collection, body, ..
            } => {
                f(collection);
                body.iter().for_each(|p| p.for_each_expr(f));
            }
        }
    }
}

/// One step of a static traversal.
#[derive(Clone, Debug, PartialEq)]
pub enum TraversalStep {
    Attr(String),
    Index(Value),
}
