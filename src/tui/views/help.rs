//! The `?` overlay, generated from the keymap so it can never disagree with it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::tui::app::App;

/// The help lines: one per action, "keys  description".
pub fn lines(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let entries = app.keymap.help_entries();
    let width = entries
        .iter()
        .map(|e| e.0.chars().count())
        .max()
        .unwrap_or(0);
    entries
        .into_iter()
        .map(|(keys, desc)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<width$}  "), t.help_key),
                Span::styled(desc, t.text),
            ])
        })
        .collect()
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, scroll: usize) {
    let t = &app.theme;
    let all = lines(app);
    let inner_height = usize::from(area.height.saturating_sub(2));
    // Clamp so scrolling past the end shows the last page, not an empty box.
    let scroll = scroll.min(all.len().saturating_sub(inner_height));
    let visible: Vec<Line> = all.into_iter().skip(scroll).take(inner_height).collect();
    // Narrow terminals: the whole body; wide ones: a centred box.
    let width = if area.width < 100 { area.width } else { 76 };
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        width,
        ..area
    };
    let block = Block::bordered()
        .border_style(t.border)
        .title(Line::from(" Keys · j/k scroll · any other key closes ").style(t.title));
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(visible).style(t.text).block(block), popup);
}
