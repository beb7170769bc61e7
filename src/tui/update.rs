//! `update(&mut App, Msg) -> Vec<Effect>`: the only place UI state changes.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Mode};
use super::command::{self, Command};
use super::filter::Filter;
use super::keymap::KeyAction;
use super::msg::{ActionKind, ActionRequest, ActionTarget, Effect, Msg, ViewId};
use super::rows::queues::QueueLine;
use super::views;

/// Applies one message. Returns what the caller must do; `Redraw` when anything
/// visible changed.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Data(data) => {
            app.set_data(data);
            vec![Effect::Redraw]
        }
        Msg::Tick(now) => {
            app.now = now;
            vec![Effect::Redraw]
        }
        Msg::Resize(w, h) => {
            app.size = (w, h);
            // Only the page size changed: keep selections visible, do not re-sort.
            for view in ViewId::ALL {
                app.scroll_into_view(view);
            }
            vec![Effect::Redraw]
        }
        Msg::Notice(text) => {
            app.message = Some(text);
            vec![Effect::Redraw]
        }
        Msg::Confirm(summary) => super::confirm::ask(app, summary),
        Msg::Access(access) => {
            app.access = access;
            vec![Effect::Redraw]
        }
        Msg::Audited(row) => {
            app.add_audit_rows([row]);
            vec![Effect::Redraw]
        }
        Msg::Key(key) => on_key(app, key),
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    // Key releases and repeats arrive on some terminals (kitty protocol): act on presses.
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
    match app.mode.clone() {
        Mode::Confirm(prompt) => return super::confirm::answer(app, key, &prompt),
        Mode::Priority(picker) => return super::priority::on_key(app, key, picker),
        Mode::Command(text) => return edit_line(app, key, text, true),
        Mode::Filter(text) => return edit_line(app, key, text, false),
        Mode::Search(text) => return edit_search(app, key, text),
        Mode::Help(scroll) => {
            let action = app.keymap.lookup(&key);
            match action {
                Some(KeyAction::Quit) if ctrl_c => return vec![Effect::Quit],
                Some(KeyAction::Up) => app.mode = Mode::Help(scroll.saturating_sub(1)),
                Some(KeyAction::Down) => app.mode = Mode::Help(scroll + 1),
                _ => app.mode = Mode::Normal,
            }
            return vec![Effect::Redraw];
        }
        Mode::Normal => {}
    }
    // `n`: the next match of a search in open details.
    if app.detail
        && app.detail_search.is_some()
        && key.code == KeyCode::Char('n')
        && app.keymap.lookup(&key).is_none()
    {
        app.detail_match += 1;
        app.detail_jump.set(true);
        return vec![Effect::Redraw];
    }
    match app.keymap.lookup(&key) {
        // `/` inside open details searches them instead of filtering the list.
        Some(KeyAction::Filter) if app.detail => {
            app.mode = Mode::Search(app.detail_search.clone().unwrap_or_default());
            vec![Effect::Redraw]
        }
        Some(action) => {
            app.message = None;
            on_action(app, action)
        }
        // Ctrl-C always quits, even if a config rebinds `quit` without it.
        None if ctrl_c => vec![Effect::Quit],
        // A key that does nothing says so, rather than being silently ignored.
        None => {
            app.message = Some(unbound(&key));
            vec![Effect::Redraw]
        }
    }
}

/// The message for a key no action is bound to; k9s habits get a pointer.
fn unbound(key: &KeyEvent) -> String {
    let chord = super::keymap::KeyChord::from_event(key).to_string();
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let hint = match key.code {
        KeyCode::Char('l') if !ctrl => "logs are not shown by gangplank (kubectl logs)",
        KeyCode::Char('e') if !ctrl => "gangplank does not edit objects (kubectl edit)",
        KeyCode::Char('d') if ctrl => "gangplank does not delete objects (hold with h instead)",
        KeyCode::Char(c) if c.is_ascii_uppercase() && !ctrl => {
            "sort with s (next column) and S (reverse)"
        }
        _ => "? lists the keys",
    };
    format!("{chord}: not bound to anything — {hint}")
}

