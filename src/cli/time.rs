//! The CLI's clock: the only place gangplank reads the time for headless commands.
//! The engine and doctor receive it as data.

use anyhow::{Context, Result};

use crate::model::Timestamp;

/// `--now` parsed as RFC 3339, or the current wall-clock time, in ms since the epoch.
pub fn now_or(flag: Option<&str>) -> Result<Timestamp> {
    match flag {
        Some(text) => {
            let ts: jiff::Timestamp = text.parse().with_context(|| {
                format!("--now {text:?}: expected an RFC 3339 time such as 2026-11-29T12:00:00Z")
            })?;
            Ok(ts.as_millisecond())
        }
        None => Ok(jiff::Timestamp::now().as_millisecond()),
    }
}
