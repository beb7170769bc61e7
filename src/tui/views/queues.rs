//! Queues: the cohort → ClusterQueue → LocalQueue tree with a GPU gauge per queue,
//! and below (or beside) it the selected queue's per flavor × resource figures and
//! its GPU usage over the last hour. Enter drills into the queue's workloads.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

use super::title;
use crate::tui::app::App;
use crate::tui::filter::FilterKey;
use crate::tui::msg::ViewId;
use crate::tui::rows::queues::{CqSummary, QueueLine};
use crate::tui::widgets::table::{self, TableSpec};
use crate::tui::widgets::{gauge, sparkline};

/// Tree lines that match the filter (text on names; `cq=` / `ns=` / `queue=` terms).
pub fn index(app: &App) -> Vec<u32> {
    let tree = &app.cache.queues;
    let f = &app.scope;
    (0..tree.lines.len() as u32)
        .filter(|&i| match &tree.lines[i as usize] {
            QueueLine::Cohort { name, .. } => f.matches(&name.to_lowercase(), |_| None),
            QueueLine::ClusterQueue { index, .. } => {
                let cq = &tree.cqs[*index];
                f.matches(&cq.name.to_lowercase(), |k| match k {
                    FilterKey::ClusterQueue => Some(vec![cq.name.as_str()]),
                    _ => None,
                })
            }
            QueueLine::LocalQueue { index, .. } => {
                let lq = &tree.lqs[*index];
                let text = format!("{}/{} {}", lq.namespace, lq.name, lq.cluster_queue);
                f.matches(&text.to_lowercase(), |k| match k {
                    FilterKey::Namespace => Some(vec![lq.namespace.as_str()]),
                    FilterKey::Queue => Some(vec![lq.name.as_str()]),
                    FilterKey::ClusterQueue => Some(vec![lq.cluster_queue.as_str()]),
                    _ => None,
                })
            }
        })
        .collect()
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let wide = area.width >= 140;
    let [tree_area, detail_area] = if wide {
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area)
    } else {
        Layout::vertical([Constraint::Min(5), Constraint::Length(7)]).areas(area)
    };
    render_tree(frame, tree_area, app);
    render_detail(frame, detail_area, app);
}

fn render_tree(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let tree = &app.cache.queues;
    let index = app.visible(ViewId::Queues);
    let bar_width = if area.width >= 90 { 16 } else { 8 };
    // fair sharing on (Kueue's configuration): weight and dominant resource share
    let fair = tree.fair_sharing;
    let mut header = vec!["NAME", "GPUS", "USED/NOM", "PEND", "ADM"];
    let mut widths = vec![
        Constraint::Min(20),
        Constraint::Length(bar_width as u16),
        Constraint::Length(9),
        Constraint::Length(5),
        Constraint::Length(5),
    ];
    if fair {
        header.push("SHARE");
        widths.push(Constraint::Length(10));
    }
    let spec = TableSpec {
        title: title(app, "Queues: cohort › ClusterQueue › LocalQueue"),
        header,
        widths,
        len: index.len(),
        list: *app.list(),
        empty: "no queues",
    };
    table::render(frame, area, t, spec, |pos| {
        match &tree.lines[index[pos] as usize] {
            QueueLine::Cohort { name, depth } => {
                let mut cells = vec![Cell::from(Span::styled(
                    format!("{}◆ cohort {name}", "  ".repeat(*depth)),
                    t.cohort,
                ))];
                if fair {
                    cells.extend((0..4).map(|_| Cell::from("")));
                    cells.push(Cell::from(
                        tree.cohort_shares.get(name).cloned().unwrap_or_default(),
                    ));
                }
                Row::new(cells)
            }
            QueueLine::ClusterQueue { index, depth } => {
                let cq = &tree.cqs[*index];
                let over = cq.gpu_used > cq.gpu_nominal;
                let held = if cq.held { " (held)" } else { "" };
                let figures = Span::styled(
                    format!("{}/{}", cq.gpu_used, cq.gpu_nominal),
                    if over { t.queue_over_quota } else { t.text },
                );
                let mut cells = vec![
                    Cell::from(format!("{}▸ {}{held}", "  ".repeat(*depth), cq.name)),
                    Cell::from(Line::from(gauge::bar(
                        cq.gpu_used.into(),
                        cq.gpu_nominal.into(),
                        bar_width,
                        t,
                    ))),
                    Cell::from(Line::from(figures)),
                    Cell::from(cq.pending.to_string()),
                    Cell::from(cq.admitted.to_string()),
                ];
                if fair {
                    cells.push(Cell::from(cq.share.clone().unwrap_or_default()));
                }
                Row::new(cells)
            }
            QueueLine::LocalQueue { index, depth } => {
                let lq = &tree.lqs[*index];
                let held = if lq.held { " (held)" } else { "" };
                Row::new(vec![
                    Cell::from(format!(
                        "{}· {}/{}{held}",
                        "  ".repeat(*depth),
                        lq.namespace,
                        lq.name
                    )),
                    Cell::from(""),
                    Cell::from(""),
                    Cell::from(lq.pending.to_string()),
                    Cell::from(lq.admitted.to_string()),
                ])
            }
        }
    });
}

