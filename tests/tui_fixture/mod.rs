//! The console's test fixture: the seed story at the moment the boss job arrives.
//! 32 GPUs on four tainted p4d nodes, four normal jobs admitted with 8 GPUs each,
//! the boss job (16 GPUs) pending with the verdict "preempts 2".

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use gangplank::model::*;
use gangplank::tui::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub const T0: Timestamp = 1_767_225_600_000; // 2026-01-01T00:00:00Z
pub const NOW: Timestamp = T0 + 12 * 60_000;
const GPU: &str = "nvidia.com/gpu";
const CQ: &str = "hyperpod-global-queue";

fn gpus(n: i64) -> ResourceList {
    ResourceList::from([(GPU.to_string(), Quantity::from_units(n))])
}

fn cond(type_: &str, status: bool, reason: &str, message: &str, at: Timestamp) -> Condition {
    Condition {
        type_: type_.into(),
        status: if status {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        },
        reason: reason.into(),
        message: message.into(),
        last_transition_time: Some(at),
    }
}

fn owner(name: &str) -> OwnerReference {
    OwnerReference {
        api_version: "kubeflow.org/v1".into(),
        kind: "PyTorchJob".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller: true,
    }
}

fn pod_set(name: &str) -> PodSet {
    PodSet {
        name: name.into(),
        count: 1,
        requests: gpus(8),
        ..PodSet::default()
    }
}

fn workload(ns: &str, name: &str, class: &str, value: i32, created: Timestamp) -> Workload {
    Workload {
        namespace: ns.into(),
        name: name.into(),
        uid: format!("wl-{name}"),
        creation_timestamp: created,
        queue_name: Some(format!("{}-queue", ns)),
        pod_sets: vec![pod_set("master")].into(),
        priority: value,
        priority_class: Some(PriorityClassRef {
            kind: PriorityClassKind::PriorityClass,
            name: class.into(),
        }),
        active: true,
        owner: Some(owner(name)),
        source: WorkloadSource::Job {
            kind: "PyTorchJob".into(),
        },
        ..Workload::default()
    }
}

/// The seed cluster at T0 + 12 minutes.
pub fn cluster() -> ClusterState {
    let mut s = ClusterState::default();
    let p4d = Labels::from([(
        "node.kubernetes.io/instance-type".to_string(),
        "p4d.24xlarge".to_string(),
    )]);
    s.resource_flavors.insert(
        "p4d-flavor".into(),
        ResourceFlavor {
            name: "p4d-flavor".into(),
            node_labels: p4d.clone(),
            ..ResourceFlavor::default()
        },
    );
    let quota = ResourceQuota {
        name: GPU.into(),
        nominal: Quantity::from_units(32),
        ..ResourceQuota::default()
    };
    s.cluster_queues.insert(
        CQ.into(),
        ClusterQueue {
            name: CQ.into(),
            namespace_selector: Some(LabelSelector::default()),
            resource_groups: vec![ResourceGroup {
                covered_resources: vec![GPU.into()],
                flavors: vec![FlavorQuotas {
                    name: "p4d-flavor".into(),
                    resources: vec![quota],
                }],
            }],
            ..ClusterQueue::default()
        },
    );
    for ns in ["nlp-team", "cv-team"] {
        let name = format!("{ns}-queue");
        s.local_queues.insert(
            (ns.into(), name.clone()),
            LocalQueue {
                namespace: ns.into(),
                name,
                cluster_queue: CQ.into(),
                ..LocalQueue::default()
            },
        );
    }
    let taint = Taint {
        key: GPU.into(),
        value: Some("present".into()),
        effect: "NoSchedule".into(),
    };
    for i in 1..=4 {
        let name = format!("p4d-gpu-{i}");
        s.nodes.insert(
            name.clone(),
            Arc::new(Node {
                name,
                labels: p4d.clone(),
                taints: vec![taint.clone()],
                allocatable: gpus(8),
                capacity: gpus(8),
                ready: true,
                ..Node::default()
            }),
        );
    }
    s.nodes.insert(
        "m5-cpu-1".into(),
        Arc::new(Node {
            name: "m5-cpu-1".into(),
            ready: true,
            ..Node::default()
        }),
    );
    let jobs = [
        ("nlp-team", "bert-pretrain"),
        ("cv-team", "resnet-sweep"),
        ("nlp-team", "gpt-eval"),
        ("cv-team", "yolo-train"),
    ];
    for (i, (ns, name)) in jobs.iter().enumerate() {
        let created = T0 + i as i64 * 60_000;
        let admitted = created + 5_000;
        let mut wl = workload(ns, name, "normal-batch", 1000, created);
        wl.conditions = vec![
            cond(
                "QuotaReserved",
                true,
                "QuotaReserved",
                &format!("Quota reserved in ClusterQueue {CQ}"),
                admitted,
            ),
            cond(
                "Admitted",
                true,
                "Admitted",
                "The workload is admitted",
                admitted,
            ),
        ];
        wl.admission = Some(Admission {
            cluster_queue: CQ.into(),
            pod_set_assignments: vec![PodSetAssignment {
                name: "master".into(),
                flavors: Labels::from([(GPU.to_string(), "p4d-flavor".to_string())]),
                resource_usage: gpus(8),
                count: Some(1),
            }],
        });
        s.workloads
            .insert((ns.to_string(), name.to_string()), Arc::new(wl));
        let pod = format!("{name}-master-0");
        s.pods.insert(
            (ns.to_string(), pod.clone()),
            Arc::new(Pod {
                namespace: ns.to_string(),
                name: pod,
                owner_references: vec![owner(name)],
                node_name: Some(format!("p4d-gpu-{}", i + 1)),
                phase: "Running".into(),
                requests: gpus(8),
                ..Pod::default()
            }),
        );
    }
    let boss_name = "boss-urgent-llama-finetune";
    let mut boss = workload(
        "nlp-team",
        boss_name,
        "boss-urgent",
        1_000_000,
        T0 + 10 * 60_000,
    );
    boss.pod_sets = vec![pod_set("master"), pod_set("worker")].into();
    boss.conditions = vec![cond(
        "QuotaReserved",
        false,
        "Pending",
        "couldn't assign flavors to pod set master: insufficient unused quota for nvidia.com/gpu in flavor p4d-flavor, 8 more needed. Pending the preemption of 2 workload(s)",
        T0 + 10 * 60_000,
    )];
    s.workloads
        .insert(("nlp-team".into(), boss_name.into()), Arc::new(boss));
    s
}

