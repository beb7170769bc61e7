//! One duration syntax for every flag and annotation: `history --since`, `serve-ssh
//! --idle-timeout`, `simulate --until`, and the simulator's `sim.gangplank.io/at` and
//! `sim.gangplank.io/duration` annotations.
//!
//! Parsed by jiff: its friendly format (`30s`, `90m`, `2h`, `1h30m`, `1.5h`, `2d`,
//! `500ms`, `1h 30m`, `2 hours`) and ISO 8601 (`PT1H30M`, `P1D`). A day is 24 hours.
//! `0` means zero. **A bare number is refused**: it once meant hours in `history` and
//! seconds in `serve-ssh`, so the unit is required everywhere (`10` → "10 what? e.g.
//! 10s, 10m, 10h").

use jiff::{Span, SpanRelativeTo, Unit};

/// The longest duration accepted (about 31,700 years; keeps ms arithmetic in range).
const MAX_MS: f64 = 1e15;

/// Parses a duration into milliseconds (≥ 0).
pub fn parse_duration_ms(text: &str) -> Result<i64, String> {
    let s = text.trim();
    let examples = "e.g. \"30s\", \"90m\", \"2h\", \"1h30m\", \"7d\"";
    if s.is_empty() {
        return Err(format!("empty duration (expected {examples})"));
    }
    if s == "0" {
        return Ok(0);
    }
    if s.parse::<f64>().is_ok() {
        return Err(format!(
            "{text:?} has no unit: write \"{s}s\", \"{s}m\", \"{s}h\" or \"{s}d\" (a bare number is ambiguous)"
        ));
    }
    let span: Span = s
        .parse()
        .map_err(|_| format!("invalid duration {text:?} (expected {examples})"))?;
    let ms = span
        .total((Unit::Millisecond, SpanRelativeTo::days_are_24_hours()))
        .map_err(|e| format!("invalid duration {text:?}: {e}"))?;
    if ms < 0.0 {
        return Err(format!("invalid duration {text:?}: must not be negative"));
    }
    if !ms.is_finite() || ms > MAX_MS {
        return Err(format!("invalid duration {text:?}: too long"));
    }
    Ok(ms.round() as i64)
}

/// Parses a duration into a [`std::time::Duration`].
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    parse_duration_ms(text).map(|ms| std::time::Duration::from_millis(ms as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_every_flag_accepts() {
        let h = 3_600_000;
        for (text, ms) in [
            ("30s", 30_000),
            ("90m", 90 * 60_000),
            ("2h", 2 * h),
            ("1h30m", 90 * 60_000),
            ("1.5h", 90 * 60_000),
            ("7d", 7 * 24 * h),
            ("500ms", 500),
            ("1h 30m", 90 * 60_000),
            ("2 hours", 2 * h),
            ("PT1H30M", 90 * 60_000),
            ("0", 0),
            ("0m", 0),
            (" 24h ", 24 * h),
        ] {
            assert_eq!(parse_duration_ms(text), Ok(ms), "{text}");
        }
        assert_eq!(
            parse_duration("90s"),
            Ok(std::time::Duration::from_secs(90))
        );
    }

    #[test]
    fn bare_numbers_and_nonsense_are_refused_with_a_hint() {
        let e = parse_duration_ms("10").unwrap_err();
        assert!(e.contains("\"10s\"") && e.contains("no unit"), "{e}");
        assert!(parse_duration_ms("1.5").is_err());
        for bad in ["", "h", "5x", "soon", "-5m", "3w3"] {
            assert!(parse_duration_ms(bad).is_err(), "{bad}");
        }
    }
}
