//! Integration test harness: starts real `nats-server`, a real S3 server
//! (moto), coordinators and workers as processes on free ports and temp
//! dirs, and kills them when dropped.
//!
//! The test tools come from `tests/run.sh`, which installs them into
//! `.test-tools/venv` and exports `FLEETFORM_TEST_TOOLS`; the fleetform
//! binaries come from the same cargo target directory as the test.
//!
//! By what they serve (all re-exported here, so tests name them from the
//! crate's root):
//! - `process`: binaries, tools, ports, child processes, time-limited commands;
//! - `servers`: `nats-server` and the S3 server (moto);
//! - `fleet`: coordinators and workers, and the tests' project;
//! - `cli`: running the `fleetform` CLI (to completion, on a terminal,
//!   with input, in the background);
//! - `sim`: configurations of the `sim` provider and what its store holds;
//! - `faults`: a proxy that cuts connections, a seeded generator;
//! - `link`: a simulated network link between hosts (latency, loss,
//!   partitions) for TCP connections through a proxy;
//! - `terraform`, `texts`, `tftest`, `exprgen`, `exprdiff`: comparing
//!   with Terraform 1.11.

pub mod exprdiff;
pub mod exprgen;
pub mod netns;
pub mod terraform;
pub mod texts;
pub mod tftest;

mod cli;
mod faults;
mod fleet;
mod link;
mod process;
mod servers;
mod sim;

pub use cli::*;
pub use faults::*;
pub use fleet::*;
pub use link::*;
pub use process::*;
pub use servers::*;
pub use sim::*;
