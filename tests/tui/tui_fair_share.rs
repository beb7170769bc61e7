//! The Queues view's SHARE column (issue #11): weight and dominant resource share of
//! every ClusterQueue and Cohort, shown only when Kueue's configuration enables fair
//! sharing.

use crate::tui_fixture::*;

use std::path::PathBuf;
use std::sync::Arc;

use gangplank::tui::*;

fn queues_screen(dir: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let state = gangplank::model::load_paths(&[path]).expect("fixture");
    let data = ConsoleData::from_state(Arc::new(state), "fixture");
    let mut a = App::new(
        Default::default(),
        Theme::preset("dark"),
        false,
        ViewId::Queues,
    );
    update(&mut a, Msg::Resize(120, 30));
    update(&mut a, Msg::Tick(1_764_403_800_000));
    update(&mut a, Msg::Data(data));
    screen(&a, 120, 30)
}

#[test]
fn share_column_shows_weight_and_dominant_resource_share_under_fair_sharing() {
    let s = queues_screen("tests/fixtures/fair-sharing");
    assert!(s.contains("SHARE"), "{s}");
    // nlp-team borrows 1 of the cohort's 16 GPUs; shared borrows nothing
    let line = |name: &str| {
        s.lines()
            .find(|l| l.contains(&format!("▸ {name}")))
            .unwrap_or_else(|| panic!("{name} in\n{s}"))
            .to_string()
    };
    assert!(line("nlp-team").contains("w1 0.06"), "{s}");
    assert!(line("shared").contains("w1 0.00"), "{s}");
    assert!(s.contains("fair sharing: on"), "status line: {s}");
    // the root cohort has no parent to borrow from
    assert!(
        s.lines()
            .any(|l| l.contains("cohort org") && l.contains("w1 0.00")),
        "{s}"
    );
}

#[test]
fn no_share_column_without_fair_sharing() {
    let s = queues_screen("tests/fixtures/fair-sharing/cluster.yaml");
    assert!(!s.contains("SHARE"), "{s}");
    assert!(!s.contains("fair sharing"), "{s}");
}
