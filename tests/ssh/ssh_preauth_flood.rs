//! Issue #14 finding 5: 16 idle pre-auth connections that only send a banner locked
//! every authorized viewer out for ~2 minutes, and repeating the flood kept them out
//! for good. Now pre-auth connections are capped per source address and in total, the
//! oldest unauthenticated connection is dropped to admit a new one, and the login grace
//! (20 s) bounds the rest. Flooders are raw TCP sockets that send an SSH banner and then
//! nothing; the viewer is a real russh client with an authorized key. Loopback only
//! (127.0.0.0/8 addresses stand for distinct hosts).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use gangplank::ssh::demo::DemoFactory;
use gangplank::ssh::{ServerHandle, SshServerOptions, serve};
use russh::client;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

use super::client::{AcceptAll, new_key, write_authorized};

/// The documented login grace: no viewer may be kept out longer than this.
const GRACE: Duration = Duration::from_secs(20);

async fn start(dir: &std::path::Path, key: &PrivateKey) -> ServerHandle {
    let opts = SshServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        authorized_keys: write_authorized(dir, &[key]),
        host_key: Some(dir.join("host_key")),
        auth_rejection_delay: Duration::from_millis(100),
        ..Default::default()
    };
    assert!(
        opts.login_grace <= GRACE,
        "the default grace must stay <= 20 s"
    );
    let (factory, _feed) = DemoFactory::new();
    serve(opts, factory, std::future::pending()).await.unwrap()
}

/// A raw TCP connection from `from` that sends a client banner and then idles.
async fn banner_only(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    let mut tcp = socket.connect(to).await?;
    tcp.write_all(b"SSH-2.0-flood_0.1\r\n").await?;
    Ok(tcp)
}

/// Waits until the server has answered `tcp` (its banner) or closed it, so the flood
/// is in place before the viewer comes.
async fn settled(tcp: &mut TcpStream) {
    let mut buf = [0u8; 64];
    let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf)).await;
}

/// One login with an authorized key, bounded in time; `Err` says why it failed.
async fn try_login(addr: SocketAddr, key: &PrivateKey) -> Result<(), String> {
    let attempt = async {
        let mut s = client::connect(Arc::new(client::Config::default()), addr, AcceptAll)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let auth = s
            .authenticate_publickey(
                "viewer",
                PrivateKeyWithHashAlg::new(Arc::new(key.clone()), None),
            )
            .await
            .map_err(|e| format!("auth: {e}"))?;
        if !auth.success() {
            return Err("auth refused".to_string());
        }
        let ch = s
            .channel_open_session()
            .await
            .map_err(|e| format!("session: {e}"))?;
        let _ = ch.close().await;
        Ok(())
    };
    tokio::time::timeout(Duration::from_secs(5), attempt)
        .await
        .unwrap_or_else(|_| Err("login timed out".into()))
}

/// Retries the login until it works; how long that took, or the last error at `GRACE`.
async fn login_within_grace(addr: SocketAddr, key: &PrivateKey) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        match try_login(addr, key).await {
            Ok(()) => return Ok(start.elapsed()),
            Err(e) if start.elapsed() >= GRACE => {
                return Err(format!("still locked out after {:?}: {e}", start.elapsed()));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_banner_only_connections_do_not_lock_out_an_authorized_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let server = start(dir.path(), &key).await;
    let addr = server.local_addr();
    // 50 idle pre-auth connections from the viewer's own address.
    let mut flood = Vec::new();
    for _ in 0..50 {
        flood.push(
            banner_only(IpAddr::V4(Ipv4Addr::LOCALHOST), addr)
                .await
                .unwrap(),
        );
    }
    for tcp in &mut flood {
        settled(tcp).await;
    }
    let took = login_within_grace(addr, &key).await.unwrap();
    eprintln!("authorized key in after {took:?} with 50 idle pre-auth connections");
    // And again from 50 distinct hosts.
    let mut many = Vec::new();
    for i in 0..50u8 {
        let from = IpAddr::V4(Ipv4Addr::new(127, 0, 1, 1 + i));
        many.push(banner_only(from, addr).await.unwrap());
    }
    for tcp in &mut many {
        settled(tcp).await;
    }
    let took = login_within_grace(addr, &key).await.unwrap();
    eprintln!("authorized key in after {took:?} with 50 idle hosts");
    server.shutdown();
}

/// The flood repeats: every connection the server closes is opened again at once, from
/// one other host. The viewer still gets in within the grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeating_flood_from_one_host_does_not_keep_viewers_out() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let server = start(dir.path(), &key).await;
    let addr = server.local_addr();
    let attacker = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            // Bounded: at most 200 reconnects per flooder, and it stops with the test.
            for _ in 0..200 {
                let Ok(mut tcp) = banner_only(attacker, addr).await else {
                    break;
                };
                let mut buf = [0u8; 256];
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        r = tcp.read(&mut buf) => match r {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        },
                    }
                }
            }
        }));
    }
    // The flood holds every slot one address may have (4 by default).
    let end = Instant::now() + Duration::from_secs(10);
    while server.unauthenticated_connections() < 4 {
        assert!(Instant::now() < end, "the flood never reached the server");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = login_within_grace(addr, &key).await;
    stop.cancel();
    for t in tasks {
        let _ = t.await;
    }
    let took = took.unwrap();
    eprintln!("authorized key in after {took:?} during a repeating flood");
    server.shutdown();
}
