//! Built-in function signatures as data: the types a signature is made of,
//! lookup by name, and the `metadata functions -json` document. The table
//! itself is in `signatures/builtin.rs`, our descriptions of the functions
//! in `signatures/descriptions.rs`.

mod builtin;
mod descriptions;

use fleetform_shared::types::Type;
use serde::Serialize;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

/// A parameter's type constraint or a return type: the few cty types
/// function signatures use, in a form a `const` table can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// Any type (cty's `DynamicPseudoType`).
    Dynamic,
    String,
    Number,
    Bool,
    List(&'static Ty),
    Set(&'static Ty),
    Map(&'static Ty),
}

pub(crate) const DYN: Ty = Ty::Dynamic;
pub(crate) const STR: Ty = Ty::String;
pub(crate) const NUM: Ty = Ty::Number;
pub(crate) const BOOL: Ty = Ty::Bool;
pub(crate) const LIST_DYN: Ty = Ty::List(&DYN);
pub(crate) const LIST_STR: Ty = Ty::List(&STR);
pub(crate) const LIST_NUM: Ty = Ty::List(&NUM);
pub(crate) const LIST_BOOL: Ty = Ty::List(&BOOL);
pub(crate) const LIST_LIST_DYN: Ty = Ty::List(&LIST_DYN);
pub(crate) const SET_DYN: Ty = Ty::Set(&DYN);
pub(crate) const SET_STR: Ty = Ty::Set(&STR);
pub(crate) const MAP_DYN: Ty = Ty::Map(&DYN);
pub(crate) const MAP_LIST_STR: Ty = Ty::Map(&LIST_STR);

impl Ty {
    /// The type constraint arguments are converted to.
    pub(crate) fn to_type(self) -> Type {
        match self {
            Ty::Dynamic => Type::Dynamic,
            Ty::String => Type::String,
            Ty::Number => Type::Number,
            Ty::Bool => Type::Bool,
            Ty::List(e) => Type::list(e.to_type()),
            Ty::Set(e) => Type::set(e.to_type()),
            Ty::Map(e) => Type::map(e.to_type()),
        }
    }

    /// Whether `dynamic` appears anywhere in the type: the function then
    /// computes the actual type from its arguments.
    pub(crate) fn has_dynamic(self) -> bool {
        match self {
            Ty::Dynamic => true,
            Ty::List(e) | Ty::Set(e) | Ty::Map(e) => e.has_dynamic(),
            _ => false,
        }
    }

    /// cty's JSON encoding of the type (`"string"`, `["list","dynamic"]`).
    fn to_json(self) -> Json {
        match self {
            Ty::Dynamic => json!("dynamic"),
            Ty::String => json!("string"),
            Ty::Number => json!("number"),
            Ty::Bool => json!("bool"),
            Ty::List(e) => json!(["list", e.to_json()]),
            Ty::Set(e) => json!(["set", e.to_json()]),
            Ty::Map(e) => json!(["map", e.to_json()]),
        }
    }
}

/// One parameter of a function.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Param {
    pub name: &'static str,
    pub ty: Ty,
    /// Whether null is an acceptable argument; otherwise a null argument is
    /// refused before the function runs ("argument must not be null").
    pub allow_null: bool,
    /// cty's `AllowDynamicType`: whether the function runs with an argument
    /// whose type is not known yet (a literal `null`, an unknown of no
    /// type) for this parameter. Where it does not, such an argument makes
    /// the result an unknown of no type, without calling the function
    /// (`format("%s", null)` is unknown). Only `dynamic` parameters can be
    /// given such an argument: conversion gives the others their type.
    pub allow_dynamic: bool,
}

/// A parameter that refuses null.
pub(crate) const fn param(name: &'static str, ty: Ty) -> Param {
    Param {
        name,
        ty,
        allow_null: false,
        allow_dynamic: false,
    }
}

/// A parameter that takes null.
pub(crate) const fn nullable(name: &'static str, ty: Ty) -> Param {
    Param {
        name,
        ty,
        allow_null: true,
        allow_dynamic: false,
    }
}

impl Param {
    /// The parameter, taking arguments of no type yet too (see
    /// [`Param::allow_dynamic`]).
    pub(crate) const fn any_type(self) -> Param {
        Param {
            allow_dynamic: true,
            ..self
        }
    }
}

/// A function's signature.
#[derive(Debug)]
pub(crate) struct Signature {
    pub name: &'static str,
    pub params: &'static [Param],
    /// The parameter every argument past `params` is for.
    pub variadic: Option<Param>,
    pub returns: Ty,
}

/// A function with a fixed number of parameters.
pub(crate) const fn fixed(name: &'static str, params: &'static [Param], returns: Ty) -> Signature {
    Signature {
        name,
        params,
        variadic: None,
        returns,
    }
}

/// A function that takes any number of arguments past `params`.
pub(crate) const fn variadic(
    name: &'static str,
    params: &'static [Param],
    rest: Param,
    returns: Ty,
) -> Signature {
    Signature {
        name,
        params,
        variadic: Some(rest),
        returns,
    }
}

impl Signature {
    /// The parameter argument `i` (from 0) is for; None past the last
    /// parameter of a function that is not variadic.
    pub(crate) fn param(&self, i: usize) -> Option<&Param> {
        self.params.get(i).or(self.variadic.as_ref())
    }

    /// The largest number of arguments; None when variadic.
    pub(crate) fn max_args(&self) -> Option<usize> {
        self.variadic.is_none().then_some(self.params.len())
    }

    fn metadata(&self) -> FunctionJson {
        let param = |p: &Param| ParamJson {
            name: p.name,
            is_nullable: p.allow_null,
            ty: p.ty.to_json(),
        };
        FunctionJson {
            description: descriptions::describe(self.name),
            return_type: self.returns.to_json(),
            parameters: self.params.iter().map(param).collect(),
            variadic_parameter: self.variadic.as_ref().map(param),
        }
    }
}

/// One function in `metadata functions -json`; fields in Terraform's order.
#[derive(Serialize)]
struct FunctionJson {
    description: &'static str,
    return_type: Json,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<ParamJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    variadic_parameter: Option<ParamJson>,
}

#[derive(Serialize)]
struct ParamJson {
    name: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_nullable: bool,
    #[serde(rename = "type")]
    ty: Json,
}

#[derive(Serialize)]
struct MetadataJson {
    format_version: &'static str,
    function_signatures: BTreeMap<String, FunctionJson>,
}

/// The signature of built-in function `name` (removed ones included).
pub(crate) fn find(name: &str) -> Option<&'static Signature> {
    builtin::BUILTIN
        .binary_search_by(|s| s.name.cmp(name))
        .ok()
        .map(|i| &builtin::BUILTIN[i])
        .or_else(|| builtin::REMOVED.iter().find(|s| s.name == name))
}

