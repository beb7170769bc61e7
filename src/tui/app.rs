//! [`App`]: the console's per-session UI state and the caches derived from the data.
//!
//! One `App` per terminal or SSH session. It owns no I/O. [`update`] (in
//! `update.rs`) is the only thing that changes it; views read it through `&App`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::data::{AuditRow, ConsoleData, EventRow};
use super::filter::Filter;
use super::keymap::Keymap;
use super::msg::ViewId;
use super::rows::nodes::NodeTable;
use super::rows::queues::{QueueLine, QueueTree};
use super::rows::workloads::{self, WorkloadRow};
use super::theme::Theme;
use crate::model::Timestamp;

pub use super::update::update;

/// What keys currently do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a `:` command; the text after the colon.
    Command(String),
    /// Typing a `/` filter.
    Filter(String),
    /// Typing a `/` search inside open details.
    Search(String),
    /// The `?` overlay, with its scroll offset.
    Help(usize),
    /// An action waits for the operator's `y` (summary and details in a panel).
    Confirm(super::msg::Prompt),
    /// The reprioritize picker is up.
    Priority(super::priority::Picker),
}

/// Selection and scroll position of one list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListState {
    pub selected: usize,
    pub offset: usize,
}

/// Sort column and direction of one view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortState {
    pub column: usize,
    pub reverse: bool,
}

/// GPUs in use per minute over the last hour, for one ClusterQueue.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// (minute since the epoch, GPUs in use), oldest first, at most 60 entries.
    pub samples: VecDeque<(i64, i64)>,
}

impl History {
    pub const MINUTES: usize = 60;

    /// Records a sample; several samples in one minute keep the latest.
    pub fn record(&mut self, now: Timestamp, value: i64) {
        let minute = now.div_euclid(60_000);
        match self.samples.back_mut() {
            Some(last) if last.0 == minute => last.1 = value,
            _ => self.samples.push_back((minute, value)),
        }
        while self.samples.len() > Self::MINUTES
            || self
                .samples
                .front()
                .is_some_and(|f| f.0 <= minute - Self::MINUTES as i64)
        {
            self.samples.pop_front();
        }
    }
}

/// Rows derived from the data, and the filtered + sorted index of each view.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    /// The data the caches were built from.
    pub data: ConsoleData,
    pub workloads: Vec<WorkloadRow>,
    pub queues: QueueTree,
    pub nodes: NodeTable,
    /// Content widths of the Workloads view's visible rows (sizes its columns).
    pub workload_widths: workloads::ColumnWidths,
    /// Per view (in `ViewId::ALL` order): indices of the visible rows, in display order.
    pub index: [Vec<u32>; ViewId::COUNT],
}

/// The console's UI state.
/// How many audit rows the console keeps for the Audit view.
pub const AUDIT_ROWS_KEPT: usize = 200;

#[derive(Clone, Debug)]
pub struct App {
    /// Audit rows from the action task (the console's own attempts, and earlier ones
    /// read back from the audit log at start), newest last, at most [`AUDIT_ROWS_KEPT`].
    pub audit_rows: Vec<AuditRow>,
    /// The Events view's rows as the feed last sent them (before the operator actions
    /// of `audit_rows` are merged in).
    pub feed_events: Arc<Vec<EventRow>>,
    pub view: ViewId,
    pub mode: Mode,
    pub readonly: bool,
    pub keymap: Keymap,
    pub theme: Theme,
    pub filter: Filter,
    /// The kubeconfig's context names (`:ctx` lists them).
    pub contexts: Vec<String>,
    /// The namespace every view is scoped to (`-n`, `:ns`); `None`: all.
    pub namespace: Option<String>,
    /// What the views apply: `ns=<namespace>` (when scoped) and the filter, ANDed.
    pub scope: Filter,
    /// Feedback for the message line.
    pub message: Option<String>,
    /// The detail pane of the current view is open.
    pub detail: bool,
    /// A describe or YAML pane (`d`, `y`) open over the view; Esc closes it.
    pub pane: Option<super::describe::Pane>,
    /// First line of the detail pane shown (scrolled by the movement keys while open;
    /// a search jump sets it while drawing, hence the cell).
    pub detail_scroll: std::cell::Cell<u16>,
    /// Text searched for in the open detail (`/` while details are open), and which
    /// match to show; the next draw jumps to it when `detail_jump` is set.
    pub detail_search: Option<String>,
    pub detail_match: usize,
    pub detail_jump: std::cell::Cell<bool>,
    /// The largest useful `detail_scroll` at the last draw (set by the detail pane, so
    /// scrolling up from "End" starts at the bottom rather than past it).
    pub detail_max: std::cell::Cell<u16>,
    /// Scroll offset of the confirmation panel, and its largest useful value at the
    /// last draw.
    pub confirm_scroll: u16,
    pub confirm_max: std::cell::Cell<u16>,
    /// Views to return to with Esc (drill-ins push here).
    pub back_stack: Vec<(ViewId, Filter)>,
    pub lists: [ListState; ViewId::COUNT],
    pub sorts: [SortState; ViewId::COUNT],
    pub now: Timestamp,
    /// Terminal size in columns × rows.
    pub size: (u16, u16),
    pub cache: Cache,
    pub gpu_history: HashMap<String, History>,
    /// Where RBAC refuses the action keys' writes.
    pub access: super::msg::ActionAccess,
}

