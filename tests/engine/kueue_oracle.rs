//! Disagreements the Kueue oracle found (`tests/real-kueue/diff`, docs/engine.md "The Kueue
//! oracle"), minimised into `tests/fixtures/kueue-oracle/`: `gangplank plan -f FILE -o json
//! --max-cycles 1` through the real binary must give Kueue v0.17.0's first cycle (what
//! `tests/real-kueue/go/kueue/oracle plan FILE` prints), the admitted set with flavors
//! and the preempted set.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

const DIR: &str = "tests/fixtures/kueue-oracle";

/// workload → (ClusterQueue, flavors as "podset:resource=flavor,…"), victim → preemptor.
type Decisions = (BTreeMap<String, (String, String)>, BTreeMap<String, String>);

fn first_cycle(args: &[&str]) -> Decisions {
    let out = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["plan", "-o", "json", "--max-cycles", "1"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run gangplank");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).expect("plan prints JSON");
    let cycle = &plan["cycles"][0];
    let mut admitted = BTreeMap::new();
    for a in cycle["admitted"].as_array().expect("admitted") {
        let mut flavors = Vec::new();
        for (ps, m) in a["flavors"].as_object().expect("flavors") {
            for (r, f) in m.as_object().expect("resource → flavor") {
                flavors.push(format!("{ps}:{r}={}", f.as_str().unwrap()));
            }
        }
        flavors.sort();
        admitted.insert(
            a["workload"].as_str().unwrap().to_string(),
            (
                a["clusterQueue"].as_str().unwrap().to_string(),
                flavors.join(","),
            ),
        );
    }
    let mut preempted = BTreeMap::new();
    for p in cycle["preempted"].as_array().expect("preempted") {
        preempted.insert(
            p["workload"].as_str().unwrap().to_string(),
            p["by"].as_str().unwrap().to_string(),
        );
    }
    (admitted, preempted)
}

fn plan_fixture(name: &str) -> Decisions {
    first_cycle(&["-f", &format!("{DIR}/{name}")])
}

fn adm(rows: &[(&str, &str, &str)]) -> BTreeMap<String, (String, String)> {
    rows.iter()
        .map(|(w, cq, f)| (w.to_string(), (cq.to_string(), f.to_string())))
        .collect()
}

fn pre(rows: &[(&str, &str)]) -> BTreeMap<String, String> {
    rows.iter()
        .map(|(v, by)| (v.to_string(), by.to_string()))
        .collect()
}

/// A node selector key that another flavor of the resource group carries excludes a
/// flavor without that label (Kueue matches on the group's `LabelKeys`, not on the
/// flavor's own keys): `pool: p0` rules out f2 (no labels), so Kueue admits on f0.
#[test]
fn node_selector_is_matched_on_the_resource_groups_label_keys() {
    let (admitted, preempted) = plan_fixture("node-selector-group-label-keys.yaml");
    assert_eq!(admitted, adm(&[("ns2/w4", "cq2", "main:cpu=f0")]));
    assert_eq!(preempted, pre(&[]));
}

/// An inactive ClusterQueue (here: it names a ResourceFlavor that does not exist) is not in
/// Kueue's scheduling snapshot, so its admitted workload is no preemption candidate: the
/// high-priority workload of cq4 preempts nothing (gangplank used to preempt ns0/w0).
#[test]
fn inactive_cluster_queue_missing_flavor_is_not_preempted_from() {
    let (admitted, preempted) = plan_fixture("inactive-cq-missing-flavor.yaml");
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[]));
}

/// The same with fair sharing on (Kueue's `findCandidates` walks the snapshot's
/// ClusterQueues only).
#[test]
fn inactive_cluster_queue_missing_flavor_fair_sharing_is_not_preempted_from() {
    let (admitted, preempted) = plan_fixture("inactive-cq-missing-flavor-fair-sharing.yaml");
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[]));
}

/// `stopPolicy: Hold` makes a ClusterQueue inactive the same way; with the policy removed
/// (the control) Kueue does preempt ns0/w0 for ns4/w18, and so does gangplank.
#[test]
fn held_cluster_queue_is_not_preempted_from_but_an_active_one_is() {
    let (admitted, preempted) = plan_fixture("inactive-cq-hold.yaml");
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[]));

    let text = std::fs::read_to_string(format!(
        "{}/{DIR}/inactive-cq-hold.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(text.contains("  stopPolicy: Hold\n"));
    let dir = std::env::temp_dir().join(format!("gangplank-kueue-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let active = dir.join("active.yaml");
    std::fs::write(&active, text.replace("  stopPolicy: Hold\n", "")).unwrap();
    let (admitted, preempted) = first_cycle(&["-f", active.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[("ns0/w0", "ns4/w18")]));
}

/// Kueue v0.17.0 panics here (fair sharing, a ClusterQueue without a cohort whose
/// preemption candidates run out: `TargetClusterQueueOrdering.Iter` falls through to
/// `Parent().Root()` on nil; fixed upstream by kubernetes-sigs/kueue#10891). With the
/// fix the iteration ends and no target is found; gangplank gives that answer: nothing
/// admitted, nothing preempted. Listed in docs/engine.md "Where gangplank knowingly
/// differs from Kueue".
#[test]
fn fair_sharing_without_a_cohort_gives_the_fixed_kueue_answer() {
    let (admitted, preempted) = plan_fixture("kueue-v0.17.0-panic-fair-sharing-no-cohort.yaml");
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[]));
}

/// `flavorFungibility.preference: PreemptionOverBorrowing` ranks a flavor's resources by
/// borrowing level first, so memory's (Fit, borrowing) hides cpu's (Preempt, no
/// borrowing): Kueue's pod set reads as Fit, the entry does not fit in the cycle and is
/// skipped; nothing is preempted (gangplank used to preempt ns3/w5).
#[test]
fn preemption_over_borrowing_fit_by_borrowing_hides_a_preemption() {
    let (admitted, preempted) = plan_fixture("preemption-over-borrowing-hides-preempt.yaml");
    assert_eq!(admitted, adm(&[]));
    assert_eq!(preempted, pre(&[]));
}

/// A known difference (docs/engine.md): Kueue v0.17.0's `isPreferred` lets memory's
/// (NoCandidates, no borrowing) lose to cpu's (Fit, borrowing) under
/// PreemptionOverBorrowing, so its pod set reads as Fit and the entry is skipped (the
/// oracle admits nothing). Kueue later ranks NoCandidates below every viable mode
/// (kubernetes-sigs/kueue#13616, in the Kueue source gangplank follows); then the
/// assignment is NoCandidates and partial admission admits a reduced count, which is
/// what gangplank plans.
#[test]
fn preemption_over_borrowing_no_candidates_follows_the_fixed_kueue() {
    let (admitted, preempted) =
        plan_fixture("kueue-v0.17.0-preemption-over-borrowing-no-candidates.yaml");
    assert_eq!(
        admitted,
        adm(&[("ns2/w14", "cq2", "main:cpu=f1,main:memory=f1")])
    );
    assert_eq!(preempted, pre(&[]));
}
