//! Small shared widgets and formatting helpers. Nothing here names a colour: styles
//! come from the [`Theme`](super::Theme).

pub mod gauge;
pub mod status_bar;
pub mod table;

/// "45s", "12m", "3h04m", "2d03h", "332d": compact ages, at most 6 cells.
pub fn format_age(ms: i64) -> String {
    if ms < 0 {
        return "0s".into();
    }
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h{:02}m", s / 3600, s / 60 % 60),
        // Hours stop mattering after ten days, and the column stays narrow.
        86_400..=863_999 => format!("{}d{:02}h", s / 86_400, s / 3600 % 24),
        _ => format!("{}d", s / 86_400),
    }
}

/// Truncates to `width` characters, marking the cut with "…".
pub fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// A text sparkline of `values` scaled to `max` (at least 1), one cell per value.
pub fn sparkline(values: &[i64], max: i64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = max.max(1);
    values
        .iter()
        .map(|&v| {
            let i = (v.clamp(0, max) * 7 + max / 2) / max;
            BARS[i as usize]
        })
        .collect()
}