/// The ClusterQueue the selection refers to (an LQ shows its CQ).
fn selected_cq(app: &App) -> Option<&CqSummary> {
    let tree = &app.cache.queues;
    match app.selected_queue_line()? {
        QueueLine::ClusterQueue { index, .. } => tree.cqs.get(*index),
        QueueLine::LocalQueue { index, .. } => {
            let name = &tree.lqs.get(*index)?.cluster_queue;
            tree.cqs.iter().find(|c| &c.name == name)
        }
        QueueLine::Cohort { .. } => None,
    }
}

fn render_detail(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let block = Block::bordered().border_style(t.border);
    let Some(cq) = selected_cq(app) else {
        let hint = Line::from(Span::styled(
            "select a ClusterQueue for quota figures",
            t.muted,
        ));
        frame.render_widget(Paragraph::new(hint).block(block.title(" Quota ")), area);
        return;
    };
    let cohort = cq.cohort.as_deref().unwrap_or("—");
    let title = format!(
        " {} · cohort {cohort} · pending {} · admitted {} ",
        cq.name, cq.pending, cq.admitted
    );
    let block = block.title(Line::from(title).style(t.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [figures, spark] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    // The bar is decoration: it is dropped first when space is short.
    // Numbers take 39 cells, the name wants 26; the bar gets what is left (≤ 16).
    let bar_width: u16 = match inner.width.saturating_sub(39 + 26) {
        n @ 4.. => n.min(16),
        _ => 0,
    };
    let num = |q: crate::model::Quantity| Line::from(q.to_string()).right_aligned();
    let rows: Vec<Row> = cq
        .quotas
        .iter()
        .map(|q| {
            let over = q.used > q.nominal;
            let name = format!("{} {}", q.flavor, q.resource);
            let pct = gauge::percent(q.used.milli(), q.nominal.milli());
            Row::new(vec![
                Cell::from(name),
                Cell::from(Line::from(gauge::bar(
                    q.used.milli(),
                    q.nominal.milli(),
                    bar_width.into(),
                    t,
                ))),
                Cell::from(
                    Line::from(Span::styled(
                        pct,
                        if over { t.queue_over_quota } else { t.text },
                    ))
                    .right_aligned(),
                ),
                Cell::from(num(q.nominal)),
                Cell::from(num(q.used)),
                Cell::from(num(q.borrowed).style(if q.borrowed.is_zero() {
                    t.text
                } else {
                    t.borrowing
                })),
                Cell::from(num(q.lendable).style(t.lending)),
            ])
        })
        .collect();
    let widths = [
        Constraint::Fill(1),
        Constraint::Length(bar_width),
        Constraint::Length(5),
        Constraint::Length(7),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(8),
    ];
    let header = Row::new(vec![
        "FLAVOR RESOURCE",
        "",
        "USE%",
        "NOMINAL",
        "USED",
        "BORROWED",
        "LENDABLE",
    ])
    .style(t.header);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .style(t.text);
    frame.render_widget(table, figures);

    let hist = app.gpu_history.get(&cq.name);
    let values: Vec<i64> = hist.map_or(Vec::new(), |h| h.samples.iter().map(|s| s.1).collect());
    let max = values
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(cq.gpu_nominal);
    let line = Line::from(vec![
        Span::raw("GPUs in use, last hour "),
        Span::styled(sparkline(&values, max), t.sparkline),
        Span::raw(format!(" now {} of {}", cq.gpu_used, cq.gpu_nominal)),
    ]);
    frame.render_widget(Paragraph::new(line), spark);
}
