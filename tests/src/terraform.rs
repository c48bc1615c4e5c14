//! Terraform 1.11 (`terraform` on `PATH`) as the reference a test compares
//! fleetform with: found once per scenario (a `SKIP:` line when it is
//! absent or another version), with a CLI configuration whose
//! `dev_overrides` point at our provider binaries and a `HOME` of its own.

use crate::{CliRun, bin_dir};
use std::path::Path;
use std::process::{Command, Stdio};

/// Terraform 1.11 with a CLI configuration pointing at our providers.
pub struct Terraform {
    /// Holds the CLI configuration and serves as `HOME`.
    home: tempfile::TempDir,
}

impl Terraform {
    /// `terraform` when it is 1.11, with `providers` (`hashicorp/null`,
    /// `fleetform/sim`, ...) taken from our binaries; otherwise None, having
    /// printed why `scenario`'s comparison is skipped.
    pub fn find(scenario: &str, providers: &[&str]) -> Option<Terraform> {
        let out = Command::new("terraform")
            .arg("version")
            .env("CHECKPOINT_DISABLE", "1")
            .output();
        match out {
            Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("Terraform v1.11.") => {}
            _ => {
                println!("SKIP: {scenario}: the comparison with Terraform (no terraform 1.11)");
                return None;
            }
        }
        let home = tempfile::tempdir().expect("terraform home");
        let overrides: String = providers
            .iter()
            .map(|p| format!("    \"{p}\" = \"{}\"\n", bin_dir().display()))
            .collect();
        std::fs::write(
            home.path().join("cli.tfrc"),
            format!(
                "provider_installation {{\n  dev_overrides {{\n{overrides}  }}\n  direct {{}}\n}}\n"
            ),
        )
        .expect("terraform CLI configuration");
        Some(Terraform { home })
    }

    /// The `HOME` it runs with (its `.terraform.d` is there).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// `terraform ARGS` in `dir` with `input` on standard input.
    pub fn run(&self, dir: &Path, args: &[&str], input: &str) -> CliRun {
        use std::io::Write;
        let mut child = Command::new("terraform")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.home.path())
            .env("TF_CLI_CONFIG_FILE", self.home.path().join("cli.tfrc"))
            .env("CHECKPOINT_DISABLE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start terraform");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write terraform's input");
        let out = child.wait_with_output().expect("wait for terraform");
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// [`Terraform::run`] with `-no-color` after the arguments.
    pub fn run_plain(&self, dir: &Path, args: &[&str], input: &str) -> CliRun {
        let mut all = args.to_vec();
        all.push("-no-color");
        self.run(dir, &all, input)
    }
}
