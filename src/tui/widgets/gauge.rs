//! A quota gauge drawn with text: the bar is decoration, the figures beside it carry
//! the meaning (never colour alone).
//!
//! `█` used within nominal, `▒` borrowed beyond nominal, `·` unused nominal.

use ratatui::text::Span;

use crate::tui::Theme;

/// The bar for `used` of `nominal` (borrowed = beyond nominal), `width` cells wide,
/// scaled to the larger of nominal and used.
pub fn bar(used: i128, nominal: i128, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let scale = nominal.max(used).max(1);
    let cells = |v: i128| ((v.max(0) * width as i128 + scale / 2) / scale) as usize;
    let within = cells(used.min(nominal));
    let total = cells(used).min(width).max(within);
    let borrowed = total - within;
    let empty = width.saturating_sub(total);
    vec![
        Span::styled("█".repeat(within), theme.gauge_fill),
        Span::styled("▒".repeat(borrowed), theme.gauge_borrowed),
        Span::styled("·".repeat(empty), theme.gauge_empty),
    ]
}

/// Percentage of nominal in use, for the text beside the bar.
pub fn percent(used: i128, nominal: i128) -> String {
    if nominal <= 0 {
        return if used > 0 {
            "∞%".into()
        } else {
            "—".into()
        };
    }
    format!("{}%", used * 100 / nominal)
}
