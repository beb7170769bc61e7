//! Operator actions against the simulator over real HTTP: the same kube client and
//! executor as a real cluster, only the kubeconfig differs. Every wait has a deadline
//! and checks a condition; nothing sleeps to synchronise.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gangplank::actions::approve::{ApproveOptions, execute_approval, plan_approval};
use gangplank::actions::intent::{APPROVAL_ANNOTATION, ApprovalIntent};
use gangplank::actions::recovery::recover;
use gangplank::actions::{
    ActionEvent, Actor, ApprovalPolicy, AuditLog, ConsoleRequest, PriorityTarget, Prompt,
    read_audit,
};
use gangplank::model::ClusterState;
use gangplank::sim::{
    FaultRule, LiveOptions, LiveSim, ObjectStore, PatchKind, ResourceKey, Scenario, SimCluster,
    SimOptions, WriteOptions,
};
use gangplank::source::{self, ClusterArgs, SourceOptions};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(60);

struct Env {
    sim: LiveSim,
    cluster: ClusterArgs,
    audit: PathBuf,
    _dir: tempfile::TempDir,
}

async fn start(scenario: Scenario, speed: f64) -> Env {
    let sim = LiveSim::start(
        SimCluster::from_scenario(&scenario, SimOptions::live()),
        LiveOptions {
            speed,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc).unwrap();
    Env {
        sim,
        cluster: ClusterArgs {
            kubeconfig: Some(kc),
            context: Some("gangplank-sim".into()),
            ..Default::default()
        },
        audit: dir.path().join("state/audit.jsonl"),
        _dir: dir,
    }
}

impl Env {
    async fn actor(&self, readonly: bool) -> Actor {
        let audit = AuditLog::open(&self.audit).unwrap();
        Actor::connect(&self.cluster, readonly, false, audit)
            .await
            .unwrap()
    }

    fn store(&self) -> &ObjectStore {
        self.sim.store()
    }

    fn audit_lines(&self) -> Vec<gangplank::actions::AuditRecord> {
        if !self.audit.exists() {
            return Vec::new();
        }
        read_audit(&self.audit).unwrap()
    }

    /// The cluster state as the live source sees it, once `pred` holds.
    async fn state_when(&self, pred: impl Fn(&ClusterState) -> bool) -> ClusterState {
        let opts = SourceOptions::default();
        let client = source::connect(&self.cluster, opts.read_timeout())
            .await
            .unwrap();
        let handle = source::start(client, opts).await;
        let snap = handle
            .wait_for(DEADLINE, |s| s.all_settled() && pred(&s.state))
            .await
            .expect("the source never showed the expected state");
        let state = (*snap.state).clone();
        handle.shutdown().await;
        state
    }
}

/// The Workload owned by job `job` in `ns`.
fn wl_of(store: &ObjectStore, ns: &str, job: &str) -> Option<Value> {
    store
        .list(&ResourceKey::WORKLOADS, Some(ns))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == job)
}

