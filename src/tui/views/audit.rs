//! Audit: the action ledger, newest last.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Cell, Row};

use super::title;
use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::msg::ViewId;
use crate::tui::widgets::format_age;
use crate::tui::widgets::table::{self, TableSpec};

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let index = app.index(ViewId::Audit);
    let spec = TableSpec {
        title: title(app, "Audit"),
        header: vec!["AGE", "ACTOR", "ACTION", "TARGET", "OUTCOME"],
        widths: vec![
            Constraint::Length(6),
            Constraint::Length(14),
            Constraint::Length(13),
            Constraint::Min(20),
            Constraint::Length(16),
        ],
        len: index.len(),
        list: *app.list(),
        empty: "no actions recorded yet",
    };
    table::render(frame, area, &app.theme, spec, |pos| {
        let a = &data.audit[index[pos] as usize];
        Row::new(vec![
            Cell::from(format_age(app.now - a.time)),
            Cell::from(a.actor.clone()),
            Cell::from(a.action.clone()),
            Cell::from(a.target.clone()),
            Cell::from(a.outcome.clone()),
        ])
    });
}