impl App {
    pub fn new(keymap: Keymap, theme: Theme, readonly: bool, view: ViewId) -> App {
        App {
            view,
            mode: Mode::Normal,
            readonly,
            keymap,
            theme,
            filter: Filter::default(),
            contexts: Vec::new(),
            namespace: None,
            scope: Filter::default(),
            message: None,
            detail: false,
            pane: None,
            detail_scroll: std::cell::Cell::new(0),
            detail_search: None,
            detail_match: 0,
            detail_jump: std::cell::Cell::new(false),
            detail_max: std::cell::Cell::new(0),
            confirm_scroll: 0,
            confirm_max: std::cell::Cell::new(0),
            back_stack: Vec::new(),
            lists: [ListState::default(); ViewId::COUNT],
            sorts: [SortState::default(); ViewId::COUNT],
            now: 0,
            size: (80, 24),
            cache: Cache::default(),
            gpu_history: HashMap::new(),
            audit_rows: Vec::new(),
            feed_events: Arc::default(),
            access: Default::default(),
        }
    }

    pub fn list(&self) -> &ListState {
        &self.lists[self.view.index()]
    }

    pub fn visible(&self, view: ViewId) -> &[u32] {
        &self.cache.index[view.index()]
    }

    /// Rows a list can show at the current size (chrome: tabs, header, borders, status
    /// and message lines).
    pub fn page_rows(&self) -> usize {
        usize::from(self.size.1.saturating_sub(7)).max(1)
    }

    /// The selected workload row, if the Workloads view has one.
    pub fn selected_workload(&self) -> Option<&WorkloadRow> {
        let i = *self
            .visible(ViewId::Workloads)
            .get(self.lists[ViewId::Workloads.index()].selected)?;
        self.cache.workloads.get(i as usize)
    }

    /// The selected line of the queue tree.
    pub fn selected_queue_line(&self) -> Option<&QueueLine> {
        let i = *self
            .visible(ViewId::Queues)
            .get(self.lists[ViewId::Queues.index()].selected)?;
        self.cache.queues.lines.get(i as usize)
    }

    /// For front ends that are handed the data at draw time (the SSH server's
    /// `SessionApp::render(&mut self, &data, frame)`): moves the clock and rebuilds
    /// the caches only if `data` differs from what they were built from. Then call
    /// [`view`](super::view).
    pub fn observe(&mut self, data: &ConsoleData, now: Timestamp) {
        self.now = now;
        self.set_data(data.clone());
    }

