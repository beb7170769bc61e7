//! Standard output for the headless commands: a closed pipe ends the command quietly.
//!
//! Rust ignores SIGPIPE, so `println!` into a pipe whose reader has gone (`| head -1`)
//! panics (exit 101). Every headless command writes through [`out`] instead: a
//! broken pipe becomes [`BrokenPipe`], which `cli::main` turns into exit
//! [`BROKEN_PIPE_EXIT`] (141 = 128 + SIGPIPE, the status a shell reports for
//! `ls | head` under `set -o pipefail`) with nothing on stderr.

use std::io::{ErrorKind, Write};

/// The exit status of a command whose stdout reader went away: 128 + SIGPIPE (13).
pub const BROKEN_PIPE_EXIT: i32 = 141;

/// stdout's reader went away: the command stops writing and exits [`BROKEN_PIPE_EXIT`].
#[derive(Debug, thiserror::Error)]
#[error("stdout closed (broken pipe)")]
pub struct BrokenPipe;

/// Writes `text` to stdout and flushes; a broken pipe is [`BrokenPipe`].
pub fn out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(BrokenPipe.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// [`out`] with a trailing newline.
pub fn outln(text: &str) -> anyhow::Result<()> {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    out(&line)
}

/// The exit code for a command's error: [`BROKEN_PIPE_EXIT`] for a closed stdout.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|c| c.downcast_ref::<BrokenPipe>().is_some())
}

/// Writes `value` as JSON (pretty or one line) and a newline to stdout, straight from
/// the value through a buffer (no intermediate `Value` tree); a broken pipe is
/// [`BrokenPipe`].
pub fn out_json<T: serde::Serialize>(value: &T, pretty: bool) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if pretty {
        serde_json::to_writer_pretty(&mut w, value)
    } else {
        serde_json::to_writer(&mut w, value)
    };
    if let Err(e) = written {
        return Err(match e.io_error_kind() {
            Some(ErrorKind::BrokenPipe) => BrokenPipe.into(),
            _ => anyhow::Error::new(e).context("cannot write to stdout"),
        });
    }
    match w.write_all(b"\n").and_then(|()| w.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(BrokenPipe.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}
