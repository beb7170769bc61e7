//! `gangplank sim serve`: a simulated cluster behind a Kubernetes-compatible API.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::args::{SimArgs, SimCommand, SimGenerateArgs, SimServeArgs};
use crate::sim::api::FaultConfig;
use crate::sim::cluster::{SimCluster, SimLimits, SimOptions};
use crate::sim::live::{LiveOptions, LiveSim};
use crate::sim::scenario::{Scenario, load_scenario};
use crate::sim::simulate::check_limits;

pub fn run(args: &SimArgs) -> Result<i32> {
    match &args.command {
        SimCommand::Serve(a) => serve(a),
        SimCommand::Generate(a) => generate(a),
    }
}

/// `gangplank sim generate`: a generated cluster's manifests on stdout.
fn generate(args: &SimGenerateArgs) -> Result<i32> {
    use crate::sim::generate::{Shape, ShapeKind, generate, to_json_list, to_yaml_documents};
    use std::io::Write as _;
    let kind = ShapeKind::parse(&args.shape).map_err(anyhow::Error::msg)?;
    let shape = Shape {
        seed: args.seed,
        ..Shape::named(kind, args.scale as usize)
    };
    let objects = generate(&shape);
    let bytes = match args.output.as_str() {
        "yaml" => to_yaml_documents(&objects),
        _ => to_json_list(&objects),
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        // A closed pipe (`| head`) ends quietly with SIGPIPE's code.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(141),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

fn faults(args: &SimServeArgs) -> Result<FaultConfig> {
    let mut cfg = match &args.faults {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--faults {}: cannot read", path.display()))?;
            serde_json::from_str(&text).with_context(|| {
                format!("--faults {}: not a fault configuration", path.display())
            })?
        }
        None => FaultConfig::default(),
    };
    if let Some(secs) = args.fault_close_watches_every {
        cfg.watch_close_after_seconds = Some(secs);
    }
    Ok(cfg)
}

fn serve(args: &SimServeArgs) -> Result<i32> {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        anyhow::bail!("--speed must be a positive number, got {}", args.speed);
    }
    let scenario = match &args.scenario {
        Some(path) => load_scenario(path).context("cannot load the scenario")?,
        None => Scenario::seed(),
    };
    let faults = faults(args)?;
    let limits = SimLimits {
        max_pods_per_object: args.max_pods_per_object,
        max_pods: args.max_pods,
    };
    if let Err(e) = check_limits(&scenario, &limits) {
        eprintln!("error: the scenario asks for too many pods: {e}");
        return Ok(2);
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let options = SimOptions {
            limits,
            ..SimOptions::live()
        };
        let cluster = SimCluster::from_scenario(&scenario, options);
        let sim = LiveSim::start(
            cluster,
            LiveOptions {
                listen: args.listen,
                speed: args.speed,
                faults,
            },
        )
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
        let path = args.kubeconfig_out.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("gangplank-sim-{}.kubeconfig", sim.addr().port()))
        });
        let path = absolute(path);
        sim.write_kubeconfig(&path)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
        super::out::out(&format!(
            "gangplank simulator serving {} ({})\n\
             speed: the story runs {}x (timestamps and ages are wall-clock)\n\
             kubeconfig: {}\nexport KUBECONFIG={}\nPress Ctrl-C to stop.\n",
            sim.url(),
            scenario.name,
            args.speed,
            path.display(),
            path.display()
        ))?;
        wait_for_signal().await;
        sim.shutdown().await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(0)
}

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
