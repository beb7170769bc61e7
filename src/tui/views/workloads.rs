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
use crate::tui::widgets::table::{self, Fit, TableSpec, fit_columns};
use crate::tui::widgets::{format_age, truncate, truncate_middle};

/// Filters then sorts the cached rows (called on data, filter or sort changes only).
pub fn index(app: &App, sort: SortState) -> Vec<u32> {
    let rows = &app.cache.workloads;
    let mut index: Vec<u32> = if app.scope.is_empty() {
        (0..rows.len() as u32).collect()
    } else {
        (0..rows.len() as u32)
            .filter(|&i| rows[i as usize].matches(&app.scope))
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
    // Side by side only when both panes stay readable.
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
        render_table(frame, list_area, app);
    }
    // A describe/YAML pane is drawn over the body instead (views::row_detail).
    if let (Some(a), Some(row), None) = (detail_area, app.selected_workload(), &app.pane) {
        detail::render(frame, a, app, data, row);
    }
}

/// The columns of the table, in order. Optional ones are shown when there is room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Namespace,
    Job,
    Queue,
    Priority,
    PriorityValue,
    State,
    Gpus,
    Age,
    Wait,
    Pos,
    Verdict,
}

impl Col {
    fn header(self) -> &'static str {
        match self {
            Col::Namespace => "NAMESPACE",
            Col::Job => "JOB",
            Col::Queue => "QUEUE",
            Col::Priority => "PRIORITY",
            Col::PriorityValue => "PRIO",
            Col::State => "STATE",
            Col::Gpus => "GPUS",
            Col::Age => "AGE",
            Col::Wait => "WAIT",
            Col::Pos => "POS",
            Col::Verdict => "VERDICT",
        }
    }
}

/// Layouts from the most to the least informative; the first whose names and verdict
/// fit readably wins.
const LAYOUTS: [&[Col]; 3] = [
    &[
        Col::Namespace,
        Col::Job,
        Col::Queue,
        Col::Priority,
        Col::State,
        Col::Gpus,
        Col::Age,
        Col::Wait,
        Col::Pos,
        Col::Verdict,
    ],
    &[
        Col::Namespace,
        Col::Job,
        Col::PriorityValue,
        Col::State,
        Col::Gpus,
        Col::Age,
        Col::Wait,
        Col::Verdict,
    ],
    &[
        Col::Namespace,
        Col::Job,
        Col::State,
        Col::Gpus,
        Col::Wait,
        Col::Verdict,
    ],
];

/// The verdict (with the shortfall) is what the list is for: never below this.
const VERDICT_MIN: usize = 16;
const JOB_MIN: usize = 16;

/// Picks a layout and sizes its columns to the content of the rows.
fn layout(app: &App, avail: usize, ages: (usize, usize)) -> (&'static [Col], Vec<usize>) {
    let w = &app.cache.workload_widths;
    let fits = |cols: &[Col]| -> Vec<Fit> {
        cols.iter()
            .map(|&c| {
                let h = c.header().len();
                let (content, min) = match c {
                    Col::Namespace => (w.namespace, 8),
                    Col::Job => (w.job, JOB_MIN),
                    Col::Queue => (w.queue.max(1), 10),
                    Col::Priority => (w.priority, 12),
                    Col::PriorityValue => (w.priority_value, 4),
                    Col::State => (w.state, 9),
                    Col::Gpus => (1, 4),
                    Col::Age => (ages.0, 6),
                    Col::Wait => (ages.1, 6),
                    Col::Pos => (1, 3),
                    Col::Verdict => (w.verdict, VERDICT_MIN),
                };
                Fit {
                    content: content.max(h),
                    min: min.max(h),
                }
            })
            .collect()
    };
    for (i, cols) in LAYOUTS.iter().enumerate() {
        let f = fits(cols);
        let Some(widths) = fit_columns(avail, &f) else {
            continue;
        };
        let last = LAYOUTS.len() - 1;
        // An optional column may only cost the job name or the verdict nothing.
        let job = cols.iter().position(|c| *c == Col::Job).unwrap_or(0);
        let readable = widths[job] >= f[job].content
            && widths[widths.len() - 1] >= f[f.len() - 1].content.min(VERDICT_MIN * 2);
        if readable || i == last {
            return (cols, widths);
        }
    }
    // Narrower than the smallest layout's minimums (below the 60-column floor).
    let cols = LAYOUTS[LAYOUTS.len() - 1];
    let n = cols.len();
    (cols, vec![avail.saturating_sub(n - 1) / n; n])
}

