//! Resource bounds shared by all connections: session and pre-auth connection caps,
//! terminal size clamping.
//!
//! **Pre-auth connections** are capped per source address and in total, and a new one
//! is never refused for want of room: the oldest unauthenticated connection of the same
//! address (when that address is at its cap), else the oldest of all (when the total is
//! reached), is dropped instead. A flood of idle connections that only send a banner
//! therefore cannot keep an authorized key out: the key's connection is the newest,
//! one address can hold only its own share of the slots, and the login grace ends the
//! rest (issue #14 finding 5: 16 such connections locked viewers out for ~2 minutes).

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

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
    preauth: Arc<PreAuth>,
    max_sessions: usize,
    active_sessions: AtomicUsize,
}

impl Limits {
    /// Caps from the options: sessions, pre-auth connections in total and per address.
    pub fn new(max_sessions: usize, max_unauthenticated: usize, per_address: usize) -> Limits {
        Limits {
            sessions: Arc::new(Semaphore::new(max_sessions)),
            preauth: Arc::new(PreAuth::new(max_unauthenticated, per_address)),
            max_sessions,
            active_sessions: AtomicUsize::new(0),
        }
    }

    /// Admits a not-yet-authenticated connection from `ip`, dropping the oldest one of
    /// that address or of all when a cap is reached (see the module docs).
    pub fn admit_unauthenticated(&self, ip: IpAddr) -> PreAuthTicket {
        self.preauth.admit(ip)
    }

    /// Unauthenticated connections currently admitted.
    pub fn unauthenticated(&self) -> usize {
        self.preauth.len()
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

/// The registry of unauthenticated connections, oldest first.
#[derive(Debug)]
pub struct PreAuth {
    max_total: usize,
    max_per_address: usize,
    state: Mutex<PreAuthState>,
}

#[derive(Debug, Default)]
struct PreAuthState {
    next: u64,
    /// Admission order → (address, the connection's eviction signal).
    entries: BTreeMap<u64, (IpAddr, CancellationToken)>,
    per_address: HashMap<IpAddr, usize>,
}

impl PreAuthState {
    fn remove(&mut self, id: u64) -> Option<CancellationToken> {
        let (ip, token) = self.entries.remove(&id)?;
        if let Some(n) = self.per_address.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_address.remove(&ip);
            }
        }
        Some(token)
    }
}

impl PreAuth {
    /// Caps of at least one each.
    pub fn new(max_total: usize, max_per_address: usize) -> PreAuth {
        PreAuth {
            max_total: max_total.max(1),
            max_per_address: max_per_address.max(1),
            state: Mutex::new(PreAuthState::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PreAuthState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Admits a connection from `ip`; evicts (cancels) the oldest of that address when
    /// the address is at its cap, else the oldest of all when the total is reached.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> PreAuthTicket {
        let mut st = self.lock();
        let victim = if st.per_address.get(&ip).copied().unwrap_or(0) >= self.max_per_address {
            st.entries
                .iter()
                .find(|(_, (a, _))| *a == ip)
                .map(|(&id, _)| id)
        } else if st.entries.len() >= self.max_total {
            st.entries.keys().next().copied()
        } else {
            None
        };
        if let Some(token) = victim.and_then(|id| st.remove(id)) {
            token.cancel();
        }
        let id = st.next;
        st.next += 1;
        let evicted = CancellationToken::new();
        st.entries.insert(id, (ip, evicted.clone()));
        *st.per_address.entry(ip).or_default() += 1;
        PreAuthTicket {
            id,
            evicted,
            registry: self.clone(),
        }
    }

    /// Connections currently admitted.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether none is admitted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An unauthenticated connection's place; dropped when it authenticates or closes.
#[derive(Debug)]
pub struct PreAuthTicket {
    id: u64,
    evicted: CancellationToken,
    registry: Arc<PreAuth>,
}

impl PreAuthTicket {
    /// Resolves when a newer connection took this one's place.
    pub fn evicted(&self) -> CancellationToken {
        self.evicted.clone()
    }
}

impl Drop for PreAuthTicket {
    fn drop(&mut self) {
        self.registry.lock().remove(self.id);
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
        let l = Arc::new(Limits::new(1, 1, 1));
        let a = l.try_session().unwrap();
        assert!(l.try_session().is_none());
        assert_eq!(l.active_sessions(), 1);
        drop(a);
        assert_eq!(l.active_sessions(), 0);
        assert!(l.try_session().is_some());
    }

    #[test]
    fn preauth_evicts_the_oldest_of_the_address_then_of_all() {
        let p = Arc::new(PreAuth::new(3, 2));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = p.admit(a);
        let a2 = p.admit(a);
        // `a` is at its cap: its oldest goes.
        let a3 = p.admit(a);
        assert!(a1.evicted().is_cancelled());
        assert!(!a2.evicted().is_cancelled());
        assert_eq!(p.len(), 2);
        // Room in total for `b`.
        let b1 = p.admit(b);
        assert_eq!(p.len(), 3);
        // Total reached: the oldest of all (a2) goes.
        let b2 = p.admit(b);
        assert!(a2.evicted().is_cancelled());
        assert!(!a3.evicted().is_cancelled() && !b1.evicted().is_cancelled());
        // An authenticated (dropped) ticket frees its place; dropping an evicted one is
        // harmless.
        drop(a1);
        drop(b2);
        assert_eq!(p.len(), 2);
        drop(a3);
        drop(b1);
        assert!(p.is_empty());
    }
}