    /// Rebuilds the derived rows when the data really changed.
    pub(crate) fn set_data(&mut self, mut data: ConsoleData) {
        let feed_events = data.events.clone();
        let same_events = Arc::ptr_eq(&self.feed_events, &feed_events);
        self.feed_events = feed_events;
        if !self.audit_rows.is_empty() {
            data.audit = Arc::new(self.audit_rows.clone());
            data.events = Arc::new(super::adapt::with_operator_events(
                &data.state,
                &self.feed_events,
                &self.audit_rows,
            ));
        }
        let old = &self.cache.data;
        let same = old.generation == data.generation
            && Arc::ptr_eq(&old.state, &data.state)
            && same_events
            && match (&old.plan, &data.plan) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            };
        if same {
            // Same snapshot and plan: nothing derived can differ.
            self.cache.data = data;
            return;
        }
        {
            let state = &data.state;
            let plan = data.plan.as_deref();
            self.cache.workloads = WorkloadRow::build_all(state, plan);
            workloads::attach_preemptions(&mut self.cache.workloads, &data.events);
            self.cache.queues = QueueTree::build(state);
            self.cache.nodes = NodeTable::build(state);
            for (cq, used) in self.cache.queues.gpu_usage() {
                self.gpu_history
                    .entry(cq.to_string())
                    .or_default()
                    .record(self.now, used);
            }
        }
        self.cache.data = data;
        for view in ViewId::ALL {
            self.reindex(view);
        }
    }

    /// Appends audit rows (from the action task), keeping the newest
    /// [`AUDIT_ROWS_KEPT`], and shows them in the Audit view.
    pub(crate) fn add_audit_rows(&mut self, rows: impl IntoIterator<Item = AuditRow>) {
        self.audit_rows.extend(rows);
        let excess = self.audit_rows.len().saturating_sub(AUDIT_ROWS_KEPT);
        self.audit_rows.drain(..excess);
        self.cache.data.audit = Arc::new(self.audit_rows.clone());
        self.cache.data.events = Arc::new(super::adapt::with_operator_events(
            &self.cache.data.state,
            &self.feed_events,
            &self.audit_rows,
        ));
        self.reindex(ViewId::Audit);
        self.reindex(ViewId::Events);
    }

    /// Sets the filter (and the scope it makes with the namespace) and re-filters.
    pub fn set_filter(&mut self, filter: Filter) {
        self.filter = filter;
        self.rescope();
    }

    /// Scopes every view to `namespace` (`None`: all namespaces) and re-filters.
    pub fn set_namespace(&mut self, namespace: Option<String>) {
        self.namespace = namespace.filter(|n| !n.is_empty());
        self.rescope();
    }

    fn rescope(&mut self) {
        self.scope = match &self.namespace {
            None => self.filter.clone(),
            Some(ns) => {
                let text = format!("ns={ns} {}", self.filter.source);
                Filter::parse(&text).unwrap_or_else(|_| self.filter.clone())
            }
        };
        for view in ViewId::ALL {
            self.reindex(view);
        }
    }

    /// Recomputes one view's filtered + sorted index and clamps its selection.
    pub(crate) fn reindex(&mut self, view: ViewId) {
        let sort = self.sorts[view.index()];
        let index = super::views::index_for(self, view, sort);
        let list = &mut self.lists[view.index()];
        list.selected = list.selected.min(index.len().saturating_sub(1));
        if view == ViewId::Workloads {
            self.cache.workload_widths =
                workloads::ColumnWidths::measure(&self.cache.workloads, &index, self.now);
        }
        self.cache.index[view.index()] = index;
        self.scroll_into_view(view);
    }

    /// Moves the selection to `target` (clamped) and keeps it on screen.
    pub(crate) fn select(&mut self, target: isize) {
        let len = self.visible(self.view).len();
        let view = self.view;
        let list = &mut self.lists[view.index()];
        list.selected = target.clamp(0, len.saturating_sub(1) as isize) as usize;
        self.scroll_into_view(view);
    }

    pub(crate) fn scroll_into_view(&mut self, view: ViewId) {
        let page = self.page_rows();
        let list = &mut self.lists[view.index()];
        if list.selected < list.offset {
            list.offset = list.selected;
        } else if list.selected >= list.offset + page {
            list.offset = list.selected + 1 - page;
        }
    }
}

/// Sorts workload row indices in place for a sort state.
pub(crate) fn sort_workloads(rows: &[WorkloadRow], index: &mut [u32], sort: SortState, now: i64) {
    index.sort_unstable_by(|&a, &b| {
        let ord = workloads::compare(&rows[a as usize], &rows[b as usize], sort.column, now);
        if sort.reverse { ord.reverse() } else { ord }
    });
}
