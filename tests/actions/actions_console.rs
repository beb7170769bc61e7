//! The console's confirmation prompt for actions: the executor's summary is shown,
//! the next key answers (`y` confirms, anything else cancels) and no other key acts
//! while the prompt is up.

use crate::tui_fixture;

use crossterm::event::KeyCode;
use gangplank::tui::app::Mode;
use gangplank::tui::*;
use tui_fixture::{app, key};

#[test]
fn y_confirms_the_prompted_action() {
    let mut a = app(ViewId::Workloads, 100, 30, "dark");
    update(&mut a, Msg::Confirm("hold nlp-team/bert-pretrain".into()));
    assert_eq!(a.mode, Mode::Confirm("hold nlp-team/bert-pretrain".into()));
    assert!(
        a.message
            .as_deref()
            .unwrap()
            .starts_with("press y to confirm: hold")
    );
    let effects = update(&mut a, key(KeyCode::Char('y')));
    assert_eq!(effects, vec![Effect::Confirmed(true), Effect::Redraw]);
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn any_other_key_cancels_and_does_not_act() {
    let mut a = app(ViewId::Workloads, 100, 30, "dark");
    update(&mut a, Msg::Confirm("hold nlp-team/bert-pretrain".into()));
    // `q` would quit in normal mode: here it only cancels.
    let effects = update(&mut a, key(KeyCode::Char('q')));
    assert_eq!(effects, vec![Effect::Confirmed(false), Effect::Redraw]);
    assert!(a.message.as_deref().unwrap().starts_with("cancelled"));
}
