//! How a command ends when its output cannot be written: standard output
//! (or error) is a pipe whose reader has gone (`fleetform state list |
//! head -1`), or a file that refuses the write (`> /dev/full`).
//!
//! Rust starts programs with SIGPIPE ignored, so such a write fails with
//! EPIPE, and `println!` then panics ("failed printing to stdout") with a
//! backtrace and exit status 101. C tools and Go programs, Terraform among
//! them, die of SIGPIPE there instead, quietly. Giving the whole process
//! SIGPIPE's default action back would do that too, but in embedded mode
//! this process also hosts the coordinator, the workers and the pipes to
//! provider plugins: a provider that died would then kill the CLI. So only
//! a failed write to standard output or error ends the process. A panic
//! hook recognises `print!`'s panic (every command prints with it, in
//! every module), and `main` recognises EPIPE in an error returned by a
//! direct write (`fmt`, the approval prompt) and in its final flush.
//!
//! A closed pipe ends the process by SIGPIPE: its default action restored
//! and the signal raised, as Terraform and coreutils end. A shell shows
//! status 141 either way, but a parent that waits for the process (xargs,
//! Python's subprocess, Go's os/exec) sees "killed by SIGPIPE" exactly as
//! it does for `terraform`, not an exit status of its own. Any other write
//! failure on standard output is an error (exit 1) said on standard error.

use nix::errno::Errno;
use nix::sys::signal::{SigHandler, SigSet, Signal};
use std::io::Write;

/// The stream a write failed on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Installs the panic hook that ends the process quietly when `print!` or
/// `eprint!` fails; every other panic is reported by the hook installed
/// before (the default one: message and backtrace as always).
pub fn install() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some((stream, error)) = info.payload_as_str().and_then(print_failure) {
            write_failed(stream, error.ends_with(&epipe_suffix()), error);
        }
        report(info);
    }));
}

/// The stream and the error of `print!`'s panic ("failed printing to
/// stdout: Broken pipe (os error 32)"), the only panic std raises with
/// this text.
fn print_failure(message: &str) -> Option<(Stream, &str)> {
    if let Some(error) = message.strip_prefix("failed printing to stdout: ") {
        Some((Stream::Stdout, error))
    } else {
        message
            .strip_prefix("failed printing to stderr: ")
            .map(|error| (Stream::Stderr, error))
    }
}

/// How `std::io::Error` displays EPIPE: the number is the same in every
/// locale.
fn epipe_suffix() -> String {
    format!("(os error {})", Errno::EPIPE as i32)
}

/// Whether `error` is a write that failed because standard output or
/// error is a pipe nobody reads: EPIPE somewhere in its chain, and one of
/// the two streams is such a pipe (an EPIPE from writing to a child
/// process is an error like any other).
pub fn is_closed_output(error: &anyhow::Error) -> bool {
    let epipe = error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.raw_os_error() == Some(Errno::EPIPE as i32))
    });
    epipe && (reader_gone(&std::io::stdout()) || reader_gone(&std::io::stderr()))
}

/// Whether `stream` is a pipe (or socket) whose reading end is closed:
/// poll reports POLLERR (Linux) or POLLHUP for it.
fn reader_gone(stream: &impl std::os::fd::AsFd) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLOUT)];
    poll(&mut fds, PollTimeout::ZERO).is_ok()
        && fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// Ends the process after the command's last write: flushes standard
/// output, whose buffer may still hold the end of what it printed (`print!`
/// without a newline), and ends as [`write_failed`] when that fails.
pub fn flush_stdout() {
    if let Err(e) = std::io::stdout().flush() {
        write_error(Stream::Stdout, &e);
    }
}

/// Ends the process after a write to `stream` failed with `error`.
pub fn write_error(stream: Stream, error: &std::io::Error) -> ! {
    let epipe = error.raw_os_error() == Some(Errno::EPIPE as i32);
    write_failed(stream, epipe, &error.to_string())
}

/// Ends the process after a write to `stream` failed with `error`: by
/// SIGPIPE when the reader is gone (`epipe`), else with exit status 1,
/// saying why when the stream was standard output.
fn write_failed(stream: Stream, epipe: bool, error: &str) -> ! {
    if epipe {
        die_of_sigpipe();
    }
    if stream == Stream::Stdout {
        // Not eprintln!: a failure here must not panic inside the hook.
        let _ = writeln!(
            std::io::stderr(),
            "Error: writing to standard output: {error}"
        );
    }
    std::process::exit(1)
}

/// Ends the process as a tool whose standard output was closed ends.
#[allow(unsafe_code)]
pub fn die_of_sigpipe() -> ! {
    // SAFETY: SIG_DFL installs no handler, so no code of ours ever runs in
    // a signal context; the previous disposition (ignore) is not needed
    // again, the process ends here.
    let restored = unsafe { nix::sys::signal::signal(Signal::SIGPIPE, SigHandler::SigDfl) };
    if restored.is_ok() {
        // A mask inherited from the parent could hold the signal back.
        let mut pipe = SigSet::empty();
        pipe.add(Signal::SIGPIPE);
        let _ = pipe.thread_unblock();
        let _ = nix::sys::signal::raise(Signal::SIGPIPE);
    }
    // Not reached unless the signal could not be delivered: the status a
    // shell shows for a process SIGPIPE killed.
    std::process::exit(128 + Signal::SIGPIPE as i32)
}
