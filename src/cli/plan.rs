//! `gangplank plan -f PATH...`: the shadow engine over a dump of manifests.

use std::io::{BufWriter, Write};

use anyhow::Result;

use super::args::{PlanArgs, PlanOutput};
use super::doctor::terminal_width;
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
    match args.output {
        // written straight from the plan: no intermediate `Value` tree of the output
        PlanOutput::Json | PlanOutput::Jsonl => {
            let mut out = BufWriter::new(std::io::stdout().lock());
            if args.output == PlanOutput::Json {
                serde_json::to_writer_pretty(&mut out, &plan)?;
            } else {
                serde_json::to_writer(&mut out, &plan)?;
            }
            out.write_all(b"\n")?;
            out.flush()?;
        }
        PlanOutput::Table => {
            let json = serde_json::to_value(&plan)?;
            print!("{}", plan_table::render(&json, terminal_width()));
        }
    }
    // The process ends here: freeing a large cluster object by object takes longer than
    // reading it did, and the operating system reclaims the memory at exit anyway.
    std::mem::forget(plan);
    std::mem::forget(state);
    Ok(0)
}
