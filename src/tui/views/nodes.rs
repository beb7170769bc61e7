//! Nodes: flavor, GPUs allocatable / used / free, taints, workloads placed, and the
//! fragmentation line: the largest free GPU block against the largest pending pod.

use std::cmp::Ordering;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::title;
use crate::tui::app::{App, SortState};
use crate::tui::msg::ViewId;
use crate::tui::rows::nodes::NodeRow;
use crate::tui::widgets::table::{self, TableSpec};
use crate::tui::widgets::truncate;

pub const SORT_COLUMNS: [&str; 5] = ["NAME", "FLAVOR", "USED", "FREE", "WORKLOADS"];

pub fn index(app: &App, sort: SortState) -> Vec<u32> {
    let rows = &app.cache.nodes.rows;
    let mut index: Vec<u32> = (0..rows.len() as u32)
        .filter(|&i| {
            let r = &rows[i as usize];
            let text = format!(
                "{} {} {} {}",
                r.name,
                r.flavor,
                r.taints,
                r.workloads.join(" ")
            );
            app.scope.matches(&text.to_lowercase(), |_| None)
        })
        .collect();
    index.sort_by(|&a, &b| {
        let (a, b) = (&rows[a as usize], &rows[b as usize]);
        let ord = match sort.column {
            1 => a.flavor.cmp(&b.flavor),
            2 => a.gpu_used.cmp(&b.gpu_used),
            3 => a.gpu_free().cmp(&b.gpu_free()),
            4 => a.workloads.len().cmp(&b.workloads.len()),
            _ => Ordering::Equal,
        }
        .then_with(|| a.name.cmp(&b.name));
        if sort.reverse { ord.reverse() } else { ord }
    });
    index
}

fn status(r: &NodeRow) -> &'static str {
    match (r.ready, r.unschedulable) {
        (false, _) => "NotReady",
        (true, true) => "Cordoned",
        (true, false) => "Ready",
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let [summary, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(area);
    render_fragmentation(frame, summary, app);
    let (list_area, detail_area) = if app.detail {
        let [l, d] = Layout::vertical([Constraint::Min(3), Constraint::Length(8)]).areas(rest);
        (l, Some(d))
    } else {
        (rest, None)
    };
    let wide = area.width >= 120;
    let rows = &app.cache.nodes.rows;
    let index = app.visible(ViewId::Nodes);
    let mut header = vec!["NAME", "STATUS", "FLAVOR", "GPU ALLOC", "USED", "FREE"];
    let mut constraints = vec![
        Constraint::Fill(1),
        Constraint::Length(8),
        Constraint::Length(14),
        Constraint::Length(9),
        Constraint::Length(4),
        Constraint::Length(4),
    ];
    if wide {
        header.extend(["TAINTS", "WORKLOADS"]);
        constraints.extend([Constraint::Fill(1), Constraint::Fill(2)]);
    } else {
        header.push("WL");
        constraints.push(Constraint::Length(3));
    }
    let widths = table::resolve_widths(list_area, &constraints);
    let w = |i: usize| usize::from(widths.get(i).copied().unwrap_or(0));
    let spec = TableSpec {
        title: title(app, "Nodes"),
        header,
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: "no nodes",
    };
    table::render(frame, list_area, t, spec, |pos| {
        let r = &rows[index[pos] as usize];
        let st = status(r);
        let flavor = if r.flavor.is_empty() {
            "—"
        } else {
            &r.flavor
        };
        let mut cells = vec![
            Cell::from(truncate(&r.name, w(0))),
            Cell::from(Span::styled(
                st,
                if st == "Ready" { t.ok } else { t.warning },
            )),
            Cell::from(truncate(flavor, w(2))),
            Cell::from(Line::from(r.gpu_allocatable.to_string()).right_aligned()),
            Cell::from(Line::from(r.gpu_used.to_string()).right_aligned()),
            Cell::from(Line::from(r.gpu_free().to_string()).right_aligned()),
        ];
        if wide {
            cells.push(Cell::from(truncate(&r.taints, w(6))));
            cells.push(Cell::from(truncate(&r.workloads.join(", "), w(7))));
        } else {
            cells.push(Cell::from(
                Line::from(r.workloads.len().to_string()).right_aligned(),
            ));
        }
        Row::new(cells)
    });
    if let (Some(d), Some(&i), None) = (detail_area, index.get(app.list().selected), &app.pane) {
        let r = &rows[i as usize];
        let mut lines = vec![Line::from(format!(
            "taints: {}",
            if r.taints.is_empty() {
                "none"
            } else {
                &r.taints
            }
        ))];
        lines.push(Line::from("workloads placed:"));
        if r.workloads.is_empty() {
            lines.push(Line::from(Span::styled("  none", t.muted)));
        }
        lines.extend(r.workloads.iter().map(|w| Line::from(format!("  {w}"))));
        let title = format!(" {} · Esc back ", r.name);
        crate::tui::widgets::detail::render(frame, d, app, title, lines);
    }
}

fn render_fragmentation(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let nodes = &app.cache.nodes;
    let free = nodes.largest_free();
    let free_text = match free {
        Some(n) => format!("largest free block {} GPUs ({})", n.gpu_free(), n.name),
        None => "largest free block 0 GPUs".to_string(),
    };
    // The verdict first, so it survives truncation on narrow terminals.
    let spans = match &nodes.largest_pending_pod {
        Some((g, wl)) => {
            let fits = free.is_some_and(|n| n.gpu_free() >= *g);
            vec![
                if fits {
                    Span::styled("largest pending pod fits", t.ok)
                } else {
                    Span::styled("no node fits the largest pending pod", t.warning)
                },
                Span::raw(format!(" ({g} GPUs) · {free_text} · {wl}")),
            ]
        }
        None => vec![
            Span::styled("no pending GPU pods", t.muted),
            Span::raw(format!(" · {free_text}")),
        ],
    };
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
