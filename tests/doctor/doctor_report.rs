//! `doctor` report: the seed tutorial, the JSON contract, exit codes, rendering,
//! determinism, and robustness on odd input.

use crate::doctor_support;

use doctor_support::*;
use gangplank::doctor::{self, CHECK_IDS, DoctorOptions, Report, Severity, ids};
use gangplank::model::*;

/// The seed tutorial's objects, taken literally: PriorityClasses boss-urgent and
/// normal-batch (globalDefault), ClusterQueue hyperpod-global-queue (v1beta1, covers only
/// nvidia.com/gpu, 32 in p4d-flavor), LocalQueue nlp-team/nlp-team-queue, and the
/// PyTorchJob boss-urgent-llama-finetune (16 GPUs) that also requests cpu.
fn seed() -> State {
    let mut c = cq(
        "hyperpod-global-queue",
        vec![group(&[GPU], &[("p4d-flavor", &["32"])])],
    );
    c.api_version = KueueApiVersion::V1beta1;
    c.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    c.preemption.within_cluster_queue = WithinClusterQueue::LowerPriority;
    let mut l = lq("nlp-team", "nlp-team-queue", "hyperpod-global-queue");
    l.api_version = KueueApiVersion::V1beta1;
    let mut master = podset("master", 1, &[(GPU, "16"), ("cpu", "8")]);
    master.priority_class_name = Some("boss-urgent".into());
    let mut j = job(
        "nlp-team",
        "boss-urgent-llama-finetune",
        Some("nlp-team-queue"),
    );
    j.api_version = "kubeflow.org/v1".into();
    j.kind = "PyTorchJob".into();
    j.pod_sets = vec![master.clone()];
    let w = Workload {
        namespace: "nlp-team".into(),
        name: "boss-urgent-llama-finetune".into(),
        queue_name: Some("nlp-team-queue".into()),
        pod_sets: vec![master].into(),
        priority: 1_000_000,
        priority_class: Some(PriorityClassRef {
            kind: PriorityClassKind::PriorityClass,
            name: "boss-urgent".into(),
        }),
        active: true,
        source: WorkloadSource::Job {
            kind: "PyTorchJob".into(),
        },
        ..Default::default()
    };
    State::new()
        .pc("boss-urgent", 1_000_000, false)
        .pc("normal-batch", 1000, true)
        .cq(c)
        .lq(l)
        .job(j)
        .workload(w)
}

#[test]
fn seed_taken_literally_names_missing_flavor_and_uncovered_cpu() {
    let report = run(&seed().build());
    let f = one(&report, ids::CLUSTERQUEUE_MISSING_FLAVOR);
    assert_eq!(
        objs(f),
        [
            "ClusterQueue/hyperpod-global-queue",
            "ResourceFlavor/p4d-flavor"
        ]
    );
    one(&report, ids::WORKLOAD_UNCOVERED_RESOURCE);
}

#[test]
fn seed_job_requesting_cpu_is_uncovered_with_yaml_fix() {
    let report = run(&seed().flavor(flavor("p4d-flavor", &[])).build());
    let f = one(&report, ids::WORKLOAD_UNCOVERED_RESOURCE);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        objs(f),
        [
            "PyTorchJob/nlp-team/boss-urgent-llama-finetune",
            "ClusterQueue/hyperpod-global-queue"
        ]
    );
    mentions(
        f,
        &[
            "requests cpu",
            "hyperpod-global-queue",
            "covers nvidia.com/gpu",
        ],
        &[
            "kubectl edit clusterqueue hyperpod-global-queue",
            "coveredResources: [\"nvidia.com/gpu\", \"cpu\"]",
            "- name: \"p4d-flavor\"",
            "- name: \"nvidia.com/gpu\"\n        nominalQuota: 32",
            "- name: \"cpu\"\n        nominalQuota: 8",
        ],
    );
    // The seed is otherwise sound: no other errors.
    let errors: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{}", report.render_table(100));
}

