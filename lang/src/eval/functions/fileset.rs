//! `fileset(path, pattern)`: the regular files of the bundle matching a
//! glob, relative to `path`, sorted.
//!
//! Terraform 1.9 globs with doublestar v1: `*` and `?` within one path
//! element, `**` as a whole element for any number of directories (as the
//! last element, everything below), `[abc]`, `[a-z]`, `[^a]`, `{x,y}` and
//! `\` escapes. The walk below follows doublestar's: the leading elements
//! without wildcards name a directory, then each directory's entries are
//! matched element by element. A malformed pattern is an error only when
//! some directory entry is tested against it, as there.

#[cfg(test)]
mod tests;

use super::files::{clean, join};
use super::{Def, FnError, FnResult, Unknowns::Deep, def_env, str_arg};
use crate::eval::env::{EvalEnv, FileSystem};
use fleetform_shared::value::Value;
use std::collections::{BTreeMap, BTreeSet};

pub(super) const DEFS: &[Def] = &[def_env("fileset", Deep, fileset)];

/// doublestar's `ErrBadPattern`.
struct BadPattern;

fn fileset(env: &EvalEnv, a: &[Value]) -> FnResult {
    let (path, pattern) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let base = clean(&path);
    let full = join(&[&base, &pattern]);
    let fs = env.files.as_ref();
    let mut matches = Vec::new();
    glob(fs, &full, &mut matches).map_err(|BadPattern| {
        FnError::call(format!(
            "failed to glob pattern {full:?}: syntax error in pattern"
        ))
    })?;
    let mut out = BTreeSet::new();
    for m in matches.iter().filter(|m| fs.is_file(m)) {
        let rel = relative(&base, m)
            .map_err(|e| FnError::call(format!("failed to trim path of match {m:?}: {e}")))?;
        out.insert(rel);
    }
    Ok(Value::List(out.into_iter().map(Value::String).collect()))
}

/// Go's `filepath.Rel` for clean `/`-separated paths.
fn relative(base: &str, target: &str) -> Result<String, String> {
    if base == target {
        return Ok(".".into());
    }
    let cant = || format!("Rel: can't make {target} relative to {base}");
    if base.starts_with('/') != target.starts_with('/') {
        return Err(cant());
    }
    let parts = |p: &'_ str| -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(String::from)
            .collect()
    };
    let (b, t) = (parts(base), parts(target));
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    if b.get(common).is_some_and(|s| s == "..") {
        return Err(cant());
    }
    let mut out: Vec<&str> = vec![".."; b.len() - common];
    out.extend(t[common..].iter().map(String::as_str));
    Ok(out.join("/"))
}

/// doublestar's `Glob` over the bundle: every path (file or directory)
/// the pattern matches.
fn glob(fs: &dyn FileSystem, pattern: &str, out: &mut Vec<String>) -> Result<(), BadPattern> {
    let components = split_escaped(&pattern.chars().collect::<Vec<_>>(), '/');
    match components.split_first() {
        Some((first, rest)) if first.is_empty() => walk(fs, "/".into(), rest, out),
        _ => walk(fs, ".".into(), &components, out),
    }
}

const META: &[char] = &['*', '?', '[', '{', '\\'];

/// The entries of a directory: name and whether it is a directory.
fn read_dir(fs: &dyn FileSystem, dir: &str) -> BTreeMap<String, bool> {
    let mut entries = BTreeMap::new();
    for rel in fs.files_under(dir) {
        match rel.split_once('/') {
            Some((name, _)) => entries.insert(name.to_string(), true),
            None => entries.insert(rel, false),
        };
    }
    entries
}

/// doublestar's `doGlob`: matches `components` below `dir`.
fn walk(
    fs: &dyn FileSystem,
    mut dir: String,
    components: &[Vec<char>],
    out: &mut Vec<String>,
) -> Result<(), BadPattern> {
    let literal = components
        .iter()
        .take_while(|c| !c.iter().any(|ch| META.contains(ch)))
        .count();
    if literal > 0 {
        let names: Vec<String> = components[..literal]
            .iter()
            .map(|c| c.iter().collect())
            .collect();
        dir = join(&[&dir, &names.join("/")]);
    }
    if !fs.is_file(&dir) && !fs.is_dir(&dir) {
        return Ok(());
    }
    let mut i = literal;
    if i >= components.len() {
        out.push(dir);
        return Ok(());
    }
    if !fs.is_dir(&dir) {
        return Ok(());
    }
    let entries = read_dir(fs, &dir);
    let mut last = i + 1 >= components.len();
    if components[i] == ['*', '*'] {
        // Any depth: descend into every directory with `**` still first,
        // then (below) match the next element right here.
        for (name, is_dir) in &entries {
            let child = join(&[&dir, name]);
            if *is_dir {
                if last {
                    out.push(child.clone());
                }
                walk(fs, child, &components[i..], out)?;
            } else if last {
                out.push(child);
            }
        }
        if last {
            return Ok(());
        }
        i += 1;
        last = i + 1 >= components.len();
    }
    for name in entries.keys() {
        let chars: Vec<char> = name.chars().collect();
        if match_component(&components[i], &chars)? {
            let child = join(&[&dir, name]);
            if last {
                out.push(child);
            } else {
                walk(fs, child, &components[i + 1..], out)?;
            }
        }
    }
    Ok(())
}

