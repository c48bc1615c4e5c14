//! Command-line arguments, in Terraform's style: single-dash long flags
//! (`-auto-approve`, `-var k=v`, `-chdir=DIR`) are accepted as written.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// fleetform plans and applies Terraform configurations (same .tf language,
/// same providers), executing each run with a fleet of workers.
///
/// Without --coordinator (or FLEETFORM_COORDINATOR) it runs in embedded
/// mode: coordinator and workers inside this process, state under
/// .fleetform/ in the working directory.
#[derive(Parser, Debug)]
#[command(
    name = "fleetform",
    version,
    propagate_version = true,
    after_help = "Examples:\n  fleetform -chdir=examples/quickstart apply -auto-approve\n  fleetform plan -detailed-exitcode -var servers=5\n  FLEETFORM_COORDINATOR=http://127.0.0.1:7400 fleetform apply"
)]
pub struct Cli {
    /// Switch to DIR before doing anything else (like terraform -chdir).
    #[arg(long, global = true, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
    /// Coordinator to talk to, e.g. http://127.0.0.1:7400. Embedded mode when unset.
    #[arg(long, global = true, env = "FLEETFORM_COORDINATOR", value_name = "URL")]
    pub coordinator: Option<String>,
    /// Workspace (state) name.
    #[arg(
        long,
        global = true,
        env = "FLEETFORM_WORKSPACE",
        default_value = "default"
    )]
    pub workspace: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show the changes required by the current configuration.
    Plan(PlanArgs),
    /// Create or update infrastructure.
    Apply(ApplyArgs),
    /// Destroy previously-created infrastructure.
    Destroy(ApplyArgs),
    /// Check whether the configuration is valid (syntax, references, cycles).
    Validate(DirArg),
    /// Show output values from the state.
    Output(OutputArgs),
    /// Inspect the state.
    #[command(subcommand)]
    State(StateCommand),
    /// Mark a resource instance as not fully functional: the next plan replaces it.
    Taint(AddressArg),
    /// Remove the tainted mark from a resource instance.
    Untaint(AddressArg),
}

#[derive(Args, Debug, Clone, Default)]
pub struct DirArg {
    /// Configuration directory (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Set a variable: -var 'name=value'. Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Refresh prior objects from the real infrastructure before planning;
    /// -refresh=false plans against the state as recorded.
    #[arg(long = "refresh", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub refresh: bool,
    /// Configuration directory (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Exit 0 when there are no changes, 2 when there are, 1 on error.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Plan to destroy every object in the state.
    #[arg(long)]
    pub destroy: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Apply without asking for approval.
    #[arg(long)]
    pub auto_approve: bool,
}

#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print a string output's value without quotes.
    #[arg(long)]
    pub raw: bool,
    /// Name of one output (default: all).
    pub name: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// List resource instances in the state.
    List,
    /// Show the attributes of one resource instance.
    Show(AddressArg),
}

#[derive(Args, Debug, Clone)]
pub struct AddressArg {
    /// Resource instance address, e.g. sim_object.a[0].
    pub address: String,
}

/// Rewrites Terraform-style `-long-flag` arguments to `--long-flag` so clap
/// accepts both spellings. Single letters (`-h`) are left alone, as is
/// everything after `--` and anything that is a value (`-var` takes one).
pub fn normalize<I: IntoIterator<Item = String>>(args: I) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest_literal = false;
    for (i, a) in args.into_iter().enumerate() {
        if i == 0 || rest_literal {
            out.push(a);
            continue;
        }
        if a == "--" {
            rest_literal = true;
            out.push(a);
            continue;
        }
        let name = a.trim_start_matches('-');
        let single_dash_long = a.starts_with('-')
            && !a.starts_with("--")
            && name.len() > 1
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if single_dash_long {
            out.push(format!("-{a}"));
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(normalize(args.iter().map(|s| s.to_string()))).unwrap()
    }

    #[test]
    fn accepts_terraform_style_flags() {
        let cli = parse(&[
            "fleetform",
            "-chdir=examples/x",
            "apply",
            "-auto-approve",
            "-var",
            "n=3",
            "-var=m=4",
        ]);
        assert_eq!(
            cli.chdir.as_deref(),
            Some(std::path::Path::new("examples/x"))
        );
        match cli.command {
            Command::Apply(a) => {
                assert!(a.auto_approve);
                assert_eq!(a.run.vars, ["n=3", "m=4"]);
            }
            other => panic!("{other:?}"),
        }
        let cli = parse(&[
            "fleetform",
            "plan",
            "-detailed-exitcode",
            "--refresh=false",
            "dir",
        ]);
        match cli.command {
            Command::Plan(p) => {
                assert!(p.detailed_exitcode);
                assert!(!p.run.refresh);
                assert_eq!(p.run.dir.as_deref(), Some(std::path::Path::new("dir")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_that_look_like_flags_after_double_dash_are_kept() {
        assert_eq!(
            normalize(["x".into(), "--".into(), "-abc".into()]),
            ["x", "--", "-abc"]
        );
        assert_eq!(normalize(["x".into(), "-h".into()]), ["x", "-h"]);
    }
}
