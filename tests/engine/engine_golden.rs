//! Golden outputs: the engine's decisions and its serialized plan must not change when
//! its internals are reworked (performance work). Every case's output is digested
//! (FNV-1a 64 over the exact bytes) and compared with `tests/golden/engine_digests.txt`,
//! recorded from the engine before the rework. The seed story's plan is also kept as
//! readable JSON (`tests/golden/seed_plan.json`).
//!
//! Cases: the manifest fixtures, ~150 generated clusters that exercise hierarchies,
//! lending / borrowing limits, every preemption policy, StrictFIFO, fungibility,
//! partial admission, taints, stopped queues and evicted workloads, and reduced copies
//! of the benchmark's two clusters. Each case digests the plan JSON (pending in every
//! cycle, and only in the last), a simulator run through `schedule_cycle`
//! (`Debug` of every outcome) and `propose_preemption` for some pending workloads.
//!
//! To re-record after an intended behaviour change: `GANGPLANK_BLESS=1 cargo test --test engine engine_golden`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gangplank::engine::testing::*;
use gangplank::engine::{
    self, PlanOptions, PolicyOverride, SchedulerMemory, plan, propose_preemption, schedule_cycle,
};
use gangplank::model::parse::load_paths;
use gangplank::model::synthetic::{SyntheticSpec, generate};
use gangplank::model::{
    BorrowWithinCohortPolicy, ClusterState, Condition, ConditionStatus, FungibilityPolicy,
    FungibilityPreference, LabelSelector, Labels, ReclaimWithinCohort as R, ResourceFlavor,
    StopPolicy, Taint, Toleration, WithinClusterQueue as W,
};

const NOW: i64 = 1_767_312_000_000;

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const RES: [&str; 2] = ["cpu", "nvidia.com/gpu"];
const FLAVORS: [&str; 3] = ["on-demand", "spot", "reserved"];

