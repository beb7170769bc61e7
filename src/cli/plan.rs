//! `gangplank plan -f PATH...`: the shadow engine over a dump of manifests.

use anyhow::Result;

use super::args::{PlanArgs, PlanOutput};
use super::doctor::terminal_width;
use super::out::{out, out_json};
use super::plan_table;
use super::time::now_or;
use crate::engine::{self, PlanOptions};
use crate::model::{kueue_config, load_paths};

/// Reads `--kueue-config FILE`: a Configuration or the ConfigMap holding one.
pub fn read_kueue_config(path: &std::path::Path) -> Result<kueue_config::KueueConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    kueue_config::from_file_text(&text, &path.display().to_string()).map_err(|e| e.to_string())
}

/// Runs `plan`; returns the exit code (1 on unreadable input).
pub fn run(args: &PlanArgs) -> Result<i32> {
    if args.live {
        return super::live::run(args);
    }
    let now = now_or(args.now.as_deref())?;
    let mut files = args.files.clone();
    // --what-if manifests come last: later documents win, as with `kubectl apply`.
    files.extend(args.what_if.iter().cloned());
    let mut state = match load_paths(&files) {
        Ok(state) => state,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(1);
        }
    };
    if let Some(path) = &args.kueue_config {
        match read_kueue_config(path) {
            Ok(cfg) => state.kueue_config = Some(cfg),
            Err(msg) => {
                eprintln!("error: {msg}");
                return Ok(1);
            }
        }
    }
    let opts = PlanOptions {
        now,
        max_cycles: args.max_cycles,
        ..PlanOptions::default()
    };
    let mut plan = engine::plan(&state, &opts);
    if state.kueue_config.is_none() {
        plan.warnings
            .insert(0, kueue_config::assumed_defaults_notice());
    }
    match args.output {
        // written straight from the plan: no intermediate `Value` tree of the output
        PlanOutput::Json => out_json(&plan, true)?,
        PlanOutput::Jsonl => out_json(&plan, false)?,
        PlanOutput::Table => {
            let json = serde_json::to_value(&plan)?;
            out(&plan_table::render(&json, terminal_width()))?;
        }
    }
    // The process ends here: freeing a large cluster object by object takes longer than
    // reading it did, and the operating system reclaims the memory at exit anyway.
    std::mem::forget(plan);
    std::mem::forget(state);
    Ok(0)
}
