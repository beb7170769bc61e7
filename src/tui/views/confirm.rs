//! The confirmation panel: the action's summary and details (an approval's victims,
//! preemptor, quota freed, what stays blocked; a reprioritize's consequence), wrapped
//! at any width, with the answer keys on its border. Too tall for the screen: it
//! fills the body and scrolls, it never hides lines.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::msg::Prompt;

pub fn render(frame: &mut Frame, area: Rect, app: &App, prompt: &Prompt) {
    let t = &app.theme;
    let mut lines = vec![Line::from(Span::styled(prompt.summary.clone(), t.header))];
    if !prompt.details.is_empty() {
        lines.push(Line::from(""));
        lines.extend(
            prompt
                .details
                .iter()
                .map(|d| Line::from(Span::styled(d.clone(), t.text))),
        );
    }
    let width = area.width.min(110);
    let para = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .style(t.text);
    // Borders take two columns, the padding two more.
    let total = para.line_count(width.saturating_sub(4)) as u16;
    let height = (total + 2).min(area.height);
    let inner_h = height.saturating_sub(2);
    let max = total.saturating_sub(inner_h);
    app.confirm_max.set(max);
    let offset = app.confirm_scroll.min(max);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y,
        width,
        height,
    };
    let keys = if max == 0 {
        " y confirm · n / Esc cancel ".to_string()
    } else {
        format!(
            " y confirm · n / Esc cancel · ↑↓ PgUp PgDn scroll ({}–{}/{total}) ",
            offset + 1,
            (offset + inner_h).min(total)
        )
    };
    let title = if width >= 50 {
        " Confirm · y confirms · n / Esc cancel "
    } else {
        " Confirm "
    };
    // The padding indents wrapped continuation lines too.
    let block = Block::bordered()
        .padding(Padding::horizontal(1))
        .border_style(t.border)
        .title(Line::from(title).style(t.title))
        .title_bottom(Line::from(keys).style(t.title).right_aligned());
    frame.render_widget(Clear, popup);
    frame.render_widget(para.scroll((offset, 0)).block(block), popup);
}
