//! The simulator embedded in a command (`demo`, `serve-ssh --demo`): started on
//! loopback, reached through a temporary kubeconfig by the same client as a real
//! cluster, and read with its own clock (the wall clock, stepped by the simulator:
//! `--speed` shortens the story, it never stamps a time ahead of the wall clock).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::clock::Clock;
use crate::sim::api::kubeconfig::CONTEXT_NAME;
use crate::sim::cluster::{SimCluster, SimOptions};
use crate::sim::live::{LiveOptions, LiveSim};
use crate::sim::scenario::Scenario;
use crate::source::ClusterArgs;

pub struct EmbeddedSim {
    sim: LiveSim,
    /// The kubeconfig, in [`Self::_dir`].
    kubeconfig: PathBuf,
    /// A private directory (mode 0700, unpredictable name) for the kubeconfig, removed
    /// when this is dropped, on every exit path.
    _dir: tempfile::TempDir,
    /// `base` pointed at the simulator (its other flags kept, e.g. `-n`, `--as`).
    pub cluster: ClusterArgs,
    /// The simulator's clock (the wall clock as the simulator last stepped it): ages and
    /// waits in the time its objects are stamped with.
    pub clock: Clock,
}

impl EmbeddedSim {
    /// Starts `scenario` at `speed` and writes the kubeconfig that reaches it.
    pub async fn start(scenario: &Scenario, speed: f64, base: &ClusterArgs) -> Result<Self> {
        let sim = LiveSim::start(
            SimCluster::from_scenario(scenario, SimOptions::live()),
            LiveOptions {
                speed,
                ..LiveOptions::default()
            },
        )
        .await
        .context("cannot start the simulator on loopback")?;
        let dir = tempfile::Builder::new()
            .prefix("gangplank-sim-")
            .tempdir()
            .context("cannot create a private temporary directory for the kubeconfig")?;
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig)
            .with_context(|| format!("cannot write {}", kubeconfig.display()))?;
        Ok(EmbeddedSim {
            cluster: ClusterArgs {
                kubeconfig: Some(kubeconfig.clone()),
                context: Some(CONTEXT_NAME.to_string()),
                ..base.clone()
            },
            clock: sim.clock().clock(),
            kubeconfig,
            _dir: dir,
            sim,
        })
    }

    /// Stops the simulator and removes the temporary kubeconfig.
    pub async fn shutdown(self) {
        self.sim.shutdown().await;
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}
