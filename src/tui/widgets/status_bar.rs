//! The status bar (context, sync state, last event, engine timing, READ-ONLY, "fair
//! sharing: on" when Kueue's configuration enables it) and the
//! message line below it (feedback, or the `:` / `/` input being typed).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format_age;
use crate::tui::app::{App, Mode};
use crate::tui::command;
use crate::tui::data::{ConsoleData, SyncState};

/// Sync state in words: "synced" when everything is, else each kind that is not.
pub fn sync_summary(data: &ConsoleData, now: i64) -> (String, bool) {
    let mut parts = Vec::new();
    let mut bad = false;
    for r in &data.sync.resources {
        let s = match &r.state {
            SyncState::Synced => continue,
            SyncState::Syncing {
                done,
                total: Some(t),
            } => format!("{} syncing {done}/{t}", r.kind),
            SyncState::Syncing { done, total: None } => format!("{} syncing {done}", r.kind),
            SyncState::Resyncing { since } => {
                format!("{} resyncing {}", r.kind, format_age(now - since))
            }
            SyncState::Forbidden => {
                bad = true;
                format!("{} forbidden", r.kind)
            }
            SyncState::Error(e) => {
                bad = true;
                format!("{} error: {e}", r.kind)
            }
        };
        parts.push(s);
    }
    if data.sync.resources.is_empty() {
        ("sync: —".into(), false)
    } else if parts.is_empty() {
        ("synced".into(), false)
    } else {
        (parts.join(", "), bad)
    }
}

pub fn render_status(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let t = &app.theme;
    let mut spans = Vec::new();
    if app.readonly {
        spans.push(Span::styled(" READ-ONLY ", t.readonly_badge));
        spans.push(Span::raw(" "));
    }
    let ctx = if data.context.is_empty() {
        "—"
    } else {
        &data.context
    };
    let ns = app.namespace.as_deref().unwrap_or("all");
    spans.push(Span::raw(format!(" ctx {ctx} │ ns {ns} │ ")));
    let (sync, bad) = sync_summary(data, app.now);
    spans.push(Span::styled(
        sync,
        if bad { t.danger } else { t.status_bar },
    ));
    let last = match data.sync.last_event {
        Some(ts) => format!(" │ last event {} ago", format_age(app.now - ts)),
        None => " │ no events yet".into(),
    };
    spans.push(Span::raw(last));
    // The plan's age only matters while it lags behind the data (a newer event than
    // the snapshot it was computed on): an up-to-date plan shows no ticking age, so an
    // idle console's screen does not change.
    let behind = match (
        data.plan.as_deref().and_then(|p| p.computed_at),
        data.sync.last_event,
    ) {
        (Some(at), Some(ev)) if ev > at => Some(format_age(app.now - at)),
        _ => None,
    };
    let plan = match (data.plan.as_deref(), behind) {
        (Some(p), Some(age)) => match p.duration_ms {
            Some(d) => format!(" │ plan {d}ms, re-planning (plan is {age} old)"),
            None => format!(" │ re-planning (plan is {age} old)"),
        },
        (Some(p), None) => match p.duration_ms {
            Some(d) => format!(" │ plan {d}ms, current"),
            None => " │ plan current".into(),
        },
        (None, _) => " │ no plan".into(),
    };
    spans.push(Span::raw(plan));
    // Kueue's configuration, when it changes how the plan is made (issue #11)
    if data
        .state
        .kueue_config
        .as_ref()
        .is_some_and(|c| c.fair_sharing_enabled())
    {
        spans.push(Span::raw(" │ fair sharing: on"));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.status_bar), area);
}

pub fn render_message(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let line = match &app.mode {
        Mode::Command(text) => {
            let cands = command::candidates(text.split_whitespace().next().unwrap_or(""));
            let hint = if text.contains(' ') || cands.is_empty() {
                String::new()
            } else {
                format!("   {}", cands.join(" "))
            };
            Line::from(vec![
                Span::styled(format!(":{text}▏"), t.command_line),
                Span::styled(hint, t.muted),
            ])
        }
        Mode::Filter(text) => Line::from(vec![
            Span::styled(format!("/{text}▏"), t.command_line),
            Span::styled("   Enter keeps · Esc clears", t.muted),
        ]),
        Mode::Search(text) => Line::from(vec![
            Span::styled(format!("/{text}▏"), t.command_line),
            Span::styled(
                "   search in details · Enter keeps (n next) · Esc clears",
                t.muted,
            ),
        ]),
        _ => match &app.message {
            Some(m) => Line::from(Span::styled(m.clone(), t.message)),
            None => {
                let mut spans = vec![Span::styled(
                    "? help  : command  / filter  1-8 views  enter details  q quit",
                    t.muted,
                )];
                // Greyed, and said in words: which action keys RBAC refuses, and why.
                if !app.readonly && !app.access.all_allowed() {
                    let text = match &app.access.everywhere {
                        Some(why) => format!("   a h r p unavailable: {why}"),
                        None => format!(
                            "   a h r p unavailable in {}",
                            app.access
                                .namespaces
                                .keys()
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    spans.push(Span::styled(text, t.muted));
                }
                Line::from(spans)
            }
        },
    };
    frame.render_widget(Paragraph::new(line), area);
}
