//! Rendering: `view(&App, &ConsoleData, &mut Frame)` draws one frame and mutates
//! nothing. Each view lives in its own file and also says how its rows are filtered
//! and sorted (`index`), which `App` caches; drawing only reads those indices.

pub mod audit;
pub mod confirm;
pub mod drift;
pub mod events;
pub mod health;
pub mod help;
pub mod nodes;
pub mod offline;
pub mod plan;
pub mod priority;
pub mod queues;
pub mod row_detail;
pub mod workload_detail;
pub mod workloads;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Mode, SortState};
use super::data::ConsoleData;
use super::filter::FilterKey;
use super::msg::ViewId;
use super::widgets::status_bar;

/// Below this the console shows only a notice.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 15;

/// Draws the whole console. Pass the data last sent to `update` as `Msg::Data`.
pub fn view(app: &App, data: &ConsoleData, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small: need at least {MIN_WIDTH}×{MIN_HEIGHT}, have {}×{}",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(text)
                .style(app.theme.danger)
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let [tabs, body, status, message] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_tabs(frame, tabs, app);
    match app.view {
        ViewId::Queues => queues::render(frame, body, app),
        ViewId::Workloads => workloads::render(frame, body, app, data),
        ViewId::Nodes => nodes::render(frame, body, app),
        ViewId::Plan => plan::render(frame, body, app, data),
        ViewId::Drift => drift::render(frame, body, app, data),
        ViewId::Audit => audit::render(frame, body, app, data),
        ViewId::Health => health::render(frame, body, app, data),
        ViewId::Events => events::render(frame, body, app, data),
    }
    if app.detail {
        row_detail::render(frame, body, app, data);
    }
    offline::render(frame, body, app, data);
    status_bar::render_status(frame, status, app, data);
    status_bar::render_message(frame, message, app);
    match &app.mode {
        Mode::Help(scroll) => help::render(frame, body, app, *scroll),
        Mode::Priority(picker) => priority::render(frame, body, app, data, picker),
        Mode::Confirm(prompt) => confirm::render(frame, body, app, prompt),
        _ => {}
    }
}

fn render_tabs(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let mut spans = Vec::new();
    let filter = if app.filter.is_empty() {
        String::new()
    } else {
        format!("  filter: {}", app.filter.source)
    };
    let full: usize = ViewId::ALL
        .iter()
        .enumerate()
        .map(|(i, v)| format!(" {} {} ", i + 1, v.name()).len())
        .sum();
    // Too narrow for every name and the filter: only the current view keeps its name.
    let compact = full + super::widgets::width(&filter) > usize::from(area.width);
    for (i, v) in ViewId::ALL.iter().enumerate() {
        let label = if compact && *v != app.view {
            format!(" {} ", i + 1)
        } else {
            format!(" {} {} ", i + 1, title_case(v.name()))
        };
        let style = if *v == app.view { t.tab_active } else { t.tab };
        spans.push(Span::styled(label, style));
    }
    if !filter.is_empty() {
        spans.push(Span::styled(filter, t.message));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn title_case(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The pane title: view name, sort column and direction.
pub(crate) fn title(app: &App, name: &str) -> Line<'static> {
    let cols = sort_columns(app.view);
    let sort = app.sorts[app.view.index()];
    let mut s = format!(" {name} ");
    if let Some(c) = cols.get(sort.column) {
        let arrow = if sort.reverse { '▼' } else { '▲' };
        s.push_str(&format!("· sort {c}{arrow} "));
    }
    Line::from(s)
}

/// The columns `s` cycles through in a view (empty: the view does not sort).
pub fn sort_columns(view: ViewId) -> &'static [&'static str] {
    match view {
        ViewId::Workloads => &super::rows::workloads::SORT_COLUMNS,
        ViewId::Nodes => &nodes::SORT_COLUMNS,
        _ => &[],
    }
}

/// The namespace of a `namespace/name` key (`None` for a cluster-scoped name).
fn key_namespace(key: &str) -> Option<&str> {
    match key.split('/').collect::<Vec<_>>()[..] {
        [ns, _] => Some(ns),
        _ => None,
    }
}

/// A view's visible row indices in display order: filtered, then sorted.
pub(crate) fn index_for(app: &App, view: ViewId, sort: SortState) -> Vec<u32> {
    let f = &app.scope;
    let data = &app.cache.data;
    let by_text = |text: String| f.matches(&text.to_lowercase(), |_| None);
    // Rows about namespaced objects answer `ns=` (and so the `-n` / `:ns` scope);
    // rows about cluster-scoped ones ignore it.
    let in_ns = |text: String, namespaces: Vec<&str>| {
        f.matches(&text.to_lowercase(), |k| match k {
            FilterKey::Namespace if !namespaces.is_empty() => Some(namespaces.clone()),
            _ => None,
        })
    };
    let keep = |n: usize, pred: &dyn Fn(usize) -> bool| -> Vec<u32> {
        (0..n).filter(|&i| pred(i)).map(|i| i as u32).collect()
    };
    match view {
        ViewId::Workloads => workloads::index(app, sort),
        ViewId::Queues => queues::index(app),
        ViewId::Nodes => nodes::index(app, sort),
        ViewId::Plan => {
            let props = data.plan.as_deref().map_or(&[][..], |p| &p.proposals[..]);
            keep(props.len(), &|i| {
                let p = &props[i];
                in_ns(
                    format!("{} {} {} {}", p.id, p.action, p.target, p.summary),
                    key_namespace(&p.target).into_iter().collect(),
                )
            })
        }
        ViewId::Drift => keep(data.drift.len(), &|i| {
            let d = &data.drift[i];
            by_text(format!(
                "{} {} {} {}",
                d.object, d.field, d.expected, d.actual
            ))
        }),
        ViewId::Audit => keep(data.audit.len(), &|i| {
            let a = &data.audit[i];
            in_ns(
                format!("{} {} {} {}", a.actor, a.action, a.target, a.outcome),
                key_namespace(&a.target).into_iter().collect(),
            )
        }),
        ViewId::Events => keep(data.events.len(), &|i| events::matches(&data.events[i], f)),
        ViewId::Health => keep(data.health.len(), &|i| {
            let h = &data.health[i];
            let objects = h.objects.join(" ");
            // `Kind/namespace/name` objects are namespaced; `Kind/name` ones are not.
            let namespaces = h
                .objects
                .iter()
                .filter_map(|o| {
                    let parts: Vec<&str> = o.split('/').collect();
                    (parts.len() == 3).then(|| parts[1])
                })
                .collect();
            in_ns(
                format!("{} {} {objects} {}", h.severity.label(), h.check, h.message),
                namespaces,
            )
        }),
    }
}
