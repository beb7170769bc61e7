//! Replays the seed tutorial with real kubectl against `gangplank sim serve` (the
//! real binary) on the nodes-only scenario, and watches Kueue's behaviour through
//! `kubectl get workloads`: the boss job preempts the two most recently admitted
//! normal jobs, runs, and when it finishes those two are admitted again.
//!
//! It asserts on kubectl's own table output (server-side printing): `kubectl get wl -A`
//! with QUEUE, RESERVED IN and ADMITTED, the Preempted events in `kubectl get events -A`
//! naming the preemptor, `kubectl describe`, `kubectl wait`, `kubectl explain`, and that
//! no age anywhere reads `<invalid>` (every timestamp is on the wall clock).
//!
//! Timing: `--speed 200` (one story hour = 18 s). The normal jobs run 3 h and the
//! boss 1 h, so the boss finishes long before any normal job would; the test only
//! observes states, each with a deadline (slow enough that the boss still runs while
//! the preemption is inspected, even on a loaded machine).

use crate::support_tools::require_kubectl;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(60);
const SPEED: &str = "200";

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Kubectl {
    kubeconfig: PathBuf,
    home: PathBuf,
    /// Everything kubectl printed, to look for `<invalid>` ages at the end.
    seen: std::cell::RefCell<String>,
}

impl Kubectl {
    fn run(&self, args: &[&str]) -> String {
        let out = self.run_once(args);
        self.seen.borrow_mut().push_str(&out);
        out
    }

    fn run_once(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.home.join("cache"))
            .args(args)
            .env("HOME", &self.home)
            .output()
            .expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn apply(&self, file: &Path) {
        self.run(&["apply", "-f", file.to_str().unwrap()]);
    }

    fn workloads(&self) -> Vec<Value> {
        let v: Value =
            serde_json::from_str(&self.run(&["get", "workloads", "-A", "-o", "json"])).unwrap();
        v["items"].as_array().cloned().unwrap_or_default()
    }

    /// Polls the workloads until `pred` holds (or panics at the deadline).
    fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let end = Instant::now() + DEADLINE;
        loop {
            let wls = self.workloads();
            if pred(&wls) {
                return wls;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting for: {what}\n{wls:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn cond<'a>(o: &'a Value, t: &str) -> Option<(&'a str, &'a str)> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or(""),
                c["reason"].as_str().unwrap_or(""),
            )
        })
}

fn of_job<'a>(wls: &'a [Value], job: &str) -> Option<&'a Value> {
    wls.iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == job)
}

