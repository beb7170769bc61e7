//! The workload detail pane: pod sets, conditions with messages, owner job, pods and
//! nodes, and the shadow engine's explanation. Reads the one selected workload from
//! the snapshot, so it costs nothing when closed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::workloads::state_style;
use crate::model::{ConditionStatus, Workload};
use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::rows::workloads::WorkloadRow;
use crate::tui::widgets::format_age;

pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData, row: &WorkloadRow) {
    let t = &app.theme;
    let block = Block::bordered()
        .border_style(t.border)
        .title(Line::from(format!(" {}/{} · Esc back ", row.namespace, row.name)).style(t.title));
    let key = (row.namespace.clone(), row.name.clone());
    let Some(wl) = data.state.workloads.get(&key) else {
        let gone = Paragraph::new(Line::from(Span::styled(
            "workload no longer exists",
            t.muted,
        )));
        frame.render_widget(gone.block(block), area);
        return;
    };
    let lines = lines(app, data, row, wl);
    let title = format!(" {}/{} · Esc back ", row.namespace, row.name);
    crate::tui::widgets::detail::render(frame, area, app, title, lines);
}

fn section(app: &App, name: &str) -> Line<'static> {
    Line::from(Span::styled(name.to_string(), app.theme.header))
}

fn lines(app: &App, data: &ConsoleData, row: &WorkloadRow, wl: &Workload) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    let prio = match &wl.priority_class {
        Some(p) => format!("{} ({})", p.name, wl.priority),
        None => wl.priority.to_string(),
    };
    out.push(Line::from(vec![
        Span::styled(row.state.label(), state_style(t, row.state)),
        Span::raw(format!("  priority {prio}  {} GPUs", row.gpus)),
    ]));
    let cq = if row.cluster_queue.is_empty() {
        "—"
    } else {
        &row.cluster_queue
    };
    let lq = if row.queue.is_empty() {
        "—"
    } else {
        &row.queue
    };
    out.push(Line::from(format!("queue {lq} → {cq}")));
    let owner = wl
        .owner
        .as_ref()
        .map_or("—".to_string(), |o| format!("{} {}", o.kind, o.name));
    out.push(Line::from(format!(
        "owner {owner}  created {}{}",
        row.age_ms(app.now)
            .map_or("—".to_string(), |a| format!("{} ago", format_age(a))),
        row.wait_ms(app.now)
            .map_or(String::new(), |w| format!("  waited {}", format_age(w)))
    )));

    match &row.preempted {
        Some(p) => out.push(Line::from(vec![
            Span::styled(p.describe(app.now), t.wl_preempted),
            Span::raw(format!(
                "  · preempted {} time{}",
                p.count,
                if p.count == 1 { "" } else { "s" }
            )),
        ])),
        None => out.push(Line::from(Span::styled(
            "never preempted (as far as seen)",
            t.muted,
        ))),
    }
    out.push(Line::from(format!(
        "workload {}/{}  job {}",
        row.namespace, row.name, row.job
    )));

    let verdict = data
        .plan
        .as_deref()
        .and_then(|p| p.verdicts.get(&(wl.namespace.clone(), wl.name.clone())));
    out.push(section(app, "shadow engine"));
    match verdict {
        Some(v) => {
            let pos = v
                .position
                .map_or(String::new(), |p| format!("  position {p}"));
            out.push(Line::from(vec![
                Span::raw("  verdict "),
                Span::styled(v.verdict.clone(), t.verdict),
                Span::raw(pos),
            ]));
            for e in &v.explanation {
                out.push(Line::from(format!("  {e}")));
            }
        }
        None => out.push(Line::from(Span::styled(
            "  — (no plan for this workload)",
            t.muted,
        ))),
    }

    out.push(section(app, "pod sets"));
    for ps in wl.pod_sets.iter() {
        let req: Vec<String> = ps
            .requests
            .iter()
            .map(|(r, q)| format!("{r}={q}"))
            .collect();
        let flavors = wl
            .admission
            .as_ref()
            .and_then(|a| a.pod_set_assignments.iter().find(|p| p.name == ps.name))
            .map(|p| {
                let f: Vec<String> = p.flavors.iter().map(|(r, f)| format!("{r}→{f}")).collect();
                format!("  flavors {}", f.join(", "))
            })
            .unwrap_or_default();
        out.push(Line::from(format!(
            "  {} ×{}  per pod {}{flavors}",
            ps.name,
            ps.count,
            req.join(" ")
        )));
    }

    out.push(section(app, "conditions"));
    if wl.conditions.is_empty() {
        out.push(Line::from(Span::styled("  none", t.muted)));
    }
    for c in &wl.conditions {
        let status = match c.status {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        };
        let when = c.last_transition_time.map_or(String::new(), |ts| {
            format!(" ({} ago)", format_age(app.now - ts))
        });
        out.push(Line::from(format!(
            "  {}={status} {}{when}",
            c.type_, c.reason
        )));
        if !c.message.is_empty() {
            out.push(Line::from(Span::styled(
                format!("    {}", c.message),
                t.muted,
            )));
        }
    }

    out.push(section(app, "pods"));
    let owner_name = wl.owner.as_ref().map(|o| o.name.as_str());
    let pods = data
        .state
        .pods
        .range((wl.namespace.clone(), String::new())..)
        .take_while(|((ns, _), _)| *ns == wl.namespace)
        .map(|(_, p)| p)
        .filter(|p| {
            p.owner_references
                .iter()
                .any(|o| Some(o.name.as_str()) == owner_name)
        });
    let mut any = false;
    for p in pods {
        any = true;
        let node = p.node_name.as_deref().unwrap_or("—");
        out.push(Line::from(format!(
            "  {}  {}  node {node}",
            p.name, p.phase
        )));
    }
    if !any {
        out.push(Line::from(Span::styled("  none", t.muted)));
    }
    out
}
