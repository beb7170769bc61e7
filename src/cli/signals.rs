//! Termination signals for the commands that own a terminal or serve sessions.
//!
//! SIGTERM, SIGINT (as sent by `kill`; in raw mode Ctrl-C is a key), SIGQUIT and
//! SIGHUP would otherwise end the process at once and leave the terminal in raw mode
//! on the alternate screen with the cursor hidden. The console, `demo` and
//! `serve-ssh` register for them ([`Terminations::register`]) *before* they take the
//! terminal, stop the console when one arrives (its terminal guard restores the
//! terminal as it is dropped), shut their tasks down and exit with 128 + the signal
//! number ([`Signalled`], mapped by `cli::main`), as a shell reports a process killed
//! by that signal.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The process was asked to end by signal `.0`; its exit status is 128 + `.0`.
#[derive(Debug, thiserror::Error)]
#[error("ended by signal {0}")]
pub struct Signalled(pub i32);

impl Signalled {
    /// 128 + the signal number.
    pub fn exit_code(&self) -> i32 {
        128 + self.0
    }
}

/// The exit code for an error that is a [`Signalled`], if it is one.
pub fn signalled_exit(err: &anyhow::Error) -> Option<i32> {
    err.chain()
        .find_map(|c| c.downcast_ref::<Signalled>())
        .map(Signalled::exit_code)
}

/// Handlers for SIGTERM, SIGINT, SIGQUIT and SIGHUP, registered while this lives in a
/// tokio runtime (from then on these signals no longer end the process by themselves).
pub struct Terminations {
    streams: Vec<(i32, Signal)>,
}

impl Terminations {
    /// Registers the four handlers; call inside the runtime, before taking the terminal.
    pub fn register() -> std::io::Result<Terminations> {
        let kinds = [
            (15, SignalKind::terminate()),
            (2, SignalKind::interrupt()),
            (3, SignalKind::quit()),
            (1, SignalKind::hangup()),
        ];
        let mut streams = Vec::with_capacity(kinds.len());
        for (n, kind) in kinds {
            streams.push((n, signal(kind)?));
        }
        Ok(Terminations { streams })
    }

    /// Waits for the next of the four signals; its number.
    pub async fn recv(&mut self) -> i32 {
        let waits = self.streams.iter_mut().map(|(n, s)| {
            let n = *n;
            Box::pin(async move {
                s.recv().await;
                n
            })
        });
        futures::future::select_all(waits).await.0
    }
}

/// Runs `work` until it ends or a termination signal arrives; dropping `work` then
/// drops whatever it owns (the terminal guard restores the terminal). The signal is
/// returned as the error [`Signalled`].
pub async fn until_signalled<T>(
    terms: &mut Terminations,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::select! {
        biased;
        n = terms.recv() => Err(Signalled(n).into()),
        r = work => r,
    }
}
