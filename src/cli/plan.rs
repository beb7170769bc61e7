//! `gangplank plan -f PATH...`: the shadow engine over a dump of manifests.

use anyhow::Result;

use super::args::{PlanArgs, PlanOutput};
use super::doctor::terminal_width;
use super::out::{out, outln};
use super::plan_table;
use super::time::now_or;
use crate::engine::{self, PlanOptions};
use crate::model::load_paths;

/// Runs `plan`; returns the exit code (1 on unreadable input).
pub fn run(args: &PlanArgs) -> Result<i32> {
    if args.live {
        return super::live::run(args);
    }
    let now = now_or(args.now.as_deref())?;
    let mut files = args.files.clone();
    // --what-if manifests come last: later documents win, as with `kubectl apply`.
    files.extend(args.what_if.iter().cloned());
    let state = match load_paths(&files) {
        Ok(state) => state,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(1);
        }
    };
    let opts = PlanOptions {
        now,
        max_cycles: args.max_cycles,
        ..PlanOptions::default()
    };
    let plan = engine::plan(&state, &opts);
    let json = serde_json::to_value(&plan)?;
    match args.output {
        PlanOutput::Json => outln(&serde_json::to_string_pretty(&json)?)?,
        PlanOutput::Jsonl => outln(&serde_json::to_string(&json)?)?,
        PlanOutput::Table => out(&plan_table::render(&json, terminal_width()))?,
    }
    Ok(0)
}
