//! Re-planning on a separate task and drift between Kueue and the shadow engine.

use crate::source_support;

use std::time::Duration;

use gangplank::engine::{self, PlanOptions};
use gangplank::model::ClusterState;
use gangplank::model::parse_str;
use gangplank::source::SourceOptions;
use gangplank::source::drift::{DriftKind, DriftTracker};
use gangplank::source::replan::{self, ReplanOptions};
use serde_json::{Value, json};
use source_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replans_on_change_and_reports_quota_drift() {
    let env = env().await;
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut plans, _task) = replan::spawn(h.snapshots(), ReplanOptions::default());
    let first = tokio::time::timeout(DEADLINE, plans.wait_for(|p| p.is_some()))
        .await
        .expect("a first plan")
        .expect("alive")
        .clone()
        .expect("plan");
    assert!(
        first
            .drift
            .iter()
            .all(|d| d.kind != DriftKind::QuotaMismatch)
    );
    // Kueue reports 6 GPUs reserved; the admitted workloads hold 4.
    env.store
        .modify(
            &kueue("clusterqueues"),
            None,
            "gpu-cq",
            gangplank::sim::UpdateScope::All,
            gangplank::sim::WriteOptions::default(),
            |o: &mut Value| {
                o["status"] = json!({"flavorsReservation": [{"name": "a100", "resources": [
                    {"name": "nvidia.com/gpu", "total": "6", "borrowed": "0"}]}]});
                Ok(())
            },
        )
        .expect("modify");
    let p = tokio::time::timeout(
        DEADLINE,
        plans.wait_for(|p| {
            p.as_ref()
                .is_some_and(|p| p.drift.iter().any(|d| d.kind == DriftKind::QuotaMismatch))
        }),
    )
    .await
    .expect("a plan with drift")
    .expect("alive")
    .clone()
    .expect("plan");
    assert!(p.generation > first.generation);
    let json = p.to_json(None);
    let d = &json["drift"][0];
    assert_eq!(d["kind"], "quotaMismatch");
    assert_eq!(d["subject"], "gpu-cq");
    assert_eq!(d["kueue"]["reserved"]["a100/nvidia.com/gpu"], "6");
    assert_eq!(d["engine"]["used"]["a100/nvidia.com/gpu"], "4");
    assert!(p.plan_time < Duration::from_secs(10));
}

fn state(yaml: &str) -> ClusterState {
    let mut st = ClusterState::default();
    parse_str("test", yaml, &mut st).expect("parse");
    st
}

const BASE: &str = "
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: big, namespace: ns, uid: u-big, creationTimestamp: '2026-01-01T00:00:00Z'}
spec:
  queueName: lq
  priority: 1
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: '8'}}}]}}}]
";

/// The `status` of a Workload holding `gpus` GPUs of flavor `f` in ClusterQueue `cq`.
fn admitted_status(gpus: &str) -> String {
    format!(
        "status:
  admission:
    clusterQueue: cq
    podSetAssignments: [{{name: main, flavors: {{nvidia.com/gpu: f}}, resourceUsage: {{nvidia.com/gpu: '{gpus}'}}, count: 1}}]
  conditions:
  - {{type: QuotaReserved, status: 'True', reason: QuotaReserved, message: '', lastTransitionTime: '2026-01-01T00:00:00Z'}}
  - {{type: Admitted, status: 'True', reason: Admitted, message: '', lastTransitionTime: '2026-01-01T00:00:00Z'}}
"
    )
}

/// `BASE` with "big" holding its 8 GPUs in Kueue.
fn admitted_state() -> ClusterState {
    state(&format!("{BASE}{}", admitted_status("8")))
}

