//! The on-call console (issue #12): readable rows, scrollable details, the approval
//! panel, the Events view. Rendered with ratatui's TestBackend, read as a person would.

use std::sync::Arc;

use crate::tui_fixture;

use crossterm::event::KeyCode;
use gangplank::tui::*;
use tui_fixture::{app, key, screen, type_str};

/// Adds a workload to the fixture's data, named as Kueue names a PyTorchJob's
/// Workload (`pytorchjob-<job>-<hash>`), owned by the job `job`.
fn add_job(data: &mut ConsoleData, ns: &str, job: &str, hash: &str) {
    let mut state = (*data.state).clone();
    let base = state
        .workloads
        .get(&("cv-team".to_string(), "yolo-train".to_string()))
        .expect("fixture workload")
        .as_ref()
        .clone();
    let name = format!("pytorchjob-{job}-{hash}");
    let mut wl = base;
    wl.namespace = ns.into();
    wl.name = name.clone();
    wl.uid = format!("uid-{name}");
    if let Some(o) = wl.owner.as_mut() {
        o.name = job.into();
    }
    state.workloads.insert((ns.into(), name), Arc::new(wl));
    data.state = Arc::new(state);
    data.generation += 1;
}

#[test]
fn two_names_with_a_30_character_common_prefix_are_distinguishable_at_80x24() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    let mut data = a.cache.data.clone();
    let prefix = "speech-recognition-llama-finetune-"; // 34 characters
    assert!(prefix.len() >= 30);
    add_job(
        &mut data,
        "hyperpod-ns-speech",
        &format!("{prefix}run-a1"),
        "1d9fd",
    );
    add_job(
        &mut data,
        "hyperpod-ns-speech",
        &format!("{prefix}run-b2"),
        "7c3e0",
    );
    update(&mut a, Msg::Data(data));
    let s = screen(&a, 80, 24);
    let lines: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("hyperpod") || l.contains("speech"))
        .collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert_ne!(lines[0], lines[1], "{s}");
    // The distinguishing tail survives the truncation, and the verdict column shows.
    assert!(
        lines[0].contains("run-a1") || lines[1].contains("run-a1"),
        "{s}"
    );
    assert!(
        lines[0].contains("run-b2") || lines[1].contains("run-b2"),
        "{s}"
    );
    assert!(s.contains("VERDICT"), "{s}");
    // The full Workload name is in the details.
    type_str(&mut a, "/run-b2");
    update(&mut a, key(KeyCode::Enter));
    update(&mut a, key(KeyCode::Enter));
    let d = screen(&a, 80, 24);
    assert!(
        d.contains(&format!("pytorchjob-{prefix}run-b2-7c3e0")),
        "details show the whole name:\n{d}"
    );
}

#[test]
fn the_verdict_column_gets_the_remaining_width_at_80x24() {
    let a = app(ViewId::Workloads, 80, 24, "dark");
    let s = screen(&a, 80, 24);
    let boss = s
        .lines()
        .find(|l| l.contains("boss-urgent-llama-finetune"))
        .unwrap_or_else(|| panic!("boss row whole:\n{s}"));
    assert!(boss.contains("preempts 2"), "{s}");
}

