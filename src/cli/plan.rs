//! `gangplank plan -f PATH...`: the shadow engine over a dump of manifests.

use anyhow::Result;

use super::args::{OutputFormat, PlanArgs};
use super::doctor::terminal_width;
use super::plan_table;
use super::time::now_or;
use crate::engine::{self, PlanOptions};
use crate::model::load_paths;

/// Runs `plan`; returns the exit code (1 on unreadable input).
pub fn run(args: &PlanArgs) -> Result<i32> {
    let now = now_or(args.now.as_deref())?;
    let state = match load_paths(&args.files) {
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
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&json)?),
        OutputFormat::Table => print!("{}", plan_table::render(&json, terminal_width())),
    }
    Ok(0)
}