fn cond(w: &Value, t: &str) -> Option<(String, String)> {
    w["status"]["conditions"].as_array()?.iter().find_map(|c| {
        (c["type"] == t).then(|| {
            (
                c["status"].as_str().unwrap_or_default().to_string(),
                c["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
    })
}

fn admitted(w: &Value) -> bool {
    cond(w, "Admitted").is_some_and(|(s, _)| s == "True")
        && cond(w, "Evicted").is_none_or(|(s, _)| s != "True")
        && !w["status"]["admission"].is_null()
}

fn finished(w: &Value) -> bool {
    cond(w, "Finished").is_some_and(|(s, _)| s == "True")
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The next event from the console's action task that `pick` accepts, within the
/// deadline; the events before it are passed to `pick` and skipped.
async fn next_event<T>(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<ActionEvent>,
    mut pick: impl FnMut(ActionEvent) -> Option<T>,
) -> T {
    let end = tokio::time::Instant::now() + DEADLINE;
    loop {
        let ev = tokio::time::timeout_at(end, events.recv())
            .await
            .expect("no action event within the deadline")
            .expect("the action task ended");
        if let Some(t) = pick(ev) {
            return t;
        }
    }
}

fn as_prompt(ev: ActionEvent) -> Option<Prompt> {
    match ev {
        ActionEvent::Prompt(p) => Some(p),
        _ => None,
    }
}

fn as_notice(ev: ActionEvent) -> Option<String> {
    match ev {
        ActionEvent::Notice(n) => Some(n),
        _ => None,
    }
}

fn seed_with_never() -> Scenario {
    let text = include_str!("../../docs/scenarios/seed.yaml").replace(
        "withinClusterQueue: LowerPriority",
        "withinClusterQueue: Never",
    );
    Scenario::from_str("seed-never", &text).unwrap()
}

const NORMAL_JOBS: [(&str, &str); 4] = [
    ("nlp-team", "bert-pretrain"),
    ("cv-team", "resnet-sweep"),
    ("nlp-team", "gpt-eval"),
    ("cv-team", "yolo-train"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_evicts_deactivated_and_resume_readmits() {
    // 60x: the boss arrives 10 s after start, long after this test is done.
    let env = start(Scenario::seed(), 60.0).await;
    let store = env.store().clone();
    wait_until("bert admitted", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w))
    })
    .await;
    let actor = env.actor(false).await;
    // By job name: resolved to the Workload it owns.
    let o = actor.hold("nlp-team/bert-pretrain").await;
    assert!(o.ok, "{}", o.message);
    let wl = wl_of(&store, "nlp-team", "bert-pretrain").unwrap();
    assert_eq!(wl["spec"]["active"], false);
    wait_until("evicted with reason Deactivated", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| {
            cond(&w, "Evicted") == Some(("True".into(), "Deactivated".into()))
                && w["status"]["admission"].is_null()
        })
    })
    .await;
    // By Workload name.
    let name = wl["metadata"]["name"].as_str().unwrap();
    let o = actor.resume(&format!("nlp-team/{name}")).await;
    assert!(o.ok, "{}", o.message);
    wait_until("readmitted", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w))
    })
    .await;
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 2, "one audit line per attempt");
    assert_eq!(lines[0].action, "hold");
    assert_eq!(lines[0].outcome, "done");
    assert_eq!(lines[0].dry_run, "ok");
    assert_eq!(lines[0].before, json!({"active": true}));
    assert_eq!(lines[0].after, json!({"active": false}));
    assert_eq!(lines[1].action, "resume");
    env.sim.shutdown().await;
}

const PRIORITY_SCENARIO: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: p4d-flavor}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: p4d.24xlarge}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: Never}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: p4d-flavor
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 10000
"#;

fn prio_job(name: &str, at: &str, duration: &str) -> String {
    format!(
        r#"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: low}}
  annotations: {{sim.gangplank.io/at: "{at}", sim.gangplank.io/duration: "{duration}"}}
spec:
  parallelism: 1
  completions: 1
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example.com/train:latest
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_priority_moves_a_pending_job_ahead() {
    let mut text = include_str!("../../docs/scenarios/nodes-only.yaml").to_string();
    text.push_str("\n---\n");
    text.push_str(PRIORITY_SCENARIO);
    text.push_str(&prio_job("first", "0m", "20m"));
    text.push_str(&prio_job("second", "1m", "1h"));
    text.push_str(&prio_job("third", "2m", "1h"));
    // 120x: `first` runs for 10 s of wall time.
    let env = start(Scenario::from_str("prio", &text).unwrap(), 120.0).await;
    let store = env.store().clone();
    wait_until("first admitted, second and third queued", || {
        wl_of(&store, "team", "first").is_some_and(|w| admitted(&w))
            && wl_of(&store, "team", "third").is_some()
            && wl_of(&store, "team", "second").is_some()
    })
    .await;
    let actor = env.actor(false).await;
    let o = actor
        .set_priority("team/third", &PriorityTarget::Class("high".into()))
        .await;
    assert!(o.ok, "{}", o.message);
    let job = store
        .get(&ResourceKey::new("batch", "jobs"), Some("team"), "third")
        .unwrap();
    assert_eq!(
        job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        "high"
    );
    wait_until("the Workload carries the new priority", || {
        wl_of(&store, "team", "third").is_some_and(|w| w["spec"]["priority"] == 10000)
    })
    .await;
    // When `first` finishes, `third` (now high) is admitted ahead of `second`.
    wait_until("third admitted", || {
        wl_of(&store, "team", "third").is_some_and(|w| admitted(&w))
    })
    .await;
    assert!(!wl_of(&store, "team", "second").is_some_and(|w| admitted(&w)));
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].action, "set-priority");
    assert_eq!(lines[0].after["priorityClass"], "high");
    env.sim.shutdown().await;
}