#[test]
fn details_scroll_the_text_not_the_selection_at_80x24() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    // The boss job, with a history of conditions: more lines than 80x24 shows.
    let mut data = a.cache.data.clone();
    let mut state = (*data.state).clone();
    let key_ = (
        "nlp-team".to_string(),
        "boss-urgent-llama-finetune".to_string(),
    );
    let mut boss = state.workloads[&key_].as_ref().clone();
    for (i, t) in ["Evicted", "Requeued", "PodsReady"].iter().enumerate() {
        boss.conditions.push(gangplank::model::Condition {
            type_: t.to_string(),
            status: gangplank::model::ConditionStatus::False,
            reason: format!("Reason{i}"),
            message: format!(
                "a message about {t} long enough to wrap at eighty columns, twice over"
            ),
            last_transition_time: Some(tui_fixture::NOW - 60_000),
        });
    }
    state.workloads.insert(key_, Arc::new(boss));
    data.state = Arc::new(state);
    data.generation += 1;
    update(&mut a, Msg::Data(data));
    type_str(&mut a, "/boss");
    update(&mut a, key(KeyCode::Enter));
    let selected = a.lists[ViewId::Workloads.index()].selected;
    update(&mut a, key(KeyCode::Enter));
    // Make the detail longer than the screen so there is something to scroll.
    let first = screen(&a, 80, 24);
    assert!(first.contains("shadow engine"), "{first}");
    assert!(
        first.contains("lines 1–"),
        "the pane says it scrolls:\n{first}"
    );
    update(&mut a, key(KeyCode::PageDown));
    let paged = screen(&a, 80, 24);
    assert_ne!(first, paged, "PgDn scrolls the text");
    assert!(
        paged.contains("conditions") || paged.contains("pods"),
        "{paged}"
    );
    assert_eq!(a.lists[ViewId::Workloads.index()].selected, selected);
    update(&mut a, key(KeyCode::Home));
    assert_eq!(screen(&a, 80, 24), first, "Home returns to the top");
    update(&mut a, key(KeyCode::Char('j')));
    let down = screen(&a, 80, 24);
    assert_ne!(down, first, "j scrolls one line");
    update(&mut a, key(KeyCode::Char('k')));
    assert_eq!(screen(&a, 80, 24), first, "k scrolls back");
    // End shows the last line; PgDn past the end changes nothing.
    update(&mut a, key(KeyCode::End));
    let end = screen(&a, 80, 24);
    assert!(end.contains("pods"), "{end}");
    update(&mut a, key(KeyCode::PageDown));
    assert_eq!(screen(&a, 80, 24), end);
    // Esc closes the detail on the same workload.
    update(&mut a, key(KeyCode::Esc));
    assert!(!a.detail);
    assert_eq!(a.lists[ViewId::Workloads.index()].selected, selected);
}

#[test]
fn enter_opens_details_for_health_audit_and_plan_rows() {
    let mut a = app(ViewId::Health, 80, 24, "dark");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 80, 24);
    assert!(s.contains("fix") && s.contains("cohort: research"), "{s}");
    assert!(s.contains("cq/hyperpod-global-queue"), "{s}");

    let mut a = app(ViewId::Audit, 80, 24, "dark");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 80, 24);
    assert!(s.contains("2026-01-01 00:11:00Z"), "wall-clock time:\n{s}");
    assert!(s.contains("the console is read-only"), "{s}");

    let mut a = app(ViewId::Plan, 80, 24, "dark");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 80, 24);
    assert!(s.contains("proposal p-1"), "{s}");
    assert!(s.contains("target   cv-team/yolo-train"), "{s}");
    update(&mut a, key(KeyCode::Esc));
    assert!(!screen(&a, 80, 24).contains("proposal p-1"));
}

/// The approval the seed story asks for: evict yolo-train and gpt-eval for the boss.
fn approval_prompt() -> Prompt {
    use gangplank::actions::approve::{ApprovalPlan, VictimPlan};
    let victim = |ns: &str, name: &str, lost: i64| VictimPlan {
        key: format!("{ns}/pytorchjob-{name}-1d9fd"),
        namespace: ns.into(),
        name: format!("pytorchjob-{name}-1d9fd"),
        owner: format!("PyTorchJob {name}"),
        gpus: 8,
        priority: 1000,
        run_time_lost_secs: Some(lost),
        resource_version: Some("42".into()),
    };
    let plan = ApprovalPlan {
        preemptor: "nlp-team/boss-urgent-llama-finetune".into(),
        cluster_queue: "hyperpod-global-queue".into(),
        flavors: [(
            "master".to_string(),
            [("nvidia.com/gpu".to_string(), "p4d-flavor".to_string())].into(),
        )]
        .into(),
        victims: vec![
            victim("cv-team", "yolo-train", 540),
            victim("nlp-team", "gpt-eval", 600),
        ],
    };
    Prompt {
        id: 0,
        summary: plan.summary(),
        details: plan.confirm_lines(&tui_fixture::cluster()),
    }
}

#[test]
fn the_approval_panel_shows_both_victims_the_preemptor_and_the_keys_at_80x24() {
    let mut a = app(ViewId::Plan, 80, 24, "dark");
    update(&mut a, Msg::Confirm(approval_prompt()));
    let s = screen(&a, 80, 24);
    for needle in [
        "cv-team/pytorchjob-yolo-train-1d9fd",
        "nlp-team/pytorchjob-gpt-eval-1d9fd",
        "preemptor: nlp-team/boss-urgent-llama-finetune (16 GPUs)",
        "quota freed: 16 GPUs",
        "stays blocked",
        "y confirm",
        "n / Esc cancel",
    ] {
        assert!(s.contains(needle), "{needle:?} missing:\n{s}");
    }
    // Esc cancels; nothing is confirmed.
    let effects = update(&mut a, key(KeyCode::Esc));
    assert!(
        effects.contains(&Effect::Confirmed {
            prompt: 0,
            yes: false
        }),
        "{effects:?}"
    );
    assert!(!screen(&a, 80, 24).contains("y confirm"));
}

