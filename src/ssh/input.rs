//! Decode the raw bytes an SSH client sends (what a terminal in raw mode emits) into
//! crossterm [`KeyEvent`]s.
//!
//! Covered: printable ASCII and UTF-8, Enter/Tab/Backspace/Esc, Ctrl-letter, Alt-key
//! (ESC prefix), arrows/Home/End in CSI (`ESC [ A`) and SS3 (`ESC O A`) forms with xterm
//! modifier parameters, `~` keys (Insert/Delete/PgUp/PgDn/Home/End/F5–F12), F1–F4 (SS3
//! and CSI), Linux-console F1–F5 (`ESC [ [ A`), Shift-Tab (`ESC [ Z`).
//!
//! Splitting: an escape sequence or a UTF-8 character cut across two reads is kept and
//! completed by the next read. The one exception is a lone `ESC` at the very end of a
//! read: terminals send a whole sequence in one write, so a trailing bare ESC is the Esc
//! key (otherwise Esc would hang until the next key).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Longest incomplete sequence we keep between reads; anything longer is garbage and
/// dropped, so the decoder's memory is bounded.
const MAX_PENDING: usize = 32;

const ESC: u8 = 0x1b;

/// Stateful decoder: feed it each read, get keys back.
#[derive(Debug, Default, Clone)]
pub struct InputDecoder {
    pending: Vec<u8>,
}

enum Step {
    /// Consumed `n` bytes, maybe producing a key.
    Key(usize, Option<KeyEvent>),
    /// The bytes are a prefix of a longer sequence; wait for more.
    Incomplete,
}

impl InputDecoder {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decode one read's worth of bytes.
    pub fn feed(&mut self, data: &[u8]) -> Vec<KeyEvent> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let mut keys = Vec::new();
        let mut i = 0;
        while i < buf.len() {
            match decode_one(&buf[i..]) {
                Step::Key(n, key) => {
                    keys.extend(key);
                    i += n.max(1);
                }
                Step::Incomplete => {
                    let rest = &buf[i..];
                    if rest == [ESC] {
                        // Lone ESC at the end of a read: the Esc key.
                        keys.push(key(KeyCode::Esc, KeyModifiers::NONE));
                    } else if rest.len() <= MAX_PENDING {
                        self.pending = rest.to_vec();
                    }
                    break;
                }
            }
        }
        keys
    }

    /// Bytes held back waiting for the rest of a sequence.
    pub fn pending(&self) -> &[u8] {
        &self.pending
    }
}

fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn char_key(c: char, mut mods: KeyModifiers) -> KeyEvent {
    // crossterm reports upper-case letters with SHIFT; apps match on that.
    if c.is_uppercase() {
        mods |= KeyModifiers::SHIFT;
    }
    key(KeyCode::Char(c), mods)
}

fn decode_one(b: &[u8]) -> Step {
    let first = b[0];
    match first {
        ESC => decode_escape(b),
        b'\r' | b'\n' => Step::Key(1, Some(key(KeyCode::Enter, KeyModifiers::NONE))),
        b'\t' => Step::Key(1, Some(key(KeyCode::Tab, KeyModifiers::NONE))),
        0x7f | 0x08 => Step::Key(1, Some(key(KeyCode::Backspace, KeyModifiers::NONE))),
        0x00 => Step::Key(1, Some(key(KeyCode::Char(' '), KeyModifiers::CONTROL))),
        0x01..=0x1a => Step::Key(
            1,
            Some(key(
                KeyCode::Char((b'a' + first - 1) as char),
                KeyModifiers::CONTROL,
            )),
        ),
        0x1c..=0x1f => Step::Key(
            1,
            Some(key(
                KeyCode::Char((b'4' + first - 0x1c) as char),
                KeyModifiers::CONTROL,
            )),
        ),
        _ => decode_utf8(b, KeyModifiers::NONE, 0),
    }
}

