//! Key chords: parsing config strings ("ctrl-c", "shift-tab", "G") and normalising
//! terminal key events so the two compare equal.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key with its modifiers, normalised so that config strings and terminal events
/// compare equal: SHIFT is dropped for characters (the case carries it) and BackTab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyChord {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl KeyChord {
    pub fn from_event(ev: &KeyEvent) -> KeyChord {
        let mut modifiers = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        let code = match ev.code {
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::Tab if ev.modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            other => other,
        };
        if matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
            modifiers -= KeyModifiers::SHIFT;
        } else {
            modifiers |= ev.modifiers & KeyModifiers::SHIFT;
        }
        KeyChord { code, modifiers }
    }

    /// Parses "q", "G", "ctrl-c", "alt-x", "shift-tab", "enter", "pgdn", "f5", "space", "-".
    pub fn parse(s: &str) -> Result<KeyChord, String> {
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = s;
        // A lone "-" is the minus key, not a separator.
        while rest.len() > 1
            && let Some((prefix, tail)) = rest.split_once('-')
        {
            match prefix.to_ascii_lowercase().as_str() {
                "ctrl" | "c" => modifiers |= KeyModifiers::CONTROL,
                "alt" | "a" | "m" => modifiers |= KeyModifiers::ALT,
                "shift" | "s" => modifiers |= KeyModifiers::SHIFT,
                _ => return Err(format!("unknown modifier {prefix:?} in key {s:?}")),
            }
            rest = tail;
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" if modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            "delete" | "del" => KeyCode::Delete,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if modifiers.contains(KeyModifiers::SHIFT) => {
                        KeyCode::Char(c.to_ascii_uppercase())
                    }
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(format!("unknown key {rest:?} in {s:?}")),
                }
            }
        };
        let ev = KeyEvent::new(code, modifiers);
        Ok(KeyChord::from_event(&ev))
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Up => f.write_str("up"),
            KeyCode::Down => f.write_str("down"),
            KeyCode::Left => f.write_str("left"),
            KeyCode::Right => f.write_str("right"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}
