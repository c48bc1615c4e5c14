//! The text form of addresses: splitting `module.a["k"].x.y[0]` into steps,
//! reading module paths and resources off those steps, and the `FromStr`
//! of every address type built on them, so all parse the same way. Above
//! the address types it reads.

use super::key::InstanceKey;
use super::module::{Module, ModuleInstance};
use super::resource::{AbsResource, AbsResourceInstance, Resource, ResourceMode};
use std::str::FromStr;

pub(super) type Step = (String, Option<InstanceKey>);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid address {input:?}: {reason}")]
pub struct AddrParseError {
    pub input: String,
    pub reason: String,
}

/// Splits `a.b["x.y"][0].c` into steps: names and bracketed keys.
pub(super) fn tokenize(input: &str) -> Result<Vec<(String, Option<InstanceKey>)>, String> {
    let mut out: Vec<(String, Option<InstanceKey>)> = Vec::new();
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
            i += 1;
        }
        let name: String = chars[start..i].iter().collect();
        if name.is_empty() {
            return Err("empty name".into());
        }
        let mut key = None;
        if i < chars.len() && chars[i] == '[' {
            let close_from = i + 1;
            if chars.get(close_from) == Some(&'"') {
                let mut j = close_from + 1;
                let mut s = String::new();
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    s.push(chars[j]);
                    j += 1;
                }
                if chars.get(j + 1) != Some(&']') {
                    return Err("unterminated key".into());
                }
                key = Some(InstanceKey::Str(s));
                i = j + 2;
            } else {
                let end = chars[close_from..]
                    .iter()
                    .position(|c| *c == ']')
                    .ok_or("unterminated index")?;
                let text: String = chars[close_from..close_from + end].iter().collect();
                let n = text
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("invalid index {text:?}"))?;
                key = Some(InstanceKey::Int(n));
                i = close_from + end + 1;
            }
        }
        out.push((name, key));
        if i < chars.len() {
            if chars[i] != '.' {
                return Err(format!("unexpected {:?}", chars[i]));
            }
            i += 1;
            if i == chars.len() {
                return Err("trailing dot".into());
            }
        }
    }
    Ok(out)
}

/// Reads the leading `module.NAME[KEY]` pairs off `steps`.
pub(super) fn module_prefix(steps: &[Step]) -> (ModuleInstance, &[Step]) {
    let mut rest = steps;
    let mut module = Vec::new();
    while rest.len() >= 2 && rest[0].0 == "module" && rest[0].1.is_none() {
        module.push((
            rest[1].0.clone(),
            rest[1].1.clone().unwrap_or(InstanceKey::None),
        ));
        rest = &rest[2..];
    }
    (ModuleInstance(module), rest)
}

/// Reads `[data.]TYPE.NAME[KEY]` and nothing after it; the key is None when
/// none was written.
pub(super) fn resource_steps(steps: &[Step]) -> Option<(Resource, Option<InstanceKey>)> {
    let (mode, rest) = match steps.first() {
        Some((n, None)) if n == "data" => (ResourceMode::Data, &steps[1..]),
        Some((n, None)) if n == "ephemeral" => (ResourceMode::Ephemeral, &steps[1..]),
        _ => (ResourceMode::Managed, steps),
    };
    match rest {
        [(type_name, None), (name, key)] => Some((
            Resource {
                mode,
                type_name: type_name.into(),
                name: name.into(),
            },
            key.clone(),
        )),
        _ => None,
    }
}

pub(super) fn error(input: &str, reason: &str) -> AddrParseError {
    AddrParseError {
        input: input.to_string(),
        reason: reason.to_string(),
    }
}

impl FromStr for Module {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let inst: ModuleInstance = s.parse()?;
        if inst.0.iter().any(|(_, k)| *k != InstanceKey::None) {
            return Err(error(s, "a module path has no instance keys"));
        }
        Ok(inst.module())
    }
}

impl FromStr for ModuleInstance {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let steps = tokenize(s).map_err(|r| error(s, &r))?;
        let (module, rest) = module_prefix(&steps);
        if !rest.is_empty() || module.is_root() {
            return Err(error(
                s,
                "expected a module instance address such as module.a or module.a[\"k\"].module.b",
            ));
        }
        Ok(module)
    }
}

impl FromStr for AbsResourceInstance {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let steps = tokenize(s).map_err(|r| error(s, &r))?;
        let (module, rest) = module_prefix(&steps);
        match resource_steps(rest) {
            Some((resource, key)) => Ok(AbsResourceInstance {
                module,
                resource: resource.instance(key.unwrap_or(InstanceKey::None)),
            }),
            None => Err(error(
                s,
                "expected a resource address such as null_resource.a or sim_object.b[0]",
            )),
        }
    }
}

impl FromStr for AbsResource {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let steps = tokenize(s).map_err(|r| error(s, &r))?;
        let (module, rest) = module_prefix(&steps);
        match resource_steps(rest) {
            Some((resource, None)) => Ok(AbsResource { module, resource }),
            Some((_, Some(_))) => Err(error(s, "a resource address has no instance key")),
            None => Err(error(
                s,
                "expected a resource address such as null_resource.a",
            )),
        }
    }
}