fn render_table(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let index = app.visible(ViewId::Workloads);
    let rows = &app.cache.workloads;
    // AGE and WAIT change with the clock: measure the rows on screen only.
    let list = *app.list();
    let height = usize::from(area.height.saturating_sub(3));
    let offset = table::visible_offset(list, index.len(), height);
    let mut ages = (1, 1);
    for &i in index.iter().skip(offset).take(height) {
        let r = &rows[i as usize];
        ages.0 = ages
            .0
            .max(r.age_ms(app.now).map_or(1, |a| format_age(a).len()));
        ages.1 = ages
            .1
            .max(r.wait_ms(app.now).map_or(1, |w| format_age(w).len()));
    }
    let avail = usize::from(area.width.saturating_sub(2));
    let (cols, widths) = layout(app, avail, ages);
    let spec = TableSpec {
        title: title(app, "Workloads"),
        header: cols.iter().map(|c| c.header()).collect(),
        widths: widths
            .iter()
            .map(|w| Constraint::Length(*w as u16))
            .collect(),
        len: index.len(),
        list,
        empty: if rows.is_empty() {
            "no workloads"
        } else {
            "no workloads match the filter (Esc clears)"
        },
    };
    table::render(frame, area, t, spec, |pos| {
        let r = &rows[index[pos] as usize];
        row(r, app, cols, &widths)
    });
}

fn row<'a>(r: &WorkloadRow, app: &App, cols: &[Col], widths: &[usize]) -> Row<'a> {
    let t = &app.theme;
    let dash = || Span::styled("—", t.muted);
    let cells = cols.iter().zip(widths).map(|(&c, &w)| match c {
        Col::Namespace => Cell::from(truncate_middle(&r.namespace, w)),
        Col::Job => Cell::from(truncate_middle(&r.job, w)),
        Col::Queue if r.queue.is_empty() => Cell::from(Line::from(dash())),
        Col::Queue => Cell::from(truncate_middle(&r.queue, w)),
        Col::Priority => {
            let prio = if r.priority_class.is_empty() {
                r.priority.to_string()
            } else {
                format!("{} ({})", r.priority_class, r.priority)
            };
            Cell::from(truncate(&prio, w))
        }
        Col::PriorityValue => Cell::from(truncate(&r.priority.to_string(), w)),
        Col::State => Cell::from(Line::from(Span::styled(
            r.state.label(),
            state_style(t, r.state),
        ))),
        Col::Gpus => Cell::from(Line::from(r.gpus.to_string()).right_aligned()),
        Col::Age => Cell::from(Line::from(
            r.age_ms(app.now)
                .map_or_else(dash, |a| Span::raw(format_age(a))),
        )),
        Col::Wait => Cell::from(Line::from(
            r.wait_ms(app.now)
                .map_or_else(dash, |w| Span::raw(format_age(w))),
        )),
        Col::Pos => Cell::from(Line::from(
            r.position.map_or_else(dash, |p| Span::raw(p.to_string())),
        )),
        Col::Verdict => Cell::from(Line::from(
            r.verdict_cell(app.now)
                .map_or_else(dash, |v| Span::styled(truncate(&v, w), t.verdict)),
        )),
    });
    Row::new(cells.collect::<Vec<_>>())
}
