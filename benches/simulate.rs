//! Simulator benchmark: 10,000 jobs over 7 simulated days on 500 GPU nodes (four
//! cohorts × three ClusterQueues, two GPU flavors, three priority classes, gangs of
//! 1–4 pods of 1–8 GPUs, runs of 10 minutes to 12 hours, about half the GPUs busy), generated in memory and run
//! headless on a `SimCluster`. The baseline, measured in the same run, is loading the
//! same objects as a scenario (parse + check every object) — the least a simulator
//! must do before simulating anything. Goal: simulation ≤ 10 s.
//!
//! Run: `cargo bench --bench simulate` (add `-- --quick` for 1,000 jobs on 50 nodes).

use std::time::Instant;

use gangplank::sim::{Scenario, SimCluster, SimOptions};
use serde_json::{Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

fn generate(jobs: usize, nodes: usize) -> Vec<Value> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let a100_nodes = nodes * 3 / 5;
    for i in 0..nodes {
        let (pool, ty) = if i < a100_nodes {
            ("a100", "p4d.24xlarge")
        } else {
            ("h100", "p5.48xlarge")
        };
        out.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("{pool}-{i:04}"), "labels": {"node.kubernetes.io/instance-type": ty}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "95", "memory": "1100Gi", "nvidia.com/gpu": "8", "pods": "110"}},
        }));
    }
    for (flavor, ty) in [("a100", "p4d.24xlarge"), ("h100", "p5.48xlarge")] {
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
            "spec": {"nodeLabels": {"node.kubernetes.io/instance-type": ty},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
        }));
    }
    for (name, value) in [("low", 100), ("mid", 500), ("high", 1000)] {
        out.push(
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": name}, "value": value}),
        );
    }
    let cqs = 12;
    let a100_quota = (a100_nodes * 8 / cqs) as i64;
    let h100_quota = ((nodes - a100_nodes) * 8 / cqs) as i64;
    for c in 0..cqs {
        let ns = format!("team-{c:02}");
        out.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": format!("{ns}-cq")},
            "spec": {
                "cohortName": format!("cohort-{}", c / 3),
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
                "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                    {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": a100_quota}]},
                    {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": h100_quota}]},
                ]}],
            },
        }));
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "queue", "namespace": ns},
            "spec": {"clusterQueue": format!("{ns}-cq")},
        }));
    }
    let week_s = 7 * 86_400u64;
    for j in 0..jobs {
        let at = j as u64 * week_s / jobs as u64 + rng.below(60);
        let team = rng.below(cqs as u64);
        let pods = rng.pick(&[1, 1, 1, 2, 2, 4]);
        let gpus = rng.pick(&[1, 2, 4, 8, 8]);
        let minutes = rng.pick(&[10, 30, 60, 120, 240, 480, 720]);
        let class = rng.pick(&["low", "mid", "mid", "high"]);
        out.push(json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {
                "name": format!("job-{j:05}"), "namespace": format!("team-{team:02}"),
                "labels": {"kueue.x-k8s.io/queue-name": "queue", "kueue.x-k8s.io/priority-class": class},
                "annotations": {"sim.gangplank.io/at": format!("{at}s"), "sim.gangplank.io/duration": format!("{minutes}m")},
            },
            "spec": {"parallelism": pods, "completions": pods, "suspend": true, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "train", "image": "train", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
            }}},
        }));
    }
    out
}

/// CPU seconds this process has used (user + system), from /proc on Linux: on a
/// shared machine wall time also counts waiting for a core.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (jobs, nodes) = if quick { (1_000, 50) } else { (10_000, 500) };
    let values = generate(jobs, nodes);
    let objects = values.len();

    let t = Instant::now();
    let scenario = Scenario::from_values("generated", values).expect("generated scenario is valid");
    let baseline = t.elapsed();

    let t = Instant::now();
    let cpu0 = cpu_seconds();
    let options = SimOptions::default();
    let end = options.start_ms + 7 * 86_400_000;
    let mut cluster = SimCluster::from_scenario(&scenario, options);
    cluster.advance_to(end);
    let sim = t.elapsed();
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);

    let counters = cluster.counters();
    let tl = cluster.timeline();
    let count = |k: &str| tl.iter().filter(|e| e.event == k).count();
    println!("simulate: {jobs} jobs, {nodes} nodes, {objects} objects, 7 simulated days");
    println!(
        "  baseline (load + check the scenario): {:>9.3} s",
        baseline.as_secs_f64()
    );
    println!(
        "  simulation (7 days, headless):        {:>9.3} s wall, {} CPU  (goal ≤ 10 s)",
        sim.as_secs_f64(),
        cpu.map_or("?".to_string(), |c| format!("{c:.2} s"))
    );
    println!(
        "  scheduled events {}  store events {}  cycles {}  writes {}",
        counters.scheduled_events, counters.store_events, counters.cycles, counters.writes
    );
    println!(
        "  admitted {}  preempted {}  finished {}  warnings {}",
        count("admitted"),
        count("preempted"),
        count("finished"),
        cluster.warnings().len()
    );
    let s = cluster.summary();
    for g in &s.cluster_queues[..s.cluster_queues.len().min(3)] {
        println!(
            "  {}: utilisation {:.1}%  wait p50 {:?}s p95 {:?}s  preemptions {}",
            g.name,
            g.gpu_utilisation.unwrap_or(0.0) * 100.0,
            g.wait_p50_seconds,
            g.wait_p95_seconds,
            g.preemptions
        );
    }
}