/// The console's `p` against the simulator, wired as `gangplank` wires it: the live
/// source's snapshot on screen, keys through `update`, the request, prompt and answer
/// through the console's action task and its one executor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_p_raises_a_pending_job_ahead_of_the_one_before_it() {
    use crossterm::event::KeyCode;
    use gangplank::actions::console::{ConsoleActionSettings, spawn_console_actions};
    use gangplank::tui::{App, ConsoleData, Effect, Msg, Theme, ViewId, keymap, update};

    let mut text = include_str!("../../docs/scenarios/nodes-only.yaml").to_string();
    text.push_str("\n---\n");
    text.push_str(PRIORITY_SCENARIO);
    text.push_str(&prio_job("first", "0m", "30m"));
    text.push_str(&prio_job("second", "1m", "1h"));
    text.push_str(&prio_job("third", "2m", "1h"));
    // 120x: `first` holds the queue's 8 GPUs for 15 s of wall time.
    let env = start(Scenario::from_str("prio-console", &text).unwrap(), 120.0).await;
    let store = env.store().clone();
    wait_until("first admitted, second and third queued", || {
        wl_of(&store, "team", "first").is_some_and(|w| admitted(&w))
            && wl_of(&store, "team", "second").is_some()
            && wl_of(&store, "team", "third").is_some()
    })
    .await;
    let third = wl_of(&store, "team", "third").unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    let opts = SourceOptions::default();
    let client = source::connect(&env.cluster, opts.read_timeout())
        .await
        .unwrap();
    let handle = source::start(client, opts).await;
    let snap = handle
        .wait_for(DEADLINE, |s| {
            s.all_settled()
                && s.state.workload_priority_classes.contains_key("high")
                && s.state
                    .workloads
                    .values()
                    .filter(|w| w.namespace == "team" && !w.has_quota_reservation())
                    .count()
                    == 2
        })
        .await
        .expect("the source never showed second and third pending");
    let settings = ConsoleActionSettings {
        audit_log: Some(env.audit.clone()),
        ..Default::default()
    };
    let mut actions = spawn_console_actions(&env.cluster, &settings, handle.snapshots())
        .await
        .unwrap();

    let mut app = App::new(
        keymap::Keymap::default(),
        Theme::preset("dark"),
        false,
        ViewId::Workloads,
    );
    update(&mut app, Msg::Resize(120, 30));
    let state = std::sync::Arc::new(ClusterState::clone(&snap.state));
    update(&mut app, Msg::Data(ConsoleData::from_state(state, "sim")));
    let press = |app: &mut App, c: KeyCode| update(app, crate::tui_fixture::key(c));
    press(&mut app, KeyCode::Char('/'));
    crate::tui_fixture::type_str(&mut app, "third");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('p'));
    let screen = crate::tui_fixture::screen(&app, 120, 30);
    assert!(
        screen.contains(&format!("Reprioritize team/{third}")),
        "{screen}"
    );
    let high = screen.lines().find(|l| l.contains(" high ")).unwrap();
    assert!(high.contains("10000"), "{screen}");
    let low = screen.lines().find(|l| l.contains(" low ")).unwrap();
    assert!(low.contains("100") && low.contains("current"), "{screen}");
    // `high` is the highest value: first in the list.
    press(&mut app, KeyCode::Up);
    let effects = press(&mut app, KeyCode::Enter);
    let Some(Effect::RunAction(req)) = effects.first() else {
        panic!("no request: {effects:?} ({:?})", app.message);
    };
    actions
        .requests
        .send(ConsoleRequest::Run(req.clone()))
        .unwrap();
    let prompt = next_event(&mut actions.events, as_prompt).await;
    update(&mut app, Msg::Confirm(prompt.clone()));
    let screen = crate::tui_fixture::screen(&app, 120, 30);
    assert!(
        screen.contains("label kueue.x-k8s.io/priority-class=high on Job team/third"),
        "{screen}"
    );
    assert!(
        screen.contains("position in ClusterQueue cq: 2 of 2 → 1 of 2"),
        "{screen}"
    );
    let effects = press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        effects[0],
        Effect::Confirmed {
            prompt: prompt.id,
            yes: true
        }
    );
    actions
        .requests
        .send(ConsoleRequest::Answer {
            prompt: prompt.id,
            yes: true,
        })
        .unwrap();
    let notice = next_event(&mut actions.events, as_notice).await;
    update(&mut app, Msg::Notice(notice.clone()));
    assert!(
        notice.starts_with("set label kueue.x-k8s.io/priority-class=high"),
        "{notice}"
    );

    // When `first` finishes, `third` is admitted ahead of `second`.
    wait_until("third admitted", || {
        wl_of(&store, "team", "third").is_some_and(|w| admitted(&w))
    })
    .await;
    assert!(!wl_of(&store, "team", "second").is_some_and(|w| admitted(&w)));
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].action, "set-priority");
    assert_eq!(lines[0].outcome, "done");
    assert_eq!(lines[0].after["priorityClass"], "high");
    actions.task.abort();
    handle.shutdown().await;
    env.sim.shutdown().await;
}

