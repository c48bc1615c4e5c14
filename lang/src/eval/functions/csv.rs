//! `csvdecode`: RFC 4180 text read exactly as Go's `encoding/csv` reads it
//! (empty lines skipped, `\r\n` folded, bare and stray quotes rejected,
//! every row as long as the header), giving a list of objects of strings.
//! A reader of our own rather than the `csv` crate, which accepts quotes
//! Go rejects and words its errors differently.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, go_fmt, str_arg};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[def("csvdecode", Deep, csvdecode)];

fn csvdecode(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let mut reader = Reader::new(&text);
    let headers = match reader.record() {
        None => return Err(FnError::call("missing header line")),
        Some(Err(e)) => return Err(FnError::call(e)),
        Some(Ok(h)) => h,
    };
    for (i, name) in headers.iter().enumerate() {
        if headers[..i].contains(name) {
            return Err(FnError::call(format!(
                "duplicate column name {}",
                go_fmt::quote(name)
            )));
        }
    }
    let mut rows = Vec::new();
    while let Some(record) = reader.record() {
        let cols = record.map_err(FnError::call)?;
        if cols.len() != headers.len() {
            return Err(FnError::call(format!(
                "CSV parse error on line {}: wrong number of fields",
                reader.record_line
            )));
        }
        let row: fleetform_shared::value::ValueMap = headers
            .iter()
            .cloned()
            .zip(cols.into_iter().map(Value::String))
            .collect();
        rows.push(Value::Map(row));
    }
    // The header alone decides the type, so no rows is still a list of
    // objects with those attributes, as in Terraform.
    let row_type = Type::object(headers.iter().map(|h| (h.clone(), Type::String)));
    Ok(Value::typed_list(rows, Type::list(row_type)))
}

/// Go's `csv.Reader` with its defaults (comma, no comments, strict quotes).
struct Reader<'a> {
    rest: &'a str,
    /// Lines read so far (1-based number of the last line read).
    line: usize,
    /// The line the last record started on.
    record_line: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            rest: text,
            line: 0,
            record_line: 0,
        }
    }

    /// The next line with its `\n` (if any); `\r\n` becomes `\n`, and a
    /// last line's trailing `\r` is dropped.
    fn read_line(&mut self) -> Option<String> {
        if self.rest.is_empty() {
            return None;
        }
        let end = self.rest.find('\n').map_or(self.rest.len(), |i| i + 1);
        let mut line = self.rest[..end].to_string();
        self.rest = &self.rest[end..];
        self.line += 1;
        if line.ends_with("\r\n") {
            line.truncate(line.len() - 2);
            line.push('\n');
        } else if !line.ends_with('\n') && line.ends_with('\r') {
            line.pop();
        }
        Some(line)
    }

    /// The next record's fields, or a Go-worded parse error.
    fn record(&mut self) -> Option<Result<Vec<String>, String>> {
        // Skip empty lines.
        let mut line = loop {
            let l = self.read_line()?;
            if l != "\n" {
                break l;
            }
        };
        self.record_line = self.line;
        let quote_err = |line: usize| {
            Err(format!(
                "CSV parse error on line {line}: extraneous or missing \" in quoted-field"
            ))
        };
        let mut fields = Vec::new();
        loop {
            if !line.starts_with('"') {
                // An unquoted field: up to the comma or the line's end.
                let (field, more) = match line.find(',') {
                    Some(i) => (line[..i].to_string(), Some(line[i + 1..].to_string())),
                    None => (line.trim_end_matches('\n').to_string(), None),
                };
                if field.contains('"') {
                    return Some(Err(format!(
                        "CSV parse error on line {}: bare \" in non-quoted-field",
                        self.line
                    )));
                }
                fields.push(field);
                match more {
                    Some(m) => {
                        line = m;
                        continue;
                    }
                    None => return Some(Ok(fields)),
                }
            }
            // A quoted field, possibly over several lines.
            let mut field = String::new();
            line.remove(0);
            loop {
                if let Some(i) = line.find('"') {
                    field.push_str(&line[..i]);
                    let after = line[i + 1..].to_string();
                    if let Some(r) = after.strip_prefix('"') {
                        field.push('"');
                        line = r.to_string();
                    } else if let Some(r) = after.strip_prefix(',') {
                        fields.push(field);
                        line = r.to_string();
                        break;
                    } else if after.is_empty() || after == "\n" {
                        fields.push(field);
                        return Some(Ok(fields));
                    } else {
                        return Some(quote_err(self.line));
                    }
                } else if !line.is_empty() {
                    field.push_str(&line);
                    match self.read_line() {
                        Some(next) => line = next,
                        // The text ends inside the quotes.
                        None => return Some(quote_err(self.line)),
                    }
                } else {
                    return Some(quote_err(self.line));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::text_test_support::{check, check_errors, list, obj, s};
    use fleetform_shared::value::Value;

    #[test]
    fn documented_example_and_go_reader_rules() {
        let row = |a: &str, b: &str, c: &str| obj(&[("a", s(a)), ("b", s(b)), ("c", s(c))]);
        check(&[
            (
                "csvdecode(\"a,b,c\\n1,2,3\\n4,5,6\")",
                list(&[row("1", "2", "3"), row("4", "5", "6")]),
            ),
            // Empty lines are skipped, CRLF is a line end, fields keep spaces.
            (
                "csvdecode(\"a,b,c\\r\\n\\r\\n 1,2 ,\\n\")",
                list(&[row(" 1", "2 ", "")]),
            ),
            // Quoted fields hold commas, doubled quotes and newlines.
            (
                "csvdecode(\"a,b,c\\n\\\"x,y\\\",\\\"say \\\"\\\"hi\\\"\\\"\\\",\\\"two\\nlines\\\"\")",
                list(&[row("x,y", "say \"hi\"", "two\nlines")]),
            ),
            ("csvdecode(\"a,b,c\\n\")", list(&[])),
            ("csvdecode(var.unknown)", Value::unknown()),
        ]);
    }

    #[test]
    fn errors() {
        let call = |m: &str| format!("Call to function \"csvdecode\" failed: {m}.");
        check_errors(&[
            ("csvdecode(\"\")", &call("missing header line")),
            (
                "csvdecode(\"a,b,a\\n1,2,3\")",
                &call("duplicate column name \"a\""),
            ),
            (
                "csvdecode(\"a,b\\n1,2\\n3\")",
                &call("CSV parse error on line 3: wrong number of fields"),
            ),
            (
                "csvdecode(\"a,b\\n1,2,3\")",
                &call("CSV parse error on line 2: wrong number of fields"),
            ),
            (
                "csvdecode(\"a,b\\n1,x\\\"y\")",
                &call("CSV parse error on line 2: bare \" in non-quoted-field"),
            ),
            (
                "csvdecode(\"a,b\\n\\\"1\\\"x,2\")",
                &call("CSV parse error on line 2: extraneous or missing \" in quoted-field"),
            ),
            (
                "csvdecode(\"a,b\\n\\\"1,2\\n3\")",
                &call("CSV parse error on line 3: extraneous or missing \" in quoted-field"),
            ),
            (
                "csvdecode(var.nothing)",
                "Invalid value for \"str\" parameter: argument must not be null.",
            ),
        ]);
    }
}
