//! Integration tests of the engine area, in one test binary to keep link time and disk small.

mod cli_broken_pipe;
mod cli_plan;
mod engine_cycle;
mod engine_golden;
mod engine_hierarchy;
mod engine_kueue_fair;
mod engine_kueue_preemption;
mod engine_kueue_scheduler;
mod engine_perf;
mod engine_props;
mod engine_scale;
mod engine_seed;
mod kueue_oracle;
mod model_byte_fuzz;
mod model_parse;
mod model_parse_fuzz;