#[test]
fn a_workload_admitted_again_and_again_is_one_drift_listed_from_its_latest_time() {
    let opts = PlanOptions {
        now: 1_000,
        ..PlanOptions::default()
    };
    let (pending, admitted) = (state(BASE), admitted_state());
    let (pp, pa) = (
        engine::plan(&pending, &opts),
        engine::plan(&admitted, &opts),
    );
    let mut t = DriftTracker::with_grace_ms(0);
    t.sticky_ms = 10_000;
    let listed = |d: &[gangplank::source::drift::Drift]| {
        d.iter()
            .filter(|d| d.kind == DriftKind::AdmittedUnexpectedly && d.subject == "ns/big")
            .count()
    };
    // Kueue admits "big" (the engine expected it to wait), evicts it, admits it again.
    t.update(&pending, &pp, 1_000);
    assert_eq!(listed(&t.update(&admitted, &pa, 2_000)), 1);
    t.update(&pending, &pp, 3_000);
    assert_eq!(listed(&t.update(&admitted, &pa, 9_000)), 1);
    assert_eq!(
        t.remembered(),
        1,
        "one entry per kind and subject, not one per time"
    );
    // 10.5 s after the first admission, 3.5 s after the second: still listed, once.
    assert_eq!(listed(&t.update(&admitted, &pa, 12_500)), 1);
    // 10.5 s after the second: gone.
    assert_eq!(listed(&t.update(&admitted, &pa, 19_500)), 0);
    assert_eq!(t.remembered(), 0);
}

#[test]
fn admitted_unexpectedly_and_admissible_but_pending() {
    let pending = state(BASE);
    let opts = PlanOptions {
        now: 1_000,
        ..PlanOptions::default()
    };
    let mut t = DriftTracker::with_grace_ms(0);
    // 8 GPUs never fit in 4: the engine expects "big" to wait.
    let d = t.update(&pending, &engine::plan(&pending, &opts), 1_000);
    assert!(
        d.iter().all(|d| d.kind != DriftKind::AdmittedUnexpectedly),
        "{d:?}"
    );
    // ... but Kueue admitted it.
    let admitted = admitted_state();
    let d = t.update(&admitted, &engine::plan(&admitted, &opts), 2_000);
    let hit = d
        .iter()
        .find(|d| d.kind == DriftKind::AdmittedUnexpectedly)
        .expect("drift");
    assert_eq!(hit.subject, "ns/big");
    assert_eq!(hit.kueue["clusterQueue"], "cq");

    // A small workload the engine admits at once, still pending in Kueue after the grace.
    let small = state(&BASE.replace("'8'", "'1'"));
    let mut t = DriftTracker::with_grace_ms(500);
    let p = engine::plan(&small, &opts);
    assert!(
        t.update(&small, &p, 1_000)
            .iter()
            .all(|d| d.kind != DriftKind::AdmissibleButPending)
    );
    let d = t.update(&small, &p, 2_000);
    assert!(
        d.iter()
            .any(|d| d.kind == DriftKind::AdmissibleButPending && d.subject == "ns/big"),
        "{d:?}"
    );
}

/// A workload the plan preempts ends the plan pending; it holds quota in Kueue all
/// along, so seeing it admitted at the next re-plan is no drift.
#[test]
fn a_victim_of_the_plan_still_admitted_in_kueue_is_no_drift() {
    let victim = BASE
        .replace("name: big", "name: low")
        .replace("u-big", "u-low")
        .replace("'8'", "'4'");
    let status = admitted_status("4");
    let yaml = format!(
        "{victim}{status}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: urgent, namespace: ns, uid: u-urgent, creationTimestamp: '2026-01-02T00:00:00Z'}}
spec:
  queueName: lq
  priority: 100
  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: '4'}}}}}}]}}}}}}]
"
    )
    .replace(
        "namespaceSelector: {}",
        "namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}",
    );
    let st = state(&yaml);
    let plan = engine::plan(
        &st,
        &PlanOptions {
            now: 1_000,
            ..PlanOptions::default()
        },
    );
    let last = plan.cycles.last().expect("cycles");
    assert!(
        last.pending.iter().any(|p| p.workload.as_str() == "ns/low"),
        "the plan preempts ns/low and leaves it pending: {:?}",
        last.pending
            .iter()
            .map(|p| p.workload.as_str())
            .collect::<Vec<_>>()
    );
    let mut t = DriftTracker::with_grace_ms(0);
    t.update(&st, &plan, 1_000);
    let d = t.update(&st, &plan, 2_000);
    assert!(
        d.iter().all(|d| d.kind != DriftKind::AdmittedUnexpectedly),
        "{d:?}"
    );
    assert_eq!(t.remembered(), 0);
}
