//! A scrollable detail pane: wrapped text in a bordered block, scrolled by the
//! detail offset in [`App`]. Up/Down/PgUp/PgDn/Home/End scroll the text (not the
//! list) while a detail is open. The bottom border says where the view is.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::tui::app::App;

/// Draws `lines` wrapped inside a bordered `area` titled `title`, scrolled to the
/// app's detail offset (clamped so the last line can reach the bottom, never past).
pub fn render(frame: &mut Frame, area: Rect, app: &App, title: String, lines: Vec<Line<'static>>) {
    let t = &app.theme;
    let inner_w = area.width.saturating_sub(2);
    let inner_h = area.height.saturating_sub(2);
    // A search: lines containing the text are highlighted; a jump scrolls to the
    // chosen match (the rows of the wrapped lines before it).
    let needle = app.detail_search.as_deref().map(str::to_lowercase);
    let text_of = |l: &Line<'_>| -> String {
        l.spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>()
    };
    let matches: Vec<usize> = match &needle {
        Some(n) => lines
            .iter()
            .enumerate()
            .filter(|(_, l)| text_of(l).to_lowercase().contains(n.as_str()))
            .map(|(i, _)| i)
            .collect(),
        None => Vec::new(),
    };
    let current = (!matches.is_empty()).then(|| matches[app.detail_match % matches.len()]);
    let jump_to = match current {
        Some(i) if app.detail_jump.get() => Some(
            Paragraph::new(lines[..i].to_vec())
                .wrap(Wrap { trim: false })
                .line_count(inner_w) as u16,
        ),
        _ => None,
    };
    app.detail_jump.set(false);
    let lines: Vec<Line<'static>> = lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if Some(i) == current {
                l.style(t.selection)
            } else if matches.binary_search(&i).is_ok() {
                l.style(t.verdict)
            } else {
                l
            }
        })
        .collect();
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = para.line_count(inner_w) as u16;
    let max = total.saturating_sub(inner_h);
    app.detail_max.set(max);
    if let Some(row) = jump_to {
        app.detail_scroll.set(row.min(max));
    }
    let offset = app.detail_scroll.get().min(max);
    let found = match (&needle, current) {
        (Some(_), Some(_)) => Some(format!(
            "match {}/{} (n next)",
            app.detail_match % matches.len() + 1,
            matches.len()
        )),
        (Some(_), None) => Some("no match".to_string()),
        _ => None,
    };
    let lines_at = (max > 0).then(|| {
        format!(
            "lines {}–{}/{total}",
            offset + 1,
            (offset + inner_h).min(total)
        )
    });
    // The parts that fit the border, the least useful dropped first.
    let hints: [Option<String>; 4] = [
        found,
        lines_at,
        (max > 0).then(|| "↑↓ PgUp PgDn scroll · / search".to_string()),
        Some("Esc back".to_string()),
    ];
    let room = usize::from(area.width.saturating_sub(4));
    let mut keep: Vec<&String> = hints.iter().flatten().collect();
    let join = |v: &[&String]| {
        format!(
            " {} ",
            v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" · ")
        )
    };
    while crate::tui::widgets::width(&join(&keep)) > room && keep.len() > 1 {
        // Drop the scroll hint first, then whatever comes before "Esc back".
        let i = keep
            .iter()
            .position(|s| s.starts_with("↑↓"))
            .unwrap_or(keep.len() - 2);
        keep.remove(i);
    }
    let position = join(&keep);
    let block = Block::bordered()
        .border_style(t.border)
        .title(Line::from(title).style(t.title))
        .title_bottom(Line::from(position).style(t.muted).right_aligned());
    frame.render_widget(para.scroll((offset, 0)).block(block), area);
}
