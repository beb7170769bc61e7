//! Plan: the shadow engine's cycles (admissions; preemptions preemptor → victims,
//! GPUs freed) and the proposals awaiting approval (`a` approves the selected one).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Wrap};

use super::title;
use crate::tui::app::App;
use crate::tui::data::{ConsoleData, PlanView};
use crate::tui::msg::ViewId;
use crate::tui::widgets::table::{self, TableSpec};

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) {
    let t = &app.theme;
    let Some(plan) = data.plan.as_deref() else {
        let block = Block::bordered()
            .border_style(t.border)
            .title(title(app, "Plan"));
        let text = Line::from(Span::styled(
            "no plan yet: the shadow engine has not run on this snapshot",
            t.muted,
        ));
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    };
    let [cycles, proposals] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    render_cycles(frame, cycles, app, plan);
    let index = app.visible(ViewId::Plan);
    // The id is the preemptor's key (what `approve` takes): one column for both, cut
    // in the middle; the summary (victims, GPUs) gets the rest.
    // The preemptor by job name (the Workload key is in the details and is what
    // `approve` takes).
    let shown = |p: &crate::tui::data::ProposalView| {
        let name = crate::tui::rows::workloads::display_name(&data.state, &p.target);
        if p.id == p.target {
            name
        } else {
            format!("{} {name}", p.id)
        }
    };
    let target_w = plan
        .proposals
        .iter()
        .map(|p| crate::tui::widgets::width(&shown(p)))
        .max()
        .unwrap_or(6)
        .clamp(6, 36);
    let widths = table::resolve_widths(
        proposals,
        &[
            Constraint::Length(target_w as u16),
            Constraint::Length(6),
            Constraint::Min(10),
        ],
    );
    let summary_w = usize::from(widths.get(2).copied().unwrap_or(10));
    let spec = TableSpec {
        title: Line::from(" Proposals awaiting approval (a approves, Enter details) "),
        header: vec!["TARGET", "ACTION", "SUMMARY"],
        widths: widths.iter().map(|w| Constraint::Length(*w)).collect(),
        len: index.len(),
        list: *app.list(),
        empty: "no proposals",
    };
    table::render(frame, proposals, t, spec, |pos| {
        let p = &plan.proposals[index[pos] as usize];
        Row::new(vec![
            Cell::from(crate::tui::widgets::truncate_middle(&shown(p), target_w)),
            Cell::from(p.action.clone()),
            Cell::from(crate::tui::widgets::truncate(&p.summary, summary_w)),
        ])
    });
}

fn render_cycles(frame: &mut Frame, area: Rect, app: &App, plan: &PlanView) {
    let t = &app.theme;
    let mut lines = Vec::new();
    // Only cycles where something happens get a header.
    for c in plan
        .cycles
        .iter()
        .filter(|c| !c.admitted.is_empty() || !c.preempted.is_empty())
    {
        lines.push(Line::from(Span::styled(
            format!("cycle {}", c.index),
            t.header,
        )));
        for a in &c.admitted {
            lines.push(Line::from(vec![
                Span::styled("  admit   ", t.ok),
                Span::raw(format!(
                    "{} → {}  [{}]",
                    a.workload, a.cluster_queue, a.flavors
                )),
            ]));
        }
        for p in &c.preempted {
            lines.push(Line::from(vec![
                Span::styled("  preempt ", t.danger),
                Span::raw(format!(
                    "{} → {}  ({}, frees {} GPUs)",
                    p.preemptor,
                    p.victims.join(", "),
                    p.reason,
                    p.gpus_freed
                )),
            ]));
        }
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(
            "no admissions or preemptions planned",
            t.muted,
        )));
    }
    if !plan.pending.is_empty() {
        lines.push(Line::from(Span::styled(
            "still pending (head of each ClusterQueue)",
            t.header,
        )));
    }
    for h in &plan.pending {
        lines.push(Line::from(vec![
            Span::styled("  wait    ", t.warning),
            Span::raw(format!(
                "{} ({}): {}",
                h.workload, h.cluster_queue, h.reason
            )),
        ]));
        if !h.shortfall.is_empty() {
            lines.push(Line::from(format!("          short {}", h.shortfall)));
        }
        if !h.could_free.is_empty() {
            lines.push(Line::from(format!(
                "          could free it: {}",
                h.could_free
            )));
        }
    }
    let block = Block::bordered()
        .border_style(t.border)
        .title(title(app, "Plan: cycles").style(t.title));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}
