//! Small shared widgets and formatting helpers. Nothing here names a colour: styles
//! come from the [`Theme`](super::Theme).

pub mod detail;
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

/// Wall-clock UTC time `2026-01-01 00:11:00Z`; `—` when unknown (0 or unrepresentable).
pub fn format_time(ms: i64) -> String {
    if ms <= 0 {
        return "—".into();
    }
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_else(|_| "—".into())
}

/// Display width in terminal cells (East Asian wide characters take two).
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// Truncates to `width` cells, marking the cut with "…" at the end.
pub fn truncate(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if self::width(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Truncates to `width` cells by cutting the middle, so the distinguishing tail
/// (a job's suffix, a generated hash) stays visible: `hyperpod-ns-spe…run-b2`.
/// The head keeps a little more than half.
pub fn truncate_middle(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if self::width(s) <= width {
        return s.to_string();
    }
    if width < 4 {
        return truncate(s, width);
    }
    let budget = width - 1;
    let tail_w = budget / 2;
    let head_w = budget - tail_w;
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > head_w {
            break;
        }
        used += w;
        head.push(c);
    }
    // Whatever the head left unused (a wide character that did not fit) goes to the tail.
    let tail_budget = budget - used;
    let mut tail: Vec<char> = Vec::new();
    let mut tused = 0;
    for c in s.chars().rev() {
        let w = c.width().unwrap_or(0);
        if tused + w > tail_budget {
            break;
        }
        tused += w;
        tail.push(c);
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// How a part of a sentence gives way in [`fit_parts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Kept whole.
    Fixed,
    /// A name: cut in the middle, the longest first, down to 12 cells.
    Name,
    /// Detail: cut at its end first, down to nothing.
    Detail,
}

/// Fits a sentence made of parts into `width` cells. When too long, detail parts are
/// cut at their end first; then names are cut in the middle (the longest first, down to
/// 12 cells each), so `nlp-team/boss-u…llama-finetune preempted cv-team/yolo-train`
/// keeps both names' heads and tails; whatever still does not fit is cut at the end.
pub fn fit_parts(parts: &[(&str, Part)], width_: usize) -> String {
    const MIN: usize = 12;
    let mut w: Vec<usize> = parts.iter().map(|(s, _)| width(s)).collect();
    let mut total: usize = w.iter().sum();
    for i in (0..parts.len()).rev() {
        if total <= width_ {
            break;
        }
        if parts[i].1 == Part::Detail {
            let cut = (total - width_).min(w[i]);
            w[i] -= cut;
            total -= cut;
        }
    }
    while total > width_ {
        let Some(i) = (0..parts.len())
            .filter(|&i| parts[i].1 == Part::Name && w[i] > MIN)
            .max_by_key(|&i| w[i])
        else {
            break;
        };
        w[i] -= 1;
        total -= 1;
    }
    let joined: String = parts
        .iter()
        .zip(&w)
        .map(|((s, kind), &n)| match kind {
            Part::Name => truncate_middle(s, n),
            Part::Detail if n < width(s) => truncate(s, n),
            _ => s.to_string(),
        })
        .collect();
    truncate(&joined, width_)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middle_truncation_keeps_the_tail_and_the_width() {
        let a = "hyperpod-ns-speech-llama-finetune-run-a1";
        let b = "hyperpod-ns-speech-llama-finetune-run-b2";
        let (ta, tb) = (truncate_middle(a, 20), truncate_middle(b, 20));
        assert_eq!(width(&ta), 20);
        assert!(
            ta.ends_with("run-a1") && tb.ends_with("run-b2"),
            "{ta} {tb}"
        );
        assert!(ta.starts_with("hyperpod"));
        assert_eq!(truncate_middle("short", 20), "short");
        // Wide characters count two cells each and are never split.
        let wide = truncate_middle("作业作业作业作业作业", 9);
        assert!(width(&wide) <= 9, "{wide}");
        assert!(wide.contains('…'));
        assert_eq!(width(&truncate("作业作业", 5)), 5);
    }
}