/// The index of the first `r` not preceded by a backslash.
fn index_unescaped(s: &[char], r: char) -> Option<usize> {
    let end = s.iter().position(|&c| c == r)?;
    if end > 0 && s[end - 1] == '\\' {
        let start = end + 1;
        return index_unescaped(&s[start..], r).map(|i| i + start);
    }
    Some(end)
}

/// doublestar's `splitPathOnSeparator`: split at unescaped separators; a
/// trailing separator leaves an empty last part.
fn split_escaped(s: &[char], sep: char) -> Vec<Vec<char>> {
    if !s.contains(&sep) {
        return vec![s.to_vec()];
    }
    let mut parts = Vec::new();
    let mut start = 0;
    let mut empty_end = false;
    while start < s.len() {
        let end = match index_unescaped(&s[start..], sep) {
            Some(i) => {
                empty_end = true;
                start + i
            }
            None => {
                empty_end = false;
                s.len()
            }
        };
        parts.push(s[start..end].to_vec());
        start = end + 1;
    }
    if empty_end {
        parts.push(Vec::new());
    }
    parts
}

/// doublestar's `matchComponent`: one pattern element against one name.
fn match_component(p: &[char], n: &[char]) -> Result<bool, BadPattern> {
    if p.is_empty() {
        return Ok(n.is_empty());
    }
    if n.is_empty() && p != ['*'] {
        return Ok(false);
    }
    let (mut pi, mut ni) = (0, 0);
    while pi < p.len() && ni < n.len() {
        let (pc, nc) = (p[pi], n[ni]);
        match pc {
            '\\' => {
                pi += 1;
                match p.get(pi) {
                    None => return Err(BadPattern),
                    Some(&c) if c == nc => {
                        pi += 1;
                        ni += 1;
                    }
                    Some(_) => return Ok(false),
                }
            }
            '*' => {
                pi += 1;
                if pi >= p.len() {
                    return Ok(true);
                }
                // doublestar ignores errors in these attempts.
                let found =
                    (ni..n.len()).any(|k| match_component(&p[pi..], &n[k..]).unwrap_or(false));
                return Ok(found);
            }
            '[' => {
                pi += 1;
                let end = pi + index_unescaped(&p[pi..], ']').ok_or(BadPattern)?;
                if !class_matches(&p[pi..end], nc)? {
                    return Ok(false);
                }
                pi = end + 1;
                ni += 1;
            }
            '{' => {
                pi += 1;
                let end = pi + index_unescaped(&p[pi..], '}').ok_or(BadPattern)?;
                let rest = &p[end + 1..];
                for option in split_escaped(&p[pi..end], ',') {
                    let candidate: Vec<char> = option.iter().chain(rest).copied().collect();
                    if match_component(&candidate, &n[ni..])? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            c if c == '?' || c == nc => {
                pi += 1;
                ni += 1;
            }
            _ => return Ok(false),
        }
    }
    let rest = &p[pi..];
    Ok((pi >= p.len() && ni >= n.len()) || (ni >= n.len() && rest == ['*']) || rest == ['*', '*'])
}

/// Whether `c` is in a `[...]` class (its inside given); `^` negates.
fn class_matches(class: &[char], c: char) -> Result<bool, BadPattern> {
    if class.is_empty() {
        return Err(BadPattern);
    }
    let negated = class[0] == '^';
    let mut i = usize::from(negated);
    let mut found = false;
    // The character at `i`, unescaping a backslash.
    let take = |i: &mut usize| -> Result<char, BadPattern> {
        let mut ch = class[*i];
        *i += 1;
        if ch == '\\' {
            ch = *class.get(*i).ok_or(BadPattern)?;
            *i += 1;
        }
        Ok(ch)
    };
    while i < class.len() {
        if class[i] == '-' {
            return Err(BadPattern);
        }
        let low = take(&mut i)?;
        let mut high = low;
        if class.get(i) == Some(&'-') {
            i += 1;
            if i >= class.len() || class[i] == '-' {
                return Err(BadPattern);
            }
            high = take(&mut i)?;
        }
        if low <= c && c <= high {
            found = true;
        }
    }
    Ok(found != negated)
}
