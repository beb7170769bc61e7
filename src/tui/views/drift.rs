//! Drift: live objects that differ from what was declared.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Cell, Row};

use super::title;
use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::msg::ViewId;
use crate::tui::widgets::table::{self, TableSpec};
use crate::tui::widgets::truncate;

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let index = app.visible(ViewId::Drift);
    let constraints = [
        Constraint::Min(20),
        Constraint::Length(20),
        Constraint::Length(16),
        Constraint::Length(16),
    ];
    let widths = table::resolve_widths(area, &constraints);
    let w = |i: usize| usize::from(widths.get(i).copied().unwrap_or(0));
    let spec = TableSpec {
        title: title(app, "Drift"),
        header: vec!["OBJECT", "FIELD", "EXPECTED", "ACTUAL"],
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: "no drift: live objects match what was declared",
    };
    table::render(frame, area, &app.theme, spec, |pos| {
        let d = &data.drift[index[pos] as usize];
        Row::new(vec![
            Cell::from(truncate(&d.object, w(0))),
            Cell::from(truncate(&d.field, w(1))),
            Cell::from(truncate(&d.expected, w(2))),
            Cell::from(truncate(&d.actual, w(3))),
        ])
    });
}
