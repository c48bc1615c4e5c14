//! `fleetform`: the command line. Thin: it packs the configuration, talks to
//! a coordinator (or starts an embedded one) and renders what happens.
//!
//! # Layout
//! - `args`: the commands and flags (Terraform spelling accepted).
//! - `closed_output`: how a command ends when its output cannot be written.
//! - `client`: the coordinator API client.
//! - `embedded`: coordinator and workers in process.
//! - `render`: events, plans, outputs for people.
//! - `json_events`: events for tools (`-json`, Terraform's UI format).
//! - `commands`: what each command does.
//! - `present`: plan text, JSON plans and state, JSON schemas.
//! - `init`: `init` (module installation; later providers and backend).
//! - `inspect`: `show` and `graph`.
//! - `tfgraph`: Terraform's plan and apply graphs in DOT.
//! - `modules_cmd`: `modules` (the declared module tree).
//! - `test_cmd`: `test` (the runs of `.tftest.hcl` files).
//! - `providers_cmd`: `providers schema -json`.
//! - `vars`: the variable values a run is given (`-var`, `-var-file`,
//!   `*.tfvars`, `TF_VAR_*`).
//! - `workspaces`: which workspace a command uses, `workspace ...`,
//!   `state history` and `state pull`.

mod args;
mod bundle;
mod client;
mod closed_output;
mod commands;
mod console;
mod credentials;
mod embedded;
mod fmt_cmd;
mod follow;
mod init;
mod inspect;
mod json_events;
mod live;
mod login_cmd;
mod metadata_cmd;
mod migrate;
mod modules_cmd;
mod present;
mod project;
mod providers_cmd;
mod render;
mod runs;
mod test_cmd;
mod tfgraph;
mod vars;
mod workspaces;

use clap::Parser;
use std::process::ExitCode;

#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    closed_output::install();
    let code = run();
    closed_output::flush_stdout();
    code
}

fn run() -> ExitCode {
    let cli = match args::Cli::try_parse_from(args::normalize(std::env::args())) {
        Ok(cli) => cli,
        Err(e) => return refused(&e),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLEETFORM_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    fleetform_coordinator::server::install_crypto_provider();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: starting the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) if closed_output::is_closed_output(&e) => closed_output::die_of_sigpipe(),
        Err(e) => {
            // A coordinator's refusal reads as its message, not as gRPC's
            // "code: ..., message: ..." wrapping.
            match e.downcast_ref::<tonic::Status>() {
                Some(status) if status.code() == tonic::Code::Unauthenticated => {
                    eprintln!("Error: not authenticated: {}", status.message())
                }
                Some(status) if status.code() == tonic::Code::PermissionDenied => {
                    eprintln!("Error: permission denied: {}", status.message())
                }
                Some(status) => eprintln!("Error: {}", status.message()),
                None => eprintln!("Error: {e:#}"),
            }
            ExitCode::from(1)
        }
    }
}

/// A command line clap does not run: help and version (printed on standard
/// output, exit 0), or a usage error (its message and the usage on
/// standard error, exit 1 as in Terraform; clap's own 2 would read as
/// "changes present" to a script that runs `plan -detailed-exitcode`).
fn refused(e: &clap::Error) -> ExitCode {
    if let Err(write) = e.print() {
        let stream = if e.use_stderr() {
            closed_output::Stream::Stderr
        } else {
            closed_output::Stream::Stdout
        };
        closed_output::write_error(stream, &write);
    }
    ExitCode::from(if e.use_stderr() { 1 } else { 0 })
}