/// A random cluster: 1–3 cohort trees (sometimes nested, sometimes with a cycle),
/// 2–9 ClusterQueues with one or two resource groups and flavors, admitted and
/// pending workloads of every kind.
fn random_cluster(seed: u64) -> ClusterState {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    for _ in 0..4 {
        r.next();
    }
    let mut b = ClusterBuilder::new();
    for (i, f) in FLAVORS.iter().enumerate() {
        let mut flavor = ResourceFlavor {
            name: f.to_string(),
            node_labels: Labels::from([("tier".to_string(), f.to_string())]),
            ..Default::default()
        };
        if i == 1 && r.chance(40) {
            flavor.node_taints.push(Taint {
                key: "spot".into(),
                value: Some("true".into()),
                effect: "NoSchedule".into(),
            });
        }
        b = b.flavor_obj(flavor);
    }
    let ncohorts = 1 + r.below(3) as usize;
    for c in 0..ncohorts {
        let parent = match (c, r.below(4)) {
            (0, _) => None,
            (_, 0) => Some("co0".to_string()),
            _ => None,
        };
        let groups = if r.chance(30) {
            vec![rg(
                &["cpu"],
                vec![fq("on-demand", vec![rq("cpu", &r.below(6).to_string())])],
            )]
        } else {
            Vec::new()
        };
        b = b.cohort(&format!("co{c}"), parent.as_deref(), groups);
    }
    if seed % 29 == 7 {
        // a cohort cycle: its ClusterQueues admit nothing
        b = b.cohort("loop-a", Some("loop-b"), Vec::new()).cohort(
            "loop-b",
            Some("loop-a"),
            Vec::new(),
        );
    }
    let ncq = 2 + r.below(8) as usize;
    for i in 0..ncq {
        let name = format!("cq{i}");
        let mut cq = CqBuilder::new(&name);
        let two_groups = r.chance(25);
        let flavors: Vec<&str> = if r.chance(50) {
            vec![FLAVORS[0], FLAVORS[1]]
        } else if r.chance(30) {
            vec![FLAVORS[1], FLAVORS[0], FLAVORS[2]]
        } else {
            vec![FLAVORS[r.below(3) as usize]]
        };
        let quota = |r: &mut Rng, res: &str, cohort: bool| {
            let n = r.below(10).to_string();
            let bl = (cohort && r.chance(40)).then(|| r.below(6).to_string());
            let ll = (cohort && r.chance(30)).then(|| r.below(5).to_string());
            rq_limits(res, &n, bl.as_deref(), ll.as_deref())
        };
        let in_cohort = r.chance(80);
        if two_groups {
            for res in RES {
                let fqs = flavors
                    .iter()
                    .map(|f| fq(f, vec![quota(&mut r, res, in_cohort)]))
                    .collect();
                cq = cq.group(rg(&[res], fqs));
            }
        } else {
            let fqs = flavors
                .iter()
                .map(|f| {
                    fq(
                        f,
                        RES.iter()
                            .map(|res| quota(&mut r, res, in_cohort))
                            .collect(),
                    )
                })
                .collect();
            cq = cq.group(rg(&RES, fqs));
        }
        if in_cohort {
            let co = if seed % 29 == 7 && i == 0 {
                "loop-a".to_string()
            } else {
                format!("co{}", r.below(ncohorts as u64))
            };
            cq = cq.cohort(&co);
        }
        let within =
            [W::Never, W::LowerPriority, W::LowerOrNewerEqualPriority][r.below(3) as usize];
        let reclaim = [R::Never, R::LowerPriority, R::Any][r.below(3) as usize];
        cq = cq.preemption(within, reclaim);
        if r.chance(30) {
            let t = r.chance(50).then(|| r.below(4) as i32 - 1);
            cq = cq.borrow_within_cohort(BorrowWithinCohortPolicy::LowerPriority, t);
        }
        if r.chance(20) {
            cq = cq.strict_fifo();
        }
        if r.chance(30) {
            let p = |r: &mut Rng| {
                if r.chance(50) {
                    FungibilityPolicy::TryNextFlavor
                } else {
                    FungibilityPolicy::MayStopSearch
                }
            };
            let pref = match r.below(3) {
                0 => None,
                1 => Some(FungibilityPreference::BorrowingOverPreemption),
                _ => Some(FungibilityPreference::PreemptionOverBorrowing),
            };
            let (pb, pp) = (p(&mut r), p(&mut r));
            cq = cq.fungibility(pb, pp, pref);
        }
        match r.below(25) {
            0 => cq = cq.stop(StopPolicy::Hold),
            1 => cq = cq.stop(StopPolicy::HoldAndDrain),
            2 => cq = cq.namespace_selector(None),
            3 => {
                cq = cq.namespace_selector(Some(LabelSelector {
                    match_labels: Labels::from([("team".to_string(), "a".to_string())]),
                    ..Default::default()
                }))
            }
            _ => {}
        }
        b = b.cq(cq);
        for ns in ["ns-a", "ns-b"] {
            b = b.lq(ns, &format!("lq{i}"), &name);
        }
    }
    b = b.namespace("ns-a", &[("team", "a")]);
    b = b.lq("ns-a", "dangling", "no-such-cq");
    let nwl = 5 + r.below(40) as usize;
    for i in 0..nwl {
        let ns = if r.chance(70) { "ns-a" } else { "ns-b" };
        let cq = r.below(ncq as u64) as usize;
        let mut w = WlBuilder::new(ns, &format!("w{i:02}"))
            .priority(r.below(5) as i32 - 2)
            .created(1000 + r.below(50) as i64 * 10);
        if r.chance(10) {
            // uid collisions exercise the key tie-break
            w = w.uid("same-uid");
        }
        let nps = 1 + usize::from(r.chance(20));
        for p in 0..nps {
            let count = 1 + r.below(3) as i32;
            let mut reqs = vec![("cpu", (1 + r.below(4)).to_string())];
            if r.chance(40) {
                reqs.push(("nvidia.com/gpu", r.below(3).to_string()));
            }
            if r.chance(3) {
                reqs.push(("memory", "1".to_string()));
            }
            let reqs: Vec<(&str, &str)> = reqs.iter().map(|(a, q)| (*a, q.as_str())).collect();
            w = w.pod_set(["main", "worker"][p], count, &reqs);
            if count > 1 && r.chance(25) {
                let m = 1 + r.below(count as u64) as i32;
                w = w.with_last_pod_set(|ps| ps.min_count = Some(m));
            }
            if r.chance(15) {
                w = w.with_last_pod_set(|ps| {
                    ps.tolerations.push(Toleration {
                        key: Some("spot".into()),
                        operator: Some("Exists".into()),
                        ..Default::default()
                    })
                });
            }
            if r.chance(10) {
                let f = FLAVORS[r.below(3) as usize].to_string();
                w = w.with_last_pod_set(|ps| {
                    ps.node_selector.insert("tier".into(), f);
                });
            }
        }
        if r.chance(45) {
            let fl = FLAVORS[r.below(3) as usize];
            let at = 500 + r.below(40) as i64 * 10;
            w = w
                .queue(&format!("lq{cq}"))
                .admitted(&format!("cq{cq}"), fl, at);
            match r.below(20) {
                0 => {
                    w = w.condition("Evicted", ConditionStatus::True, "Preempted", at + 5);
                }
                1 => w = w.inactive(),
                2 => {
                    w.0.reclaimable_pods.insert("main".into(), 1);
                }
                3 => {
                    w = w.condition("Finished", ConditionStatus::True, "Succeeded", at + 5);
                }
                _ => {}
            }
        } else {
            match r.below(30) {
                0 => {}
                1 => w = w.queue("no-such-lq"),
                2 => w = w.queue("dangling"),
                3 => w = w.queue(&format!("lq{cq}")).inactive(),
                4 => {
                    w = w.queue(&format!("lq{cq}"));
                    w.0.priority_error = Some("priorityClass \"x\" not found".into());
                }
                5 => {
                    w = w.queue(&format!("lq{cq}")).condition(
                        "Evicted",
                        ConditionStatus::True,
                        "PodsReadyTimeout",
                        2000,
                    )
                }
                _ => w = w.queue(&format!("lq{cq}")),
            }
        }
        b = b.wl(w);
    }
    if r.chance(10) {
        let lq =
            b.0.local_queues
                .get_mut(&("ns-b".to_string(), "lq0".to_string()));
        if let Some(lq) = lq {
            lq.stop_policy = StopPolicy::Hold;
        }
    }
    b.build()
}

