//! The input variable values a run is given, gathered the way Terraform's
//! CLI gathers them: `TF_VAR_*` from the environment, the variables files
//! loaded by themselves from the configuration directory, and `-var` /
//! `-var-file` in command-line order. What they mean is decided by the
//! coordinator (`fleetform_lang::inputs`).

use crate::args::{VarArg, VarArgs};
use fleetform_lang::eval::parse_var_assignment;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::{RunRequest, VariableArg};
use std::collections::BTreeMap;
use std::path::Path;

/// Environment variables with this prefix set root module variables.
const ENV_PREFIX: &str = "TF_VAR_";

/// The variable sources of one run, as [`RunRequest`] carries them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarInputs {
    pub variables: Vec<VariableArg>,
    pub auto_var_files: Vec<(String, String)>,
    pub env_variables: Vec<(String, String)>,
}

/// Reads everything the run needs; a `-var` that is not `name=value` or a
/// variables file that cannot be read is an error.
pub fn collect(dir: &Path, args: &VarArgs) -> Result<VarInputs, Diagnostic> {
    let mut variables = Vec::new();
    for arg in &args.0 {
        variables.push(match arg {
            VarArg::Var(raw) => {
                let (name, value) = parse_var_assignment(raw)?;
                VariableArg::Var { name, value }
            }
            VarArg::File(name) => VariableArg::File {
                content: read(Path::new(name), name)?,
                name: name.clone(),
            },
        });
    }
    Ok(VarInputs {
        variables,
        auto_var_files: auto_var_files(dir)?,
        env_variables: env_variables(std::env::vars_os()),
    })
}

/// `terraform.tfvars`, `terraform.tfvars.json`, then every
/// `*.auto.tfvars(.json)` by file name: lowest precedence first.
fn auto_var_files(dir: &Path) -> Result<Vec<(String, String)>, Diagnostic> {
    let mut names: Vec<String> = ["terraform.tfvars", "terraform.tfvars.json"]
        .into_iter()
        .filter(|n| dir.join(n).is_file())
        .map(str::to_string)
        .collect();
    let mut auto: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".auto.tfvars") || n.ends_with(".auto.tfvars.json"))
                .collect()
        })
        .unwrap_or_default();
    // Byte order of names, as Go's ReadDir sorts them.
    auto.sort();
    names.extend(auto);
    names
        .into_iter()
        .map(|n| {
            let path = dir.join(&n);
            // Named as the user would name them from the working directory.
            let shown = if dir == Path::new(".") {
                n
            } else {
                path.display().to_string()
            };
            Ok((shown.clone(), read(&path, &shown)?))
        })
        .collect()
}

fn read(path: &Path, shown: &str) -> Result<String, Diagnostic> {
    std::fs::read_to_string(path).map_err(|e| {
        let detail = if e.kind() == std::io::ErrorKind::NotFound {
            format!("Given variables file {shown} does not exist.")
        } else {
            format!("Error while reading {shown}: {e}.")
        };
        Diagnostic::error("Failed to read variables file", detail)
    })
}