#[test]
fn seed_q3_untainted_a100_nodes() {
    let mut n = node("a100-1", &[], &[(GPU, "8"), ("cpu", "96")]);
    n.taints.clear();
    let report = run(&seed().flavor(flavor("p4d-flavor", &[])).node(n).build());
    assert_eq!(objs(one(&report, ids::GPU_NODE_UNTAINTED)), ["Node/a100-1"]);
}

#[test]
fn json_has_the_contract_keys() {
    let report = run(&seed().build());
    let v: serde_json::Value = serde_json::from_str(&report.to_json_pretty()).expect("json");
    let top = v.as_object().expect("object");
    assert_eq!(top.keys().collect::<Vec<_>>(), ["findings"]);
    let findings = v["findings"].as_array().expect("array");
    assert!(!findings.is_empty());
    for f in findings {
        let o = f.as_object().expect("finding object");
        let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["check", "fix", "message", "objects", "severity"]);
        assert!(["error", "warning", "info"].contains(&o["severity"].as_str().expect("str")));
        assert!(CHECK_IDS.contains(&o["check"].as_str().expect("str")));
        assert!(o["objects"].as_array().expect("objects").iter().all(|x| {
            let s = x.as_str().expect("object ref");
            let parts = s.split('/').count();
            parts == 2 || parts == 3
        }));
    }
    // Round trip.
    let back: Report = serde_json::from_value(v).expect("deserialize");
    assert_eq!(back, report);
}

#[test]
fn severity_order_words_and_parsing() {
    assert!(Severity::Error > Severity::Warning && Severity::Warning > Severity::Info);
    assert_eq!(
        serde_json::to_string(&Severity::Warning).expect("json"),
        "\"warning\""
    );
    assert_eq!("error".parse::<Severity>(), Ok(Severity::Error));
    assert!("fatal".parse::<Severity>().is_err());
}

#[test]
fn exit_codes_follow_fail_on() {
    let report = run(&seed().flavor(flavor("p4d-flavor", &[])).build());
    assert_eq!(report.worst(), Some(Severity::Error));
    assert_eq!(report.exit_code(None), 0);
    assert_eq!(report.exit_code(Some(Severity::Error)), 1);
    assert_eq!(report.exit_code(Some(Severity::Warning)), 1);
    let info_only = Report::new(vec![doctor::Finding::new(
        Severity::Info,
        ids::FLAVOR_IDLE_CAPACITY,
        vec!["ResourceFlavor/x".into()],
        "m",
        "f",
    )]);
    assert_eq!(info_only.exit_code(Some(Severity::Warning)), 0);
    assert_eq!(info_only.exit_code(Some(Severity::Info)), 1);
    assert_eq!(Report::default().exit_code(Some(Severity::Info)), 0);
}

