//! Property tests: quota is never exceeded, policies protect who they should, and the
//! result does not depend on input order. The cluster is driven through the stepping
//! API like the simulator would: admissions are written, victims release at once.

use std::collections::BTreeMap;

use gangplank::engine::testing::*;
use gangplank::engine::{PlanOptions, SchedulerMemory, plan, schedule_cycle};
use gangplank::model::{
    ClusterState, Condition, ConditionStatus, Loader, ReclaimWithinCohort as R,
    WithinClusterQueue as W,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct CqSpec {
    cohort: Option<u8>,
    nominal: u8,
    borrowing: Option<u8>,
    lending: Option<u8>,
    within: u8,
    reclaim: u8,
}

#[derive(Clone, Debug)]
struct WlSpec {
    cq: u8,
    prio: i8,
    cpu: u8,
    count: u8,
    late: bool,
}

fn cq_strategy() -> impl Strategy<Value = CqSpec> {
    (
        prop::option::of(0u8..2),
        0u8..8,
        prop::option::of(0u8..6),
        prop::option::of(0u8..6),
        0u8..3,
        0u8..3,
    )
        .prop_map(
            |(cohort, nominal, borrowing, lending, within, reclaim)| CqSpec {
                cohort,
                nominal,
                borrowing: borrowing.filter(|_| cohort.is_some()),
                lending: lending.filter(|_| cohort.is_some()).map(|l| l.min(nominal)),
                within,
                reclaim,
            },
        )
}

fn wl_strategy(ncq: usize) -> impl Strategy<Value = WlSpec> {
    (0..ncq as u8, -2i8..3, 1u8..4, 1u8..3, any::<bool>()).prop_map(
        |(cq, prio, cpu, count, late)| WlSpec {
            cq,
            prio,
            cpu,
            count,
            late,
        },
    )
}

fn within(v: u8) -> W {
    [W::Never, W::LowerPriority, W::LowerOrNewerEqualPriority][v as usize]
}
fn reclaim(v: u8) -> R {
    [R::Never, R::LowerPriority, R::Any][v as usize]
}

fn build(cqs: &[CqSpec], wls: &[WlSpec], late: bool) -> ClusterState {
    let mut b = ClusterBuilder::new().flavor("default");
    for (i, c) in cqs.iter().enumerate() {
        let n = c.nominal.to_string();
        let bl = c.borrowing.map(|x| x.to_string());
        let ll = c.lending.map(|x| x.to_string());
        let mut cq = CqBuilder::new(&format!("cq{i}"))
            .group(rg(
                &["cpu"],
                vec![fq(
                    "default",
                    vec![rq_limits("cpu", &n, bl.as_deref(), ll.as_deref())],
                )],
            ))
            .preemption(within(c.within), reclaim(c.reclaim));
        if let Some(co) = c.cohort {
            cq = cq.cohort(&format!("co{co}"));
        }
        b = b.cq(cq).lq("ns", &format!("lq{i}"), &format!("cq{i}"));
    }
    for (i, w) in wls.iter().enumerate() {
        if w.late && !late {
            continue;
        }
        b = b.wl(WlBuilder::new("ns", &format!("w{i:02}"))
            .queue(&format!("lq{}", w.cq))
            .priority(i32::from(w.prio))
            .created(i as i64 * 10)
            .pod_set("main", i32::from(w.count), &[("cpu", &w.cpu.to_string())]));
    }
    b.build()
}

/// The cluster of `build(cqs, wls, true)` as manifest documents (YAML text), one object
/// each, as a user's files would hold them.
fn manifests(cqs: &[CqSpec], wls: &[WlSpec]) -> Vec<String> {
    let mut docs = vec![
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n".to_string(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n"
            .to_string(),
    ];
    for (i, c) in cqs.iter().enumerate() {
        let mut quota = format!("{{name: cpu, nominalQuota: \"{}\"", c.nominal);
        if let Some(b) = c.borrowing {
            quota.push_str(&format!(", borrowingLimit: \"{b}\""));
        }
        if let Some(l) = c.lending {
            quota.push_str(&format!(", lendingLimit: \"{l}\""));
        }
        quota.push('}');
        let cohort = c
            .cohort
            .map_or(String::new(), |co| format!("  cohortName: co{co}\n"));
        let within = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"][c.within as usize];
        let reclaim = ["Never", "LowerPriority", "Any"][c.reclaim as usize];
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq{i}}}\nspec:\n\
             {cohort}  namespaceSelector: {{}}\n  preemption: {{withinClusterQueue: {within}, reclaimWithinCohort: {reclaim}}}\n\
               resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: default, resources: [{quota}]}}]\n"
        ));
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq{i}, namespace: ns}}\nspec: {{clusterQueue: cq{i}}}\n"
        ));
    }
    for (i, w) in wls.iter().enumerate() {
        // An explicit creation time: without one the parser numbers objects in document
        // order (its documented fallback), which is exactly what must not matter here.
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i:02}, namespace: ns, \
             creationTimestamp: \"2026-01-01T00:00:{i:02}Z\"}}\nspec:\n  queueName: lq{}\n  priority: {}\n\
               podSets:\n  - name: main\n    count: {}\n    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{}\"}}}}}}]}}}}\n",
            w.cq, w.prio, w.count, w.cpu
        ));
    }
    docs
}