/// Edits the command or filter line. The filter applies live as it is typed.
fn edit_line(app: &mut App, key: KeyEvent, mut text: String, is_command: bool) -> Vec<Effect> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c') if ctrl => return vec![Effect::Quit],
        KeyCode::Esc => {
            app.mode = Mode::Normal;
            if !is_command {
                set_filter(app, Filter::default());
            }
            return vec![Effect::Redraw];
        }
        KeyCode::Enter => {
            app.mode = Mode::Normal;
            return if is_command {
                run_command(app, &text)
            } else {
                vec![Effect::Redraw]
            };
        }
        KeyCode::Tab if is_command => {
            if let Some(done) = command::complete(&text) {
                text = done;
            }
        }
        KeyCode::Backspace if text.is_empty() => {
            app.mode = Mode::Normal;
            return vec![Effect::Redraw];
        }
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if !ctrl => text.push(c),
        _ => return Vec::new(),
    }
    if !is_command {
        match Filter::parse(&text) {
            Ok(f) => {
                set_filter(app, f);
                app.message = None;
            }
            Err(e) => app.message = Some(format!("filter: {e}")),
        }
    }
    app.mode = if is_command {
        Mode::Command(text)
    } else {
        Mode::Filter(text)
    };
    vec![Effect::Redraw]
}

fn set_filter(app: &mut App, filter: Filter) {
    app.set_filter(filter);
}

fn run_command(app: &mut App, line: &str) -> Vec<Effect> {
    match command::parse(line) {
        Ok(Command::Quit) => return vec![Effect::Quit],
        Ok(Command::Help) => app.mode = Mode::Help(0),
        Ok(Command::Context(asked)) => {
            let ctx = &app.cache.data.context;
            let ctx = if ctx.is_empty() { "—" } else { ctx.as_str() };
            let others = if app.contexts.is_empty() {
                String::new()
            } else {
                format!(" · kubeconfig contexts: {}", app.contexts.join(", "))
            };
            app.message = Some(match asked {
                None => format!("context: {ctx}{others}"),
                Some(name) if !app.contexts.is_empty() && !app.contexts.contains(&name) => {
                    format!("no context {name:?} in the kubeconfig{others} (still on {ctx})")
                }
                Some(name) if name == ctx => format!("already on context {name}"),
                // The run loop reconnects (or says why it cannot, e.g. for a dump).
                Some(name) => {
                    app.message = Some(format!("switching to context {name}…"));
                    return vec![Effect::Redraw, Effect::SwitchContext(name)];
                }
            });
        }
        Ok(Command::Namespace(arg)) => {
            use super::command::NsArg;
            match arg {
                NsArg::Show => {}
                NsArg::All => app.set_namespace(None),
                NsArg::Name(ns) => app.set_namespace(Some(ns)),
            }
            app.message = Some(match &app.namespace {
                Some(ns) => format!(
                    "namespace: {ns} (every view shows {ns} only; `:ns all` shows every namespace)"
                ),
                None => "namespace: all (`:ns NAME` shows one)".to_string(),
            });
        }
        Ok(Command::View(view, filter)) => {
            switch_view(app, view);
            if let Some(text) = filter {
                match Filter::parse(&text) {
                    Ok(f) => set_filter(app, f),
                    Err(e) => app.message = Some(format!("filter: {e}")),
                }
            }
        }
        Err(e) => app.message = Some(e),
    }
    vec![Effect::Redraw]
}

fn switch_view(app: &mut App, view: ViewId) {
    app.view = view;
    app.detail = false;
    app.pane = None;
    app.detail_scroll.set(0);
    app.detail_search = None;
}

/// Movement keys scroll an open detail pane instead of moving the selection.
fn scroll_detail(app: &mut App, action: KeyAction) -> bool {
    let page = app.size.1.saturating_sub(6).max(1);
    let max = app.detail_max.get();
    let cur = app.detail_scroll.get().min(max);
    let next = match action {
        KeyAction::Up => cur.saturating_sub(1),
        KeyAction::Down => (cur + 1).min(max),
        KeyAction::PageUp => cur.saturating_sub(page),
        KeyAction::PageDown => cur.saturating_add(page).min(max),
        KeyAction::Top => 0,
        KeyAction::Bottom => max,
        _ => return false,
    };
    app.detail_scroll.set(next);
    true
}

