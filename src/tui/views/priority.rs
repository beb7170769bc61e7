//! The reprioritize picker, drawn over the body (state and keys: `tui::priority`).
//!
//! Nothing is told by colour alone: the selected line carries `›` as well as the
//! selection style, the current class the word "current", and an unavailable choice
//! its reason after "unavailable:".

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::priority::{Picker, current, options};
use crate::tui::widgets::truncate;

/// The panel's lines (also what tests read).
pub fn lines(app: &App, data: &ConsoleData, p: &Picker, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let opts = options(&data.state, p);
    let mut out = vec![
        Line::from(vec![
            Span::styled(" current: ", t.muted),
            Span::styled(current(&data.state, p), t.text),
        ]),
        Line::from(vec![
            Span::styled(" new: ", t.muted),
            Span::styled(format!("{}▏", p.input), t.command_line),
            Span::styled("  type a class name or a number", t.muted),
        ]),
        Line::from(Span::styled(
            format!("   {:<20} {:<21} {:>11}", "CLASS", "KIND", "VALUE"),
            t.header,
        )),
    ];
    if opts.is_empty() {
        out.push(Line::from(Span::styled(
            "   no class matches; a number sets spec.priority",
            t.muted,
        )));
    }
    for (i, o) in opts.iter().enumerate() {
        let selected = i == p.selected;
        let mut text = format!(
            " {} {:<20} {:<21} {:>11}",
            if selected { '›' } else { ' ' },
            truncate(&o.name, 20),
            o.kind,
            o.value
        );
        if o.current {
            text.push_str("  current");
        }
        if let Some(why) = &o.unavailable {
            text.push_str(&format!("  unavailable: {why}"));
        }
        let style = match (selected, o.unavailable.is_some()) {
            (true, _) => t.selection,
            (false, true) => t.muted,
            (false, false) => t.text,
        };
        out.push(Line::from(Span::styled(truncate(&text, width), style)));
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData, p: &Picker) {
    let t = &app.theme;
    let width = area.width.min(110);
    let inner = usize::from(width.saturating_sub(2));
    let mut all = lines(app, data, p, inner);
    // Keep the selected line visible in a short body.
    let room = usize::from(area.height.saturating_sub(2));
    let head = 3;
    if all.len() > room && room > head {
        let skip = (p.selected + 1).saturating_sub(room - head);
        all.drain(head..head + skip);
    }
    let height = (all.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y,
        width,
        height,
    };
    let title = format!(
        " Reprioritize {}/{} · ↑↓ Enter chooses · Esc cancels ",
        p.namespace, p.name
    );
    let block = Block::bordered()
        .border_style(t.border)
        .title(Line::from(truncate(&title, inner)).style(t.title));
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(all).style(t.text).block(block), popup);
}
