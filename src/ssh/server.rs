//! The listener, the per-connection russh handler and [`serve`].
//!
//! We run our own accept loop plus `russh::server::run_stream` instead of
//! `Server::run_on_socket`, because the latter returns on the first `accept()` error
//! (EMFILE would kill the server) and has no connection caps or login-grace timer.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use russh::server::{Auth, Msg, PublicKeyOffer, Session, VerifiedPublicKey};
use russh::{Channel, ChannelId, Disconnect, MethodKind, MethodSet};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::auth::{KeyDecision, Stage, check_key, log_refused_method};
use super::host_key::{default_host_key_path, load_or_generate};
use super::keys::AuthorizedKeysFile;
use super::limits::{Limits, PreAuthTicket};
use super::session::{self, SessionConfig, SessionParams};
use super::{SessionAppFactory, SshServerOptions};

/// A running server. Dropping it does not stop the server; call [`ServerHandle::shutdown`]
/// or resolve the `shutdown` future given to [`serve`].
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    host_key_fingerprint: String,
    token: CancellationToken,
    limits: Arc<Limits>,
    accept: JoinHandle<()>,
    connections: TaskTracker,
}

impl ServerHandle {
    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }
    /// `SHA256:…` fingerprint of the host key, to print for users to verify.
    pub fn host_key_fingerprint(&self) -> &str {
        &self.host_key_fingerprint
    }
    /// Interactive sessions currently running.
    pub fn active_sessions(&self) -> usize {
        self.limits.active_sessions()
    }
    /// Connections admitted that have not authenticated yet.
    pub fn unauthenticated_connections(&self) -> usize {
        self.limits.unauthenticated()
    }
    /// Stop accepting and end all sessions (each gets a goodbye message).
    pub fn shutdown(&self) {
        self.token.cancel();
    }
    /// Wait until the accept loop has stopped (after shutdown) and every connection
    /// has said goodbye (each is bounded: a session's goodbye by its own timeout, a
    /// connection by 5 s after the shutdown), so a process that exits next does not cut
    /// the viewers' "server shutting down" and terminal restore off.
    pub async fn wait(self) {
        let _ = self.accept.await;
        self.connections.close();
        let _ = tokio::time::timeout(SHUTDOWN_DRAIN, self.connections.wait()).await;
    }
}

/// The longest [`ServerHandle::wait`] waits for connections to end after a shutdown.
const SHUTDOWN_DRAIN: Duration = Duration::from_secs(10);

/// State shared by all connections.
struct Shared<F: SessionAppFactory> {
    factory: Arc<F>,
    keys: AuthorizedKeysFile,
    limits: Arc<Limits>,
    config: Arc<russh::server::Config>,
    session: SessionConfig,
    login_grace: Duration,
    token: CancellationToken,
    connections: TaskTracker,
}

/// Start the SSH server: load (or generate) the host key, load authorized_keys, bind
/// `opts.listen`, and serve in the background until `shutdown` resolves.
pub async fn serve<F, S>(
    opts: SshServerOptions,
    factory: Arc<F>,
    shutdown: S,
) -> Result<ServerHandle>
where
    F: SessionAppFactory,
    S: Future<Output = ()> + Send + 'static,
{
    let host_key_path = match &opts.host_key {
        Some(p) => p.clone(),
        None => default_host_key_path()
            .context("no state directory for the SSH host key; pass --host-key")?,
    };
    let host_key = load_or_generate(&host_key_path)?;
    let keys = AuthorizedKeysFile::open(&opts.authorized_keys)
        .with_context(|| format!("reading authorized keys {}", opts.authorized_keys.display()))?;

    let config = russh::server::Config {
        server_id: russh::SshId::Standard(
            concat!("SSH-2.0-gangplank_", env!("CARGO_PKG_VERSION")).into(),
        ),
        // Advertise public key only; russh rejects other methods.
        methods: MethodSet::from(&[MethodKind::PublicKey][..]),
        auth_rejection_time: opts.auth_rejection_delay,
        // OpenSSH probes with "none" first; padding that would only slow every login.
        auth_rejection_time_initial: Some(Duration::ZERO),
        max_auth_attempts: opts.max_auth_attempts,
        keys: vec![host_key.key],
        // russh's inactivity timer never fires while we stream frames; idleness is
        // judged on input by the session itself, dead peers by keepalives.
        inactivity_timeout: None,
        keepalive_interval: Some(opts.keepalive_interval),
        keepalive_max: 3,
        // Input is keystrokes: a small receive window bounds per-connection memory.
        window_size: 64 * 1024,
        channel_buffer_size: 32,
        nodelay: true,
        ..Default::default()
    };

    let listener = TcpListener::bind(opts.listen)
        .await
        .with_context(|| format!("binding {}", opts.listen))?;
    let local_addr = listener.local_addr()?;
    let token = CancellationToken::new();
    let limits = Arc::new(Limits::new(
        opts.max_sessions,
        opts.max_unauthenticated,
        opts.max_unauthenticated_per_address,
    ));
    let connections = TaskTracker::new();
    let shared = Arc::new(Shared {
        factory,
        keys,
        limits: limits.clone(),
        config: Arc::new(config),
        session: SessionConfig {
            idle_timeout: opts.idle_timeout,
            age_refresh: opts.age_refresh,
            output_buffer_bytes: opts.output_buffer_bytes,
        },
        login_grace: opts.login_grace,
        token: token.clone(),
        connections: connections.clone(),
    });

    {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown => token.cancel(),
                () = token.cancelled() => {}
            }
        });
    }
    tracing::info!(addr = %local_addr, fingerprint = %host_key.fingerprint,
        host_key = %host_key.path.display(), "ssh server listening");
    let accept = tokio::spawn(accept_loop(listener, shared));
    Ok(ServerHandle {
        local_addr,
        host_key_fingerprint: host_key.fingerprint,
        token,
        limits,
        accept,
        connections,
    })
}

