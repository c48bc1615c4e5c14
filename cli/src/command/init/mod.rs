//! `fleetform init`: prepares a working directory the way `terraform init`
//! and `tofu init` do, writing what they write, so either tool can take
//! over a directory the other initialised.
//!
//! Steps, each its own module called from [`run`] in order:
//! - [`modules`]: install what `module` blocks call into
//!   `.terraform/modules/` and record it in `modules.json`.
//!
//! - the lock file ([`crate::provider::lock_file`]): check the providers
//!   installed here against the dependency lock file,
//!   `.terraform.lock.hcl`, and write it.
//!
//! Binding a project (`-project`) and state migration (`-migrate-state`)
//! follow in [`with_coordinator`], with a coordinator to bind and push to.

mod git;
mod manifest;
mod modules;
mod source;
pub mod with_coordinator;

use crate::args::InitArgs;
use fleetform_lang::config::load_module;
use fleetform_shared::diag::Severity;
use std::path::PathBuf;

/// Runs `fleetform init`; the exit code is 0 when everything was prepared,
/// 1 when any step reported an error.
pub fn run(args: &InitArgs) -> anyhow::Result<u8> {
    let root = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(root_files) = modules::read_module_files(&root, ".") else {
        anyhow::bail!("reading configuration directory {}", root.display());
    };
    if root_files.is_empty() {
        println!(
            "fleetform initialized in an empty directory!\n\nThe directory has no fleetform configuration files (.tf). You may begin working\nwith fleetform immediately by creating configuration files."
        );
        return Ok(0);
    }
    let mut files = root_files.clone();
    let (root_module, mut diags) = load_module(&root_files);
    let mut stdout = std::io::stdout();
    if let Some(m) = &root_module
        && args.get
        && !m.module_calls.is_empty()
    {
        println!(
            "{}",
            if args.upgrade {
                "Upgrading modules..."
            } else {
                "Initializing modules..."
            }
        );
        diags.extend(modules::install(
            &root,
            m,
            args.upgrade,
            &mut files,
            &mut stdout,
        ));
    }
    // The providers of the whole configuration, installed modules
    // included (read back as a plan reads them). A configuration that does
    // not load yet (a module another installer must fetch) was reported by
    // the module step: its providers are checked once it loads.
    if !diags.has_errors()
        && let Ok(bundle) = crate::bundle::pack(&root)
        && let (Some(config), loaded) = fleetform_lang::config::load_config(&bundle)
        && !loaded.has_errors()
    {
        let needed = crate::provider::needed(&config);
        diags.extend(crate::provider::lock_file::update(args.upgrade, &needed));
    }
    let mut failed = false;
    for d in diags.iter() {
        failed |= d.severity == Severity::Error;
        eprint!("\n{}", crate::present::run_text::diagnostic(d, &files));
    }
    if failed {
        return Ok(1);
    }
    // With -project or -migrate-state, the state step follows (it needs a
    // coordinator): success is said once it succeeded too.
    if args.project.is_none() && !args.migrate_state {
        say_initialized();
    }
    Ok(0)
}

/// The last words of a successful `init`.
pub fn say_initialized() {
    println!(
        "\nfleetform has been successfully initialized!\n\nYou may now begin working with fleetform. Try running \"fleetform plan\" to see\nany changes that are required for your infrastructure. All fleetform commands\nshould now work.\n\nIf you ever set or change modules for fleetform, rerun this command to\nreinitialize your working directory. If you forget, other commands will\ndetect it and remind you to do so if necessary."
    );
}