#[test]
fn a_panel_taller_than_the_screen_scrolls_and_y_still_confirms() {
    // 60x15: the smallest console; the approval does not fit.
    let mut a = app(ViewId::Plan, 60, 15, "dark");
    update(&mut a, Msg::Confirm(approval_prompt()));
    let top = screen(&a, 60, 15);
    assert!(top.contains("PgDn scroll"), "{top}");
    let mut seen = top.clone();
    for _ in 0..10 {
        let effects = update(&mut a, key(KeyCode::PageDown));
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::Confirmed { .. }))
        );
        seen.push_str(&screen(&a, 60, 15));
    }
    // Every line was reachable (wrapped at 60 columns, so look for the tails).
    for needle in ["yolo-train-1d9fd", "gpt-eval-1d9fd", "quota freed", "stays"] {
        assert!(seen.contains(needle), "{needle:?} never shown:\n{seen}");
    }
    let effects = update(&mut a, key(KeyCode::Char('y')));
    assert!(
        effects.contains(&Effect::Confirmed {
            prompt: 0,
            yes: true
        }),
        "{effects:?}"
    );
}

#[test]
fn the_plan_view_shows_only_cycles_where_something_happens() {
    let mut a = app(ViewId::Plan, 120, 40, "dark");
    let mut data = a.cache.data.clone();
    let mut plan = (**data.plan.as_ref().expect("fixture plan")).clone();
    plan.cycles.insert(
        1,
        CycleView {
            index: 2,
            ..CycleView::default()
        },
    );
    plan.cycles[2].index = 3;
    plan.pending = vec![PendingHeadView {
        workload: "cv-team/late-job".into(),
        cluster_queue: "hyperpod-global-queue".into(),
        reason: "needs 8 nvidia.com/gpu in flavor p4d-flavor".into(),
        shortfall: "8 nvidia.com/gpu in p4d-flavor".into(),
        could_free: "evicting cv-team/resnet-sweep (8 GPUs, priority 1000)".into(),
    }];
    data.plan = Some(Arc::new(plan));
    data.generation += 1;
    update(&mut a, Msg::Data(data));
    let s = screen(&a, 120, 40);
    assert!(s.contains("cycle 1") && s.contains("cycle 3"), "{s}");
    assert!(
        !s.contains("cycle 2"),
        "the empty cycle has no header:\n{s}"
    );
    assert!(
        s.contains("cv-team/late-job (hyperpod-global-queue): needs 8"),
        "{s}"
    );
    assert!(s.contains("short 8 nvidia.com/gpu in p4d-flavor"), "{s}");
    assert!(
        s.contains("could free it: evicting cv-team/resnet-sweep"),
        "{s}"
    );
}

#[test]
fn a_namespace_scopes_every_view_and_ns_switches_it() {
    let mut a = app(ViewId::Workloads, 120, 40, "dark");
    a.set_namespace(Some("cv-team".into()));
    let s = screen(&a, 120, 40);
    assert!(s.contains("ns cv-team"), "the status bar names it:\n{s}");
    assert!(
        s.contains("resnet-sweep") && s.contains("yolo-train"),
        "{s}"
    );
    assert!(
        !s.contains("bert-pretrain") && !s.contains("boss-urgent"),
        "{s}"
    );
    // Queues: only cv-team's LocalQueue under the (cluster-scoped) ClusterQueue.
    update(&mut a, key(KeyCode::Char('1')));
    let q = screen(&a, 120, 40);
    assert!(
        q.contains("cv-team-queue") && !q.contains("nlp-team-queue"),
        "{q}"
    );
    assert!(q.contains("hyperpod-global-queue"), "{q}");
    // Audit: the one row targets cv-team/resnet-sweep.
    update(&mut a, key(KeyCode::Char('6')));
    assert!(screen(&a, 120, 40).contains("resnet-sweep"));
    // `:ns nlp-team` switches, live.
    update(&mut a, key(KeyCode::Char('2')));
    type_str(&mut a, ":ns nlp-team");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 120, 40);
    assert!(s.contains("ns nlp-team"), "{s}");
    assert!(
        s.contains("bert-pretrain") && !s.contains("resnet-sweep"),
        "{s}"
    );
    // A filter narrows within the namespace.
    type_str(&mut a, "/gpt");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("gpt-eval") && !s.contains("bert-pretrain"),
        "{s}"
    );
    update(&mut a, key(KeyCode::Esc));
    // `:ns all` shows every namespace again.
    type_str(&mut a, ":ns all");
    update(&mut a, key(KeyCode::Enter));
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("ns all") && s.contains("resnet-sweep") && s.contains("bert-pretrain"),
        "{s}"
    );
}

