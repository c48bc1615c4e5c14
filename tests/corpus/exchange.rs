//! The state exchange of the corpus test: after both applies, each tool
//! takes over the other's state in a copy of the applied module (the files
//! the apply wrote included) and must plan no change. Terraform gets
//! fleetform's `state pull` as its `terraform.tfstate`; fleetform
//! `state push`es Terraform's `terraform.tfstate` into a fresh workspace.
//!
//! Included by tests/tests/corpus.rs (`#[path]`).

use super::Module;
use super::tool::Side;
use std::path::Path;

/// Copies a module's extracted tree with what an apply wrote, but not the
/// tools' own directories, state or plan file.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(".terraform")
            || name.starts_with(".fleetform")
            || name.starts_with("terraform.tfstate")
            || name == "corpus.tfplan"
        {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// The two tools and the trees their applies left (`<tree>/<root>` is the
/// module's root); copies go beside them.
pub struct Applied<'a> {
    pub ff: &'a Side<'a>,
    pub tf: &'a Side<'a>,
    pub ff_tree: &'a Path,
    pub tf_tree: &'a Path,
}

impl Applied<'_> {
    /// Terraform reads fleetform's state: Err with what it would change.
    pub fn terraform_reads_fleetform(
        &self,
        m: &Module,
        envs: &[(&str, String)],
    ) -> Result<(), String> {
        let pulled = self.ff.run(
            vec!["state".into(), "pull".into()],
            &self.ff_tree.join(&m.root),
            envs,
            "pull",
        )?;
        let copy = self.ff_tree.with_extension("for-terraform");
        copy_tree(self.ff_tree, &copy);
        let root = copy.join(&m.root);
        std::fs::write(root.join("terraform.tfstate"), &pulled.stdout).unwrap();
        if !self.tf.pre.is_empty() {
            let pre = self.tf.pre.iter().map(|s| s.to_string()).collect();
            self.tf.run(pre, &root, envs, "exchange-pre")?;
        }
        self.tf
            .plans_nothing(m, &root, envs, "exchange-plan")
            .map_err(|e| format!("Terraform, given fleetform's state, {e}"))
    }

    /// fleetform reads Terraform's state: Err with what it would change.
    pub fn fleetform_reads_terraform(
        &self,
        m: &Module,
        envs: &[(&str, String)],
    ) -> Result<(), String> {
        let state = self.tf_tree.join(&m.root).join("terraform.tfstate");
        let copy = self.tf_tree.with_extension("for-fleetform");
        copy_tree(self.tf_tree, &copy);
        let root = copy.join(&m.root);
        let push = vec!["state".into(), "push".into(), state.display().to_string()];
        self.ff
            .run(push, &root, envs, "push")
            .map_err(|e| format!("fleetform cannot take Terraform's state: {e}"))?;
        self.ff
            .plans_nothing(m, &root, envs, "exchange-plan")
            .map_err(|e| format!("fleetform, given Terraform's state, {e}"))
    }
}
