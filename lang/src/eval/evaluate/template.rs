//! String templates and heredocs: interpolations, `%{ if }` directives
//! (conditionals over template results) and `%{ for }` directives (a `for`
//! over the collection, joined).

use super::super::convert::convert;
use super::super::expr::TemplatePart;
use super::super::ops::{self, err};
use super::{Evaluator, R, item_step};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::marks::Marks;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

impl Evaluator<'_> {
    pub(super) fn template(&mut self, parts: &[TemplatePart]) -> R {
        // A template that is a single interpolation yields the value itself.
        if let [TemplatePart::Interpolation(e)] = parts {
            return self.eval(e);
        }
        let mut out = String::new();
        let mut unknown = false;
        let mut marks = Marks::none();
        self.render(parts, &mut out, &mut unknown, &mut marks)?;
        let value = if unknown {
            Value::unknown_of(fleetform_shared::types::Type::String)
        } else {
            Value::String(out)
        };
        // A string with anything sensitive in it is sensitive as a whole.
        Ok((value, marks.collapse()))
    }

    /// Appends the parts to `out`; an unknown part makes the whole unknown
    /// but the rest is still evaluated for its errors, as HCL does.
    fn render(
        &mut self,
        parts: &[TemplatePart],
        out: &mut String,
        unknown: &mut bool,
        marks: &mut Marks,
    ) -> Result<(), Diagnostics> {
        for p in parts {
            match p {
                TemplatePart::Literal(s) => out.push_str(s),
                TemplatePart::Interpolation(e) => {
                    let (v, m) = self.eval(e)?;
                    marks.extend(m);
                    match v {
                        Value::Unknown(_) => *unknown = true,
                        Value::Null(_) => {
                            return Err(err(
                                &e.range,
                                "Invalid template interpolation value",
                                "The expression result is null. Cannot include a null value in a string template.",
                            ));
                        }
                        v => match convert(v, &Type::String) {
                            Ok(Value::String(s)) => out.push_str(&s),
                            Ok(_) => *unknown = true,
                            Err(why) => {
                                return Err(err(
                                    &e.range,
                                    "Invalid template interpolation value",
                                    &format!(
                                        "Cannot include the given value in a string template: {why}."
                                    ),
                                ));
                            }
                        },
                    }
                }
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let (c, cm) = self.eval(cond)?;
                    marks.extend(cm);
                    match ops::condition(&c, &cond.range)? {
                        // Like a conditional: an unknown condition hides
                        // whatever either branch would report.
                        None => *unknown = true,
                        Some(true) => self.render(then, out, unknown, marks)?,
                        Some(false) => self.render(otherwise, out, unknown, marks)?,
                    }
                }
                TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                } => {
                    let (coll, cm) = self.eval(collection)?;
                    marks.extend(cm.top());
                    let Some(items) = ops::iterate(&coll, &collection.range)? else {
                        *unknown = true;
                        continue;
                    };
                    for (k, v) in items {
                        let n = self.bound.len();
                        let vm = cm.child(&item_step(&k));
                        if let Some(kv) = key_var {
                            self.bind(kv, k, Marks::none());
                        }
                        self.bind(value_var, v, vm);
                        let r = self.render(body, out, unknown, marks);
                        self.bound.truncate(n);
                        r?;
                    }
                }
            }
        }
        Ok(())
    }
}
