//! Enter on a Plan proposal, Drift row, Audit row or Health finding: the whole row in
//! a scrollable pane over the view (Health: the fix; Audit: before/after; proposals:
//! the victims and what the shadow engine says about the preemptor).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Clear;

use crate::tui::app::App;
use crate::tui::data::ConsoleData;
use crate::tui::msg::ViewId;
use crate::tui::widgets::{detail, format_age};

/// The selected row's position in the view's data, if there is one.
fn selected(app: &App, view: ViewId) -> Option<usize> {
    app.visible(view)
        .get(app.lists[view.index()].selected)
        .map(|&i| i as usize)
}

/// Draws the selected row's detail over `area`; false when the view has none.
pub fn render(frame: &mut Frame, area: Rect, app: &App, data: &ConsoleData) -> bool {
    if let Some(p) = &app.pane {
        frame.render_widget(Clear, area);
        let lines = p.lines.iter().map(|l| Line::from(l.clone())).collect();
        detail::render(frame, area, app, p.title.clone(), lines);
        return true;
    }
    let Some((title, lines)) = content(app, data) else {
        return false;
    };
    frame.render_widget(Clear, area);
    detail::render(frame, area, app, title, lines);
    true
}

/// The title and lines of the current view's selected row.
pub fn content(app: &App, data: &ConsoleData) -> Option<(String, Vec<Line<'static>>)> {
    let t = &app.theme;
    let head = |s: &str| Line::from(Span::styled(s.to_string(), t.header));
    let i = selected(app, app.view)?;
    let mut out: Vec<Line<'static>> = Vec::new();
    let title = match app.view {
        ViewId::Health => {
            let h = data.health.get(i)?;
            out.push(Line::from(format!("{} {}", h.severity.label(), h.check)));
            out.push(head("objects"));
            out.extend(h.objects.iter().map(|o| Line::from(format!("  {o}"))));
            out.push(head("finding"));
            out.push(Line::from(format!("  {}", h.message)));
            out.push(head("fix"));
            if h.fix.is_empty() {
                out.push(Line::from(Span::styled("  —", t.muted)));
            }
            out.extend(h.fix.lines().map(|l| Line::from(format!("  {l}"))));
            format!(" {} · Esc back ", h.check)
        }
        ViewId::Audit => {
            let a = data.audit.get(i)?;
            let when = if a.time > 0 {
                format!(
                    "{} ({} ago)",
                    crate::tui::widgets::format_time(a.time),
                    format_age(app.now - a.time)
                )
            } else {
                "—".to_string()
            };
            out.push(Line::from(format!("time    {when}")));
            out.push(Line::from(format!("actor   {}", a.actor)));
            out.push(Line::from(format!("action  {}", a.action)));
            out.push(Line::from(format!("target  {}", a.target)));
            out.push(Line::from(format!("outcome {}", a.outcome)));
            if !a.details.is_empty() {
                out.push(head("details"));
                out.extend(a.details.iter().map(|l| Line::from(format!("  {l}"))));
            }
            format!(" {} {} · Esc back ", a.action, a.target)
        }
        ViewId::Drift => {
            let d = data.drift.get(i)?;
            out.push(Line::from(format!("object   {}", d.object)));
            out.push(Line::from(format!("field    {}", d.field)));
            out.push(head("expected"));
            out.extend(d.expected.lines().map(|l| Line::from(format!("  {l}"))));
            out.push(head("actual"));
            out.extend(d.actual.lines().map(|l| Line::from(format!("  {l}"))));
            format!(" {} · Esc back ", d.object)
        }
        ViewId::Plan => {
            let plan = data.plan.as_deref()?;
            let p = plan.proposals.get(i)?;
            out.push(Line::from(format!("proposal {}", p.id)));
            out.push(Line::from(format!("action   {}", p.action)));
            out.push(Line::from(format!("target   {}", p.target)));
            out.push(Line::from(format!("summary  {}", p.summary)));
            if let Some((ns, name)) = p.target.split_once('/')
                && let Some(v) = plan.verdicts.get(&(ns.to_string(), name.to_string()))
            {
                out.push(head("shadow engine"));
                out.push(Line::from(format!("  verdict {}", v.verdict)));
                out.extend(v.explanation.iter().map(|e| Line::from(format!("  {e}"))));
            }
            out.push(head("victims"));
            let mut any = false;
            for c in &plan.cycles {
                for pre in c.preempted.iter().filter(|pre| pre.preemptor == p.target) {
                    for v in &pre.victims {
                        any = true;
                        out.push(Line::from(format!("  {v}  ({})", pre.reason)));
                    }
                    out.push(Line::from(format!("  frees {} GPUs", pre.gpus_freed)));
                }
            }
            if !any {
                out.push(Line::from(Span::styled(
                    "  see the summary (a approves)",
                    t.muted,
                )));
            }
            format!(" proposal {} · a approves · Esc back ", p.id)
        }
        ViewId::Events => {
            let e = data.events.get(i)?;
            let when = if e.time > 0 {
                format!(
                    "{} ({} ago)",
                    crate::tui::widgets::format_time(e.time),
                    format_age(app.now - e.time)
                )
            } else {
                "—".to_string()
            };
            out.push(Line::from(e.text.clone()));
            out.push(Line::from(format!("event   {}", e.kind.label())));
            out.push(Line::from(format!("time    {when}")));
            out.push(Line::from(format!("object  {}", e.object)));
            if let Some(by) = &e.by {
                out.push(Line::from(format!("by      {by}")));
            }
            if !e.reason.is_empty() {
                out.push(Line::from(format!("reason  {}", e.reason)));
            }
            if e.gpus > 0 {
                out.push(Line::from(format!("freed   {} GPUs", e.gpus)));
            }
            if !e.message.is_empty() {
                out.push(head("message"));
                out.push(Line::from(format!("  {}", e.message)));
            }
            format!(" {} {} · Esc back ", e.kind.label(), e.object_name)
        }
        _ => return None,
    };
    Some((title, out))
}