/// The console's action task says why a reprioritize is unavailable — here the
/// apiserver refuses to let us read the job whose label it would change — before any
/// prompt is shown, writes nothing, and audits the refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_reprioritize_refused_before_any_prompt() {
    use gangplank::actions::console::{ConsoleActionSettings, spawn_console_actions};
    use gangplank::actions::{ActionKind, ActionRequest, ActionTarget, PriorityChoice};
    use gangplank::source::Snapshot;

    let env = start(Scenario::seed(), 60.0).await;
    let store = env.store().clone();
    wait_until("bert admitted", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w))
    })
    .await;
    env.sim.server().faults().add_rule(FaultRule {
        resource: "pytorchjobs".into(),
        verbs: vec!["get".into()],
        status: Some(403),
        ..Default::default()
    });
    let bert = wl_of(&store, "nlp-team", "bert-pretrain").unwrap();
    let (_snap_tx, snapshots) =
        tokio::sync::watch::channel(std::sync::Arc::new(Snapshot::empty(None)));
    let settings = ConsoleActionSettings {
        audit_log: Some(env.audit.clone()),
        ..Default::default()
    };
    let mut actions = spawn_console_actions(&env.cluster, &settings, snapshots)
        .await
        .unwrap();
    actions
        .requests
        .send(ConsoleRequest::Run(ActionRequest {
            kind: ActionKind::SetPriority,
            target: ActionTarget::Workload {
                namespace: "nlp-team".into(),
                name: bert["metadata"]["name"].as_str().unwrap().into(),
            },
            priority: Some(PriorityChoice::Class("boss-urgent".into())),
        }))
        .unwrap();
    let notice = next_event(&mut actions.events, as_notice).await;
    assert!(
        notice.starts_with(
            "reprioritize: unavailable: forbidden to get PyTorchJob nlp-team/bert-pretrain"
        ),
        "{notice}"
    );
    // The refusal came before any prompt: there is none to answer.
    while let Ok(ev) = actions.events.try_recv() {
        assert!(as_prompt(ev).is_none(), "a prompt after the refusal");
    }
    let w = wl_of(&store, "nlp-team", "bert-pretrain").unwrap();
    assert_eq!(w["spec"]["priority"], bert["spec"]["priority"]);
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].action, "set-priority");
    assert_eq!(lines[0].outcome, "refused");
    actions.task.abort();
    env.sim.shutdown().await;
}

/// The seed with `withinClusterQueue: Never`: the boss waits, the four jobs run.
async fn boss_waiting(speed: f64) -> Env {
    let env = start(seed_with_never(), speed).await;
    let store = env.store().clone();
    wait_until("four jobs admitted and the boss queued", || {
        NORMAL_JOBS
            .iter()
            .all(|(ns, j)| wl_of(&store, ns, j).is_some_and(|w| admitted(&w)))
            && wl_of(&store, "nlp-team", "boss-urgent-llama-finetune").is_some()
    })
    .await;
    env
}

fn boss_key(store: &ObjectStore) -> String {
    let w = wl_of(store, "nlp-team", "boss-urgent-llama-finetune").unwrap();
    format!("nlp-team/{}", w["metadata"]["name"].as_str().unwrap())
}

