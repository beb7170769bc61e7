//! The command-line surface. Every flag here is documented in README.md and docs/.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// gangplank: a terminal operations console for Kueue-governed GPU clusters.
///
/// Without a command, runs the console on the current kube context (or, with -f, on
/// a dump of manifests). `gangplank demo` runs it on the embedded simulator.
#[derive(Debug, Parser)]
#[command(name = "gangplank", version, about, long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// The console's own flags (also taken by `demo`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ConsoleArgs {
    #[command(flatten)]
    pub cluster: crate::source::ClusterArgs,
    /// Show a dump of manifests instead of a live cluster (files or directories).
    #[arg(short = 'f', long = "filename", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Read-only: every action key answers that it is disabled; nothing is written.
    #[arg(long)]
    pub readonly: bool,
    /// Theme: dark (default), light, high-contrast or monochrome.
    #[arg(long)]
    pub theme: Option<String>,
    /// Config file (default: config.toml in the XDG config dir; see `gangplank config`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Write diagnostics to this file (nothing is printed while the console runs).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
    /// The audit log of actions (default: audit.jsonl in the XDG state dir).
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
    /// The policy preemption proposals are made under (docs/actions.md).
    #[arg(long, value_name = "POLICY")]
    pub approval_policy: Option<crate::actions::ApprovalPolicy>,
    /// Where the Events view's history (evictions, admissions, holds…) is kept and read
    /// back after a restart (default: history.jsonl in the XDG state dir; demo-history.jsonl
    /// for `demo`).
    #[arg(long, value_name = "PATH")]
    pub history_file: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Scenario file or directory (Kubernetes manifests); default: the bundled seed.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// How many times faster than the wall clock the story runs (60: the seed story unfolds in seconds).
    #[arg(long, default_value_t = 60.0)]
    pub speed: f64,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Print the default configuration file (every key, commented).
    #[arg(long)]
    pub print_default: bool,
    /// Show Kueue's effective configuration instead (fair sharing, waitForPodsReady,
    /// feature gates…): from -f manifests, --kueue-config, or the live cluster's
    /// ConfigMap kueue-system/kueue-manager-config.
    #[arg(long, conflicts_with = "print_default")]
    pub cluster: bool,
    /// With --cluster: read manifests (a dump) instead of the live cluster.
    #[arg(short = 'f', long = "filename", requires = "cluster", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// With --cluster: a Configuration file or the ConfigMap; overrides the cluster's.
    #[arg(long = "kueue-config", value_name = "FILE", requires = "cluster")]
    pub kueue_config: Option<PathBuf>,
    #[command(flatten)]
    pub cluster_args: crate::source::ClusterArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the console on the embedded simulated cluster (the seed tutorial's story).
    Demo(DemoArgs),
    /// Show what Kueue will do next: admissions, preemptions and why each job waits.
    Plan(PlanArgs),
    /// Find governance mistakes that leave GPUs idle or let jobs bypass the queues.
    Doctor(DoctorArgs),
    /// Who preempted what, and why: evictions recorded by live sessions.
    History(HistoryArgs),
    /// Run a simulated Kueue cluster (see docs/simulator.md).
    Sim(SimArgs),
    /// Play a scenario headless in virtual time and report what happened.
    Simulate(SimulateArgs),
    /// Show the console's configuration (see docs/console.md), or with --cluster Kueue's (docs/engine.md).
    Config(ConfigArgs),
    /// Serve the console read-only over SSH to many viewers from one set of watches.
    ServeSsh(ServeSshArgs),
    /// Hold a Workload (or the job owning one): spec.active=false, as `kueuectl stop workload`.
    Hold(ActionArgs),
    /// Resume a held Workload: spec.active=true.
    Resume(ActionArgs),
    /// Change a job's priority: a WorkloadPriorityClass (label on the job) or a value.
    SetPriority(SetPriorityArgs),
    /// Approve a proposed preemption (see docs/actions.md).
    Approve(ApproveArgs),
}

