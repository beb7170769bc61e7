//! Command-line entry points: argument parsing and the headless subcommands.

mod actions;
mod args;
mod console;
mod doctor;
mod embedded;
pub mod feed;
mod history;
mod kueue_config;
mod live;
mod live_meta;
mod out;
mod plan;
mod plan_table;
mod serve_ssh;
mod signals;
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
        None => console::run(&cli.console),
        Some(Command::Demo(args)) => console::demo(args),
        Some(Command::Config(args)) => config(args),
        Some(Command::ServeSsh(args)) => serve_ssh::run(args),
        Some(Command::Plan(args)) => plan::run(args),
        Some(Command::Doctor(args)) => doctor::run(args),
        Some(Command::History(args)) => history::run(args),
        Some(Command::Sim(args)) => sim::run(args),
        Some(Command::Simulate(args)) => simulate::run(args),
        Some(Command::Hold(args)) => actions::hold(args),
        Some(Command::Resume(args)) => actions::resume(args),
        Some(Command::SetPriority(args)) => actions::set_priority(args),
        Some(Command::Approve(args)) => actions::approve(args),
    };
    match result {
        Ok(code) => code,
        // `| head`: the reader went away; end quietly as `ls | head` does.
        Err(err) if out::is_broken_pipe(&err) => out::BROKEN_PIPE_EXIT,
        // SIGTERM, SIGINT, SIGQUIT, SIGHUP: the terminal is restored; 128 + n.
        Err(err) if signals::signalled_exit(&err).is_some() => {
            signals::signalled_exit(&err).unwrap_or(1)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            1
        }
    }
}

fn config(args: &args::ConfigArgs) -> anyhow::Result<i32> {
    if args.cluster {
        return kueue_config::run(args);
    }
    if args.print_default {
        out::out(crate::tui::default_config_toml())?;
    } else {
        match crate::tui::Config::default_path() {
            Some(p) => out::outln(&format!("config file: {}", p.display()))?,
            None => out::outln("config file: (no home directory; defaults apply)")?,
        }
        out::outln("print every key with its default: gangplank config --print-default")?;
    }
    Ok(0)
}