async fn approval_plan(env: &Env, actor: &Actor) -> gangplank::actions::ApprovalPlan {
    let boss = boss_key(env.store());
    let state = env
        .state_when(|s| {
            s.workloads.values().any(|w| w.key() == boss)
                && s.workloads
                    .values()
                    .filter(|w| w.has_quota_reservation())
                    .count()
                    == 4
        })
        .await;
    // The console's Plan view offers the same proposal.
    let views = gangplank::tui::adapt::proposal_views(&state, &ApprovalPolicy::default());
    assert_eq!(
        views.iter().map(|v| v.id.as_str()).collect::<Vec<_>>(),
        [boss.as_str()]
    );
    plan_approval(
        actor,
        &state,
        "nlp-team/boss-urgent-llama-finetune",
        &ApprovalPolicy::default(),
    )
    .await
    .unwrap()
}

fn victim_jobs(store: &ObjectStore, plan: &gangplank::actions::ApprovalPlan) -> Vec<String> {
    let mut jobs: Vec<String> = plan
        .victims
        .iter()
        .map(|v| {
            let w = store
                .get(&ResourceKey::WORKLOADS, Some(&v.namespace), &v.name)
                .unwrap();
            w["metadata"]["ownerReferences"][0]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    jobs.sort();
    jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_evicts_the_two_shown_victims_and_they_run_again() {
    // 600x: the boss arrives after 1 s and runs for 6 s.
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let actor = env.actor(false).await;
    let plan = approval_plan(&env, &actor).await;
    assert_eq!(victim_jobs(&store, &plan), ["gpt-eval", "yolo-train"]);
    let text = plan.describe();
    assert!(text.contains("8 GPUs"), "{text}");
    assert!(text.contains("run time lost"), "{text}");
    let o = execute_approval(&actor, &plan, &ApproveOptions::default()).await;
    assert!(o.ok, "{}", o.message);
    wait_until("boss admitted", || {
        wl_of(&store, "nlp-team", "boss-urgent-llama-finetune").is_some_and(|w| admitted(&w))
    })
    .await;
    // Exactly the shown two were evicted; the other two kept running.
    for (ns, j) in NORMAL_JOBS {
        let w = wl_of(&store, ns, j).unwrap();
        let victim = j == "gpt-eval" || j == "yolo-train";
        assert_eq!(admitted(&w), !victim, "{j}");
        assert_eq!(w["spec"]["active"], true, "{j} is reactivated");
        assert!(
            w["metadata"]["annotations"][APPROVAL_ANNOTATION].is_null(),
            "{j}: intent removed"
        );
    }
    wait_until("boss finished and both victims run again", || {
        wl_of(&store, "nlp-team", "boss-urgent-llama-finetune").is_some_and(|w| finished(&w))
            && ["gpt-eval", "yolo-train"].iter().all(|j| {
                NORMAL_JOBS
                    .iter()
                    .find(|(_, n)| n == j)
                    .and_then(|(ns, _)| wl_of(&store, ns, j))
                    .is_some_and(|w| admitted(&w))
            })
    })
    .await;
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].action, "approve");
    assert_eq!(lines[0].outcome, "done");
    assert_eq!(lines[0].victims.len(), 2);
    env.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_completes_an_interrupted_approval() {
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let actor = env.actor(false).await;
    let plan = approval_plan(&env, &actor).await;
    // The first half only: intent recorded, victims deactivated, then "killed".
    let o = execute_approval(
        &actor,
        &plan,
        &ApproveOptions {
            stop_after_deactivate: true,
            ..ApproveOptions::default()
        },
    )
    .await;
    assert!(o.ok, "{}", o.message);
    for v in &plan.victims {
        let w = store
            .get(&ResourceKey::WORKLOADS, Some(&v.namespace), &v.name)
            .unwrap();
        assert_eq!(w["spec"]["active"], false);
        let intent: ApprovalIntent = serde_json::from_str(
            w["metadata"]["annotations"][APPROVAL_ANNOTATION]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(intent.preemptor, plan.preemptor);
        assert!(!intent.expect_active);
        assert_eq!(intent.generation, w["metadata"]["generation"].as_i64());
    }
    // A new gangplank instance starts and recovers.
    let fresh = env.actor(false).await;
    let done = recover(&fresh, DEADLINE).await.unwrap();
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|o| o.ok), "{done:?}");
    for v in &plan.victims {
        let w = store
            .get(&ResourceKey::WORKLOADS, Some(&v.namespace), &v.name)
            .unwrap();
        assert_eq!(w["spec"]["active"], true);
        assert!(w["metadata"]["annotations"][APPROVAL_ANNOTATION].is_null());
    }
    wait_until("boss admitted", || {
        wl_of(&store, "nlp-team", "boss-urgent-llama-finetune").is_some_and(|w| admitted(&w))
    })
    .await;
    // Nothing left to recover.
    assert!(recover(&fresh, DEADLINE).await.unwrap().is_empty());
    let lines = env.audit_lines();
    let actions: Vec<&str> = lines.iter().map(|l| l.action.as_str()).collect();
    assert_eq!(actions, ["approve", "recover", "recover"]);
    env.sim.shutdown().await;
}

fn annotations_of(store: &ObjectStore, ns: &str, name: &str) -> (Value, Value) {
    let w = store.get(&ResourceKey::WORKLOADS, Some(ns), name).unwrap();
    (
        w["spec"]["active"].clone(),
        w["metadata"]["annotations"].clone(),
    )
}

/// Issue #14 finding 1: approve dies between the intent patch and the deactivation,
/// an operator then holds the victim with a plain patch (as kubectl would), and the next
/// gangplank write (recovery, then an unrelated resume) must leave the hold standing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_intent_never_reverts_a_later_hold() {
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let actor = env.actor(false).await;
    let plan = approval_plan(&env, &actor).await;
    let o = execute_approval(
        &actor,
        &plan,
        &ApproveOptions {
            stop_after_intent: true,
            ..ApproveOptions::default()
        },
    )
    .await;
    assert!(o.ok, "{}", o.message);
    let v = &plan.victims[0];
    let (active, ann) = annotations_of(&store, &v.namespace, &v.name);
    assert_eq!(active, true, "killed before the deactivation");
    assert!(ann[APPROVAL_ANNOTATION].is_string(), "{ann}");
    // An operator holds it, not through gangplank.
    let obj = actor.exec.workload(&v.namespace, &v.name);
    actor
        .exec
        .write(&obj, &json!({"spec": {"active": false}}))
        .await
        .unwrap();
    // Any later gangplank write: recovery on start, then an unrelated resume.
    let fresh = env.actor(false).await;
    let done = recover(&fresh, DEADLINE).await.unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0].record.outcome, "cleared");
    assert!(
        done[0].message.contains("hold stands"),
        "{}",
        done[0].message
    );
    let r = fresh.resume("nlp-team/bert-pretrain").await;
    assert!(!r.message.contains(&v.name), "{}", r.message);
    let (active, ann) = annotations_of(&store, &v.namespace, &v.name);
    assert_eq!(active, false, "the operator's hold stands");
    assert!(ann[APPROVAL_ANNOTATION].is_null(), "{ann}");
    assert!(recover(&fresh, DEADLINE).await.unwrap().is_empty());
    env.sim.shutdown().await;
}