fn is_admitted(wls: &[Value], job: &str) -> bool {
    of_job(wls, job).is_some_and(|w| {
        cond(w, "Admitted").is_some_and(|c| c.0 == "True")
            && cond(w, "Evicted").is_none_or(|c| c.0 != "True")
    })
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn tutorial_replay_with_kubectl() {
    if !require_kubectl("the tutorial replay") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("sim.kubeconfig");
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_gangplank"))
            .args(["sim", "serve", "--scenario"])
            .arg(repo("docs/scenarios/nodes-only.yaml"))
            .arg("--kubeconfig-out")
            .arg(&kubeconfig)
            .args(["--speed", SPEED])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start gangplank sim serve"),
    );
    let end = Instant::now() + DEADLINE;
    while !kubeconfig.exists() {
        assert!(Instant::now() < end, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let k = Kubectl {
        kubeconfig,
        home: dir.path().to_path_buf(),
        seen: Default::default(),
    };
    let nodes = k.run(&["get", "nodes"]);
    assert!(
        nodes
            .lines()
            .any(|l| l.starts_with("p4d-gpu-4") && l.contains(" Ready ")),
        "{nodes}"
    );
    for f in [
        "priorities.yaml",
        "resource-flavor.yaml",
        "cluster-queue.yaml",
        "namespaces.yaml",
        "nlp-local-queue.yaml",
        "cv-local-queue.yaml",
    ] {
        k.apply(&repo(&format!("docs/tutorial/{f}")));
    }
    // The normal jobs one at a time, so that their admissions are ordered in time as
    // in the tutorial (their `sim.gangplank.io/at` annotations are ignored via the API).
    let text = std::fs::read_to_string(repo("docs/tutorial/normal-jobs.yaml")).unwrap();
    let mut jobs = Vec::new();
    for (i, doc) in text.split("\n---").enumerate() {
        let Some(name) = doc
            .lines()
            .skip_while(|l| !l.starts_with("metadata:"))
            .find_map(|l| l.trim().strip_prefix("name: "))
        else {
            continue;
        };
        let name = name.trim().to_string();
        let file = dir.path().join(format!("normal-{i}.yaml"));
        std::fs::write(&file, doc).unwrap();
        k.apply(&file);
        k.wait_for(&format!("{name} admitted"), |w| is_admitted(w, &name));
        jobs.push(name);
    }
    assert_eq!(
        jobs,
        ["bert-pretrain", "resnet-sweep", "gpt-eval", "yolo-train"]
    );
    // kubectl's own table: each workload with its QUEUE, RESERVED IN and ADMITTED True.
    let table = k.run(&["get", "wl", "-A"]);
    let header = table.lines().next().unwrap_or_default();
    for col in [
        "NAMESPACE",
        "NAME",
        "QUEUE",
        "RESERVED IN",
        "ADMITTED",
        "FINISHED",
        "AGE",
    ] {
        assert!(header.contains(col), "{table}");
    }
    for (ns, job, queue) in [
        ("nlp-team", "bert-pretrain", "nlp-team-queue"),
        ("cv-team", "resnet-sweep", "cv-team-queue"),
        ("nlp-team", "gpt-eval", "nlp-team-queue"),
        ("cv-team", "yolo-train", "cv-team-queue"),
    ] {
        let row = wl_row(&table, job);
        assert_eq!(
            row[..5],
            [ns, row[1], queue, "hyperpod-global-queue", "True"],
            "{table}"
        );
        assert!(row[1].starts_with(&format!("pytorchjob-{job}-")), "{table}");
    }
    let cq = k.run(&["get", "cq"]);
    assert!(
        cq.contains("PENDING WORKLOADS")
            && cq.lines().any(|l| l.starts_with("hyperpod-global-queue")),
        "{cq}"
    );
    // The tutorial's ClusterQueue never sets a strategy: the API server defaults it, as
    // Kueue's CRD says, and `-o wide` shows it with the admitted count.
    let wide = k.run(&["get", "cq", "-o", "wide"]);
    let row: Vec<&str> = wide
        .lines()
        .find(|l| l.starts_with("hyperpod-global-queue"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert!(
        wide.contains("STRATEGY") && row.contains(&"BestEffortFIFO") && row.last() == Some(&"4"),
        "{wide}"
    );

    k.apply(&repo("docs/tutorial/boss-job.yaml"));
    let boss = "boss-urgent-llama-finetune";
    let wls = k.wait_for("the boss job admitted", |w| {
        is_admitted(w, boss)
            && of_job(w, boss).is_some_and(|b| cond(b, "Finished").is_none_or(|c| c.0 != "True"))
    });
    for victim in ["gpt-eval", "yolo-train"] {
        let w = of_job(&wls, victim).unwrap();
        assert_eq!(cond(w, "Evicted"), Some(("True", "Preempted")), "{victim}");
        assert_eq!(
            cond(w, "Preempted"),
            Some(("True", "InClusterQueue")),
            "{victim}"
        );
        assert_eq!(cond(w, "Requeued"), Some(("True", "Preempted")), "{victim}");
        assert!(
            w["status"]["admission"].is_null(),
            "{victim} released its quota"
        );
    }
    for kept in ["bert-pretrain", "resnet-sweep"] {
        assert!(is_admitted(&wls, kept), "{kept} keeps running");
    }
    let pods = k.run(&["get", "pods", "-n", "nlp-team", "-o", "wide"]);
    assert!(
        pods.lines()
            .any(|l| l.starts_with("boss-urgent-llama-finetune-master-0")
                && l.contains("1/1")
                && l.contains("Running")
                && l.contains("p4d-gpu-")),
        "{pods}"
    );
    let boss_wl = of_job(&wls, boss).unwrap();
    let boss_name = boss_wl["metadata"]["name"].as_str().unwrap().to_string();
    let boss_uid = boss_wl["metadata"]["uid"].as_str().unwrap().to_string();
    let out = k.run(&[
        "wait",
        "--for=condition=Admitted",
        &format!("workload/{boss_name}"),
        "-n",
        "nlp-team",
        "--timeout=30s",
    ]);
    assert!(out.contains("condition met"), "{out}");
    let table = k.run(&["get", "wl", "-A"]);
    assert_eq!(wl_row(&table, boss)[4], "True", "{table}");
    // Two victims, each with a Preempted event naming the boss's Workload as preemptor.
    let events = k.run(&["get", "events", "-A"]);
    for victim in ["gpt-eval", "yolo-train"] {
        let line = events
            .lines()
            .find(|l| {
                l.contains(" Preempted ") && l.contains(&format!("workload/pytorchjob-{victim}-"))
            })
            .unwrap_or_else(|| panic!("no Preempted event for {victim}:\n{events}"));
        assert!(
            line.contains(&format!(
                "Preempted to accommodate a workload (UID: {boss_uid}"
            )) && line.contains("due to prioritization in the ClusterQueue"),
            "{line}"
        );
    }
    let preempted = k.run(&[
        "get",
        "events",
        "-A",
        "--field-selector",
        "reason=Preempted",
    ]);
    assert_eq!(
        preempted.lines().count(),
        3,
        "a header and two events:\n{preempted}"
    );
    let victim_wl = of_job(&wls, "gpt-eval").unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let described = k.run(&["describe", "workload", &victim_wl, "-n", "nlp-team"]);
    let events_part = described.split("Events:").nth(1).unwrap_or_default();
    for reason in [
        "QuotaReserved",
        "Admitted",
        "Preempted",
        "EvictedDueToPreempted",
    ] {
        assert!(events_part.contains(reason), "{described}");
    }
    let explain = k.run(&["explain", "clusterqueue.spec.preemption.withinClusterQueue"]);
    assert!(
        explain.contains("KIND:       ClusterQueue")
            && explain.contains("withinClusterQueue determines whether a pending Workload"),
        "{explain}"
    );

    k.wait_for("the boss finished and both victims admitted again", |w| {
        of_job(w, boss).is_some_and(|b| cond(b, "Finished").is_some_and(|c| c.0 == "True"))
            && is_admitted(w, "gpt-eval")
            && is_admitted(w, "yolo-train")
    });
    let table = k.run(&["get", "wl", "-A"]);
    assert_eq!(wl_row(&table, boss)[5], "True", "FINISHED:\n{table}");
    k.run(&[
        "get",
        "pods,jobs,pytorchjobs,deployments,nodes,namespaces,cq,lq,events",
        "-A",
        "-o",
        "wide",
    ]);
    let seen = k.seen.borrow();
    assert!(!seen.contains("<invalid>"), "an age in the future:\n{seen}");
    drop(server);
}

/// The cells of the `kubectl get wl -A` row of `job`'s Workload (AGE and empty cells
/// shift nothing before FINISHED: an empty FINISHED is reported as "").
fn wl_row<'a>(table: &'a str, job: &str) -> Vec<&'a str> {
    let header = table.lines().next().unwrap_or_default();
    let line = table
        .lines()
        .find(|l| l.contains(&format!("pytorchjob-{job}-")))
        .unwrap_or_else(|| panic!("no row for {job}:\n{table}"));
    // Columns are aligned: cut each cell at its header's offset.
    let starts: Vec<usize> = [
        "NAMESPACE",
        "NAME ",
        "QUEUE",
        "RESERVED IN",
        "ADMITTED",
        "FINISHED",
        "AGE",
    ]
    .iter()
    .map(|h| header.find(h).unwrap_or(0))
    .collect();
    (0..starts.len())
        .map(|i| {
            let end = starts
                .get(i + 1)
                .copied()
                .unwrap_or(line.len())
                .min(line.len());
            line.get(starts[i].min(line.len())..end)
                .unwrap_or("")
                .trim()
        })
        .collect()
}