/// `TF_VAR_<name>=<value>` pairs by name; ones that are not Unicode, or
/// have no name, are ignored.
fn env_variables(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(String, String)> {
    let found: BTreeMap<String, String> = vars
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter_map(|(k, v)| {
            let name = k.strip_prefix(ENV_PREFIX)?;
            (!name.is_empty()).then(|| (name.to_string(), v))
        })
        .collect();
    found.into_iter().collect()
}

impl VarInputs {
    /// Puts the sources into a request.
    /// The sources in the order the coordinator reads them (lowest
    /// precedence first): TF_VAR_*, variables files found here, then the
    /// -var and -var-file options.
    pub fn sources(&self) -> Vec<fleetform_lang::inputs::InputSource> {
        fleetform_lang::inputs::run_sources(
            &self.env_variables,
            &self.auto_var_files,
            &self.variables,
        )
    }

    pub fn fill(self, request: &mut RunRequest) {
        request.variables = self.variables;
        request.auto_var_files = self.auto_var_files;
        request.env_variables = self.env_variables;
    }
}

/// Every variables file a request carries, by name: their text lets
/// diagnostics show the offending line like those in `.tf` files.
pub fn sources(request: &RunRequest) -> BTreeMap<String, String> {
    let named = request.variables.iter().filter_map(|a| match a {
        VariableArg::File { name, content } => Some((name.clone(), content.clone())),
        VariableArg::Var { .. } => None,
    });
    request
        .auto_var_files
        .iter()
        .cloned()
        .chain(named)
        .collect()
}

static INPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// `-input=false`: never ask for a variable's value.
pub fn set_input(on: bool) {
    INPUT.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The variable names a variables file defines (HCL or JSON); none when it
/// does not parse (the run reports that).
fn names_in(file: &str, content: &str) -> Vec<String> {
    if file.ends_with(".json") {
        return serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(content)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
    }
    hcl::parse(content)
        .map(|body| body.attributes().map(|a| a.key().to_string()).collect())
        .unwrap_or_default()
}

/// Root variables that are required (no default) and that nothing sets:
/// no -var, no variables file, no TF_VAR_ environment variable.
pub fn missing(files: &BTreeMap<String, String>, inputs: &VarInputs) -> Vec<MissingVariable> {
    let (Some(config), _) = fleetform_lang::config::load_config(files) else {
        return Vec::new();
    };
    let mut set: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for v in &inputs.variables {
        match v {
            VariableArg::Var { name, .. } => {
                set.insert(name.clone());
            }
            VariableArg::File { name, content } => set.extend(names_in(name, content)),
        }
    }
    for (name, content) in &inputs.auto_var_files {
        set.extend(names_in(name, content));
    }
    for (key, _) in &inputs.env_variables {
        set.insert(key.trim_start_matches("TF_VAR_").to_string());
    }
    config
        .root
        .module
        .variables
        .values()
        .filter(|v| v.default.is_none() && !set.contains(&v.name))
        .map(|v| MissingVariable {
            name: v.name.clone(),
            description: v.description.clone(),
            ephemeral: v.ephemeral,
        })
        .collect()
}

/// A required root variable nothing sets.
#[derive(Debug, PartialEq)]
pub struct MissingVariable {
    pub name: String,
    pub description: Option<String>,
    /// Said in the prompt (`var.token (ephemeral)`), as Terraform does.
    pub ephemeral: bool,
}

/// Asks on the terminal, as Terraform does, for every required root
/// variable nothing sets; only when input is allowed and standard input is
/// a terminal (otherwise the run reports "No value for required variable").
/// A value is read as `-var` reads it.
pub fn prompt_missing(
    files: &BTreeMap<String, String>,
    inputs: &mut VarInputs,
) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    if !INPUT.load(std::sync::atomic::Ordering::Relaxed) || !std::io::stdin().is_terminal() {
        return Ok(());
    }
    for MissingVariable {
        name,
        description,
        ephemeral,
    } in missing(files, inputs)
    {
        let mut out = std::io::stdout().lock();
        let note = if ephemeral { " (ephemeral)" } else { "" };
        writeln!(out, "var.{name}{note}")?;
        if let Some(d) = description.filter(|d| !d.trim().is_empty()) {
            for line in d.lines() {
                writeln!(out, "  {line}")?;
            }
            writeln!(out)?;
        }
        write!(out, "  Enter a value: ")?;
        out.flush()?;
        drop(out);
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        println!();
        let value = line.trim_end_matches(['\n', '\r']).to_string();
        inputs.variables.push(VariableArg::Var { name, value });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_loaded_files_come_in_terraforms_order() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "b.auto.tfvars",
            "a.auto.tfvars.json",
            "terraform.tfvars.json",
            "terraform.tfvars",
            "c.tfvars",
            "B.auto.tfvars",
        ] {
            std::fs::write(tmp.path().join(name), name).unwrap();
        }
        std::fs::create_dir(tmp.path().join("d.auto.tfvars")).unwrap();
        let files = auto_var_files(tmp.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|(n, _)| {
                Path::new(n)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "terraform.tfvars",
                "terraform.tfvars.json",
                "B.auto.tfvars",
                "a.auto.tfvars.json",
                "b.auto.tfvars"
            ]
        );
        assert!(files.iter().all(|(n, text)| n.ends_with(text.as_str())));
    }

    #[test]
    fn var_files_must_exist_and_vars_must_be_assignments() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope.tfvars").display().to_string();
        let e = collect(tmp.path(), &VarArgs(vec![VarArg::File(missing.clone())])).unwrap_err();
        assert_eq!(e.summary, "Failed to read variables file");
        assert_eq!(
            e.detail,
            format!("Given variables file {missing} does not exist.")
        );
        let e = collect(tmp.path(), &VarArgs(vec![VarArg::Var("x".into())])).unwrap_err();
        assert_eq!(e.summary, "Invalid -var option");
    }

    #[test]
    fn only_named_tf_var_environment_variables_count() {
        let env = [
            ("TF_VAR_b", "2"),
            ("TF_VAR_a", "x=y"),
            ("TF_VAR_", "nameless"),
            ("PATH", "/bin"),
            ("tf_var_c", "other case"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        assert_eq!(
            env_variables(env),
            [
                ("a".to_string(), "x=y".to_string()),
                ("b".to_string(), "2".to_string())
            ]
        );
    }
}
