//! Lowering of hcl-edit expressions into [`Expr`], resolving byte spans into source ranges.

use super::expr::{BinaryOp, Expr, ExprKind, ForExpr, TemplatePart, UnaryOp};
use fleetform_shared::diag::{Diagnostic, Diagnostics, LineIndex, SourceRange};
use fleetform_shared::value::{Number, Value};
use hcl_edit::Span;
use hcl_edit::expr::{BinaryOperator, Expression, ObjectKey, TraversalOperator, UnaryOperator};
use hcl_edit::template::{Directive, Element, Template};
use std::ops::Range;

/// How far a `~` strip marker reaches. HCL trims only the one literal
/// token next to the marker, and its scanner cuts a heredoc or a template
/// file into a token per line (each ending with its newline), while a
/// quoted string's text between two `${`/`%{` is a single token. So
/// `%{ for x in xs ~}` followed by two blank lines keeps one of them in a
/// heredoc, as Terraform does, but drops both in a quoted string.
#[derive(Clone, Copy)]
enum Tokens {
    Quoted,
    Lines,
}

impl Tokens {
    /// `text` after a `~}`: its first token loses its leading whitespace.
    fn trim_after_marker(self, text: &str) -> String {
        let first_end = match self {
            Tokens::Quoted => text.len(),
            Tokens::Lines => text.find('\n').map_or(text.len(), |i| i + 1),
        };
        let (first, rest) = text.split_at(first_end);
        format!("{}{rest}", first.trim_start())
    }

    /// `text` before a `${~`/`%{~`: its last token loses its trailing
    /// whitespace.
    fn trim_before_marker(self, text: &str) -> String {
        let last_start = match self {
            Tokens::Quoted => 0,
            Tokens::Lines => {
                let body = text.strip_suffix('\n').unwrap_or(text);
                body.rfind('\n').map_or(0, |i| i + 1)
            }
        };
        let (head, last) = text.split_at(last_start);
        format!("{head}{}", last.trim_end())
    }
}

/// hcl-edit dedents a `<<-` heredoc's own lines but not those inside its
/// `%{ if }`/`%{ for }` bodies; HCL dedents every line by the same amount.
fn dedent_directive_bodies(t: &mut Template, indent: usize) {
    for el in t.iter_mut() {
        if let Element::Directive(d) = el {
            for body in directive_bodies(d) {
                dedent_lines(body, indent);
            }
        }
    }
}

fn directive_bodies(d: &mut Directive) -> Vec<&mut Template> {
    match d {
        Directive::If(d) => {
            let mut bodies = vec![&mut d.if_expr.template];
            if let Some(e) = &mut d.else_expr {
                bodies.push(&mut e.template);
            }
            bodies
        }
        Directive::For(d) => vec![&mut d.for_expr.template],
    }
}

/// Removes up to `indent` leading whitespace characters from each line of a
/// directive body that starts a source line (its first text follows the
/// directive on the same line, so it does not).
fn dedent_lines(t: &mut Template, indent: usize) {
    let mut at_line_start = false;
    for el in t.iter_mut() {
        match el {
            Element::Literal(lit) => {
                let mut out = String::with_capacity(lit.len());
                for line in lit.split_inclusive('\n') {
                    if at_line_start {
                        let cut: usize = line
                            .chars()
                            .take(indent)
                            .take_while(|c| c.is_whitespace() && *c != '\n')
                            .map(char::len_utf8)
                            .sum();
                        out.push_str(&line[cut..]);
                    } else {
                        out.push_str(line);
                    }
                    at_line_start = line.ends_with('\n');
                }
                *lit.as_mut() = out;
            }
            Element::Interpolation(_) => at_line_start = false,
            Element::Directive(d) => {
                for body in directive_bodies(d) {
                    dedent_lines(body, indent);
                }
                at_line_start = false;
            }
        }
    }
}

/// Turns hcl-edit nodes of one file into fleetform syntax with source ranges.
pub struct Lowerer<'a> {
    pub filename: &'a str,
    pub source: &'a str,
    lines: LineIndex,
}

