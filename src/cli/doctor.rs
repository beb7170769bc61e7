//! `gangplank doctor -f PATH...`: governance checks over a dump of manifests.

use anyhow::Result;

use super::args::{DoctorArgs, FailOn, OutputFormat};
use super::time::now_or;
use crate::doctor::{self, DoctorOptions, Severity};
use crate::model::{KueueApiVersion, load_paths};

/// Exit code for unreadable input, distinct from "findings at or above --fail-on" (1).
const INPUT_ERROR: i32 = 2;

/// Runs `doctor`; returns the exit code.
pub fn run(args: &DoctorArgs) -> Result<i32> {
    let now = now_or(args.now.as_deref())?;
    let state = match load_paths(&args.files) {
        Ok(state) => state,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(INPUT_ERROR);
        }
    };
    let opts = DoctorOptions {
        served_kueue_version: match args.kueue_api.as_deref() {
            Some("v1beta1") => Some(KueueApiVersion::V1beta1),
            Some(_) => Some(KueueApiVersion::V1beta2),
            None => None,
        },
        ..DoctorOptions::at(now)
    };
    let report = doctor::run(&state, &opts);
    match args.output {
        OutputFormat::Json => println!("{}", report.to_json_pretty()),
        OutputFormat::Table => print!("{}", report.render_table(terminal_width())),
    }
    let fail_on = args.fail_on.map(|f| match f {
        FailOn::Warning => Severity::Warning,
        FailOn::Error => Severity::Error,
    });
    Ok(report.exit_code(fail_on))
}

/// `COLUMNS` when set (as shells export it), else 80.
pub fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w: &usize| w >= 40)
        .unwrap_or(80)
}
