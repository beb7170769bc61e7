//! `gangplank history [--since 24h] [-o table|json]`: evictions recorded by live
//! sessions (`plan --live`, the console), newest last.

use anyhow::{Context, Result, bail};
use serde_json::json;

use super::args::{HistoryArgs, OutputFormat};
use super::live::history_path;
use super::out::{out, outln};
use super::table::Table;
use crate::source::{EvictionRecord, read_history};

/// Runs `history`; returns the exit code.
pub fn run(args: &HistoryArgs) -> Result<i32> {
    let since_ms = parse_age(&args.since)?;
    let Some(path) = history_path(args.history_file.as_ref()) else {
        bail!("no history file: no home directory; pass --history-file PATH");
    };
    let cutoff = jiff::Timestamp::now().as_millisecond() - since_ms;
    let records = read_history(&path, Some(cutoff))
        .with_context(|| format!("cannot read {}", path.display()))?;
    match args.output {
        OutputFormat::Json => outln(&serde_json::to_string_pretty(&json!({
            "historyFile": path.display().to_string(),
            "evictions": records,
        }))?)?,
        OutputFormat::Table => out(&render(&records))?,
    }
    Ok(0)
}

/// `--since` ("30m", "24h", "7d", "90s"; [`crate::duration`]) → milliseconds.
pub fn parse_age(text: &str) -> Result<i64> {
    crate::duration::parse_duration_ms(text).map_err(|e| anyhow::anyhow!("--since: {e}"))
}

fn render(records: &[EvictionRecord]) -> String {
    if records.is_empty() {
        return "No evictions recorded in this period.\n".into();
    }
    let mut t = Table::new(&[
        "TIME",
        "VICTIM",
        "PRIO",
        "CLUSTERQUEUE",
        "PREEMPTED BY",
        "PRIO",
        "REASON",
        "APPROVED BY",
    ]);
    for r in records {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let reason = match &r.preemption_reason {
            Some(p) => format!("{}/{p}", r.reason),
            None => r.reason.clone(),
        };
        t.row(vec![
            r.time.clone(),
            r.victim.clone(),
            r.victim_priority.to_string(),
            opt(&r.victim_cluster_queue),
            r.preemptor
                .clone()
                .or_else(|| r.preemptor_uid.as_ref().map(|u| format!("uid {u}")))
                .unwrap_or_else(|| "-".into()),
            r.preemptor_priority
                .map_or_else(|| "-".into(), |p| p.to_string()),
            reason,
            opt(&r.approved_by),
        ]);
    }
    t.render("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("24h").expect("h"), 86_400_000);
        assert_eq!(parse_age("30m").expect("m"), 1_800_000);
        assert_eq!(parse_age("7d").expect("d"), 604_800_000);
        assert!(parse_age("x").is_err());
        // Was hours; a bare number is refused everywhere now.
        assert!(parse_age("24").is_err());
    }
}
