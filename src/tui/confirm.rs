//! The confirmation prompt of operator actions.
//!
//! The action executor (outside the console) sends a summary of exactly what it will
//! write ([`super::Msg::Confirm`]), with detail lines when there is more to weigh (an
//! approval's victims, preemptor, quota freed and what stays blocked; a reprioritize's
//! consequence). The console draws it as a panel (`views::confirm`), wrapped at any
//! width, with `y` / `n` / Esc spelled out; a panel taller than the screen scrolls
//! (↑↓ j k PgUp PgDn Home End). `y` confirms; `n`, Esc and any other key cancel
//! ([`super::Effect::Confirmed`]). While the prompt is up no other key acts, so a
//! stray keystroke can never start a second action.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Mode};
use super::keymap::KeyAction;
use super::msg::{Effect, Prompt};

/// Shows the prompt as a panel.
pub fn ask(app: &mut App, prompt: Prompt) -> Vec<Effect> {
    app.message = Some(format!(
        "press y to confirm: {} (n, Esc or any other key cancels)",
        prompt.summary
    ));
    app.confirm_scroll = 0;
    app.mode = Mode::Confirm(prompt);
    vec![Effect::Redraw]
}

/// The operator's answer, or a scroll of a panel taller than the screen.
pub fn answer(app: &mut App, key: KeyEvent, prompt: &Prompt) -> Vec<Effect> {
    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y'));
    if !yes {
        let max = app.confirm_max.get();
        let page = app.size.1.saturating_sub(8).max(1);
        let cur = app.confirm_scroll.min(max);
        let scrolled = match app.keymap.lookup(&key) {
            Some(KeyAction::Up) => Some(cur.saturating_sub(1)),
            Some(KeyAction::Down) => Some((cur + 1).min(max)),
            Some(KeyAction::PageUp) => Some(cur.saturating_sub(page)),
            Some(KeyAction::PageDown) => Some(cur.saturating_add(page).min(max)),
            Some(KeyAction::Top) => Some(0),
            Some(KeyAction::Bottom) => Some(max),
            _ => None,
        };
        // Movement keys scroll only when there is something to scroll.
        if let Some(s) = scrolled
            && max > 0
        {
            app.confirm_scroll = s;
            return vec![Effect::Redraw];
        }
    }
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
