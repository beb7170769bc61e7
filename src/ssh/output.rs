//! Rendering to a remote terminal: a ratatui [`Backend`] that writes ANSI into a
//! per-session byte buffer, and colour capability detection / downgrading.
//!
//! Why not plain `CrosstermBackend<Vec<u8>>`: ratatui's `Terminal::resize`/`clear` on a
//! fixed viewport call `Backend::size()` and `get_cursor_position()`, which crossterm
//! answers by querying the *server's* tty (failing without one, or worse, reading our
//! stdin). This wrapper answers from the session's own state and delegates only the
//! writing to crossterm.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::Color;

/// Colour capability of a client terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColorDepth {
    /// 24-bit RGB.
    TrueColor,
    /// xterm 256-colour palette.
    Ansi256,
    /// The 16 basic ANSI colours.
    Ansi16,
    /// No colour at all (`NO_COLOR`, `TERM=dumb`); modifiers such as bold/reverse remain.
    None,
}

impl ColorDepth {
    /// Derive from `TERM` (pty request) and, when the client sent them via `env`
    /// requests, `COLORTERM` and `NO_COLOR` (any non-empty value disables colour,
    /// per no-color.org).
    pub fn detect(term: &str, colorterm: Option<&str>, no_color: Option<&str>) -> ColorDepth {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return ColorDepth::None;
        }
        if colorterm.is_some_and(|c| {
            let c = c.to_ascii_lowercase();
            c == "truecolor" || c == "24bit"
        }) {
            return ColorDepth::TrueColor;
        }
        let t = term.to_ascii_lowercase();
        if t.is_empty() || t == "dumb" {
            return ColorDepth::None;
        }
        if t.contains("truecolor")
            || t.contains("24bit")
            || t.contains("direct")
            || [
                "xterm-kitty",
                "alacritty",
                "wezterm",
                "xterm-ghostty",
                "foot",
            ]
            .iter()
            .any(|n| t == *n)
        {
            return ColorDepth::TrueColor;
        }
        if t.contains("256color") {
            return ColorDepth::Ansi256;
        }
        ColorDepth::Ansi16
    }

    /// Map `c` to something this terminal can show.
    pub fn map(self, c: Color) -> Color {
        match (self, c) {
            (_, Color::Reset) => Color::Reset,
            (ColorDepth::TrueColor, c) => c,
            (ColorDepth::None, _) => Color::Reset,
            (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Color::Indexed(rgb_to_256(r, g, b)),
            (ColorDepth::Ansi256, c) => c,
            (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => rgb_to_16(r, g, b),
            (ColorDepth::Ansi16, Color::Indexed(i)) => {
                let (r, g, b) = indexed_to_rgb(i);
                rgb_to_16(r, g, b)
            }
            (ColorDepth::Ansi16, c) => c,
        }
    }
}

const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let idx = |v: u8| -> usize {
        CUBE.iter()
            .enumerate()
            .min_by_key(|(_, c)| (i32::from(**c) - i32::from(v)).abs())
            .map(|(i, _)| i)
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (idx(r), idx(g), idx(b));
    let cube = (16 + 36 * ri + 6 * gi + bi) as u8;
    let cube_err = dist((r, g, b), (CUBE[ri], CUBE[gi], CUBE[bi]));
    // Grey ramp 232..=255: 8, 18, …, 238.
    let avg = ((u16::from(r) + u16::from(g) + u16::from(b)) / 3) as u8;
    let gi = (avg.saturating_sub(3) / 10).min(23);
    let gv = 8 + 10 * gi;
    if dist((r, g, b), (gv, gv, gv)) < cube_err {
        232 + gi
    } else {
        cube
    }
}

fn indexed_to_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => BASIC[i as usize].1,
        16..=231 => {
            let i = i - 16;
            (
                CUBE[(i / 36) as usize],
                CUBE[((i / 6) % 6) as usize],
                CUBE[(i % 6) as usize],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

const BASIC: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn dist(a: (u8, u8, u8), b: (u8, u8, u8)) -> i32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

fn rgb_to_16(r: u8, g: u8, b: u8) -> Color {
    BASIC
        .iter()
        .min_by_key(|(_, rgb)| dist((r, g, b), *rgb))
        .map(|(c, _)| *c)
        .unwrap_or(Color::Reset)
}

/// Shared byte sink the crossterm backend writes into; the session takes the bytes out
/// after each draw.
#[derive(Debug, Clone, Default)]
pub struct FrameSink(Arc<Mutex<Vec<u8>>>);

impl FrameSink {
    /// Take everything written so far, leaving an empty buffer that keeps at most
    /// `keep_capacity` bytes of capacity (so one huge frame does not pin memory).
    pub fn take(&self, keep_capacity: usize) -> Vec<u8> {
        let mut buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let cap = buf.capacity().min(keep_capacity);
        std::mem::replace(&mut *buf, Vec::with_capacity(cap))
    }

    /// Bytes currently buffered.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Write for FrameSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// ratatui backend for one SSH session: ANSI via crossterm into a [`FrameSink`], size
/// and cursor answered locally, colours mapped to the client's [`ColorDepth`].
#[derive(Debug)]
pub struct SessionBackend {
    inner: CrosstermBackend<FrameSink>,
    size: Size,
    cursor: Position,
    depth: ColorDepth,
}

impl SessionBackend {
    /// A backend of `size` writing into `sink`.
    pub fn new(sink: FrameSink, size: Size, depth: ColorDepth) -> Self {
        Self {
            inner: CrosstermBackend::new(sink),
            size,
            cursor: Position::ORIGIN,
            depth,
        }
    }

    /// Record the client's new size (call before `Terminal::resize`).
    pub fn set_size(&mut self, size: Size) {
        self.size = size;
    }
}

impl Backend for SessionBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if self.depth == ColorDepth::TrueColor {
            return self.inner.draw(content);
        }
        let depth = self.depth;
        let mapped: Vec<(u16, u16, Cell)> = content
            .map(|(x, y, c)| {
                let mut c = c.clone();
                c.fg = depth.map(c.fg);
                c.bg = depth.map(c.bg);
                (x, y, c)
            })
            .collect();
        self.inner.draw(mapped.iter().map(|(x, y, c)| (*x, *y, c)))
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let p = position.into();
        self.cursor = p;
        self.inner.set_cursor_position(p)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_depth() {
        assert_eq!(
            ColorDepth::detect("xterm-256color", None, None),
            ColorDepth::Ansi256
        );
        assert_eq!(
            ColorDepth::detect("xterm-256color", Some("truecolor"), None),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::detect("xterm-256color", Some("truecolor"), Some("1")),
            ColorDepth::None
        );
        assert_eq!(
            ColorDepth::detect("xterm", None, Some("")),
            ColorDepth::Ansi16
        );
        assert_eq!(ColorDepth::detect("dumb", None, None), ColorDepth::None);
        assert_eq!(ColorDepth::detect("", None, None), ColorDepth::None);
        assert_eq!(
            ColorDepth::detect("xterm-kitty", None, None),
            ColorDepth::TrueColor
        );
        assert_eq!(ColorDepth::detect("screen", None, None), ColorDepth::Ansi16);
    }

    #[test]
    fn maps_colours_down() {
        assert_eq!(
            ColorDepth::Ansi256.map(Color::Rgb(255, 0, 0)),
            Color::Indexed(196)
        );
        assert_eq!(
            ColorDepth::Ansi256.map(Color::Rgb(128, 128, 128)),
            Color::Indexed(244)
        );
        assert_eq!(
            ColorDepth::Ansi16.map(Color::Rgb(250, 10, 10)),
            Color::LightRed
        );
        assert_eq!(ColorDepth::Ansi16.map(Color::Indexed(21)), Color::Blue);
        assert_eq!(ColorDepth::None.map(Color::Green), Color::Reset);
        assert_eq!(
            ColorDepth::TrueColor.map(Color::Rgb(1, 2, 3)),
            Color::Rgb(1, 2, 3)
        );
    }
}
