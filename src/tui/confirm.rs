//! The confirmation prompt of operator actions.
//!
//! The action executor (outside the console) sends a summary of exactly what it will
//! write ([`super::Msg::Confirm`]), with detail lines when there is more to weigh (a
//! reprioritize's consequence, drawn in a panel by `views::confirm`); the console shows
//! "press y to confirm: …" on the message line and the next key answers: `y` confirms,
//! any other key cancels ([`super::Effect::Confirmed`]). While the prompt is up no other
//! key acts, so a stray keystroke can never start a second action.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Mode};
use super::msg::{Effect, Prompt};

/// Shows the prompt (its details, if any, in a panel: see `views::confirm`).
pub fn ask(app: &mut App, prompt: Prompt) -> Vec<Effect> {
    app.message = Some(format!(
        "press y to confirm: {} (any other key cancels)",
        prompt.summary
    ));
    app.mode = Mode::Confirm(prompt);
    vec![Effect::Redraw]
}

/// The operator's answer.
pub fn answer(app: &mut App, key: KeyEvent, prompt: &Prompt) -> Vec<Effect> {
    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y'));
    app.mode = Mode::Normal;
    let summary = &prompt.summary;
    app.message = Some(if yes {
        format!("confirmed: {summary}")
    } else {
        format!("cancelled: {summary}")
    });
    vec![
        Effect::Confirmed {
            prompt: prompt.id,
            yes,
        },
        Effect::Redraw,
    ]
}
