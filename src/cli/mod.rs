//! Command-line entry points: argument parsing and the headless subcommands.

mod args;
mod doctor;
mod history;
mod live;
mod plan;
mod plan_table;
mod sim;
mod simulate;
mod table;
mod time;

use clap::Parser;

pub use args::{Cli, Command, OutputFormat};

/// Runs the `gangplank` command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Plan(args) => plan::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::History(args) => history::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Simulate(args) => simulate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            1
        }
    }
}