#[test]
fn findings_are_sorted_errors_first() {
    let report = run(&busy().build());
    let keys: Vec<_> = report
        .findings
        .iter()
        .map(|f| {
            (
                std::cmp::Reverse(f.severity),
                f.check.clone(),
                f.objects.clone(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(report.findings[0].severity, Severity::Error);
}

/// A state that triggers many checks at once.
fn busy() -> State {
    let mut bare = gpu_node("gpu-2", "8");
    bare.taints.clear();
    let mut web = pod("default", "web", &[("cpu", "1")]);
    web.node_name = Some("gpu-2".into());
    let mut nb = pod("team", "notebook", &[(GPU, "1")]);
    nb.node_name = Some("gpu-1".into());
    seed()
        .flavor(flavor("gpu", &[("pool", "gpu")]))
        .flavor(flavor("h100", &[("pool", "h100")]))
        .node(gpu_node("gpu-1", "8"))
        .node(bare)
        .cq(cq(
            "cq",
            vec![group(&[GPU, "cpu"], &[("gpu", &["64", "8"])])],
        ))
        .lq(lq("team", "lq", "cq"))
        .lq(lq("team", "lq2", "ghost"))
        .job(job("team", "etl", None))
        .job(job("team", "train", Some("nope")))
        .pod(web)
        .pod(nb)
        .pc("low", 1, true)
        .workload(workload(
            "team",
            "big",
            "lq",
            vec![podset("w", 4, &[(GPU, "32"), ("memory", "1Gi")])],
        ))
}

#[test]
fn report_is_the_same_under_shuffled_input() {
    let base = busy().build();
    let expected = run(&base);
    assert!(
        expected.findings.len() >= 10,
        "{}",
        expected.render_table(100)
    );
    for rot in 0..base.jobs.len() {
        let mut s = base.clone();
        s.jobs.rotate_left(rot);
        s.jobs.reverse();
        for n in s.nodes.values_mut() {
            std::sync::Arc::make_mut(n).taints.reverse();
        }
        // Rebuild every map in reverse insertion order.
        s.nodes = base.nodes.clone().into_iter().rev().collect();
        s.pods = base.pods.clone().into_iter().rev().collect();
        s.workloads = base.workloads.clone().into_iter().rev().collect();
        assert_eq!(run(&s), expected, "rotation {rot}");
    }
    assert_eq!(run(&base).to_json_pretty(), expected.to_json_pretty());
}

#[test]
fn table_is_readable_at_80_columns() {
    let report = run(&busy().build());
    let table = report.render_table(80);
    assert!(table.contains("ERROR    workload-uncovered-resource"));
    assert!(table.contains("WARNING  "));
    assert!(table.contains("INFO     "));
    assert!(table.contains("Fix:"));
    assert!(table.trim_end().ends_with("info"), "summary line last");
    for line in table.lines() {
        // Prose wraps; verbatim YAML/commands (deeper indent) may run long.
        if !line.starts_with("        ") {
            let long_word = line.split_whitespace().any(|w| w.chars().count() > 60);
            assert!(line.chars().count() <= 80 || long_word, "too wide: {line}");
        }
    }
    assert!(
        Report::default()
            .render_table(80)
            .starts_with("No findings")
    );
}

#[test]
fn docs_list_every_check_id() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/doctor.md"))
        .expect("docs/doctor.md");
    for id in CHECK_IDS {
        assert!(
            docs.contains(&format!("`{id}`")),
            "docs/doctor.md lacks {id}"
        );
    }
}

#[test]
fn odd_input_does_not_panic() {
    let mut s = busy().build();
    // Dangling and degenerate references everywhere.
    s.cluster_queues.insert(
        "empty".into(),
        ClusterQueue {
            name: "empty".into(),
            cohort: Some("c1".into()),
            resource_groups: vec![ResourceGroup::default()],
            ..Default::default()
        },
    );
    s.cohorts.insert(
        "c1".into(),
        Cohort {
            name: "c1".into(),
            parent: Some("c2".into()),
            ..Default::default()
        },
    );
    s.cohorts.insert(
        "c2".into(),
        Cohort {
            name: "c2".into(),
            parent: Some("c1".into()),
            resource_groups: vec![group(&[GPU], &[("gpu", &["-4"])])],
            ..Default::default()
        },
    );
    let mut w = workload("nowhere", "w", "lq", vec![]);
    w.admission = Some(Admission {
        cluster_queue: "missing".into(),
        pod_set_assignments: vec![],
    });
    w.conditions.push(condition("Admitted", NOW + 1_000_000));
    s.workloads
        .insert(("nowhere".into(), "w".into()), std::sync::Arc::new(w));
    let mut p = pod("", "", &[(GPU, "0")]);
    p.node_name = Some("no-such-node".into());
    p.phase = "Pending".into();
    s.pods
        .insert((String::new(), String::new()), std::sync::Arc::new(p));
    let opts = DoctorOptions {
        accelerator_resources: vec![],
        pending_pod_threshold_ms: -1,
        ..DoctorOptions::at(i64::MIN / 2)
    };
    let _ = doctor::run(&s, &opts).render_table(0);
    let _ = doctor::run(&s, &DoctorOptions::at(NOW)).to_json_pretty();
}
