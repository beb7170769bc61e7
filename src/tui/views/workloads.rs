//! Workloads: one row per workload, with the shadow engine's verdict; Enter opens
//! the detail pane (`workload_detail.rs`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};

use super::{title, workload_detail as detail};
use crate::tui::Theme;
use crate::tui::app::{App, SortState, sort_workloads};
use crate::tui::data::ConsoleData;
use crate::tui::msg::ViewId;
use crate::tui::rows::workloads::{WlState, WorkloadRow};
use crate::tui::widgets::table::{self, TableSpec};
use crate::tui::widgets::{format_age, truncate};

/// Filters then sorts the cached rows (called on data, filter or sort changes only).
pub fn index(app: &App, sort: SortState) -> Vec<u32> {
    let rows = &app.cache.workloads;
    let mut index: Vec<u32> = if app.filter.is_empty() {
        (0..rows.len() as u32).collect()
    } else {
        (0..rows.len() as u32)
            .filter(|&i| rows[i as usize].matches(&app.filter))
            .collect()
    };
    sort_workloads(rows, &mut index, sort, app.now);
    index
}

/// The theme role for a state (the state is always written out too).
pub fn state_style(theme: &Theme, state: WlState) -> Style {
    match state {
        WlState::Pending => theme.wl_pending,
        WlState::QuotaReserved => theme.wl_reserved,
        WlState::Admitted => theme.wl_admitted,
        WlState::Evicted => theme.wl_evicted,
        WlState::Preempted => theme.wl_preempted,
        WlState::Finished => theme.wl_finished,
        WlState::Inactive => theme.wl_inactive,
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    // Nine columns need room: below 150 the name would be squeezed to ~28 characters,
    // too short for Kueue's generated workload names.
    let wide = area.width >= 150;
    let (list_area, detail_area) = if !app.detail {
        (area, None)
    } else if wide {
        let [l, r] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(area);
        (l, Some(r))
    } else {
        // Narrow terminals: the detail pane takes the whole body.
        (Rect::default(), Some(area))
    };
    if list_area.height > 0 {
        render_table(frame, list_area, app, wide && !app.detail);
    }
    if let (Some(a), Some(row)) = (detail_area, app.selected_workload()) {
        detail::render(frame, a, app, data, row);
    }
}

fn render_table(frame: &mut Frame, area: Rect, app: &App, wide: bool) {
    let t = &app.theme;
    let index = app.visible(ViewId::Workloads);
    let rows = &app.cache.workloads;
    let (header, constraints) = if wide {
        (
            vec![
                "NAMESPACE/NAME",
                "QUEUE",
                "PRIORITY",
                "STATE",
                "GPUS",
                "AGE",
                "WAIT",
                "POS",
                "VERDICT",
            ],
            vec![
                Constraint::Fill(3),
                Constraint::Length(16),
                Constraint::Length(22),
                Constraint::Length(13),
                Constraint::Length(4),
                Constraint::Length(6),
                Constraint::Length(6),
                Constraint::Length(4),
                Constraint::Fill(2),
            ],
        )
    } else {
        (
            vec![
                "NAMESPACE/NAME",
                "PRIO",
                "STATE",
                "GPUS",
                "AGE",
                "WAIT",
                "VERDICT",
            ],
            vec![
                Constraint::Fill(2),
                Constraint::Length(7),
                Constraint::Length(13),
                Constraint::Length(4),
                Constraint::Length(5),
                Constraint::Length(5),
                Constraint::Fill(1),
            ],
        )
    };
    let widths = table::resolve_widths(area, &constraints);
    let (name_w, verdict_w) = (widths[0], widths[widths.len() - 1]);
    let spec = TableSpec {
        title: title(app, "Workloads"),
        header,
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: if rows.is_empty() {
            "no workloads"
        } else {
            "no workloads match the filter (Esc clears)"
        },
    };
    table::render(frame, area, t, spec, |pos| {
        let r = &rows[index[pos] as usize];
        row(r, app, wide, name_w.into(), verdict_w.into())
    });
}

fn row<'a>(r: &WorkloadRow, app: &App, wide: bool, name_w: usize, verdict_w: usize) -> Row<'a> {
    let t = &app.theme;
    let dash = || Span::styled("—", t.muted);
    let wait = r
        .wait_ms(app.now)
        .map_or_else(dash, |w| Span::raw(format_age(w)));
    let verdict = r
        .verdict
        .as_ref()
        .map_or_else(dash, |v| Span::styled(truncate(v, verdict_w), t.verdict));
    let state = Span::styled(r.state.label(), state_style(t, r.state));
    let name = truncate(&format!("{}/{}", r.namespace, r.name), name_w);
    let age = format_age(app.now - r.created);
    let mut cells = vec![Cell::from(name)];
    if wide {
        let prio = if r.priority_class.is_empty() {
            r.priority.to_string()
        } else {
            format!("{} ({})", r.priority_class, r.priority)
        };
        let queue = if r.queue.is_empty() {
            "—".to_string()
        } else {
            truncate(&r.queue, 16)
        };
        cells.push(Cell::from(queue));
        cells.push(Cell::from(truncate(&prio, 22)));
    } else {
        cells.push(Cell::from(r.priority.to_string()));
    }
    cells.push(Cell::from(Line::from(state)));
    cells.push(Cell::from(Line::from(r.gpus.to_string()).right_aligned()));
    cells.push(Cell::from(age));
    cells.push(Cell::from(Line::from(wait)));
    if wide {
        let pos = r.position.map_or_else(dash, |p| Span::raw(p.to_string()));
        cells.push(Cell::from(Line::from(pos)));
    }
    cells.push(Cell::from(Line::from(verdict)));
    Row::new(cells)
}
