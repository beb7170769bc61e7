//! **Demo/test app** for the SSH seam, not the real console: shows a title
//! "gangplank", the number of data updates seen, the session's key count and its size.
//! Used by the `tests/ssh_*.rs` suites and handy for trying the server by hand.
//!
//! Its data is a plain counter published on a `watch` channel; the factory only ever
//! hands sessions a `watch::Receiver`, so it has no path to change anything.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};
use tokio::sync::watch;

use super::{KeyOutcome, SessionApp, SessionAppFactory, SessionInfo};

/// The demo's shared data: how many updates were published.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DemoData {
    /// Update counter.
    pub updates: u64,
}

/// Factory for [`DemoApp`]; keep the [`DemoFeed`] to publish updates.
#[derive(Debug)]
pub struct DemoFactory {
    rx: watch::Receiver<DemoData>,
    sessions_created: AtomicUsize,
    /// Make `render` panic when the session's user is this (panic-isolation tests).
    pub panic_user: Option<String>,
}

/// The publishing side of the demo data (stands in for the shared cluster watch).
#[derive(Debug, Clone)]
pub struct DemoFeed(Arc<watch::Sender<DemoData>>);

impl DemoFeed {
    /// Publish one more update.
    pub fn bump(&self) {
        self.0.send_modify(|d| d.updates += 1);
    }
    /// Current data.
    pub fn get(&self) -> DemoData {
        *self.0.borrow()
    }
}

impl DemoFactory {
    /// A factory and its feed.
    pub fn new() -> (Arc<DemoFactory>, DemoFeed) {
        let (tx, rx) = watch::channel(DemoData::default());
        (
            Arc::new(DemoFactory {
                rx,
                sessions_created: AtomicUsize::new(0),
                panic_user: None,
            }),
            DemoFeed(Arc::new(tx)),
        )
    }

    /// Like [`DemoFactory::new`] but sessions of `user` panic when rendering.
    pub fn with_panic_user(user: &str) -> (Arc<DemoFactory>, DemoFeed) {
        let (tx, rx) = watch::channel(DemoData::default());
        (
            Arc::new(DemoFactory {
                rx,
                sessions_created: AtomicUsize::new(0),
                panic_user: Some(user.to_string()),
            }),
            DemoFeed(Arc::new(tx)),
        )
    }

    /// Sessions built so far.
    pub fn sessions_created(&self) -> usize {
        self.sessions_created.load(Ordering::SeqCst)
    }
}

impl SessionAppFactory for DemoFactory {
    type Data = DemoData;

    fn subscribe(&self) -> watch::Receiver<DemoData> {
        self.rx.clone()
    }

    fn new_session(&self, info: &SessionInfo) -> Box<dyn SessionApp<DemoData>> {
        self.sessions_created.fetch_add(1, Ordering::SeqCst);
        Box::new(DemoApp {
            info: info.clone(),
            keys: 0,
            last_key: String::new(),
            panic: self.panic_user.as_deref() == Some(info.user.as_str()),
        })
    }
}

/// The demo session app.
#[derive(Debug)]
pub struct DemoApp {
    info: SessionInfo,
    keys: u64,
    last_key: String,
    panic: bool,
}

impl SessionApp<DemoData> for DemoApp {
    fn on_key(&mut self, key: KeyEvent) -> KeyOutcome {
        match (key.code, key.modifiers) {
            (KeyCode::Char('q'), KeyModifiers::NONE) => return KeyOutcome::Quit,
            (KeyCode::Char('c'), m) if m.contains(KeyModifiers::CONTROL) => {
                return KeyOutcome::Quit;
            }
            _ => {}
        }
        self.keys += 1;
        self.last_key = format!("{:?}", key.code);
        KeyOutcome::Continue
    }

    fn on_resize(&mut self, cols: u16, rows: u16) {
        self.info.size = (cols, rows);
    }

    fn render(&mut self, data: &DemoData, frame: &mut Frame<'_>) {
        if self.panic {
            panic!("demo app asked to panic");
        }
        let lines = vec![
            Line::from(format!("updates: {}", data.updates)),
            Line::from(format!("keys: {} last: {}", self.keys, self.last_key)),
            Line::from(format!(
                "user: {} term: {} size: {}x{} color: {:?}",
                self.info.user,
                self.info.term,
                self.info.size.0,
                self.info.size.1,
                self.info.color_depth
            )),
            Line::from("press q to quit"),
        ];
        let block = Block::default()
            .title("gangplank")
            .borders(Borders::ALL)
            .border_style(Style::default().fg(Color::Rgb(80, 160, 240)));
        frame.render_widget(Paragraph::new(lines).block(block), frame.area());
    }
}
