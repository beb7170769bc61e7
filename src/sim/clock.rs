//! Simulated time: the clock only the simulator moves. Everything else reads it through
//! the one [`Clock`] type ([`SimClock::clock`]); the duration syntax of the scenario
//! annotations (`"2h"`, `"90m"`, `"1h30m"`, `"30s"`, `"1d"`).

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

/// Parses a duration such as `"2h"`, `"90m"`, `"1h30m"`, `"30s"`, `"1.5h"`, `"2d"`,
/// `"500ms"` or `"0"` into milliseconds.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration (expected e.g. \"90m\", \"2h\", \"1h30m\")".into());
    }
    if s == "0" {
        return Ok(0);
    }
    let bad = || {
        format!(
            "invalid duration {text:?} (expected e.g. \"30s\", \"90m\", \"2h\", \"1h30m\", \"1d\")"
        )
    };
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if num_len == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += value * factor;
    }
    if !total.is_finite() || total > 1e15 {
        return Err(bad());
    }
    Ok(total.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2h"), Ok(7_200_000));
        assert_eq!(parse_duration("90m"), Ok(5_400_000));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000));
        assert_eq!(parse_duration("30s"), Ok(30_000));
        assert_eq!(parse_duration("1.5h"), Ok(5_400_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration("0m"), Ok(0));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("h").is_err());
        assert!(parse_duration("5x").is_err());
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