/// Parses documents as one multi-document YAML file.
fn parse_documents(docs: &[String]) -> ClusterState {
    let mut loader = Loader::new();
    loader
        .add_str("shuffled.yaml", &docs.join("---\n"))
        .unwrap_or_else(|e| panic!("{e}\n{}", docs.join("---\n")));
    loader.finish()
}

/// (victim, victim cq, victim priority, preemptor, preemptor cq, preemptor priority, reason)
type Event = (String, String, i32, String, String, i32, String);

/// Plays Kueue through the stepping API until nothing changes.
fn drive(state: &mut ClusterState, events: &mut Vec<Event>) {
    let mut memory = SchedulerMemory::default();
    let mut t = 1_000_000;
    for _ in 0..60 {
        let out = schedule_cycle(
            state,
            &memory,
            &PlanOptions {
                now: t,
                ..Default::default()
            },
        );
        memory = out.memory.clone();
        if out.admitted.is_empty() && out.preempted.is_empty() {
            break;
        }
        for a in &out.admitted {
            let key = a
                .workload
                .split_once('/')
                .map(|(n, w)| (n.to_string(), w.to_string()))
                .unwrap();
            let wl = std::sync::Arc::make_mut(state.workloads.get_mut(&key).unwrap());
            wl.admission = Some(a.admission.clone());
            wl.conditions.push(Condition {
                type_: "QuotaReserved".into(),
                status: ConditionStatus::True,
                reason: "QuotaReserved".into(),
                message: a.message.clone(),
                last_transition_time: Some(t),
            });
        }
        for p in &out.preempted {
            let get = |k: &str| {
                let key = k
                    .split_once('/')
                    .map(|(n, w)| (n.to_string(), w.to_string()))
                    .unwrap();
                let w = &state.workloads[&key];
                (
                    w.priority,
                    w.admission
                        .as_ref()
                        .map(|a| a.cluster_queue.clone())
                        .unwrap_or_default(),
                    key,
                )
            };
            let (vp, vcq, vkey) = get(&p.workload);
            let (pp, _, pkey) = get(&p.by);
            let pcq = state.local_queues[&(
                pkey.0.clone(),
                state.workloads[&pkey].queue_name.clone().unwrap(),
            )]
                .cluster_queue
                .clone();
            events.push((
                p.workload.clone(),
                vcq.clone(),
                vp,
                p.by.clone(),
                pcq,
                pp,
                p.reason.as_str().to_string(),
            ));
            let wl = std::sync::Arc::make_mut(state.workloads.get_mut(&vkey).unwrap());
            wl.admission = None;
            wl.conditions.retain(|c| c.type_ != "QuotaReserved");
            memory.notify_quota_change(state, &vcq);
        }
        t += 1000;
    }
}

