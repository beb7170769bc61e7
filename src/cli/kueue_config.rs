//! `gangplank config --cluster`: Kueue's effective configuration (issue #11), from a
//! dump (`-f`), a file (`--kueue-config`) or the live cluster's ConfigMap
//! `kueue-system/kueue-manager-config`. A ConfigMap that cannot be read (missing, no
//! RBAC) is a visible warning and Kueue's defaults, never a failure.

use std::time::Duration;

use anyhow::{Context, Result};

use super::args::ConfigArgs;
use crate::model::kueue_config::{self, KueueConfig};
use crate::model::load_paths;

/// Runs `config --cluster`; returns the exit code (1 on unreadable input).
pub fn run(args: &ConfigArgs) -> Result<i32> {
    let (cfg, notes) = match effective(args) {
        Ok(v) => v,
        Err(msg) => {
            eprintln!("error: {msg}");
            return Ok(1);
        }
    };
    for n in &notes {
        eprintln!("warning: {n}");
    }
    print!("{}", render(cfg.as_ref()));
    Ok(0)
}

/// The text printed: one line per setting, and which defaults were assumed.
pub fn render(cfg: Option<&KueueConfig>) -> String {
    let mut out = String::from("Kueue configuration\n");
    let default_cfg = KueueConfig::default();
    let lines = match cfg {
        Some(c) => c.summary_lines(),
        None => {
            out.push_str(&format!("  {}\n", kueue_config::assumed_defaults_notice()));
            default_cfg.summary_lines()
        }
    };
    for l in lines {
        out.push_str(&format!("  {l}\n"));
    }
    out
}

fn effective(args: &ConfigArgs) -> Result<(Option<KueueConfig>, Vec<String>), String> {
    if let Some(path) = &args.kueue_config {
        return super::plan::read_kueue_config(path).map(|c| (Some(c), Vec::new()));
    }
    if !args.files.is_empty() {
        let state = load_paths(&args.files).map_err(|e| e.to_string())?;
        return Ok((state.kueue_config, Vec::new()));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(live(args)).map_err(|e| format!("{e:#}"))
}

/// Reads the ConfigMap from the live cluster.
async fn live(args: &ConfigArgs) -> Result<(Option<KueueConfig>, Vec<String>)> {
    let client = crate::source::connect(&args.cluster_args, Duration::from_secs(30))
        .await
        .context("cannot connect to the cluster")?;
    fetch(client).await
}

pub use crate::source::kueue_config::fetch;