/// Flags shared by every action command (docs/actions.md).
#[derive(Debug, Clone, clap::Args)]
pub struct ActionArgs {
    /// NAMESPACE/NAME of a Workload, or of the job that owns one.
    #[arg(value_name = "NS/NAME")]
    pub target: String,
    #[command(flatten)]
    pub cluster: crate::source::ClusterArgs,
    /// Read-only: refuse every write before any request is sent.
    #[arg(long)]
    pub readonly: bool,
    /// Send only server-side dry runs (dryRun=All); nothing changes.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation (required when stdin is not a terminal).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// The audit log (default: audit.jsonl in the XDG state dir).
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct SetPriorityArgs {
    #[command(flatten)]
    pub action: ActionArgs,
    /// A WorkloadPriorityClass or PriorityClass name, or a priority value.
    #[arg(value_name = "CLASS|VALUE", allow_negative_numbers = true)]
    pub priority: String,
}

#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub action: ActionArgs,
    /// The policy proposals are made under, e.g. within=LowerPriority,reclaim=Any.
    #[arg(
        long,
        value_name = "POLICY",
        default_value = "within=LowerPriority,reclaim=Any"
    )]
    pub approval_policy: crate::actions::ApprovalPolicy,
    /// Seconds to wait for Kueue to evict each victim before leaving it to recovery.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub eviction_timeout: u64,
    /// Seconds to wait for the initial sync of the cluster state.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub sync_timeout: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text for people, readable at 80 columns.
    Table,
    /// The JSON contract (docs/engine.md).
    Json,
}

/// Output formats of `plan` (`jsonl` is for `--live --watch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlanOutput {
    /// Aligned text for people, readable at 80 columns.
    Table,
    /// The JSON contract (docs/engine.md; `--live` adds "drift", docs/source.md).
    Json,
    /// One JSON plan per line (with --live --watch: one per change).
    Jsonl,
}

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Manifest files or directories (YAML or JSON, as `kubectl get -o yaml|json` prints them).
    #[arg(short = 'f', long = "filename", required_unless_present = "live", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = PlanOutput::Table)]
    pub output: PlanOutput,
    /// Plan against the live cluster (kubeconfig, --context, --as, -n) instead of files.
    #[arg(long, conflicts_with = "files")]
    pub live: bool,
    /// With --live: print a new plan after every change until interrupted (Ctrl-C).
    #[arg(long, requires = "live")]
    pub watch: bool,
    /// Manifests to add on top of the state (jobs, workloads) or to replace objects
    /// with (queues, classes): see what would happen before applying them.
    #[arg(long = "what-if", value_name = "FILE", num_args = 1..)]
    pub what_if: Vec<PathBuf>,
    /// With --live: seconds to wait for the initial sync before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub sync_timeout: u64,
    /// With --live: where evictions seen are recorded (default: the XDG state dir).
    #[arg(long, value_name = "PATH")]
    pub history_file: Option<PathBuf>,
    /// With --live: exit 0 even when a resource is forbidden or failing (the output's
    /// `sync` still says what is missing); without it such a run exits 3.
    #[arg(long, requires = "live")]
    pub allow_partial: bool,
    /// With --live: the server closes each watch after this many seconds and the watch
    /// is renewed; one silent for 3 s longer is hung, reported in `sync` (a `--watch`
    /// line) and restarted.
    #[arg(long, requires = "live", value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u32).range(1..=290))]
    pub watch_timeout: u32,
    #[command(flatten)]
    pub cluster: crate::source::ClusterArgs,
    /// Stop after this many scheduling cycles even if the plan has not settled (a plan
    /// that repeats a state it was in stops earlier and names the loop: `detectedCycle`).
    /// JSON lists the pending workloads in the last cycle only.
    #[arg(long, default_value_t = 100)]
    pub max_cycles: usize,
    /// The instant to plan at (RFC 3339); defaults to the current time.
    #[arg(long)]
    pub now: Option<String>,
    /// Kueue's Configuration (config.kueue.x-k8s.io v1beta1/v1beta2) to plan with: a
    /// Configuration YAML file or the kueue-system/kueue-manager-config ConfigMap.
    /// Overrides the ConfigMap found in the input.
    #[arg(long = "kueue-config", value_name = "FILE")]
    pub kueue_config: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Warning,
    Error,
}

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Manifest files or directories (YAML or JSON, as `kubectl get -o yaml|json` prints them).
    #[arg(short = 'f', long = "filename", required_unless_present = "live", conflicts_with = "live", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Check the live cluster (kubeconfig, --context, --as) instead of files.
    #[arg(long)]
    pub live: bool,
    #[command(flatten)]
    pub cluster: crate::source::ClusterArgs,
    /// With --live: seconds to wait for the initial sync before giving up.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub sync_timeout: u64,
    /// With --live: exit as usual even when a resource is forbidden or failing (the
    /// JSON's `sync` still says what is missing); without it such a run exits 3.
    #[arg(long, requires = "live")]
    pub allow_partial: bool,
    /// Output format: a table for people, or the JSON contract of docs/doctor.md.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Exit with code 1 when any finding is at least this severe (for CI pipelines).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// The Kueue API version the cluster serves, for the API-version checks.
    #[arg(long, value_parser = ["v1beta1", "v1beta2"])]
    pub kueue_api: Option<String>,
    /// The instant to check at (RFC 3339); defaults to the current time.
    #[arg(long)]
    pub now: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Only evictions newer than this (e.g. 30m, 24h, 7d; a unit is required).
    #[arg(long, default_value = "24h")]
    pub since: String,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// The history file (default: history.jsonl in the XDG state dir).
    #[arg(long, value_name = "PATH")]
    pub history_file: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Serve a simulated cluster to kubectl and gangplank until interrupted.
    Serve(SimServeArgs),
    /// Write a generated cluster as real manifests (a JSON List or multi-document YAML)
    /// to stdout, e.g. `gangplank sim generate --shape hyperpod --scale 8 -o json > dump.json`.
    Generate(SimGenerateArgs),
}