/// Independent quota check on the written admissions.
fn check_quota(state: &ClusterState, cqs: &[CqSpec]) -> Result<(), TestCaseError> {
    let mut used: BTreeMap<String, i128> = BTreeMap::new();
    for w in state.workloads.values() {
        if let Some(a) = &w.admission {
            for psa in &a.pod_set_assignments {
                *used.entry(a.cluster_queue.clone()).or_default() +=
                    psa.resource_usage["cpu"].milli();
            }
        }
    }
    let mut borrowed_per_cohort: BTreeMap<u8, i128> = BTreeMap::new();
    let mut lendable_per_cohort: BTreeMap<u8, i128> = BTreeMap::new();
    for (i, c) in cqs.iter().enumerate() {
        let u = *used.get(&format!("cq{i}")).unwrap_or(&0);
        let nominal = i128::from(c.nominal) * 1000;
        match c.cohort {
            None => prop_assert!(u <= nominal, "cq{i} uses {u} > nominal {nominal}"),
            Some(co) => {
                if let Some(bl) = c.borrowing {
                    prop_assert!(
                        u <= nominal + i128::from(bl) * 1000,
                        "cq{i} beyond borrowing limit"
                    );
                }
                let guaranteed = c.lending.map_or(0, |l| nominal - i128::from(l) * 1000);
                *borrowed_per_cohort.entry(co).or_default() += (u - guaranteed).max(0);
                *lendable_per_cohort.entry(co).or_default() += nominal - guaranteed;
            }
        }
    }
    for (co, b) in &borrowed_per_cohort {
        prop_assert!(
            *b <= lendable_per_cohort[co],
            "cohort co{co} over its quota: {b} > {}",
            lendable_per_cohort[co]
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn never_admits_beyond_quota_and_policies_protect(
        cqs in prop::collection::vec(cq_strategy(), 1..5),
        raw in prop::collection::vec(wl_strategy(4), 0..24),
    ) {
        let wls: Vec<WlSpec> = raw.into_iter().map(|mut w| { w.cq %= cqs.len() as u8; w }).collect();
        // first the early workloads run; then the late ones arrive
        let mut state = build(&cqs, &wls, false);
        let mut events = Vec::new();
        drive(&mut state, &mut events);
        check_quota(&state, &cqs)?;
        let late = build(&cqs, &wls, true);
        for (k, w) in late.workloads {
            state.workloads.entry(k).or_insert(w);
        }
        drive(&mut state, &mut events);
        check_quota(&state, &cqs)?;
        for (victim, vcq, vp, by, pcq, pp, reason) in &events {
            let idx: usize = pcq[2..].parse().unwrap();
            let spec = &cqs[idx];
            if vcq == pcq {
                prop_assert_eq!(reason.as_str(), "InClusterQueue");
                match within(spec.within) {
                    W::Never => prop_assert!(false, "{victim} preempted in {vcq} under withinClusterQueue: Never by {by}"),
                    W::LowerPriority => prop_assert!(vp < pp, "{victim} ({vp}) preempted by {by} ({pp})"),
                    W::LowerOrNewerEqualPriority => prop_assert!(vp <= pp),
                }
            } else {
                prop_assert!(reason.starts_with("InCohort"));
                match reclaim(spec.reclaim) {
                    R::Never => prop_assert!(false, "{victim} reclaimed under reclaimWithinCohort: Never"),
                    R::LowerPriority => prop_assert!(vp < pp),
                    R::Any => {}
                }
            }
        }
    }

    #[test]
    fn same_output_under_any_input_order(
        cqs in prop::collection::vec(cq_strategy(), 1..4),
        raw in prop::collection::vec(wl_strategy(3), 0..12),
        seed in any::<u64>(),
    ) {
        let wls: Vec<WlSpec> = raw.into_iter().map(|mut w| { w.cq %= cqs.len() as u8; w }).collect();
        // The same manifests as text, parsed in document order and in a shuffled order.
        let docs = manifests(&cqs, &wls);
        let mut shuffled = docs.clone();
        let mut s = seed | 1;
        for i in (1..shuffled.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            shuffled.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let a = parse_documents(&docs);
        let b = parse_documents(&shuffled);
        prop_assert_eq!(a.workloads.len(), wls.len());
        let o = PlanOptions { now: 5, ..Default::default() };
        let ja = serde_json::to_string(&plan(&a, &o)).unwrap();
        let jb = serde_json::to_string(&plan(&b, &o)).unwrap();
        prop_assert_eq!(ja, jb);
    }
}