#[test]
fn d_describes_y_shows_yaml_and_unbound_keys_say_so() {
    let mut a = app(ViewId::Workloads, 100, 40, "dark");
    type_str(&mut a, "/boss");
    update(&mut a, key(KeyCode::Enter));
    update(&mut a, key(KeyCode::Char('d')));
    let s = screen(&a, 100, 40);
    assert!(
        s.contains("describe workload nlp-team/boss-urgent-llama-finetune"),
        "{s}"
    );
    assert!(s.contains("Conditions:"), "{s}");
    assert!(s.contains("QuotaReserved  False"), "{s}");
    assert!(s.contains("Events:"), "{s}");
    update(&mut a, key(KeyCode::Esc));
    update(&mut a, key(KeyCode::Char('y')));
    let s = screen(&a, 100, 40);
    assert!(s.contains("kind: Workload"), "{s}");
    assert!(s.contains("queueName: nlp-team-queue"), "{s}");
    update(&mut a, key(KeyCode::Esc));
    assert!(!screen(&a, 100, 40).contains("kind: Workload"));
    update(&mut a, key(KeyCode::Esc)); // clears the filter
    // Nodes and queues describe too; other views say where d works.
    update(&mut a, key(KeyCode::Char('3')));
    update(&mut a, key(KeyCode::Char('y')));
    assert!(screen(&a, 100, 40).contains("kind: Node"));
    update(&mut a, key(KeyCode::Char('5')));
    update(&mut a, key(KeyCode::Char('d')));
    assert!(
        screen(&a, 100, 40).contains("d describe: works on workloads, queues and nodes"),
        "{}",
        screen(&a, 100, 40)
    );
    // k9s keys gangplank does not have say so.
    update(&mut a, key(KeyCode::Char('l')));
    let s = screen(&a, 100, 40);
    assert!(
        s.contains("l: not bound to anything — logs are not shown"),
        "{s}"
    );
    update(&mut a, key(KeyCode::Char('X')));
    assert!(screen(&a, 100, 40).contains("X: not bound to anything — sort with s"));
    // `?` help comes from the same keymap.
    update(&mut a, key(KeyCode::Char('?')));
    let mut help = String::new();
    for _ in 0..40 {
        help.push_str(&screen(&a, 100, 40));
        update(&mut a, key(KeyCode::Down));
    }
    assert!(help.contains("describe the selected workload"), "{help}");
    assert!(help.contains("Events view"), "{help}");
}

