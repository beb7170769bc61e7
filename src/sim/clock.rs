//! Simulated time: the clock only the simulator moves. Everything else reads it through
//! the one [`Clock`] type ([`SimClock::clock`]). The scenario annotations' durations
//! (`"2h"`, `"90m"`, `"1h30m"`, `"30s"`, `"1d"`) are [`crate::duration`]'s syntax.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use crate::clock::Clock;

/// The simulated clock, in milliseconds since the Unix epoch. Cloning shares it.
///
/// Only [`crate::sim::cluster::SimCluster`] moves it (forward only); everything else
/// reads it, e.g. the object store for `creationTimestamp`.
#[derive(Clone, Debug)]
pub struct SimClock {
    now_ms: Arc<AtomicI64>,
    start_ms: i64,
    /// Stamp milliseconds (`…:13.123Z`): set when the story runs faster than the clock,
    /// so events less than a second apart keep their order (Kueue orders by them).
    millis: Arc<AtomicBool>,
}

impl SimClock {
    /// A clock standing at `start_ms`.
    pub fn new(start_ms: i64) -> Self {
        Self {
            now_ms: Arc::new(AtomicI64::new(start_ms)),
            start_ms,
            millis: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Current simulated time (ms since the epoch).
    pub fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }

    /// When the simulation started (ms since the epoch).
    pub fn start_ms(&self) -> i64 {
        self.start_ms
    }

    /// Simulated time since the start (ms).
    pub fn elapsed_ms(&self) -> i64 {
        self.now_ms() - self.start_ms
    }

    /// Moves the clock to `t` if that is later (time never goes back).
    pub(crate) fn advance(&self, t: i64) {
        self.now_ms.fetch_max(t, Ordering::SeqCst);
    }

    /// A reader of this clock: what the object store, the source and the console take.
    pub fn clock(&self) -> Clock {
        let now = Arc::clone(&self.now_ms);
        Clock::from_fn(move || ms_to_timestamp(now.load(Ordering::SeqCst)))
    }

    /// Current simulated time as a timestamp.
    pub fn timestamp(&self) -> jiff::Timestamp {
        ms_to_timestamp(self.now_ms())
    }

    /// Current simulated time as Kubernetes prints it (`2026-01-01T00:10:00Z`), with
    /// milliseconds when [`set_millis`](Self::set_millis) asked for them.
    pub fn rfc3339(&self) -> String {
        self.format(self.now_ms())
    }

    /// `ms` as this clock stamps times.
    pub fn format(&self, ms: i64) -> String {
        if self.millis.load(Ordering::Relaxed) {
            ms_to_timestamp(ms)
                .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string()
        } else {
            rfc3339(ms)
        }
    }

    /// Stamps carry milliseconds from now on (RFC 3339 allows them; clients parse them).
    pub fn set_millis(&self, on: bool) {
        self.millis.store(on, Ordering::Relaxed);
    }
}

pub use crate::clock::ms_to_timestamp;

/// `ms` as Kubernetes prints times (second resolution, UTC).
pub fn rfc3339(ms: i64) -> String {
    ms_to_timestamp(ms)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A simulated offset as `+HH:MM:SS` (hours keep counting past 24: `+170:00:00`).
pub fn format_offset(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let s = ms.unsigned_abs() / 1000;
    format!("{sign}{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// The scenario annotations' durations: the one syntax of [`crate::duration`].
pub use crate::duration::parse_duration_ms as parse_duration;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        assert_eq!(format_offset(4_210_000), "+01:10:10");
        assert_eq!(format_offset(7 * 86_400_000), "+168:00:00");
    }

    #[test]
    fn clock_only_moves_forward() {
        let c = SimClock::new(1_000);
        c.advance(5_000);
        c.advance(2_000);
        assert_eq!(c.now_ms(), 5_000);
        assert_eq!(c.elapsed_ms(), 4_000);
    }
}
