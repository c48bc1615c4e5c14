//! `fleetform`: the command line. Thin: it packs the configuration, talks to
//! a coordinator (or starts an embedded one) and renders what happens.
//!
//! # Layout
//! From the top down; a file imports only files below it.
//! - `commands`: reads the command line's global flags, starts or connects
//!   to a coordinator and dispatches to the command.
//! - `command`: what each command does, one file (or folder) per command
//!   or command family.
//! - `submit`: a run's request built from the run flags, and its view;
//!   `follow`: following a run to its end, the approval prompt.
//! - `present`: what commands show: run events for people and as JSON,
//!   plans, diagnostics, state, schemas, graphs.
//! - `provider`: the providers a configuration needs, their schemas and
//!   the dependency lock file.
//! - `workspace`, `project`: which state a command uses; `migrate`: a
//!   Terraform state found beside the configuration.
//! - `plan_file`: plan files read and written (the format is
//!   `fleetform_shared::plan`'s).
//! - `bundle`, `vars`: the packed configuration and the variable values a
//!   run is given.
//! - `client`: the connection to a coordinator; `credentials`: stored
//!   tokens; `embedded`: coordinator and workers in process.
//! - `args`: the commands and flags (Terraform spelling accepted);
//!   `closed_output`: how a command ends when its output cannot be written.

mod args;
mod bundle;
mod client;
mod closed_output;
mod command;
mod commands;
mod credentials;
mod embedded;
mod follow;
mod migrate;
mod plan_file;
mod present;
mod project;
mod provider;
mod submit;
mod vars;
mod workspace;

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
