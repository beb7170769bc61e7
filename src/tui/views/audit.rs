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
use crate::tui::widgets::truncate;

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let index = app.visible(ViewId::Audit);
    let constraints = [
        Constraint::Length(6),
        Constraint::Length(14),
        Constraint::Length(13),
        Constraint::Min(20),
        Constraint::Length(16),
    ];
    let widths = table::resolve_widths(area, &constraints);
    let w = |i: usize| usize::from(widths.get(i).copied().unwrap_or(0));
    let spec = TableSpec {
        title: title(app, "Audit"),
        header: vec!["AGE", "ACTOR", "ACTION", "TARGET", "OUTCOME"],
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: "no actions recorded yet",
    };
    table::render(frame, area, &app.theme, spec, |pos| {
        let a = &data.audit[index[pos] as usize];
        Row::new(vec![
            Cell::from(format_age(app.now - a.time)),
            Cell::from(truncate(&a.actor, w(1))),
            Cell::from(truncate(&a.action, w(2))),
            Cell::from(truncate(&a.target, w(3))),
            Cell::from(truncate(&a.outcome, w(4))),
        ])
    });
}