/// Issue #12 item 8: WAIT counts from the last eviction (or creation) to the
/// admission, not the run before the eviction; unknown timestamps show `—`.
#[test]
fn wait_counts_from_the_last_eviction_and_unknown_times_are_dashes() {
    use gangplank::model::{Condition, ConditionStatus};
    let t0 = tui_fixture::T0;
    let min = 60_000;
    let cond = |t: &str, status: ConditionStatus, reason: &str, at: i64| Condition {
        type_: t.into(),
        status,
        reason: reason.into(),
        message: String::new(),
        last_transition_time: Some(at),
    };
    let mut a = app(ViewId::Workloads, 160, 48, "dark");
    let mut data = a.cache.data.clone();
    let mut state = (*data.state).clone();
    // yolo-train: created at t0+3m, admitted, ran, evicted at t0+5m, requeued, admitted
    // again at t0+8m. It waited 3 minutes for this admission, not 5.
    let yolo = ("cv-team".to_string(), "yolo-train".to_string());
    let mut w = state.workloads[&yolo].as_ref().clone();
    w.conditions = vec![
        cond(
            "QuotaReserved",
            ConditionStatus::True,
            "QuotaReserved",
            t0 + 8 * min,
        ),
        cond("Admitted", ConditionStatus::True, "Admitted", t0 + 8 * min),
        // Kueue rewrites Evicted to False when it admits again.
        cond(
            "Evicted",
            ConditionStatus::False,
            "QuotaReserved",
            t0 + 8 * min,
        ),
        cond("Requeued", ConditionStatus::True, "Preempted", t0 + 5 * min),
    ];
    state.workloads.insert(yolo, Arc::new(w));
    // resnet-sweep: a dump without timestamps.
    let resnet = ("cv-team".to_string(), "resnet-sweep".to_string());
    let mut r = state.workloads[&resnet].as_ref().clone();
    r.creation_timestamp = 0;
    for c in &mut r.conditions {
        c.last_transition_time = None;
    }
    state.workloads.insert(resnet, Arc::new(r));
    data.state = Arc::new(state);
    data.generation += 1;
    update(&mut a, Msg::Data(data));
    let s = screen(&a, 160, 48);
    let row = |name: &str| {
        s.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}:\n{s}"))
            .to_string()
    };
    let yolo_row = row("yolo-train");
    assert!(
        yolo_row.contains(" 3m "),
        "WAIT 3m (eviction → admission):\n{yolo_row}"
    );
    assert!(!yolo_row.contains(" 5m "), "{yolo_row}");
    let resnet_row = row("resnet-sweep");
    assert!(
        resnet_row.matches('—').count() >= 2,
        "AGE and WAIT unknown:\n{resnet_row}"
    );
    let days = |t: &str| {
        t.len() > 1 && t.ends_with('d') && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit())
    };
    assert!(
        !resnet_row.split_whitespace().any(days),
        "no 9831d age:\n{resnet_row}"
    );
}

#[test]
fn slash_searches_inside_open_details_and_n_goes_to_the_next_match() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    type_str(&mut a, "/boss");
    update(&mut a, key(KeyCode::Enter));
    update(&mut a, key(KeyCode::Char('d'))); // describe: longer than the screen
    let top = screen(&a, 80, 24);
    assert!(top.contains("lines 1–"), "{top}");
    assert!(
        !top.contains("Pod Sets:"),
        "below the fold at first:\n{top}"
    );
    type_str(&mut a, "/pod sets:");
    let s = screen(&a, 80, 24);
    assert!(s.contains("Pod Sets:"), "the search jumped to it:\n{s}");
    assert!(s.contains("match 1/1"), "{s}");
    update(&mut a, key(KeyCode::Enter));
    assert_eq!(a.filter.source, "boss", "the list filter is untouched");
    // A word on several lines: n goes from one match to the next.
    type_str(&mut a, "/");
    for _ in 0.."pod sets:".len() {
        update(&mut a, key(KeyCode::Backspace));
    }
    type_str(&mut a, "nvidia.com/gpu");
    update(&mut a, key(KeyCode::Enter));
    let first = screen(&a, 80, 24);
    assert!(first.contains("match 1/"), "{first}");
    update(&mut a, key(KeyCode::Char('n')));
    let second = screen(&a, 80, 24);
    assert!(second.contains("match 2/"), "{second}");
    // Esc closes the details and drops the search.
    update(&mut a, key(KeyCode::Esc));
    assert!(!a.detail && a.detail_search.is_none());
}

#[test]
fn ctx_lists_the_kubeconfig_contexts_and_asks_the_run_loop_to_switch() {
    let mut a = app(ViewId::Workloads, 120, 30, "dark");
    a.contexts = vec!["prod".into(), "staging".into()];
    type_str(&mut a, ":ctx");
    update(&mut a, key(KeyCode::Enter));
    let m = a.message.clone().unwrap_or_default();
    assert_eq!(
        m,
        "context: seed (simulator) · kubeconfig contexts: prod, staging"
    );
    // Unknown: refused here, nothing for the run loop to do.
    type_str(&mut a, ":ctx nope");
    let effects = update(&mut a, key(KeyCode::Enter));
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::SwitchContext(_))),
        "{effects:?}"
    );
    let m = a.message.clone().unwrap_or_default();
    assert!(m.starts_with("no context \"nope\""), "{m}");
    assert!(m.contains("still on seed (simulator)"), "{m}");
    // Known: the run loop is asked to reconnect, and the message line says so meanwhile.
    type_str(&mut a, ":ctx staging");
    let effects = update(&mut a, key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::SwitchContext("staging".into())),
        "{effects:?}"
    );
    assert_eq!(
        a.message.as_deref(),
        Some("switching to context staging…"),
        "{:?}",
        a.message
    );
}