impl<'a> Lowerer<'a> {
    pub fn new(filename: &'a str, source: &'a str) -> Lowerer<'a> {
        Lowerer {
            filename,
            source,
            lines: LineIndex::new(source),
        }
    }

    /// The source range of byte offsets `start..end`.
    pub fn bytes(&self, start: usize, end: usize) -> SourceRange {
        self.lines.range(self.filename, self.source, start, end)
    }

    pub fn range(&self, span: Option<Range<usize>>) -> SourceRange {
        let span = span.unwrap_or(0..0);
        self.bytes(span.start, span.end)
    }

    fn join(&self, start: &SourceRange, end: &SourceRange) -> SourceRange {
        self.lines.range(
            self.filename,
            self.source,
            start.start.byte,
            end.end.byte.max(start.start.byte),
        )
    }

    /// The range up to and including the next `]` after `end` (index operators).
    fn through_bracket(&self, start: &SourceRange, end: usize) -> SourceRange {
        let close = self
            .source
            .get(end..)
            .and_then(|rest| rest.find(']'))
            .map(|i| end + i + 1)
            .unwrap_or(end);
        self.bytes(start.start.byte, close)
    }

    /// A number literal, exact: hcl-edit's own value is an `f64` beyond
    /// `u64`, so the digits are read from the source text (a negative
    /// literal's text is `-`, maybe spaces, then the digits).
    fn number(&self, n: &hcl_edit::Formatted<hcl_edit::Number>) -> Number {
        let text = n
            .span()
            .and_then(|span| self.source.get(span))
            .map(|t| t.replace(char::is_whitespace, ""));
        if let Some(parsed) = text.as_deref().and_then(Number::parse) {
            return parsed;
        }
        let v = n.value();
        match v.as_i64() {
            Some(i) => Number::Int(i),
            None => Number::from_f64(v.as_f64().unwrap_or(f64::NAN)),
        }
    }

    pub fn expr(&self, e: &Expression) -> Expr {
        let range = self.range(e.span());
        let kind = match e {
            Expression::Null(_) => ExprKind::Literal(Value::null()),
            Expression::Bool(b) => ExprKind::Literal(Value::Bool(*b.value())),
            Expression::Number(n) => ExprKind::Literal(Value::Number(self.number(n))),
            Expression::String(s) => ExprKind::Literal(Value::String(s.value().clone())),
            Expression::Array(items) => {
                ExprKind::Tuple(items.iter().map(|i| self.expr(i)).collect())
            }
            Expression::Object(obj) => ExprKind::Object(
                obj.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            ObjectKey::Ident(id) => Expr::new(
                                ExprKind::Literal(Value::String(id.value().to_string())),
                                self.range(id.span()),
                            ),
                            ObjectKey::Expression(e) => self.expr(e),
                        };
                        (key, self.expr(v.expr()))
                    })
                    .collect(),
            ),
            Expression::StringTemplate(t) => {
                return self.template_expr(t, Tokens::Quoted, range);
            }
            Expression::HeredocTemplate(h) => {
                let Some(indent) = h.indent() else {
                    return self.template_expr(&h.template, Tokens::Lines, range);
                };
                let mut t = h.template.clone();
                dedent_directive_bodies(&mut t, indent);
                return self.template_expr(&t, Tokens::Lines, range);
            }
            Expression::Parenthesis(p) => ExprKind::Parens(Box::new(self.expr(p.inner()))),
            Expression::Variable(v) => ExprKind::Variable(v.value().to_string()),
            Expression::Conditional(c) => ExprKind::Conditional(
                Box::new(self.expr(&c.cond_expr)),
                Box::new(self.expr(&c.true_expr)),
                Box::new(self.expr(&c.false_expr)),
            ),
            Expression::FuncCall(call) => {
                let mut name: Vec<String> = call
                    .name
                    .namespace
                    .iter()
                    .map(|n| n.value().to_string())
                    .collect();
                name.push(call.name.name.value().to_string());
                ExprKind::Call {
                    name: name.join("::"),
                    args: call.args.iter().map(|a| self.expr(a)).collect(),
                    expand_final: call.args.expand_final(),
                }
            }
            Expression::Traversal(t) => {
                return self.traversal(self.expr(&t.expr), &t.operators, range);
            }
            Expression::UnaryOp(op) => {
                let o = match op.operator.value() {
                    UnaryOperator::Neg => UnaryOp::Neg,
                    UnaryOperator::Not => UnaryOp::Not,
                };
                ExprKind::Unary(o, Box::new(self.expr(&op.expr)))
            }
            Expression::BinaryOp(op) => ExprKind::Binary(
                binary(*op.operator.value()),
                Box::new(self.expr(&op.lhs_expr)),
                Box::new(self.expr(&op.rhs_expr)),
            ),
            Expression::ForExpr(f) => ExprKind::For(Box::new(ForExpr {
                key_var: f.intro.key_var.as_ref().map(|k| k.value().to_string()),
                value_var: f.intro.value_var.value().to_string(),
                collection: self.expr(&f.intro.collection_expr),
                key_expr: f.key_expr.as_ref().map(|k| self.expr(k)),
                value_expr: self.expr(&f.value_expr),
                cond: f.cond.as_ref().map(|c| self.expr(&c.expr)),
                grouping: f.grouping,
            })),
        };
        Expr::new(kind, range)
    }

    /// A bare template (a `.tf.json` string's content) spanning the source.
    pub(crate) fn bare_template(&self, t: &Template) -> Expr {
        self.template_expr(t, Tokens::Lines, self.bytes(0, self.source.len()))
    }

    fn template_expr(&self, t: &Template, tokens: Tokens, range: SourceRange) -> Expr {
        let parts = self.template(t, tokens);
        let kind = match parts.as_slice() {
            [] => ExprKind::Literal(Value::String(String::new())),
            [TemplatePart::Literal(s)] => ExprKind::Literal(Value::String(s.clone())),
            _ => ExprKind::Template(parts),
        };
        Expr::new(kind, range)
    }

    fn template(&self, t: &Template, tokens: Tokens) -> Vec<TemplatePart> {
        let mut parts: Vec<TemplatePart> = Vec::new();
        let mut strip_next = false;
        for el in t.iter() {
            let (strip_before, strip_after, part) = match el {
                Element::Literal(s) => {
                    let mut text = s.value().clone();
                    if std::mem::take(&mut strip_next) {
                        text = tokens.trim_after_marker(&text);
                    }
                    parts.push(TemplatePart::Literal(text));
                    continue;
                }
                Element::Interpolation(i) => (
                    i.strip.strip_start(),
                    i.strip.strip_end(),
                    TemplatePart::Interpolation(self.expr(&i.expr)),
                ),
                // A `~` inside a directive strips the whitespace of the
                // template it opens or closes.
                Element::Directive(d) => match d.as_ref() {
                    Directive::If(d) => {
                        let then_end = match &d.else_expr {
                            Some(e) => e.strip.strip_start(),
                            None => d.endif_expr.strip.strip_start(),
                        };
                        let then = self.stripped(
                            &d.if_expr.template,
                            tokens,
                            d.if_expr.strip.strip_end(),
                            then_end,
                        );
                        let otherwise = d
                            .else_expr
                            .as_ref()
                            .map(|e| {
                                self.stripped(
                                    &e.template,
                                    tokens,
                                    e.strip.strip_end(),
                                    d.endif_expr.strip.strip_start(),
                                )
                            })
                            .unwrap_or_default();
                        (
                            d.if_expr.strip.strip_start(),
                            d.endif_expr.strip.strip_end(),
                            TemplatePart::If {
                                cond: self.expr(&d.if_expr.cond_expr),
                                then,
                                otherwise,
                            },
                        )
                    }
                    Directive::For(d) => (
                        d.for_expr.strip.strip_start(),
                        d.endfor_expr.strip.strip_end(),
                        TemplatePart::For {
                            key_var: d.for_expr.key_var.as_ref().map(|k| k.value().to_string()),
                            value_var: d.for_expr.value_var.value().to_string(),
                            collection: self.expr(&d.for_expr.collection_expr),
                            body: self.stripped(
                                &d.for_expr.template,
                                tokens,
                                d.for_expr.strip.strip_end(),
                                d.endfor_expr.strip.strip_start(),
                            ),
                        },
                    ),
                },
            };
            if strip_before && let Some(TemplatePart::Literal(prev)) = parts.last_mut() {
                *prev = tokens.trim_before_marker(prev);
            }
            parts.push(part);
            strip_next = strip_after;
        }
        parts
    }

    /// A directive's inner template with its leading and/or trailing
    /// literal whitespace removed.
    fn stripped(
        &self,
        t: &Template,
        tokens: Tokens,
        leading: bool,
        trailing: bool,
    ) -> Vec<TemplatePart> {
        let mut parts = self.template(t, tokens);
        if leading && let Some(TemplatePart::Literal(s)) = parts.first_mut() {
            *s = tokens.trim_after_marker(s);
        }
        if trailing && let Some(TemplatePart::Literal(s)) = parts.last_mut() {
            *s = tokens.trim_before_marker(s);
        }
        parts
    }

    fn traversal(
        &self,
        mut cur: Expr,
        ops: &[hcl_edit::Decorated<TraversalOperator>],
        whole: SourceRange,
    ) -> Expr {
        let start = cur.range.clone();
        let mut i = 0;
        while i < ops.len() {
            let op = &ops[i];
            match op.value() {
                TraversalOperator::GetAttr(name) => {
                    let r = self.join(&start, &self.range(name.span()));
                    cur = Expr::new(
                        ExprKind::GetAttr(Box::new(cur), name.value().to_string()),
                        r,
                    );
                }
                TraversalOperator::Index(key) => {
                    let key = self.expr(key);
                    let r = self.through_bracket(&start, key.range.end.byte);
                    cur = Expr::new(ExprKind::Index(Box::new(cur), Box::new(key)), r);
                }
                TraversalOperator::LegacyIndex(n) => {
                    let kr = self.range(n.span());
                    let key =
                        Expr::new(ExprKind::Literal(Value::int(*n.value() as i64)), kr.clone());
                    let r = self.join(&start, &kr);
                    cur = Expr::new(ExprKind::Index(Box::new(cur), Box::new(key)), r);
                }
                TraversalOperator::AttrSplat(_) | TraversalOperator::FullSplat(_) => {
                    let full = matches!(op.value(), TraversalOperator::FullSplat(_));
                    let splat_range = self.range(op.span());
                    // `[*]` takes every operator after it, nested splats
                    // included (`a[*].b[*].c` is a list of lists); the legacy
                    // `.*` only attribute names (and `.0` indexes), so that
                    // `a.*.b[0]` indexes the splat's result.
                    let mut end = i + 1;
                    while end < ops.len()
                        && (full
                            || matches!(
                                ops[end].value(),
                                TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_)
                            ))
                    {
                        end += 1;
                    }
                    let item = Expr::new(ExprKind::SplatItem, splat_range.clone());
                    let each = self.traversal(item, &ops[i + 1..end], splat_range.clone());
                    let r = self.join(&start, &each.range);
                    cur = Expr::new(
                        ExprKind::Splat {
                            source: Box::new(cur),
                            each: Box::new(each),
                        },
                        r,
                    );
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
        if ops.is_empty() {
            Expr::new(cur.kind, whole)
        } else {
            cur
        }
    }
}

fn binary(op: BinaryOperator) -> BinaryOp {
    match op {
        BinaryOperator::Eq => BinaryOp::Eq,
        BinaryOperator::NotEq => BinaryOp::NotEq,
        BinaryOperator::LessEq => BinaryOp::LtEq,
        BinaryOperator::GreaterEq => BinaryOp::GtEq,
        BinaryOperator::Less => BinaryOp::Lt,
        BinaryOperator::Greater => BinaryOp::Gt,
        BinaryOperator::Mod => BinaryOp::Mod,
        BinaryOperator::Div => BinaryOp::Div,
        BinaryOperator::Mul => BinaryOp::Mul,
        BinaryOperator::Minus => BinaryOp::Sub,
        BinaryOperator::Plus => BinaryOp::Add,
        BinaryOperator::And => BinaryOp::And,
        BinaryOperator::Or => BinaryOp::Or,
    }
}

/// A syntax error from hcl-edit as a diagnostic pointing at the offending position.
pub fn syntax_error(filename: &str, source: &str, err: &hcl_edit::parser::Error) -> Diagnostic {
    let offset = err.location().offset();
    let range = SourceRange::from_bytes(filename, source, offset, (offset + 1).min(source.len()));
    Diagnostic::error("Invalid syntax", err.message().to_string()).at(range)
}

/// Parses one standalone expression (e.g. a `-var` value or a test input).
pub fn parse_expression(filename: &str, source: &str) -> Result<Expr, Diagnostics> {
    // hcl-edit rejects trailing newlines after an expression; they carry no meaning.
    let source = source.trim_end_matches(['\n', '\r']);
    match hcl_edit::parser::parse_expr(source) {
        Ok(e) => Ok(Lowerer::new(filename, source).expr(&e)),
        Err(err) => Err(syntax_error(filename, source, &err).into()),
    }
}

/// Parses a whole file as a template (`templatefile`): text with
/// interpolations and directives, as inside a heredoc.
pub(crate) fn parse_template(filename: &str, source: &str) -> Result<Expr, Diagnostics> {
    match hcl_edit::parser::parse_template(source) {
        Ok(t) => {
            let l = Lowerer::new(filename, source);
            Ok(l.template_expr(&t, Tokens::Lines, l.range(Some(0..source.len()))))
        }
        Err(err) => Err(syntax_error(filename, source, &err).into()),
    }
}
