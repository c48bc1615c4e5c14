//! `terraform_remote_state`: the root outputs of another configuration's
//! latest state snapshot, read through a backend. fleetform reads the
//! `local` backend (`path`, `workspace_dir` and workspaces as Terraform's
//! local backend lays them out); every other backend Terraform knows is
//! refused with a diagnostic that says so, and unknown backend names get
//! Terraform's own error.

use super::statefile::{StateError, read_outputs};
use crate::framework::{CallResult, DataSource};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::path::PathBuf;

pub struct RemoteState;

/// The backend types Terraform accepts here (its `backend/init` list).
const BACKENDS: &[&str] = &[
    "local",
    "remote",
    "azurerm",
    "consul",
    "cos",
    "gcs",
    "http",
    "inmem",
    "kubernetes",
    "oss",
    "pg",
    "s3",
    "cloud",
];

const DEFAULT_WORKSPACE: &str = "default";
/// The local backend's defaults for `path` and `workspace_dir`.
const DEFAULT_STATE_FILE: &str = "terraform.tfstate";
const DEFAULT_WORKSPACE_DIR: &str = "terraform.tfstate.d";

/// A configured `local` backend.
#[derive(Debug, PartialEq)]
struct LocalBackend {
    path: Option<String>,
    workspace_dir: Option<String>,
}

impl LocalBackend {
    /// Where the local backend keeps a workspace's state: `path` for the
    /// default workspace, `<workspace_dir>/<name>/terraform.tfstate` for
    /// the others (whatever `path` says).
    fn state_path(&self, workspace: &str) -> PathBuf {
        if workspace == DEFAULT_WORKSPACE {
            PathBuf::from(self.path.as_deref().unwrap_or(DEFAULT_STATE_FILE))
        } else {
            PathBuf::from(
                self.workspace_dir
                    .as_deref()
                    .unwrap_or(DEFAULT_WORKSPACE_DIR),
            )
            .join(workspace)
            .join(DEFAULT_STATE_FILE)
        }
    }
}

fn error(summary: &str, detail: impl Into<String>) -> Diagnostics {
    Diagnostics::from(Diagnostic::error(summary, detail))
}

fn invalid_config(backend: &str, why: &str) -> Diagnostics {
    error(
        "Invalid backend configuration",
        format!("The given configuration is not valid for backend {backend:?}: {why}."),
    )
}

/// cty's conversion of a configuration value to a string attribute.
fn string_attr(v: &Value, name: &str, backend: &str) -> Result<Option<String>, Diagnostics> {
    match v {
        Value::Null(_) => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Unknown(_) => Err(invalid_config(
            backend,
            &format!(".{name}: value must be known"),
        )),
        Value::List(_) | Value::Map(_) => Err(invalid_config(
            backend,
            &format!(".{name}: string required"),
        )),
    }
}

/// Terraform's `getBackend`: the backend type must exist, and the
/// configuration must suit that backend's schema.
fn backend(d: &Value) -> Result<LocalBackend, Diagnostics> {
    let name = match d.get_attr("backend") {
        Value::String(s) => s.as_str(),
        _ => {
            return Err(error(
                "Invalid backend configuration",
                "The \"backend\" argument must be a known string naming a backend type.",
            ));
        }
    };
    // Terraform still accepts the old `_local` spelling.
    let name = if name == "_local" { "local" } else { name };
    if !BACKENDS.contains(&name) {
        return Err(error(
            "Invalid backend configuration",
            format!("There is no backend type named {name:?}."),
        ));
    }
    if name != "local" {
        return Err(error(
            "Unsupported backend",
            format!(
                "fleetform's terraform_remote_state can read state only from the \"local\" backend; reading from the {name:?} backend is not supported yet."
            ),
        ));
    }
    let config = match d.get_attr("config") {
        Value::Null(_) => Default::default(),
        Value::Map(m) => m.clone(),
        _ => return Err(invalid_config(name, "an object is required")),
    };
    if let Some(extra) = config
        .keys()
        .find(|k| !matches!(k.as_str(), "path" | "workspace_dir"))
    {
        return Err(invalid_config(
            name,
            &format!("unexpected attribute {extra:?}"),
        ));
    }
    let get = |k: &str| string_attr(config.get(k).unwrap_or(&Value::null()), k, name);
    let local = LocalBackend {
        path: get("path")?,
        workspace_dir: get("workspace_dir")?,
    };
    let mut diags = Diagnostics::new();
    if local.path.as_deref() == Some("") {
        diags.push(Diagnostic::error(
            "Invalid local state file path",
            "The \"path\" attribute value must not be empty.",
        ));
    }
    if local.workspace_dir.as_deref() == Some("") {
        diags.push(Diagnostic::error(
            "Invalid local workspace directory path",
            "The \"workspace_dir\" attribute value must not be empty.",
        ));
    }
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(local)
}

