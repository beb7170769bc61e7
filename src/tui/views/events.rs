//! Events: one timeline of what happened, newest first — admissions, preemptions
//! (preemptor → victim by name, reason, GPUs freed), evictions, requeues, holds,
//! resumes, priority changes and operator actions. Built from the watch (Workload
//! condition transitions, the preemptor resolved from the UID in Kueue's
//! Preempted/Evicted message) and kept in the history file, so it survives a restart.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};

use super::title;
use crate::tui::Theme;
use crate::tui::app::App;
use crate::tui::data::{ConsoleData, EventKind, EventRow};
use crate::tui::filter::{Filter, FilterKey};
use crate::tui::msg::ViewId;
use crate::tui::widgets::table::{self, TableSpec};
use crate::tui::widgets::{Part, fit_parts, format_age};

/// Whether an event passes the filter: text anywhere in the line; `ns=` the object's
/// namespace; `state=` the event kind.
pub fn matches(e: &EventRow, f: &Filter) -> bool {
    if f.is_empty() {
        return true;
    }
    let hay = format!(
        "{} {} {} {} {}",
        e.kind.label(),
        e.text,
        e.object,
        e.by.as_deref().unwrap_or(""),
        e.message
    )
    .to_lowercase();
    let ns = e.object.split_once('/').map_or("", |(ns, _)| ns);
    f.matches(&hay, |key| match key {
        FilterKey::Namespace => Some(vec![ns]),
        FilterKey::State => Some(vec![e.kind.label()]),
        _ => None,
    })
}

fn kind_style(t: &Theme, k: EventKind) -> Style {
    match k {
        EventKind::Admitted | EventKind::Resumed => t.ok,
        EventKind::Preempted | EventKind::Evicted => t.danger,
        EventKind::Held | EventKind::PriorityChanged | EventKind::Requeued => t.warning,
        EventKind::Finished => t.muted,
        EventKind::Operator => t.verdict,
    }
}

/// `4m` ago, or `—` when the time is unknown.
pub fn when(now: i64, time: i64) -> String {
    if time <= 0 {
        "—".into()
    } else {
        format_age(now - time)
    }
}

/// The event's sentence in `w` cells; a preemption cuts its two names in the middle
/// so both stay recognisable (`nlp-team/boss-u…-finetune preempted cv-team/yolo-train`).
fn sentence(e: &EventRow, w: usize) -> String {
    match (&e.kind, &e.by) {
        (EventKind::Preempted, Some(by)) => {
            let rest = format!(" ({}, {} GPUs freed)", e.reason, e.gpus);
            fit_parts(
                &[
                    (by, Part::Name),
                    (" preempted ", Part::Fixed),
                    (&e.object_name, Part::Name),
                    (&rest, Part::Detail),
                ],
                w,
            )
        }
        _ => match e.text.strip_prefix(e.object_name.as_str()) {
            Some(rest) => fit_parts(&[(&e.object_name, Part::Name), (rest, Part::Detail)], w),
            None => fit_parts(&[(&e.text, Part::Detail)], w),
        },
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let t = &app.theme;
    let index = app.visible(ViewId::Events);
    let constraints = [
        Constraint::Length(6),
        Constraint::Length(9),
        Constraint::Min(20),
    ];
    let widths = table::resolve_widths(area, &constraints);
    let text_w = usize::from(widths.get(2).copied().unwrap_or(0));
    let spec = TableSpec {
        title: title(app, "Events (newest first)"),
        header: vec!["AGE", "EVENT", "WHAT HAPPENED"],
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: if data.events.is_empty() {
            "no events yet: admissions, preemptions and actions appear here as they happen"
        } else {
            "no events match the filter (Esc clears)"
        },
    };
    table::render(frame, area, t, spec, |pos| {
        let e = &data.events[index[pos] as usize];
        Row::new(vec![
            Cell::from(when(app.now, e.time)),
            Cell::from(Line::from(Span::styled(
                e.kind.label(),
                kind_style(t, e.kind),
            ))),
            Cell::from(sentence(e, text_w)),
        ])
    });
}