fn opts(every: bool, max_cycles: usize) -> PlanOptions {
    PlanOptions {
        now: NOW,
        max_cycles,
        pending_in_every_cycle: every,
        ..PlanOptions::default()
    }
}

/// Plays Kueue through the stepping API (admissions written, victims released at
/// once, evicted workloads' admissions cleared) and renders every outcome.
fn simulate(state: &ClusterState, steps: usize) -> String {
    let mut state = state.clone();
    let mut memory = SchedulerMemory::default();
    let mut out = String::new();
    for step in 0..steps {
        let t = NOW + step as i64 * 1000;
        let o = schedule_cycle(&state, &memory, &opts(true, 100));
        writeln!(out, "{o:?}").unwrap();
        memory = o.memory.clone();
        if o.admitted.is_empty() && o.preempted.is_empty() {
            break;
        }
        let key = |k: &str| {
            let (n, w) = k.split_once('/').unwrap();
            (n.to_string(), w.to_string())
        };
        for a in &o.admitted {
            let wl = std::sync::Arc::make_mut(state.workloads.get_mut(&key(&a.workload)).unwrap());
            wl.admission = Some(a.admission.clone());
            wl.conditions.retain(|c| c.type_ != "QuotaReserved");
            wl.conditions.push(Condition {
                type_: "QuotaReserved".into(),
                status: ConditionStatus::True,
                reason: "QuotaReserved".into(),
                message: a.message.clone(),
                last_transition_time: Some(t),
            });
            memory.notify_quota_change(&state, &a.cluster_queue);
        }
        for p in &o.preempted {
            let wl = std::sync::Arc::make_mut(state.workloads.get_mut(&key(&p.workload)).unwrap());
            wl.admission = None;
            wl.conditions.retain(|c| c.type_ != "QuotaReserved");
            memory.notify_quota_change(&state, &p.cluster_queue);
        }
    }
    out
}

