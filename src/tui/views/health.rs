//! Health: findings about the cluster's Kueue setup. Severity is a word, not a colour.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Cell, Row};

use super::title;
use crate::tui::app::App;
use crate::tui::data::{ConsoleData, Severity};
use crate::tui::msg::ViewId;
use crate::tui::widgets::table::{self, TableSpec};

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let t = &app.theme;
    let index = app.index(ViewId::Health);
    let spec = TableSpec {
        title: title(app, "Health"),
        header: vec!["SEVERITY", "CHECK", "OBJECTS", "MESSAGE"],
        widths: vec![
            Constraint::Length(8),
            Constraint::Length(22),
            Constraint::Length(24),
            Constraint::Min(20),
        ],
        len: index.len(),
        list: *app.list(),
        empty: "no findings",
    };
    table::render(frame, area, t, spec, |pos| {
        let h = &data.health[index[pos] as usize];
        let style = match h.severity {
            Severity::Error => t.danger,
            Severity::Warning => t.warning,
            Severity::Info => t.muted,
        };
        Row::new(vec![
            Cell::from(Span::styled(h.severity.label(), style)),
            Cell::from(h.check.clone()),
            Cell::from(h.objects.join(", ")),
            Cell::from(h.message.clone()),
        ])
    });
}