/// Types a `/` search inside open details: each keystroke jumps to the first match;
/// Enter keeps it (`n` then goes to the next), Esc drops it.
fn edit_search(app: &mut App, key: KeyEvent, mut text: String) -> Vec<Effect> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c') if ctrl => return vec![Effect::Quit],
        KeyCode::Esc => {
            app.mode = Mode::Normal;
            app.detail_search = None;
            return vec![Effect::Redraw];
        }
        KeyCode::Enter => {
            app.mode = Mode::Normal;
            if text.is_empty() {
                app.detail_search = None;
            } else {
                app.message = Some(format!("search: {text} (n next match, Esc clears)"));
            }
            return vec![Effect::Redraw];
        }
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if !ctrl => text.push(c),
        _ => return Vec::new(),
    }
    app.detail_search = (!text.is_empty()).then(|| text.clone());
    app.detail_match = 0;
    app.detail_jump.set(true);
    app.mode = Mode::Search(text);
    vec![Effect::Redraw]
}

fn on_action(app: &mut App, action: KeyAction) -> Vec<Effect> {
    if app.detail && scroll_detail(app, action) {
        return vec![Effect::Redraw];
    }
    let page = app.page_rows() as isize;
    let sel = app.list().selected as isize;
    match action {
        KeyAction::Quit => return vec![Effect::Quit],
        KeyAction::Help => app.mode = Mode::Help(0),
        KeyAction::Command => app.mode = Mode::Command(String::new()),
        KeyAction::Filter => app.mode = Mode::Filter(app.filter.source.clone()),
        KeyAction::NextView => switch_view(app, app.view.next()),
        KeyAction::PrevView => switch_view(app, app.view.prev()),
        KeyAction::Goto(i) => switch_view(app, ViewId::ALL[i.min(ViewId::COUNT - 1)]),
        KeyAction::Select => select(app),
        KeyAction::Back => back(app),
        KeyAction::Up => app.select(sel - 1),
        KeyAction::Down => app.select(sel + 1),
        KeyAction::Top => app.select(0),
        KeyAction::Bottom => app.select(isize::MAX),
        KeyAction::PageUp => app.select(sel - page),
        KeyAction::PageDown => app.select(sel + page),
        KeyAction::SortNext | KeyAction::SortReverse => sort(app, action),
        KeyAction::Approve => return act(app, ActionKind::Approve),
        KeyAction::Reprioritize => return act(app, ActionKind::SetPriority),
        KeyAction::Hold => return act(app, ActionKind::Hold),
        KeyAction::Resume => return act(app, ActionKind::Resume),
        KeyAction::Describe => open_pane(app, super::describe::PaneKind::Describe),
        KeyAction::Yaml => open_pane(app, super::describe::PaneKind::Yaml),
    }
    vec![Effect::Redraw]
}

fn sort(app: &mut App, action: KeyAction) {
    let columns = views::sort_columns(app.view);
    if columns.is_empty() {
        app.message = Some(format!("sort: not available in {}", app.view.name()));
        return;
    }
    let s = &mut app.sorts[app.view.index()];
    if action == KeyAction::SortNext {
        s.column = (s.column + 1) % columns.len();
    } else {
        s.reverse = !s.reverse;
    }
    let dir = if s.reverse { "descending" } else { "ascending" };
    app.message = Some(format!("sorted by {} {dir}", columns[s.column]));
    app.reindex(app.view);
}

/// Enter: open the detail pane, or drill from a queue into its workloads.
fn select(app: &mut App) {
    match app.view {
        ViewId::Workloads
        | ViewId::Nodes
        | ViewId::Plan
        | ViewId::Drift
        | ViewId::Audit
        | ViewId::Health
        | ViewId::Events => {
            app.detail = !app.visible(app.view).is_empty();
            app.detail_scroll.set(0);
            app.detail_search = None;
        }
        ViewId::Queues => {
            let filter = match app.selected_queue_line() {
                Some(QueueLine::ClusterQueue { index, .. }) => {
                    format!("cq={}", app.cache.queues.cqs[*index].name)
                }
                Some(QueueLine::LocalQueue { index, .. }) => {
                    let lq = &app.cache.queues.lqs[*index];
                    format!("ns={} queue={}", lq.namespace, lq.name)
                }
                _ => return,
            };
            app.back_stack.push((app.view, app.filter.clone()));
            switch_view(app, ViewId::Workloads);
            if let Ok(f) = Filter::parse(&filter) {
                set_filter(app, f);
            }
        }
    }
}

