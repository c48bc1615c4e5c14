//! `plan -generate-config-out=FILE`: for `import` blocks whose target has
//! no resource block, an empty stand-in block goes with the run, planning
//! writes the block from the imported object
//! ([`fleetform_shared::plan::Plan::generated_config`]) and this writes
//! them to FILE, as Terraform does. FILE must be new: Terraform refuses to
//! write into an existing one.

use fleetform_lang::config::load_config;
use fleetform_shared::ResourceMode;
use fleetform_shared::addr::InstanceKey;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::Plan;
use fleetform_shared::wire::RunRequest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Configuration being generated in a run.
pub(super) struct Generation {
    /// Where it goes.
    out: PathBuf,
    /// The stand-in file's name among the run's files.
    key: String,
}

/// Adds the stand-in blocks to `request` for import targets without
/// configuration; `None` when every target has its block (nothing to
/// write, no file made).
pub(super) fn prepare(
    out: &Path,
    request: &mut RunRequest,
) -> Result<Option<Generation>, Diagnostic> {
    if out.exists() {
        return Err(Diagnostic::error(
            "Target generated file already exists",
            "fleetform can only write generated config into a new file. Either choose a different target location or move all existing configuration out of the target file, delete it and try again.",
        ));
    }
    // A configuration that does not load is reported by the run itself.
    let (Some(config), _) = load_config(&request.files) else {
        return Ok(None);
    };
    let module = &config.root.module;
    let mut missing: Vec<String> = module
        .imports
        .iter()
        .map(|i| &i.to)
        .filter(|to| to.module.is_root() && *to.key() == InstanceKey::None)
        .map(|to| &to.resource.resource)
        .filter(|r| r.mode == ResourceMode::Managed && !module.resources.contains_key(r))
        .map(|r| r.to_string())
        .collect();
    missing.sort();
    missing.dedup();
    if missing.is_empty() {
        return Ok(None);
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "generated.tf".into());
    let mut key = name.clone();
    let mut n = 1;
    while request.files.contains_key(&key) {
        n += 1;
        key = format!("{n}-{name}");
    }
    let stand_ins: String = missing
        .iter()
        .map(|r| {
            let (type_name, name) = r.split_once('.').expect("a resource address");
            format!("resource \"{type_name}\" \"{name}\" {{}}\n")
        })
        .collect();
    request.files.insert(key.clone(), stand_ins);
    request.options.generate_config = missing;
    Ok(Some(Generation {
        out: out.to_path_buf(),
        key,
    }))
}

/// The file's text: Terraform's header, then each block.
fn file_text(plan: &Plan) -> String {
    let mut text = "# __generated__ by fleetform\n# Please review these resources and move them into your main configuration files.\n".to_string();
    for block in plan.generated_config.values() {
        text.push('\n');
        text.push_str(block);
    }
    text
}

/// Writes what `plan` generated to the file (a new one), and puts it in
/// place of the stand-ins among `files` (a saved plan's configuration);
/// whether anything was written.
pub(super) fn write(
    g: &Generation,
    plan: &Plan,
    files: &mut BTreeMap<String, String>,
) -> anyhow::Result<bool> {
    use anyhow::Context;
    use std::io::Write;
    if plan.generated_config.is_empty() {
        return Ok(false);
    }
    let text = file_text(plan);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&g.out)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing the generated configuration to {}", g.out.display()))?;
    files.insert(g.key.clone(), text);
    Ok(true)
}

/// After the plan: the warning Terraform gives, and where the file went.
pub(super) fn warning() -> Diagnostic {
    Diagnostic::warning(
        "Config generation is experimental",
        "Generating configuration during import is currently experimental, and the generated configuration format may change in future versions.",
    )
}

/// Said after the plan's rule, wrapped as Terraform wraps it (at 78
/// columns, a word at a time).
pub(super) fn written_note(g: &Generation) -> String {
    let text = format!(
        "fleetform has generated configuration and written it to {}. Please review the configuration and edit it as necessary before adding it to version control.",
        g.out.display()
    );
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= 78 => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_wraps_where_terraforms_does() {
        let g = Generation {
            out: PathBuf::from("gen.tf"),
            key: String::new(),
        };
        assert_eq!(
            written_note(&g),
            "fleetform has generated configuration and written it to gen.tf. Please review\nthe configuration and edit it as necessary before adding it to version\ncontrol."
        );
    }
}