fn proposals(state: &ClusterState) -> String {
    let overrides = [
        PolicyOverride::default(),
        PolicyOverride {
            within_cluster_queue: Some(W::LowerOrNewerEqualPriority),
            reclaim_within_cohort: Some(R::Any),
            borrow_within_cohort: None,
        },
    ];
    let mut out = String::new();
    for (k, _) in state
        .workloads
        .iter()
        .filter(|(_, w)| w.admission.is_none())
        .take(6)
    {
        for o in &overrides {
            let key = format!("{}/{}", k.0, k.1);
            writeln!(out, "{key}: {:?}", propose_preemption(state, &key, o)).unwrap();
        }
    }
    out
}

/// Every digested output of one case: (name, bytes).
fn outputs(name: &str, state: &ClusterState, sim_steps: usize) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    let every = serde_json::to_vec(&plan(state, &opts(true, 100))).unwrap();
    v.push((format!("{name}/plan"), every));
    let last = serde_json::to_vec(&plan(state, &opts(false, 7))).unwrap();
    v.push((format!("{name}/plan-last-7"), last));
    if sim_steps > 0 {
        v.push((
            format!("{name}/simulate"),
            simulate(state, sim_steps).into_bytes(),
        ));
        v.push((format!("{name}/propose"), proposals(state).into_bytes()));
    }
    v
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn cases() -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    let manifests = fixture_dir().join("fixtures/manifests");
    for dir in ["seed", "seed-gpu", "v1beta2", "dump"] {
        let state = load_paths(&[manifests.join(dir)]).expect("fixture loads");
        all.extend(outputs(&format!("manifests-{dir}"), &state, 4));
    }
    for seed in 0..150 {
        all.extend(outputs(
            &format!("random-{seed:03}"),
            &random_cluster(seed),
            6,
        ));
    }
    let synthetic = generate(&SyntheticSpec {
        cohorts: 3,
        nodes: 150,
        admitted_workloads: 600,
        pending_workloads: 1_500,
        ..SyntheticSpec::large()
    });
    all.extend(outputs("synthetic-small", &synthetic, 2));
    all.extend(outputs("preemption-heavy-small", &preemption_heavy(2), 2));
    all
}

#[test]
fn plan_and_decisions_match_the_recorded_digests() {
    let path = fixture_dir().join("golden/engine_digests.txt");
    let mut current = String::new();
    for (name, bytes) in cases() {
        writeln!(current, "{name} {:016x} {}", fnv(&bytes), bytes.len()).unwrap();
    }
    if std::env::var_os("GANGPLANK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).expect("recorded digests");
    let differ: Vec<&str> = current
        .lines()
        .zip(recorded.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert!(
        differ.is_empty() && current.lines().count() == recorded.lines().count(),
        "{} outputs differ from the recorded ones, first: {:?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
}

#[test]
fn seed_story_plan_json_is_unchanged() {
    let path = fixture_dir().join("golden/seed_plan.json");
    let state = load_paths(&[fixture_dir().join("fixtures/manifests/seed")]).expect("loads");
    let json = serde_json::to_string_pretty(&engine::plan(&state, &opts(true, 100))).unwrap();
    if std::env::var_os("GANGPLANK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{json}\n")).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).expect("recorded plan");
    assert_eq!(json, recorded.trim_end_matches('\n'));
}