/// The plan the shadow engine would produce for [`cluster`].
pub fn plan() -> PlanView {
    let key = |ns: &str, n: &str| (ns.to_string(), n.to_string());
    let boss = "nlp-team/boss-urgent-llama-finetune";
    let mut verdicts = HashMap::new();
    verdicts.insert(
        key("nlp-team", "boss-urgent-llama-finetune"),
        Verdict {
            verdict: "preempts 2".into(),
            position: Some(1),
            explanation: vec![
                "WaitingForQuota: needs 16 nvidia.com/gpu in p4d-flavor; hyperpod-global-queue has 0 free".into(),
                "preempts cv-team/yolo-train, nlp-team/gpt-eval (InClusterQueue, LowerPriority)".into(),
            ],
        },
    );
    for (ns, n) in [("nlp-team", "bert-pretrain"), ("cv-team", "resnet-sweep")] {
        verdicts.insert(
            key(ns, n),
            Verdict {
                verdict: "keeps running".into(),
                ..Verdict::default()
            },
        );
    }
    for (ns, n) in [("nlp-team", "gpt-eval"), ("cv-team", "yolo-train")] {
        verdicts.insert(
            key(ns, n),
            Verdict {
                verdict: "victim".into(),
                ..Verdict::default()
            },
        );
    }
    PlanView {
        verdicts,
        cycles: vec![
            CycleView {
                index: 1,
                admitted: vec![],
                preempted: vec![PreemptionView {
                    preemptor: boss.into(),
                    victims: vec!["cv-team/yolo-train".into(), "nlp-team/gpt-eval".into()],
                    reason: "InClusterQueue".into(),
                    gpus_freed: 16,
                }],
            },
            CycleView {
                index: 2,
                admitted: vec![AdmissionView {
                    workload: boss.into(),
                    cluster_queue: CQ.into(),
                    flavors: "nvidia.com/gpu: p4d-flavor".into(),
                }],
                preempted: vec![],
            },
        ],
        proposals: vec![
            ProposalView {
                id: "p-1".into(),
                action: "evict".into(),
                target: "cv-team/yolo-train".into(),
                summary: "make room for the boss job".into(),
            },
            ProposalView {
                id: "p-2".into(),
                action: "evict".into(),
                target: "nlp-team/gpt-eval".into(),
                summary: "make room for the boss job".into(),
            },
        ],
        computed_at: Some(NOW - 2_000),
        duration_ms: Some(3),
        pending: vec![],
    }
}

/// The console input for the fixture.
pub fn data() -> ConsoleData {
    let sync = SyncStatus {
        resources: ["wl", "cq", "lq", "rf", "nodes", "pods"]
            .iter()
            .map(|k| ResourceSync {
                kind: k.to_string(),
                state: SyncState::Synced,
            })
            .collect(),
        last_event: Some(NOW - 3_000),
    };
    ConsoleData {
        state: Arc::new(cluster()),
        plan: Some(Arc::new(plan())),
        sync,
        context: "seed (simulator)".into(),
        drift: Arc::new(vec![]),
        audit: Arc::new(vec![AuditRow {
            time: NOW - 60_000,
            actor: "alice".into(),
            action: "hold".into(),
            target: "cv-team/resnet-sweep".into(),
            outcome: "refused: read-only".into(),
            details: vec!["message: the console is read-only".into()],
        }]),
        health: Arc::new(vec![HealthRow {
            severity: Severity::Warning,
            check: "preemption-policy".into(),
            objects: vec!["cq/hyperpod-global-queue".into()],
            message: "reclaimWithinCohort is set but the queue has no cohort".into(),
            fix: "spec:\n  cohort: research  # or drop reclaimWithinCohort".into(),
        }]),
        events: Arc::new(vec![]),
        generation: 1,
    }
}

/// An app over the fixture at the given size, on the given view.
pub fn app(view: ViewId, w: u16, h: u16, theme: &str) -> App {
    let mut app = App::new(keymap::Keymap::default(), Theme::preset(theme), false, view);
    update(&mut app, Msg::Resize(w, h));
    update(&mut app, Msg::Tick(NOW));
    update(&mut app, Msg::Data(data()));
    app
}

/// Draws one frame into a test backend.
pub fn terminal(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    term.draw(|f| view(app, &app.cache.data, f)).expect("draw");
    term
}

/// The frame as text, trailing spaces trimmed: what a person would see.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    let term = terminal(app, w, h);
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let mut line = String::new();
        for x in 0..w {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A key press.
pub fn key(code: crossterm::event::KeyCode) -> Msg {
    Msg::Key(crossterm::event::KeyEvent::new(
        code,
        crossterm::event::KeyModifiers::NONE,
    ))
}

/// Types a string as key presses.
pub fn type_str(app: &mut App, s: &str) {
    for c in s.chars() {
        update(app, key(crossterm::event::KeyCode::Char(c)));
    }
}