/// After our deactivation, a resume and a new hold by someone else (the spec changed
/// twice): recovery never reactivates. `gangplank hold` of a victim drops its intent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_leaves_a_hold_made_after_the_deactivation() {
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let actor = env.actor(false).await;
    let plan = approval_plan(&env, &actor).await;
    let o = execute_approval(
        &actor,
        &plan,
        &ApproveOptions {
            stop_after_deactivate: true,
            ..ApproveOptions::default()
        },
    )
    .await;
    assert!(o.ok, "{}", o.message);
    let (a, b) = (&plan.victims[0], &plan.victims[1]);
    let obj = actor.exec.workload(&a.namespace, &a.name);
    for active in [true, false] {
        actor
            .exec
            .write(&obj, &json!({"spec": {"active": active}}))
            .await
            .unwrap();
    }
    // The second victim: an operator holds it with gangplank (already inactive).
    let h = actor.hold(&format!("{}/{}", b.namespace, b.name)).await;
    assert!(h.ok, "{}", h.message);
    assert_eq!(h.record.outcome, "done", "{}", h.message);
    let (_, ann) = annotations_of(&store, &b.namespace, &b.name);
    assert!(
        ann[APPROVAL_ANNOTATION].is_null(),
        "hold drops the intent: {ann}"
    );
    let fresh = env.actor(false).await;
    let done = recover(&fresh, DEADLINE).await.unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    assert!(
        done[0].message.contains("spec changed"),
        "{}",
        done[0].message
    );
    for v in [a, b] {
        let (active, ann) = annotations_of(&store, &v.namespace, &v.name);
        assert_eq!(active, false, "{} stays held", v.key);
        assert!(ann[APPROVAL_ANNOTATION].is_null(), "{ann}");
    }
    let lines = env.audit_lines();
    let rec = lines.iter().find(|l| l.action == "recover").unwrap();
    assert_eq!(rec.approval_id, lines[0].approval_id);
    assert!(rec.approval_id.is_some());
    env.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_plan_conflicts_and_writes_nothing() {
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let actor = env.actor(false).await;
    let plan = approval_plan(&env, &actor).await;
    // Someone changes the last victim after the plan was made.
    let changed = plan.victims.last().unwrap().clone();
    store
        .patch(
            &ResourceKey::WORKLOADS,
            Some(&changed.namespace),
            &changed.name,
            PatchKind::Merge,
            &json!({"metadata": {"labels": {"touched": "yes"}}}),
            WriteOptions::default(),
        )
        .unwrap();
    let stats = env.sim.server().stats().clone();
    stats.reset();
    let o = execute_approval(&actor, &plan, &ApproveOptions::default()).await;
    assert!(!o.ok);
    assert_eq!(o.record.outcome, "conflict");
    assert!(o.message.contains(&changed.name), "{}", o.message);
    assert!(o.message.contains("409"), "{}", o.message);
    // Only dry runs were sent: no victim carries the intent or was deactivated.
    for v in &plan.victims {
        let w = store
            .get(&ResourceKey::WORKLOADS, Some(&v.namespace), &v.name)
            .unwrap();
        assert_eq!(w["spec"]["active"], true);
        assert!(w["metadata"]["annotations"][APPROVAL_ANNOTATION].is_null());
        assert!(admitted(&w));
    }
    assert_eq!(
        stats.count("patch", "workloads.kueue.x-k8s.io"),
        plan.victims.len() as u64,
        "one dry run per victim, no real write"
    );
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].dry_run.starts_with("refused: "),
        "{}",
        lines[0].dry_run
    );
    assert!(lines[0].dry_run.contains("409"), "{}", lines[0].dry_run);
    env.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_patch_writes_nothing_and_explains() {
    let env = start(Scenario::seed(), 60.0).await;
    let store = env.store().clone();
    wait_until("bert admitted", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w))
    })
    .await;
    env.sim.server().faults().add_rule(FaultRule {
        resource: "workloads".into(),
        verbs: vec!["patch".into()],
        status: Some(403),
        ..Default::default()
    });
    let actor = env.actor(false).await;
    let o = actor.hold("nlp-team/bert-pretrain").await;
    assert!(!o.ok);
    assert_eq!(o.record.outcome, "refused");
    assert!(o.message.contains("forbidden"), "{}", o.message);
    assert!(o.message.contains("bert-pretrain"), "{}", o.message);
    let w = wl_of(&store, "nlp-team", "bert-pretrain").unwrap();
    assert_eq!(w["spec"]["active"], true);
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].outcome, "refused");
    // The access review (answered from the same rule) refused before any request:
    // not even the dry run was sent.
    assert_eq!(lines[0].dry_run, "not run");
    let stats = env.sim.server().stats();
    assert_eq!(stats.count("patch", "workloads.kueue.x-k8s.io"), 0);
    assert!(stats.count_verb("review") >= 1);
    env.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readonly_sends_zero_write_requests() {
    let env = boss_waiting(600.0).await;
    let store = env.store().clone();
    let rw = env.actor(false).await;
    let plan = approval_plan(&env, &rw).await;
    let stats = env.sim.server().stats().clone();
    stats.reset();
    let ro = env.actor(true).await;
    let outcomes = [
        ro.hold("nlp-team/bert-pretrain").await,
        ro.resume("nlp-team/bert-pretrain").await,
        ro.set_priority("nlp-team/bert-pretrain", &PriorityTarget::Value(5))
            .await,
        execute_approval(&ro, &plan, &ApproveOptions::default()).await,
    ];
    for (i, o) in outcomes.iter().enumerate() {
        // Resuming an active Workload is a no-op that needs no write.
        assert_eq!(o.ok, i == 1, "{}", o.message);
        assert!(o.record.readonly);
    }
    assert!(
        outcomes[0].message.contains("read-only"),
        "{}",
        outcomes[0].message
    );
    assert!(recover(&ro, DEADLINE).await.unwrap().is_empty());
    assert_eq!(stats.write_count(), 0, "{:?}", stats.snapshot());
    assert!(wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w)));
    // resume of an active Workload is a no-op, still audited: 4 lines.
    assert_eq!(env.audit_lines().len(), 4);
    env.sim.shutdown().await;
}

