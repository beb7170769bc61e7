//! The russh client side shared by the SSH tests: connect with a key, open a pty and a
//! shell, and read the output into a minimal screen model. Waits are on screen
//! conditions with deadlines, never sleeps.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use russh::keys::{Algorithm, PrivateKey, PrivateKeyWithHashAlg};
use russh::{ChannelMsg, client};
use tokio::time::Instant;

pub const DEADLINE: Duration = Duration::from_secs(30);

pub struct AcceptAll;
impl client::Handler for AcceptAll {
    type Error = russh::Error;
    async fn check_server_key(
        &mut self,
        _key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

pub fn new_key() -> PrivateKey {
    PrivateKey::random(&mut rand::rng(), Algorithm::Ed25519).unwrap()
}

pub fn write_authorized(dir: &Path, keys: &[&PrivateKey]) -> std::path::PathBuf {
    let path = dir.join("authorized_keys");
    let text: String = keys
        .iter()
        .map(|k| format!("{}\n", k.public_key().to_openssh().unwrap()))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A connected, authenticated client session with one shell channel.
pub struct Viewer {
    pub _session: client::Handle<AcceptAll>,
    pub channel: russh::Channel<client::Msg>,
    /// Bytes collected by [`Viewer::wait_closed`].
    pub screen: Vec<u8>,
    pub term: Screen,
    /// Data messages (frames) received so far.
    pub frames: u64,
}

/// Just enough of a terminal to read ratatui's output: CUP moves, printable text,
/// other escape sequences ignored.
pub struct Screen {
    rows: Vec<Vec<char>>,
    row: usize,
    col: usize,
    esc: Option<Vec<u8>>,
    utf8: Vec<u8>,
}

impl Screen {
    pub fn new(cols: usize, rows: usize) -> Screen {
        Screen {
            rows: vec![vec![' '; cols]; rows],
            row: 0,
            col: 0,
            esc: None,
            utf8: Vec::new(),
        }
    }
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(seq) = &mut self.esc {
                seq.push(b);
                let done = if seq.len() == 1 {
                    b != b'['
                } else {
                    (0x40..=0x7e).contains(&b)
                };
                if done {
                    let seq = self.esc.take().unwrap();
                    if seq.first() == Some(&b'[') && b == b'H' {
                        let params = String::from_utf8_lossy(&seq[1..seq.len() - 1]).to_string();
                        let mut it = params.split(';').map(|p| p.parse::<usize>().unwrap_or(1));
                        self.row = it.next().unwrap_or(1).saturating_sub(1);
                        self.col = it.next().unwrap_or(1).saturating_sub(1);
                    } else if seq.first() == Some(&b'[') && b == b'J' {
                        for r in &mut self.rows {
                            r.fill(' ');
                        }
                    }
                }
                continue;
            }
            match b {
                0x1b => self.esc = Some(Vec::new()),
                b'\r' => self.col = 0,
                b'\n' => self.row += 1,
                0x00..=0x1f => {}
                _ => {
                    self.utf8.push(b);
                    if let Ok(s) = std::str::from_utf8(&self.utf8) {
                        for c in s.chars() {
                            if let Some(cell) = self
                                .rows
                                .get_mut(self.row)
                                .and_then(|r| r.get_mut(self.col))
                            {
                                *cell = c;
                            }
                            self.col += 1;
                        }
                        self.utf8.clear();
                    } else if self.utf8.len() >= 4 {
                        self.utf8.clear();
                    }
                }
            }
        }
    }
    pub fn text(&self) -> String {
        self.rows
            .iter()
            .map(|r| r.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub async fn connect(
    addr: std::net::SocketAddr,
    key: &PrivateKey,
    config: client::Config,
    cols: u32,
    rows: u32,
) -> Viewer {
    let mut session = client::connect(Arc::new(config), addr, AcceptAll)
        .await
        .unwrap();
    let auth = session
        .authenticate_publickey(
            "viewer",
            PrivateKeyWithHashAlg::new(Arc::new(key.clone()), None),
        )
        .await
        .unwrap();
    assert!(auth.success(), "auth failed");
    let channel = session.channel_open_session().await.unwrap();
    channel
        .request_pty(false, "xterm-256color", cols, rows, 0, 0, &[])
        .await
        .unwrap();
    channel.request_shell(false).await.unwrap();
    Viewer {
        _session: session,
        channel,
        screen: Vec::new(),
        term: Screen::new(cols as usize, rows as usize),
        frames: 0,
    }
}

impl Viewer {
    /// Read until the screen contains `needle`.
    pub async fn wait_for(&mut self, needle: &str) {
        self.wait_screen(needle, DEADLINE, |s| s.contains(needle))
            .await;
    }

    /// Read frames until `pred` holds for the screen text, for at most `within`.
    pub async fn wait_screen(&mut self, what: &str, within: Duration, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + within;
        loop {
            if pred(&self.term.text()) {
                return;
            }
            let msg = tokio::time::timeout_at(deadline, self.channel.wait())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "timed out waiting for {what:?}; screen:\n{}",
                        self.term.text()
                    )
                });
            match msg {
                Some(ChannelMsg::Data { data }) => {
                    self.frames += 1;
                    self.term.feed(&data);
                }
                Some(_) => {}
                None => panic!(
                    "channel closed waiting for {what:?}; screen:\n{}",
                    self.term.text()
                ),
            }
        }
    }

    /// Read until the channel closes; return everything received.
    pub async fn wait_closed(&mut self) -> (Vec<u8>, Option<u32>) {
        let mut exit = None;
        let deadline = Instant::now() + DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, self.channel.wait())
                .await
                .expect("timed out waiting for close")
            {
                Some(ChannelMsg::Data { data }) => {
                    self.frames += 1;
                    self.screen.extend_from_slice(&data);
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => exit = Some(exit_status),
                Some(ChannelMsg::Close) | None => return (std::mem::take(&mut self.screen), exit),
                Some(_) => {}
            }
        }
    }
}