/// Decode one UTF-8 character starting at `b[0]`; `extra` bytes were already consumed
/// (an ESC prefix for Alt).
fn decode_utf8(b: &[u8], mods: KeyModifiers, extra: usize) -> Step {
    let first = b[0];
    let len = match first {
        0x20..=0x7e => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        // Invalid lead byte (stray continuation, 0xc0/0xc1, >0xf4): skip it.
        _ => return Step::Key(1 + extra, None),
    };
    if b.len() < len {
        // Only wait if what we have so far is a valid prefix.
        if b[1..].iter().all(|c| c & 0xc0 == 0x80) {
            return Step::Incomplete;
        }
        return Step::Key(1 + extra, None);
    }
    match std::str::from_utf8(&b[..len]) {
        Ok(s) => match s.chars().next() {
            Some(c) => Step::Key(len + extra, Some(char_key(c, mods))),
            None => Step::Key(len + extra, None),
        },
        Err(_) => Step::Key(1 + extra, None),
    }
}

fn decode_escape(b: &[u8]) -> Step {
    if b.len() == 1 {
        return Step::Incomplete;
    }
    match b[1] {
        b'[' => decode_csi(b),
        b'O' => decode_ss3(b),
        ESC => {
            // ESC ESC: the first is the Esc key; the second starts afresh.
            Step::Key(1, Some(key(KeyCode::Esc, KeyModifiers::NONE)))
        }
        // Alt + key: ESC followed by a normal key.
        b'\r' | b'\n' => Step::Key(2, Some(key(KeyCode::Enter, KeyModifiers::ALT))),
        0x7f | 0x08 => Step::Key(2, Some(key(KeyCode::Backspace, KeyModifiers::ALT))),
        0x01..=0x1a if b[1] != b'\t' => Step::Key(
            2,
            Some(key(
                KeyCode::Char((b'a' + b[1] - 1) as char),
                KeyModifiers::CONTROL | KeyModifiers::ALT,
            )),
        ),
        0x20..=0x7e | 0xc2..=0xf4 => match decode_utf8(&b[1..], KeyModifiers::ALT, 1) {
            Step::Incomplete => Step::Incomplete,
            other => other,
        },
        // ESC + anything else: report Esc and let the next byte decode on its own.
        _ => Step::Key(1, Some(key(KeyCode::Esc, KeyModifiers::NONE))),
    }
}

/// xterm modifier parameter: 1 + (shift 1 | alt 2 | ctrl 4 | meta 8).
fn modifiers(param: Option<u16>) -> KeyModifiers {
    let m = param.unwrap_or(1).saturating_sub(1);
    let mut mods = KeyModifiers::NONE;
    if m & 1 != 0 {
        mods |= KeyModifiers::SHIFT;
    }
    if m & 2 != 0 || m & 8 != 0 {
        mods |= KeyModifiers::ALT;
    }
    if m & 4 != 0 {
        mods |= KeyModifiers::CONTROL;
    }
    mods
}