/// The console's action task asks the apiserver (SelfSubjectAccessReview, answered by
/// the simulator from its fault rules) where it may patch Workloads, and tells the
/// console before any key is pressed; nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_actions_learn_where_rbac_refuses_before_any_key() {
    use gangplank::actions::console::{ConsoleActionSettings, spawn_console_actions};

    let env = start(Scenario::seed(), 60.0).await;
    env.sim.server().faults().add_rule(FaultRule {
        resource: "workloads".into(),
        verbs: vec!["patch".into()],
        status: Some(403),
        ..Default::default()
    });
    let opts = SourceOptions::default();
    let client = source::connect(&env.cluster, opts.read_timeout())
        .await
        .unwrap();
    let handle = source::start(client, opts).await;
    let settings = ConsoleActionSettings {
        audit_log: Some(env.audit.clone()),
        ..Default::default()
    };
    let mut actions = spawn_console_actions(&env.cluster, &settings, handle.snapshots())
        .await
        .unwrap();
    let mut notices = Vec::new();
    let access = next_event(&mut actions.events, |e| match e {
        ActionEvent::Access(a) => Some(a),
        ActionEvent::Notice(n) => {
            notices.push(n);
            None
        }
        _ => None,
    })
    .await;
    // Every namespace of the seed refuses, so the console hears "everywhere".
    let why = access.everywhere.expect("refused everywhere");
    assert!(why.contains("forbids patch on workloads"), "{why}");
    // The notice comes before the access survey's answer.
    assert!(
        notices.iter().any(|n| n.starts_with("actions unavailable")),
        "{notices:?}"
    );
    let stats = env.sim.server().stats();
    assert_eq!(stats.write_count(), 0);
    assert!(
        stats.count_verb("review") >= 2,
        "cluster-wide, then per namespace"
    );
    actions.task.abort();
    handle.shutdown().await;
    env.sim.shutdown().await;
}

