//! `gangplank simulate`: a scenario in virtual time, headless.

use std::fmt::Write as _;

use anyhow::{Context, Result};

use super::args::{OutputFormat, SimulateArgs};
use super::out::{out, outln};
use super::table::Table;
use crate::sim::clock::parse_duration;
use crate::sim::cluster::GroupSummary;
use crate::sim::cluster::SimLimits;
use crate::sim::scenario::{Scenario, load_scenario};
use crate::sim::simulate::{SimReport, check_limits, simulate_with};

pub fn run(args: &SimulateArgs) -> Result<i32> {
    let until = parse_duration(&args.until).map_err(|e| anyhow::anyhow!("--until: {e}"))?;
    let scenario = match &args.scenario {
        Some(path) => load_scenario(path).with_context(|| "cannot load the scenario")?,
        None => Scenario::seed(),
    };
    let limits = SimLimits {
        max_pods_per_object: args.max_pods_per_object,
        max_pods: args.max_pods,
    };
    if let Err(e) = check_limits(&scenario, &limits) {
        eprintln!("error: the scenario asks for too many pods: {e}");
        return Ok(2);
    }
    let report = simulate_with(&scenario, until, limits);
    match args.output {
        OutputFormat::Json => outln(&serde_json::to_string_pretty(&report)?)?,
        OutputFormat::Table => out(&render_table(&report))?,
    }
    Ok(0)
}

fn opt_secs(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(s) if s >= 3600.0 => format!("{:.1}h", s / 3600.0),
        Some(s) if s >= 60.0 => format!("{:.1}m", s / 60.0),
        Some(s) => format!("{s:.0}s"),
    }
}

fn summary_table(first: &str, groups: &[GroupSummary]) -> String {
    let mut t = Table::new(&[
        first,
        "JOBS",
        "ADMITTED",
        "DONE",
        "GPU-UTIL",
        "WAIT-P50",
        "WAIT-P95",
        "PREEMPTED",
        "GPU-H-LOST",
    ]);
    for g in groups {
        t.row(vec![
            g.name.clone(),
            g.workloads.to_string(),
            g.admitted.to_string(),
            g.finished.to_string(),
            g.gpu_utilisation
                .map_or("-".into(), |u| format!("{:.1}%", u * 100.0)),
            opt_secs(g.wait_p50_seconds),
            opt_secs(g.wait_p95_seconds),
            g.preemptions.to_string(),
            format!("{:.1}", g.gpu_hours_lost_to_preemption),
        ]);
    }
    t.render("")
}

/// The report for people: the timeline, then the summaries.
pub fn render_table(r: &SimReport) -> String {
    let mut out = String::new();
    let mut t = Table::new(&["TIME", "EVENT", "WORKLOAD", "CLUSTERQUEUE", "DETAIL"]);
    for e in &r.timeline {
        let detail = match (&e.by, &e.reason) {
            (Some(by), Some(reason)) => format!("by {by} ({reason})"),
            (None, Some(reason)) => reason.clone(),
            _ => String::new(),
        };
        t.row(vec![
            e.at.clone(),
            e.event.clone(),
            e.workload.clone(),
            e.cluster_queue.clone().unwrap_or_default(),
            detail,
        ]);
    }
    let _ = writeln!(out, "Timeline (simulated, until {}):", r.summary.until);
    out.push_str(&t.render("  "));
    let _ = writeln!(out, "\nClusterQueues:");
    out.push_str(&summary_table("CLUSTERQUEUE", &r.summary.cluster_queues));
    let _ = writeln!(out, "\nPriority classes:");
    out.push_str(&summary_table("PRIORITYCLASS", &r.summary.priority_classes));
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