fn letter_key(c: u8) -> Option<KeyCode> {
    Some(match c {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

fn decode_ss3(b: &[u8]) -> Step {
    // ESC O <letter>
    let Some(&c) = b.get(2) else {
        return Step::Incomplete;
    };
    match letter_key(c) {
        Some(code) => Step::Key(3, Some(key(code, KeyModifiers::NONE))),
        // Keypad Enter in application mode.
        None if c == b'M' => Step::Key(3, Some(key(KeyCode::Enter, KeyModifiers::NONE))),
        None => Step::Key(3, None),
    }
}

fn decode_csi(b: &[u8]) -> Step {
    // Linux console F1–F5: ESC [ [ A..E
    if b.get(2) == Some(&b'[') {
        let Some(&c) = b.get(3) else {
            return Step::Incomplete;
        };
        let code = match c {
            b'A'..=b'E' => Some(KeyCode::F(c - b'A' + 1)),
            _ => None,
        };
        return Step::Key(4, code.map(|c| key(c, KeyModifiers::NONE)));
    }
    // ESC [ params final, params in 0x30..=0x3f, intermediates 0x20..=0x2f, final 0x40..=0x7e.
    let mut end = 2;
    loop {
        let Some(&c) = b.get(end) else {
            return Step::Incomplete;
        };
        match c {
            0x20..=0x3f => end += 1,
            0x40..=0x7e => break,
            // Not a CSI after all (control byte inside): drop the ESC [ and go on.
            _ => return Step::Key(2, None),
        }
        if end > MAX_PENDING {
            // Absurdly long: treat as garbage.
            return Step::Key(end, None);
        }
    }
    let fin = b[end];
    let params: Vec<Option<u16>> = std::str::from_utf8(&b[2..end])
        .unwrap_or("")
        .split(';')
        .map(|p| p.parse::<u16>().ok())
        .collect();
    let first = params.first().copied().flatten();
    let mods = modifiers(params.get(1).copied().flatten());
    let n = end + 1;
    let code = match fin {
        b'Z' => return Step::Key(n, Some(key(KeyCode::BackTab, KeyModifiers::SHIFT))),
        b'~' => match first {
            Some(1) | Some(7) => Some(KeyCode::Home),
            Some(2) => Some(KeyCode::Insert),
            Some(3) => Some(KeyCode::Delete),
            Some(4) | Some(8) => Some(KeyCode::End),
            Some(5) => Some(KeyCode::PageUp),
            Some(6) => Some(KeyCode::PageDown),
            Some(v @ 11..=15) => Some(KeyCode::F((v - 10) as u8)),
            Some(v @ 17..=21) => Some(KeyCode::F((v - 11) as u8)),
            Some(v @ 23..=24) => Some(KeyCode::F((v - 12) as u8)),
            // 200/201 bracketed paste markers and anything unknown: ignored.
            _ => None,
        },
        c => letter_key(c),
    };
    Step::Key(n, code.map(|c| key(c, mods)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn km(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }
    fn dec(b: &[u8]) -> Vec<KeyEvent> {
        InputDecoder::new().feed(b)
    }

    #[test]
    fn printable_and_utf8() {
        assert_eq!(
            dec(b"aZ1 "),
            vec![
                k(KeyCode::Char('a')),
                km(KeyCode::Char('Z'), KeyModifiers::SHIFT),
                k(KeyCode::Char('1')),
                k(KeyCode::Char(' '))
            ]
        );
        assert_eq!(
            dec("é€😀".as_bytes()),
            vec![
                k(KeyCode::Char('é')),
                k(KeyCode::Char('€')),
                k(KeyCode::Char('😀'))
            ]
        );
    }

    #[test]
    fn control_keys() {
        assert_eq!(
            dec(b"\r\t\x7f\x08"),
            vec![
                k(KeyCode::Enter),
                k(KeyCode::Tab),
                k(KeyCode::Backspace),
                k(KeyCode::Backspace)
            ]
        );
        assert_eq!(
            dec(b"\x03\x01\x1a"),
            vec![
                km(KeyCode::Char('c'), KeyModifiers::CONTROL),
                km(KeyCode::Char('a'), KeyModifiers::CONTROL),
                km(KeyCode::Char('z'), KeyModifiers::CONTROL)
            ]
        );
        assert_eq!(dec(b"\x1b"), vec![k(KeyCode::Esc)]);
        assert_eq!(dec(b"\x1b\x1b"), vec![k(KeyCode::Esc), k(KeyCode::Esc)]);
    }

    #[test]
    fn arrows_csi_and_ss3() {
        let want = vec![
            k(KeyCode::Up),
            k(KeyCode::Down),
            k(KeyCode::Right),
            k(KeyCode::Left),
        ];
        assert_eq!(dec(b"\x1b[A\x1b[B\x1b[C\x1b[D"), want);
        assert_eq!(dec(b"\x1bOA\x1bOB\x1bOC\x1bOD"), want);
        assert_eq!(
            dec(b"\x1b[1;5A\x1b[1;2D"),
            vec![
                km(KeyCode::Up, KeyModifiers::CONTROL),
                km(KeyCode::Left, KeyModifiers::SHIFT)
            ]
        );
    }

    #[test]
    fn navigation_keys() {
        assert_eq!(
            dec(b"\x1b[H\x1b[F\x1b[1~\x1b[4~\x1bOH\x1bOF\x1b[5~\x1b[6~\x1b[2~\x1b[3~"),
            vec![
                k(KeyCode::Home),
                k(KeyCode::End),
                k(KeyCode::Home),
                k(KeyCode::End),
                k(KeyCode::Home),
                k(KeyCode::End),
                k(KeyCode::PageUp),
                k(KeyCode::PageDown),
                k(KeyCode::Insert),
                k(KeyCode::Delete)
            ]
        );
        assert_eq!(
            dec(b"\x1b[Z"),
            vec![km(KeyCode::BackTab, KeyModifiers::SHIFT)]
        );
    }

    #[test]
    fn function_keys() {
        let seqs: [&[u8]; 12] = [
            b"\x1bOP",
            b"\x1bOQ",
            b"\x1bOR",
            b"\x1bOS",
            b"\x1b[15~",
            b"\x1b[17~",
            b"\x1b[18~",
            b"\x1b[19~",
            b"\x1b[20~",
            b"\x1b[21~",
            b"\x1b[23~",
            b"\x1b[24~",
        ];
        for (i, s) in seqs.iter().enumerate() {
            assert_eq!(dec(s), vec![k(KeyCode::F(i as u8 + 1))], "F{}", i + 1);
        }
        assert_eq!(
            dec(b"\x1b[11~\x1b[[A"),
            vec![k(KeyCode::F(1)), k(KeyCode::F(1))]
        );
    }

    #[test]
    fn alt_keys() {
        assert_eq!(
            dec(b"\x1bx"),
            vec![km(KeyCode::Char('x'), KeyModifiers::ALT)]
        );
    }

    #[test]
    fn sequences_split_across_reads() {
        let mut d = InputDecoder::new();
        assert!(d.feed(b"\x1b[").is_empty());
        assert_eq!(d.feed(b"A"), vec![k(KeyCode::Up)]);
        assert!(d.feed(b"\x1b[1").is_empty());
        assert!(d.feed(b"5").is_empty());
        assert_eq!(d.feed(b"~x"), vec![k(KeyCode::F(5)), k(KeyCode::Char('x'))]);
        assert!(d.feed(&"€".as_bytes()[..1]).is_empty());
        assert_eq!(d.feed(&"€".as_bytes()[1..]), vec![k(KeyCode::Char('€'))]);
        assert!(d.feed(b"\x1bO").is_empty());
        assert_eq!(d.feed(b"P"), vec![k(KeyCode::F(1))]);
        assert!(d.pending().is_empty());
    }

    #[test]
    fn lone_esc_at_end_of_read_is_esc_then_text() {
        let mut d = InputDecoder::new();
        assert_eq!(
            d.feed(b"q\x1b"),
            vec![k(KeyCode::Char('q')), k(KeyCode::Esc)]
        );
        assert_eq!(d.feed(b"j"), vec![k(KeyCode::Char('j'))]);
    }

    #[test]
    fn garbage_is_skipped_and_bounded() {
        let mut d = InputDecoder::new();
        assert!(d.feed(&[0xff, 0x80, 0xc0]).is_empty());
        let mut long = b"\x1b[".to_vec();
        long.extend(std::iter::repeat_n(b'1', 100));
        d.feed(&long);
        assert!(d.pending().len() <= MAX_PENDING);
        assert_eq!(d.feed(b"a"), vec![k(KeyCode::Char('a'))]);
        // Bracketed paste markers are ignored, the content decodes as keys.
        assert_eq!(d.feed(b"\x1b[200~hi\x1b[201~").len(), 2);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic_and_pending_is_bounded(
            chunks in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0..16)
        ) {
            let mut d = InputDecoder::new();
            for c in &chunks {
                let _ = d.feed(c);
                proptest::prop_assert!(d.pending().len() <= MAX_PENDING);
            }
        }

        #[test]
        fn printable_text_round_trips_whatever_the_split(s in "[ -~é€]{0,40}", split in 0usize..80) {
            let bytes = s.as_bytes();
            let cut = split.min(bytes.len());
            let mut d = InputDecoder::new();
            let mut keys = d.feed(&bytes[..cut]);
            keys.extend(d.feed(&bytes[cut..]));
            let got: String = keys.iter().filter_map(|k| match k.code { KeyCode::Char(c) => Some(c), _ => None }).collect();
            proptest::prop_assert_eq!(got, s);
        }
    }
}