async fn accept_loop<F: SessionAppFactory>(listener: TcpListener, shared: Arc<Shared<F>>) {
    let mut backoff = Duration::from_millis(10);
    loop {
        let accepted = tokio::select! {
            () = shared.token.cancelled() => break,
            r = listener.accept() => r,
        };
        match accepted {
            Ok((tcp, peer)) => {
                backoff = Duration::from_millis(10);
                let permit = shared.limits.admit_unauthenticated(peer.ip());
                let tracker = shared.connections.clone();
                tracker.spawn(connection(shared.clone(), tcp, peer, permit));
            }
            Err(e) => {
                // EMFILE/ENFILE/ECONNABORTED…: never stop listening; back off so a full
                // fd table does not turn into a busy loop.
                tracing::warn!(error = %e, "ssh: accept failed; retrying");
                tokio::select! {
                    () = shared.token.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
    tracing::info!("ssh server stopped accepting");
}

async fn connection<F: SessionAppFactory>(
    shared: Arc<Shared<F>>,
    tcp: TcpStream,
    peer: SocketAddr,
    permit: PreAuthTicket,
) {
    let started = Arc::new(AtomicBool::new(false));
    let deadline = tokio::time::Instant::now() + shared.login_grace;
    // Cancelled when a newer unauthenticated connection takes this one's place.
    let evicted = permit.evicted();
    let handler = ConnHandler {
        shared: shared.clone(),
        peer: Some(peer),
        unauth_permit: Some(permit),
        user: None,
        has_session: false,
        started: started.clone(),
    };
    // run_stream reads the client's SSH-ID before returning; bound that by the grace
    // time and by eviction.
    let handshake = tokio::select! {
        r = tokio::time::timeout_at(
            deadline,
            russh::server::run_stream(shared.config.clone(), tcp, handler),
        ) => r,
        () = evicted.cancelled() => {
            tracing::info!(%peer, "ssh: unauthenticated connection dropped for a newer one");
            return;
        }
    };
    let running = match handshake {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "ssh: handshake failed");
            return;
        }
        Err(_) => {
            tracing::info!(%peer, "ssh: login grace time exceeded before handshake");
            return;
        }
    };
    let handle = running.handle();
    tokio::pin!(running);
    let ended = tokio::select! {
        r = &mut running => Some(r),
        () = tokio::time::sleep_until(deadline) => None,
        () = shared.token.cancelled() => None,
        // Only while unauthenticated: the handler drops the ticket on success, and a
        // dropped ticket is never cancelled.
        () = evicted.cancelled(), if !started.load(Ordering::SeqCst) => None,
    };
    let result = match ended {
        Some(r) => r,
        None => {
            // A running session says goodbye itself on shutdown (the viewer's terminal
            // leaves the alternate screen): only connections without one are cut here.
            if !started.load(Ordering::SeqCst) {
                let why = if shared.token.is_cancelled() {
                    "server shutting down"
                } else if evicted.is_cancelled() {
                    tracing::info!(%peer, "ssh: unauthenticated connection dropped for a newer one");
                    "too many unauthenticated connections"
                } else {
                    tracing::info!(%peer, "ssh: login grace time exceeded; disconnecting");
                    "login grace time exceeded"
                };
                // Bounded: a peer that reads nothing must not hold this task.
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    handle.disconnect(Disconnect::ByApplication, why.into(), String::new()),
                )
                .await;
                match tokio::time::timeout(Duration::from_secs(5), &mut running).await {
                    Ok(r) => r,
                    Err(_) => return,
                }
            } else {
                tokio::select! {
                    r = &mut running => r,
                    () = shared.token.cancelled() => {
                        // Sessions see the token too and say goodbye; give them a moment.
                        match tokio::time::timeout(Duration::from_secs(5), &mut running).await {
                            Ok(r) => r,
                            Err(_) => return,
                        }
                    }
                }
            }
        }
    };
    if let Err(e) = result {
        tracing::debug!(%peer, error = %e, "ssh connection ended with error");
    }
}

/// russh handler for one connection.
struct ConnHandler<F: SessionAppFactory> {
    shared: Arc<Shared<F>>,
    peer: Option<SocketAddr>,
    /// Held until authentication succeeds (caps pre-auth connections).
    unauth_permit: Option<PreAuthTicket>,
    user: Option<String>,
    has_session: bool,
    started: Arc<AtomicBool>,
}

impl<F: SessionAppFactory> russh::server::Handler for ConnHandler<F> {
    type Error = russh::Error;

    async fn auth_none(&mut self, _user: &str) -> Result<Auth, Self::Error> {
        Ok(reject())
    }

    async fn auth_password(&mut self, user: &str, _password: &str) -> Result<Auth, Self::Error> {
        log_refused_method(user, "password", self.peer);
        Ok(reject())
    }

    async fn auth_keyboard_interactive<'a>(
        &'a mut self,
        user: &str,
        _submethods: &str,
        _response: Option<russh::server::Response<'a>>,
    ) -> Result<Auth, Self::Error> {
        log_refused_method(user, "keyboard-interactive", self.peer);
        Ok(reject())
    }

    async fn auth_publickey_offered(
        &mut self,
        user: &str,
        offer: PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        // Filter before the client signs: saves signature work on unknown keys.
        Ok(
            match check_key(
                &self.shared.keys,
                user,
                offer.public_key,
                self.peer,
                Stage::Offered,
            ) {
                KeyDecision::Accept { .. } => Auth::Accept,
                KeyDecision::Reject => reject(),
            },
        )
    }

    async fn auth_publickey(
        &mut self,
        user: &str,
        key: VerifiedPublicKey<'_>,
    ) -> Result<Auth, Self::Error> {
        match check_key(
            &self.shared.keys,
            user,
            key.public_key,
            self.peer,
            Stage::Verified,
        ) {
            KeyDecision::Accept { .. } => {
                self.user = Some(user.to_string());
                self.unauth_permit = None;
                Ok(Auth::Accept)
            }
            KeyDecision::Reject => Ok(reject()),
        }
    }

    async fn auth_openssh_certificate(
        &mut self,
        user: &str,
        _certificate: &russh::keys::Certificate,
    ) -> Result<Auth, Self::Error> {
        log_refused_method(user, "openssh-certificate", self.peer);
        Ok(reject())
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: russh::server::ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        let Some(user) = self.user.clone() else {
            return Ok(()); // not authenticated: dropping `reply` rejects
        };
        if self.has_session {
            // One interactive session per connection keeps the session cap meaningful.
            tracing::debug!(peer = ?self.peer, "ssh: extra session channel rejected");
            return Ok(());
        }
        self.has_session = true;
        let slot = self.shared.limits.try_session();
        if slot.is_none() {
            tracing::warn!(user, peer = ?self.peer, max = self.shared.limits.max_sessions(),
                "ssh: session refused, server full");
        }
        reply.accept().await;
        let params = SessionParams {
            factory: self.shared.factory.clone(),
            config: self.shared.session.clone(),
            user,
            peer: self.peer,
            slot,
            max_sessions: self.shared.limits.max_sessions(),
            started: self.started.clone(),
            shutdown: self.shared.token.clone(),
        };
        tokio::spawn(session::run(params, channel));
        Ok(())
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        _term: &str,
        _col_width: u32,
        _row_height: u32,
        _pix_width: u32,
        _pix_height: u32,
        _modes: &[(russh::Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        // The session task gets the same request through the channel and applies it.
        session.channel_success(channel)
    }

    async fn env_request(
        &mut self,
        channel: ChannelId,
        _name: &str,
        _value: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        // Only COLORTERM/NO_COLOR are used (by the session task); nothing reaches a shell.
        session.channel_success(channel)
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        _data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)
    }

    async fn subsystem_request(
        &mut self,
        channel: ChannelId,
        _name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)
    }
}

fn reject() -> Auth {
    Auth::Reject {
        proceed_with_methods: Some(MethodSet::from(&[MethodKind::PublicKey][..])),
        partial_success: false,
    }
}
