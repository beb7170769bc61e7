//! Resource bounds shared by all connections: session and pre-auth connection caps,
//! terminal size clamping.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Largest terminal we render for. A client may claim 70000×70000; ratatui would allocate
/// two cell buffers of that size, so we clamp (the viewer sees the top-left part).
pub const MAX_COLS: u16 = 400;
/// See [`MAX_COLS`].
pub const MAX_ROWS: u16 = 200;

/// Clamp a client-reported size (u32 on the wire) to `1..=MAX`. Zero means "unknown",
/// which we treat as the classic 80×24.
pub fn clamp_size(cols: u32, rows: u32) -> (u16, u16) {
    let c = if cols == 0 {
        80
    } else {
        cols.min(MAX_COLS as u32)
    };
    let r = if rows == 0 {
        24
    } else {
        rows.min(MAX_ROWS as u32)
    };
    (c as u16, r as u16)
}

/// Connection and session caps.
#[derive(Debug)]
pub struct Limits {
    sessions: Arc<Semaphore>,
    unauthenticated: Arc<Semaphore>,
    max_sessions: usize,
    active_sessions: AtomicUsize,
}

impl Limits {
    /// Caps from the options.
    pub fn new(max_sessions: usize, max_unauthenticated: usize) -> Limits {
        Limits {
            sessions: Arc::new(Semaphore::new(max_sessions)),
            unauthenticated: Arc::new(Semaphore::new(max_unauthenticated)),
            max_sessions,
            active_sessions: AtomicUsize::new(0),
        }
    }

    /// A slot for a not-yet-authenticated connection, if one is free.
    pub fn try_unauthenticated(&self) -> Option<OwnedSemaphorePermit> {
        self.unauthenticated.clone().try_acquire_owned().ok()
    }

    /// A slot for an interactive session, if one is free. The returned guard keeps the
    /// active-session counter in step.
    pub fn try_session(self: &Arc<Self>) -> Option<SessionSlot> {
        let permit = self.sessions.clone().try_acquire_owned().ok()?;
        self.active_sessions.fetch_add(1, Ordering::SeqCst);
        Some(SessionSlot {
            _permit: permit,
            limits: self.clone(),
        })
    }

    /// Configured maximum sessions.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Sessions currently running.
    pub fn active_sessions(&self) -> usize {
        self.active_sessions.load(Ordering::SeqCst)
    }
}

/// Held by a running session; frees the slot on drop (also on panic unwinding).
#[derive(Debug)]
pub struct SessionSlot {
    _permit: OwnedSemaphorePermit,
    limits: Arc<Limits>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.limits.active_sessions.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_sizes() {
        assert_eq!(clamp_size(0, 0), (80, 24));
        assert_eq!(clamp_size(70000, 70000), (MAX_COLS, MAX_ROWS));
        assert_eq!(clamp_size(100, 30), (100, 30));
    }

    #[test]
    fn session_slots_are_bounded_and_released() {
        let l = Arc::new(Limits::new(1, 1));
        let a = l.try_session().unwrap();
        assert!(l.try_session().is_none());
        assert_eq!(l.active_sessions(), 1);
        drop(a);
        assert_eq!(l.active_sessions(), 0);
        assert!(l.try_session().is_some());
    }
}
