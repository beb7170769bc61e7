//! `gangplank doctor -f PATH...`: governance checks over a dump of manifests.

use anyhow::Result;

use super::args::{DoctorArgs, FailOn, OutputFormat};
use super::live_meta;
use super::out::{out, outln};
use super::time::now_or;
use crate::doctor::{self, DoctorOptions, Severity};
use crate::model::{KueueApiVersion, load_paths};

/// Exit code for unreadable input, distinct from "findings at or above --fail-on" (1).
const INPUT_ERROR: i32 = 2;

/// Runs `doctor`; returns the exit code.
pub fn run(args: &DoctorArgs) -> Result<i32> {
    let now = now_or(args.now.as_deref())?;
    let (state, served, snap) = if args.live {
        match live_state(args)? {
            Ok((snap, served)) => ((*snap.state).clone(), served, Some(snap)),
            Err(message) => {
                eprintln!("error: {message}");
                return Ok(INPUT_ERROR);
            }
        }
    } else {
        match load_paths(&args.files) {
            Ok(state) => (state, None, None),
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(INPUT_ERROR);
            }
        }
    };
    let opts = DoctorOptions {
        served_kueue_version: match args.kueue_api.as_deref() {
            Some("v1beta1") => Some(KueueApiVersion::V1beta1),
            Some(_) => Some(KueueApiVersion::V1beta2),
            None => served,
        },
        ..DoctorOptions::at(now)
    };
    let report = doctor::run(&state, &opts);
    if let Some(snap) = &snap {
        for s in live_meta::degraded(snap) {
            eprintln!("warning: incomplete: {s}");
        }
        for s in &snap.skipped {
            eprintln!("warning: skipped {}: {}", s.object, s.error);
        }
    }
    match (args.output, &snap) {
        // Live: the report plus `sync`, `generatedAt`, `resourceVersion`, `skipped`.
        (OutputFormat::Json, Some(snap)) => {
            let mut v: serde_json::Value = serde_json::from_str(&report.to_json_pretty())?;
            live_meta::annotate(&mut v, snap);
            outln(&serde_json::to_string_pretty(&v)?)?
        }
        (OutputFormat::Json, None) => outln(&report.to_json_pretty())?,
        (OutputFormat::Table, _) => out(&report.render_table(terminal_width()))?,
    }
    // The process ends soon: freeing a large cluster object by object costs more than
    // the OS reclaiming it at exit.
    std::mem::forget(state);
    let fail_on = args.fail_on.map(|f| match f {
        FailOn::Warning => Severity::Warning,
        FailOn::Error => Severity::Error,
    });
    let code = report.exit_code(fail_on);
    if code == 0
        && !args.allow_partial
        && snap
            .as_ref()
            .is_some_and(|s| !live_meta::degraded(s).is_empty())
    {
        eprintln!(
            "error: the checks ran on incomplete data: a resource is forbidden or failing; \
             pass --allow-partial to accept it"
        );
        return Ok(live_meta::PARTIAL_EXIT);
    }
    Ok(code)
}

/// `COLUMNS` when set (as shells export it), else 80.
pub fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w: &usize| w >= 40)
        .unwrap_or(80)
}

/// A synced snapshot of the live cluster and the Kueue API version it serves.
type LiveState = (
    std::sync::Arc<crate::source::Snapshot>,
    Option<KueueApiVersion>,
);

/// One synced snapshot of the live cluster, and the Kueue API version it serves.
/// The inner `Err` is a message for the user (sync timeout, Kueue missing).
fn live_state(args: &DoctorArgs) -> Result<Result<LiveState, String>> {
    use crate::source::{self, KueueStatus, SourceOptions};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut opts = SourceOptions {
            namespace: args.cluster.namespace.clone(),
            ..SourceOptions::default()
        };
        let client = source::connect_source(&args.cluster, &mut opts).await?;
        let handle = source::start(client, opts).await;
        let synced = handle
            .wait_synced(std::time::Duration::from_secs(args.sync_timeout))
            .await;
        let kueue_version = handle.kueue_version.clone();
        handle.shutdown().await;
        let snap = match synced {
            Ok(s) => s,
            Err(e) => return Ok(Err(e.to_string())),
        };
        if let KueueStatus::NotInstalled { message } = &snap.kueue {
            return Ok(Err(message.clone()));
        }
        let served = match kueue_version.as_str() {
            "v1beta1" => Some(KueueApiVersion::V1beta1),
            "v1beta2" => Some(KueueApiVersion::V1beta2),
            _ => None,
        };
        Ok(Ok((snap, served)))
    })
}
