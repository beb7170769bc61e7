//! The confirmation panel: an action's details (a reprioritize's consequence) while
//! its prompt waits for `y`. Prompts without details use the message line only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::msg::Prompt;

pub fn render(frame: &mut Frame, area: Rect, app: &App, prompt: &Prompt) {
    if prompt.details.is_empty() {
        return;
    }
    let t = &app.theme;
    let mut lines = vec![
        Line::from(Span::styled(prompt.summary.clone(), t.text)),
        Line::from(""),
    ];
    lines.extend(
        prompt
            .details
            .iter()
            .map(|d| Line::from(Span::styled(d.clone(), t.text))),
    );
    let width = area.width.min(110);
    // Room for wrapped lines: a rough count is enough, the paragraph clips the rest.
    let inner = usize::from(width.saturating_sub(4)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let height = (rows as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y,
        width,
        height,
    };
    // The padding indents wrapped continuation lines too.
    let block = Block::bordered()
        .padding(Padding::horizontal(1))
        .border_style(t.border)
        .title(Line::from(" Confirm · y confirms · any other key cancels ").style(t.title));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(t.text)
            .block(block),
        popup,
    );
}
