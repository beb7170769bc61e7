//! Drift: live objects that differ from what was declared.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Cell, Row};

use super::title;
use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::msg::ViewId;
use crate::tui::widgets::table::{self, TableSpec};

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let index = app.index(ViewId::Drift);
    let spec = TableSpec {
        title: title(app, "Drift"),
        header: vec!["OBJECT", "FIELD", "EXPECTED", "ACTUAL"],
        widths: vec![
            Constraint::Min(20),
            Constraint::Length(20),
            Constraint::Length(16),
            Constraint::Length(16),
        ],
        len: index.len(),
        list: *app.list(),
        empty: "no drift: live objects match what was declared",
    };
    table::render(frame, area, &app.theme, spec, |pos| {
        let d = &data.drift[index[pos] as usize];
        Row::new(vec![
            Cell::from(d.object.clone()),
            Cell::from(d.field.clone()),
            Cell::from(d.expected.clone()),
            Cell::from(d.actual.clone()),
        ])
    });
}
