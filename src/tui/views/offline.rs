//! The console before the cluster has answered at all: instead of empty views that
//! read like an empty cluster ("no workloads"), a panel over the body says that no
//! connection could be made, why (naming the server), and that it keeps retrying.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::data::{ConsoleData, SyncState};

/// Why nothing is shown yet: the first error, when no resource has listed anything
/// (none synced, relisting or forbidden) and at least one attempt failed.
pub fn not_connected(data: &ConsoleData) -> Option<&str> {
    let resources = &data.sync.resources;
    let answered = resources.iter().any(|r| {
        matches!(
            r.state,
            SyncState::Synced | SyncState::Resyncing { .. } | SyncState::Forbidden
        )
    });
    if answered {
        return None;
    }
    resources.iter().find_map(|r| match &r.state {
        SyncState::Error(e) => Some(e.as_str()),
        _ => None,
    })
}

/// Draws the panel over `body` when [`not_connected`] says so.
pub fn render(frame: &mut Frame, body: Rect, app: &App, data: &ConsoleData) {
    let Some(why) = not_connected(data) else {
        return;
    };
    let t = &app.theme;
    let width = body.width.saturating_sub(4).min(100);
    let [_, mid, _] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(width),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [_, panel, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(8.min(body.height)),
        Constraint::Fill(1),
    ])
    .areas(mid);
    let lines = vec![
        Line::from(format!("Not connected to {}", data.context)).style(t.danger),
        Line::from(""),
        Line::from(why.to_string()),
        Line::from(""),
        Line::from("The views fill in as soon as the cluster answers. q quits.").style(t.muted),
    ];
    frame.render_widget(Clear, panel);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(
            Block::bordered()
                .border_style(t.border)
                .title(" No data yet "),
        ),
        panel,
    );
}