/// The names of every built-in function Terraform lists.
#[cfg(test)]
fn names() -> impl Iterator<Item = &'static str> {
    builtin::BUILTIN.iter().map(|s| s.name)
}

/// The namespace every built-in function can also be called in
/// (`core::upper`), as in Terraform.
pub const CORE_NAMESPACE: &str = "core::";

/// The document `metadata functions -json` prints, in Terraform's format:
/// every built-in function by its name and again as `core::NAME`.
pub fn metadata_json() -> String {
    let mut functions = BTreeMap::new();
    for s in builtin::BUILTIN {
        functions.insert(s.name.to_string(), s.metadata());
        functions.insert(format!("{CORE_NAMESPACE}{}", s.name), s.metadata());
    }
    let doc = MetadataJson {
        format_version: "1.0",
        function_signatures: functions,
    };
    serde_json::to_string(&doc).expect("function metadata always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_every_function_is_described() {
        let names: Vec<&str> = names().collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted, "BUILTIN must stay sorted for binary search");
        for name in names {
            assert!(
                !descriptions::describe(name).is_empty(),
                "{name} has no description"
            );
        }
    }

    #[test]
    fn every_function_has_a_signature_and_every_signature_a_function() {
        let defined: Vec<&str> = super::super::GROUPS
            .iter()
            .flat_map(|g| g.iter().map(|d| d.name))
            .chain(super::super::SPECIAL.iter().copied())
            .collect();
        for name in &defined {
            assert!(find(name).is_some(), "{name} has no signature");
        }
        for s in builtin::BUILTIN.iter().chain(builtin::REMOVED) {
            assert!(defined.contains(&s.name), "{} is not implemented", s.name);
        }
    }

    #[test]
    fn arguments_map_to_parameters_and_the_variadic_one() {
        let join = find("join").unwrap();
        assert_eq!(join.param(0).unwrap().name, "separator");
        assert_eq!(join.param(5).unwrap().name, "lists");
        assert_eq!(join.max_args(), None);
        let slice = find("slice").unwrap();
        assert_eq!(slice.param(1).unwrap().name, "start_index");
        assert!(slice.param(3).is_none());
        assert_eq!(find("list").unwrap().max_args(), None);
    }

    #[test]
    fn metadata_is_terraforms_shape() {
        let doc: Json = serde_json::from_str(&metadata_json()).unwrap();
        let coalesce = &doc["function_signatures"]["core::coalesce"];
        assert_eq!(
            coalesce["variadic_parameter"],
            json!({"name": "vals", "is_nullable": true, "type": "dynamic"})
        );
        assert!(coalesce.get("parameters").is_none());
        let transpose = &doc["function_signatures"]["transpose"];
        assert_eq!(transpose["return_type"], json!(["map", ["list", "string"]]));
        assert!(doc["function_signatures"].get("list").is_none());
    }
}