fn is_object_like(v: &Value) -> bool {
    matches!(v, Value::Null(_) | Value::Unknown(_) | Value::Map(_))
}

/// Terraform's validation: the backend and its configuration are checked
/// when they are known; otherwise only the shape of `config`. `defaults`
/// must be an object.
fn validate(d: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let config = d.get_attr("config");
    if config.is_wholly_known() && !d.get_attr("backend").is_unknown() {
        if let Err(e) = backend(d) {
            diags.extend(e);
        }
    } else if !is_object_like(config) {
        diags.push(Diagnostic::error(
            "Invalid backend configuration",
            "The configuration must be an object value.",
        ));
    }
    if !is_object_like(d.get_attr("defaults")) {
        diags.push(Diagnostic::error(
            "Invalid default values",
            "Defaults must be given in an object value.",
        ));
    }
    diags
}

fn read(d: &Value) -> CallResult<Value> {
    let diags = validate(d);
    if diags.has_errors() {
        return Err(diags);
    }
    let local = backend(d)?;
    let workspace = match d.get_attr("workspace") {
        Value::Null(_) => DEFAULT_WORKSPACE.to_string(),
        Value::String(s) => s.clone(),
        _ => {
            return Err(error(
                "Invalid workspace",
                "The \"workspace\" argument must be a known string.",
            ));
        }
    };
    let path = local.state_path(&workspace);
    let mut outputs = match d.get_attr("defaults") {
        Value::Map(m) => m.clone(),
        _ => Default::default(),
    };
    let snapshot = match std::fs::read(&path) {
        Ok(bytes) => read_outputs(&bytes),
        // A missing file is a workspace with no state yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StateError::NoState),
        Err(e) => {
            return Err(error(
                "Error loading state error",
                format!(
                    "error loading the remote state: cannot read {}: {e}",
                    path.display()
                ),
            ));
        }
    };
    match snapshot {
        Ok(found) => outputs.extend(found),
        Err(StateError::NoState) => {
            return Err(error(
                "Unable to find remote state",
                "No stored state was found for the given workspace in the given backend.",
            ));
        }
        Err(StateError::Invalid(diag)) => return Err(diag.into()),
    }
    Ok(Value::object([
        ("backend", d.get_attr("backend").clone()),
        ("config", d.get_attr("config").clone()),
        ("workspace", d.get_attr("workspace").clone()),
        ("defaults", d.get_attr("defaults").clone()),
        ("outputs", Value::Map(outputs)),
    ]))
}

#[async_trait]
impl DataSource<()> for RemoteState {
    fn type_name(&self) -> &'static str {
        "terraform_remote_state"
    }

    /// Terraform's schema, with its descriptions.
    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        let a = &mut s.block.attributes;
        a.insert(
            "backend".into(),
            Attribute::new(Type::String)
                .required()
                .describe("The remote backend to use, e.g. `remote` or `http`."),
        );
        a.insert(
            "config".into(),
            Attribute::new(Type::Dynamic).optional().describe(
                "The configuration of the remote backend. Although this is optional, most backends require some configuration.\n\nThe object can use any arguments that would be valid in the equivalent `terraform { backend \"<TYPE>\" { ... } }` block.",
            ),
        );
        a.insert(
            "defaults".into(),
            Attribute::new(Type::Dynamic).optional().describe(
                "Default values for outputs, in case the state file is empty or lacks a required output.",
            ),
        );
        a.insert(
            "outputs".into(),
            Attribute::new(Type::Dynamic)
                .computed()
                .describe("An object containing every root-level output in the remote state."),
        );
        a.insert(
            "workspace".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("The Terraform workspace to use, if the backend supports workspaces."),
        );
        s
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        validate(config)
    }

    async fn read(&self, _: &(), config: &Value) -> CallResult<Value> {
        read(config)
    }
}

#[cfg(test)]
#[path = "remote_state_tests.rs"]
mod tests;
