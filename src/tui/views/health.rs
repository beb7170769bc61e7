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
use crate::tui::widgets::truncate;

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let t = &app.theme;
    let index = app.visible(ViewId::Health);
    let constraints = [
        Constraint::Length(8),
        Constraint::Length(22),
        Constraint::Length(24),
        Constraint::Min(20),
    ];
    let widths = table::resolve_widths(area, &constraints);
    let w = |i: usize| usize::from(widths.get(i).copied().unwrap_or(0));
    let spec = TableSpec {
        title: title(app, "Health"),
        header: vec!["SEVERITY", "CHECK", "OBJECTS", "MESSAGE"],
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
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
            Cell::from(truncate(&h.check, w(1))),
            Cell::from(truncate(&h.objects.join(", "), w(2))),
            Cell::from(truncate(&h.message, w(3))),
        ])
    });
}
