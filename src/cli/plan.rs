//! `gangplank plan -f PATH...`: the shadow engine over a dump of manifests.

use anyhow::Result;

use super::args::PlanArgs;

/// Runs `plan`; returns the exit code.
pub fn run(_args: &PlanArgs) -> Result<i32> {
    anyhow::bail!("plan: the engine is not wired in yet")
}
