//! The simulator running live behind the API server (`gangplank sim serve`, and the
//! in-process demo): a tokio task keeps the cluster's clock on the wall clock, plays the
//! scenario's story `speed` times faster (see [`SimCluster::set_speed`]) and reacts at
//! once to writes made through the API.
//!
//! Every timestamp the simulator writes is therefore a real moment in the past, so
//! kubectl's ages, the server's table ages and gangplank's own ages all agree with
//! the wall clock (docs/simulator.md, "Time").
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use gangplank::sim::{LiveOptions, LiveSim, Scenario, SimCluster, SimOptions};
//! let cluster = SimCluster::from_scenario(&Scenario::seed(), SimOptions::live());
//! let sim = LiveSim::start(cluster, LiveOptions { speed: 60.0, ..Default::default() }).await?;
//! let kubeconfig = std::env::temp_dir().join("gangplank-sim.kubeconfig");
//! sim.write_kubeconfig(&kubeconfig)?;
//! println!("{}", sim.url());
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::api::{FaultConfig, ServerHandle, ServerOptions, serve};
use super::clock::SimClock;
use super::cluster::{SimCluster, SimOptions};
use super::store::ObjectStore;

/// The longest the driver sleeps without looking at the clock (wall time).
const MAX_TICK: Duration = Duration::from_millis(100);

/// How to run a live simulator.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    pub listen: SocketAddr,
    /// How many times faster than the wall clock the scenario's story runs (> 0).
    pub speed: f64,
    /// Initial fault rules of the API server.
    pub faults: FaultConfig,
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            speed: 1.0,
            faults: FaultConfig::default(),
        }
    }
}

impl SimOptions {
    /// Options for a live simulator: the clock starts at the wall clock (whole
    /// seconds, so no timestamp is ever ahead of it) and no timeline is kept.
    pub fn live() -> Self {
        let now = jiff::Timestamp::now().as_millisecond();
        SimOptions {
            start_ms: now - now.rem_euclid(1000),
            record_timeline: false,
            ..SimOptions::default()
        }
    }
}

/// A running simulator: the API server plus the task driving the cluster.
pub struct LiveSim {
    server: ServerHandle,
    clock: SimClock,
    cancel: CancellationToken,
    driver: JoinHandle<SimCluster>,
}

impl LiveSim {
    /// Serves `cluster`'s store and starts driving it; the story runs at `options.speed`.
    pub async fn start(mut cluster: SimCluster, options: LiveOptions) -> std::io::Result<LiveSim> {
        if !(options.speed.is_finite() && options.speed > 0.0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("speed must be a positive number, got {}", options.speed),
            ));
        }
        cluster.set_speed(options.speed);
        let server = serve(
            cluster.store().clone(),
            ServerOptions {
                addr: options.listen,
                faults: options.faults.clone(),
                limits: cluster.limits(),
                clock: Some(cluster.clock().clone()),
                ..ServerOptions::default()
            },
        )
        .await?;
        let clock = cluster.clock().clone();
        let cancel = CancellationToken::new();
        let driver = tokio::spawn(drive(cluster, cancel.clone()));
        Ok(LiveSim {
            server,
            clock,
            cancel,
            driver,
        })
    }

    /// `http://ADDR` of the API server.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The store behind the server.
    pub fn store(&self) -> &ObjectStore {
        self.server.store()
    }

    /// The API server (faults, request counters, closing watches).
    pub fn server(&self) -> &ServerHandle {
        &self.server
    }

    /// The simulated clock.
    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    /// Writes a kubeconfig (context `gangplank-sim`) atomically: readers never see
    /// a partial file.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp-gangplank");
        self.server.write_kubeconfig(&tmp)?;
        std::fs::rename(&tmp, path)
    }

    /// Stops driving and serving; returns the cluster as it was left.
    pub async fn shutdown(self) -> Option<SimCluster> {
        self.cancel.cancel();
        let cluster = self.driver.await.ok();
        let _ = self.server.shutdown().await;
        cluster
    }
}

/// The wall clock in ms since the epoch.
fn wall_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

async fn drive(mut cluster: SimCluster, cancel: CancellationToken) -> SimCluster {
    let mut wake = cluster
        .store()
        .subscribe(None, None)
        .expect("a fresh subscription cannot be expired");
    loop {
        // The clock follows the wall clock (it never goes back, should the wall clock).
        cluster.advance_to(wall_ms());
        // Our own writes are not a reason to wake up again; a write that landed after
        // the controllers settled is.
        if wake.try_next().is_err() {
            wake = cluster
                .store()
                .subscribe(None, None)
                .expect("a fresh subscription cannot be expired");
        }
        if cluster.has_unprocessed_changes() {
            tokio::task::yield_now().await;
            continue;
        }
        let sleep = cluster
            .next_event_time()
            .map(|t| Duration::from_millis((t - wall_ms()).max(0) as u64))
            .unwrap_or(MAX_TICK)
            .clamp(Duration::from_millis(1), MAX_TICK);
        tokio::select! {
            _ = cancel.cancelled() => return cluster,
            _ = wake.next() => {}
            _ = tokio::time::sleep(sleep) => {}
        }
    }
}