#[derive(Debug, clap::Args)]
pub struct SimGenerateArgs {
    /// flat (the seed's single ClusterQueue scaled up), hyperpod (cohorts with borrowing
    /// and borrowWithinCohort) or hierarchical (a Cohort tree, three flavors).
    #[arg(long, default_value = "hyperpod", value_parser = ["flat", "hyperpod", "hierarchical"])]
    pub shape: String,
    /// Size: 1 ≈ 800 objects (10 ClusterQueues, 50 nodes, 200 admitted + 500 pending
    /// Workloads); 100 ≈ 78,000 (100 cohorts × 10 ClusterQueues, 5,000 nodes, 20,000 + 50,000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub scale: u32,
    /// json: one `kind: List` (as `kubectl get -o json`); yaml: one document per object.
    #[arg(short = 'o', long, default_value = "json", value_parser = ["json", "yaml"])]
    pub output: String,
    /// Seed of the generator (sizes and priorities of the Workloads).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(Debug, clap::Args)]
pub struct SimServeArgs {
    /// Scenario file or directory (Kubernetes manifests); default: the bundled seed.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Where to write the kubeconfig (context gangplank-sim); default: a file in the temp directory.
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,
    /// How many times faster than the wall clock the scenario's story runs (its `at`
    /// offsets and job durations are divided by it; timestamps stay on the wall clock).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Pods one object may ask for (replicas, parallelism, completions, pod-set counts);
    /// larger objects are refused naming the field.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_pods_per_object: i64,
    /// Pods in the whole simulated cluster; beyond it pod creation is refused.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_pods: usize,
    /// Fault injection: end every watch stream after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub fault_close_watches_every: Option<u64>,
    /// Fault injection: initial rules as JSON (the `/_sim/faults` shape, docs/simulator.md).
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Scenario file or directory (Kubernetes manifests); default: the bundled seed.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Simulated time to run for (e.g. 90m, 6h, 7d; a unit is required).
    #[arg(long, default_value = "6h")]
    pub until: String,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Pods one object may ask for (replicas, parallelism, completions, pod-set counts);
    /// larger objects are refused naming the field.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_pods_per_object: i64,
    /// Pods in the whole simulated cluster; beyond it pod creation is refused.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_pods: usize,
}

#[derive(Debug, clap::Args)]
pub struct ServeSshArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:2222")]
    pub listen: std::net::SocketAddr,
    /// OpenSSH authorized_keys file: the public keys allowed to watch (re-read on change).
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: PathBuf,
    /// Host key (ed25519); generated with mode 0600 on first run. Default: in the XDG state dir.
    #[arg(long, value_name = "PATH")]
    pub host_key: Option<PathBuf>,
    /// Maximum concurrent viewer sessions.
    #[arg(long, default_value_t = 8)]
    pub max_sessions: usize,
    /// End a session after this long without input (e.g. 30m, 2h; a unit is required;
    /// 0 = never, for wall screens).
    #[arg(long, default_value = "30m")]
    pub idle_timeout: String,
    /// Serve the embedded simulator's seed scenario instead of a cluster.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: how many times faster than the wall clock the story runs.
    #[arg(long, default_value_t = 60.0)]
    pub speed: f64,
    #[command(flatten)]
    pub cluster: crate::source::ClusterArgs,
    /// Config file for the viewers' console (theme, keys, default view).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Write diagnostics (including every authentication attempt) to this file
    /// instead of stderr. GANGPLANK_LOG filters them (default: info).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
}