/// `d` / `y`: the selected object's describe text or YAML in a scrollable pane.
fn open_pane(app: &mut App, kind: super::describe::PaneKind) {
    let data = app.cache.data.clone();
    match super::describe::pane(app, &data, kind) {
        Ok(p) => {
            app.pane = Some(p);
            app.detail = true;
            app.detail_scroll.set(0);
            app.detail_search = None;
        }
        Err(why) => {
            let key = match kind {
                super::describe::PaneKind::Describe => "d describe",
                super::describe::PaneKind::Yaml => "y yaml",
            };
            app.message = Some(format!("{key}: {why}"));
        }
    }
}

/// Esc: close the detail pane, else clear the filter, else go back a drill-in.
fn back(app: &mut App) {
    if app.detail {
        app.detail = false;
        app.pane = None;
        app.detail_search = None;
    } else if let Some((view, filter)) = app.back_stack.pop() {
        switch_view(app, view);
        set_filter(app, filter);
    } else if !app.filter.is_empty() {
        set_filter(app, Filter::default());
    }
}

/// An action key: refused in read-only mode, otherwise an effect for the executor.
fn act(app: &mut App, kind: ActionKind) -> Vec<Effect> {
    if app.readonly {
        app.message = Some(format!("read-only: {} is disabled", kind.console_word()));
        return vec![Effect::Redraw];
    }
    let target = action_target(app, kind);
    // The access survey is about patching Workloads: queues are checked when asked.
    let refused = match &target {
        Ok(ActionTarget::Workload { namespace, .. }) => app
            .access
            .refusal(namespace)
            .map(|why| format!("in {namespace}: {why}")),
        Ok(ActionTarget::Proposal { .. }) => app.access.everywhere.clone(),
        _ => None,
    };
    if let Some(why) = refused {
        app.message = Some(format!("{}: unavailable {why}", kind.console_word()));
        return vec![Effect::Redraw];
    }
    match target {
        // Reprioritize asks for the new priority first (the picker sends the request).
        Ok(ActionTarget::Workload { namespace, name }) if kind == ActionKind::SetPriority => {
            super::priority::open(app, namespace, name);
            vec![Effect::Redraw]
        }
        Ok(target) => {
            app.message = Some(format!("{}: requested", kind.console_word()));
            vec![
                Effect::RunAction(ActionRequest {
                    kind,
                    target,
                    priority: None,
                }),
                Effect::Redraw,
            ]
        }
        Err(why) => {
            app.message = Some(format!("{}: {why}", kind.console_word()));
            vec![Effect::Redraw]
        }
    }
}

fn action_target(app: &App, kind: ActionKind) -> Result<ActionTarget, String> {
    match (kind, app.view) {
        (ActionKind::Approve, ViewId::Plan) => {
            let plan = app.cache.data.plan.as_deref();
            let i = app.visible(ViewId::Plan).get(app.list().selected);
            match (plan, i) {
                (Some(p), Some(&i)) => Ok(ActionTarget::Proposal {
                    id: p.proposals[i as usize].id.clone(),
                }),
                _ => Err("no proposal selected".into()),
            }
        }
        (ActionKind::Approve, _) => Err("select a proposal in the Plan view (4)".into()),
        (_, ViewId::Workloads) => app
            .selected_workload()
            .map(|w| ActionTarget::Workload {
                namespace: w.namespace.clone(),
                name: w.name.clone(),
            })
            .ok_or_else(|| "no workload selected".into()),
        (ActionKind::Hold | ActionKind::Resume, ViewId::Queues) => {
            match app.selected_queue_line() {
                Some(QueueLine::ClusterQueue { index, .. }) => Ok(ActionTarget::ClusterQueue {
                    name: app.cache.queues.cqs[*index].name.clone(),
                }),
                Some(QueueLine::LocalQueue { index, .. }) => {
                    let lq = &app.cache.queues.lqs[*index];
                    Ok(ActionTarget::LocalQueue {
                        namespace: lq.namespace.clone(),
                        name: lq.name.clone(),
                    })
                }
                _ => Err("select a ClusterQueue or LocalQueue".into()),
            }
        }
        _ => Err(format!("not available in the {} view", app.view.name())),
    }
}
