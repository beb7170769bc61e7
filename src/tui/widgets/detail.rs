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
    let inner_h = area.height.saturating_sub(2);
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = para.line_count(area.width.saturating_sub(2)) as u16;
    let max = total.saturating_sub(inner_h);
    app.detail_max.set(max);
    let offset = app.detail_scroll.min(max);
    let position = if max == 0 {
        " Esc back ".to_string()
    } else {
        let last = (offset + inner_h).min(total);
        format!(
            " lines {}–{last}/{total} · ↑↓ PgUp PgDn Home End scroll · Esc back ",
            offset + 1
        )
    };
    let block = Block::bordered()
        .border_style(t.border)
        .title(Line::from(title).style(t.title))
        .title_bottom(Line::from(position).style(t.muted).right_aligned());
    frame.render_widget(para.scroll((offset, 0)).block(block), area);
}
