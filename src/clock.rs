//! Where "now" comes from: one [`Clock`] type for every reader of the time.
//!
//! A live cluster runs on the wall clock. The simulator keeps its own time
//! ([`crate::sim::SimClock`], which only it moves) and hands out a [`Clock`] reading
//! it: its object store stamps `creationTimestamp` with that clock, and in the demo the
//! source, the engine and the console read the same one, or every age and wait would
//! be wrong (creation times in the "future"). The engine and doctor never read a clock:
//! they receive "now" as data.

use std::fmt;
use std::sync::Arc;

use jiff::Timestamp;

/// A shared source of the current time. Cloning shares it.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// The wall clock.
    pub fn wall() -> Clock {
        Clock(Arc::new(Timestamp::now))
    }

    /// Any other clock, e.g. a simulator's ([`crate::sim::SimClock::clock`]).
    pub fn from_fn(now: impl Fn() -> Timestamp + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    pub fn now(&self) -> Timestamp {
        (self.0)()
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.now().as_millisecond()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::wall()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Clock({})", self.now())
    }
}

/// A timestamp from ms since the epoch (clamped into jiff's range).
pub fn ms_to_timestamp(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_clock_is_read_through_every_clone() {
        let t = Timestamp::from_second(1_800_000_000).unwrap();
        let c = Clock::from_fn(move || t);
        assert_eq!(c.clone().now(), t);
        assert_eq!(c.now_ms(), 1_800_000_000_000);
    }
}