/// Holding a whole ClusterQueue writes `stopPolicy: Hold` (as `kueuectl stop
/// clusterqueue --keep-already-running`): Kueue reports it inactive and admits nothing
/// new, running workloads keep running; resume writes `None`. One audit line each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holding_a_cluster_queue_stops_admission_and_resume_restores_it() {
    let env = start(Scenario::seed(), 60.0).await;
    let store = env.store().clone();
    wait_until("bert admitted", || {
        wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w))
    })
    .await;
    let cq = || {
        store
            .get(&ResourceKey::CLUSTER_QUEUES, None, "hyperpod-global-queue")
            .unwrap()
    };
    let actor = env.actor(false).await;
    let o = actor
        .set_queue_stop("ClusterQueue", "", "hyperpod-global-queue", true)
        .await;
    assert!(o.ok, "{}", o.message);
    assert!(
        o.message
            .contains("held ClusterQueue hyperpod-global-queue"),
        "{}",
        o.message
    );
    assert_eq!(cq()["spec"]["stopPolicy"], "Hold");
    wait_until("the ClusterQueue reported stopped", || {
        cond(&cq(), "Active").is_some_and(|(s, r)| s == "False" && r == "Stopped")
    })
    .await;
    // Running workloads keep running.
    assert!(wl_of(&store, "nlp-team", "bert-pretrain").is_some_and(|w| admitted(&w)));
    // Holding again writes nothing.
    let again = actor
        .set_queue_stop("ClusterQueue", "", "hyperpod-global-queue", true)
        .await;
    assert!(
        again.ok && again.message.contains("nothing written"),
        "{}",
        again.message
    );

    let o = actor
        .set_queue_stop("ClusterQueue", "", "hyperpod-global-queue", false)
        .await;
    assert!(o.ok, "{}", o.message);
    assert_eq!(cq()["spec"]["stopPolicy"], "None");
    wait_until("the ClusterQueue active again", || {
        cond(&cq(), "Active").is_some_and(|(s, _)| s == "True")
    })
    .await;
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0].target, "clusterqueue/hyperpod-global-queue");
    assert_eq!(
        [
            lines[0].outcome.as_str(),
            lines[1].outcome.as_str(),
            lines[2].outcome.as_str()
        ],
        ["done", "noop", "done"]
    );
    env.sim.shutdown().await;
}
