//! Provider-defined functions (`provider::NAME::FUNC(...)`): what a
//! provider says about each function it offers (its signature, reported
//! with the provider's schema) and how a call of one fails.

use crate::types::Type;
use serde::{Deserialize, Serialize};

/// One function a provider offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionSignature {
    /// The positional parameters, in order.
    pub parameters: Vec<FunctionParameter>,
    /// Takes the arguments after the positional ones, any number of them.
    pub variadic: Option<FunctionParameter>,
    /// The type of the result (`Dynamic` when it depends on the arguments).
    pub return_type: Type,
    pub summary: String,
    pub description: String,
    /// Non-empty when the provider deprecates the function.
    pub deprecation: String,
}

impl FunctionSignature {
    /// The parameter that argument `i` is given for, if any.
    pub fn parameter(&self, i: usize) -> Option<&FunctionParameter> {
        self.parameters.get(i).or(self.variadic.as_ref())
    }
}

/// One parameter of a [`FunctionSignature`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionParameter {
    /// The name diagnostics give it (`Invalid value for "NAME" parameter`).
    pub name: String,
    pub ty: Type,
    /// A null argument is passed on; otherwise it is an error.
    pub allow_null: bool,
    /// An argument that is not wholly known is passed on; otherwise the
    /// call is not made and its result is unknown.
    pub allow_unknown: bool,
}

impl FunctionParameter {
    /// A parameter that takes neither null nor unknown values.
    pub fn new(name: impl Into<String>, ty: Type) -> FunctionParameter {
        FunctionParameter {
            name: name.into(),
            ty,
            allow_null: false,
            allow_unknown: false,
        }
    }
}

/// Why a call failed: the provider's text, and the argument it blames
/// (0-based), if it blames one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionError {
    pub text: String,
    pub argument: Option<usize>,
}

impl FunctionError {
    /// A failure of the call as a whole.
    pub fn call(text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: None,
        }
    }

    /// A failure blamed on argument `i`.
    pub fn argument(i: usize, text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: Some(i),
        }
    }
}
