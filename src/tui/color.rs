//! Colour depth detection and downgrading of theme colours to 256 or 16 colours.
//!
//! Themes are written in hex. A 256-colour terminal gets the nearest xterm palette
//! entry, a 16-colour one the nearest of the 16 ANSI colours (by their xterm default
//! RGB values), so a theme looks right under `TERM=screen` or a bare Linux console
//! instead of whatever the terminal makes of an unsupported escape.

use ratatui::style::Color;

/// What the terminal can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
}

impl ColorDepth {
    /// From `COLORTERM` and `TERM` (pass the variables' values; pure for tests).
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
        let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
        let term = term.unwrap_or("").to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" || term.ends_with("-direct") {
            ColorDepth::TrueColor
        } else if term.contains("256color") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }
}

/// The colour environment: depth and whether `NO_COLOR` is set (non-empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorEnv {
    pub depth: ColorDepth,
    pub no_color: bool,
}

impl ColorEnv {
    /// Reads `NO_COLOR`, `COLORTERM` and `TERM` from the process environment.
    pub fn from_env() -> ColorEnv {
        let var = |k: &str| std::env::var(k).ok();
        ColorEnv::from_vars(
            var("NO_COLOR").as_deref(),
            var("COLORTERM").as_deref(),
            var("TERM").as_deref(),
        )
    }

    /// no-color.org: set *and non-empty* disables colour.
    pub fn from_vars(no_color: Option<&str>, colorterm: Option<&str>, term: Option<&str>) -> Self {
        ColorEnv {
            depth: ColorDepth::detect(colorterm, term),
            no_color: no_color.is_some_and(|v| !v.is_empty()),
        }
    }

    /// Full colour, for tests and the docs.
    pub const TRUECOLOR: ColorEnv = ColorEnv {
        depth: ColorDepth::TrueColor,
        no_color: false,
    };
}

/// xterm's default RGB values of the 16 ANSI colours, in index order.
const ANSI16: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

const NAMED: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// The six levels of each axis of xterm's 6×6×6 colour cube.
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// RGB of an xterm 256-palette index.
pub fn palette_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[i as usize],
        16..=231 => {
            let i = i - 16;
            (
                CUBE[(i / 36) as usize],
                CUBE[(i / 6 % 6) as usize],
                CUBE[(i % 6) as usize],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

fn dist(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).unsigned_abs();
    // Weighted for perceived brightness (green counts most), cheap and good enough.
    2 * d(a.0, b.0).pow(2) + 4 * d(a.1, b.1).pow(2) + 3 * d(a.2, b.2).pow(2)
}

/// The nearest xterm 256-palette index (cube or grey ramp; the 16 ANSI entries are
/// skipped because terminals redefine them).
pub fn nearest_256(rgb: (u8, u8, u8)) -> u8 {
    (16..=255u8)
        .min_by_key(|&i| dist(rgb, palette_rgb(i)))
        .unwrap_or(16)
}

/// The nearest of the 16 ANSI colours.
pub fn nearest_16(rgb: (u8, u8, u8)) -> Color {
    let i = (0..16).min_by_key(|&i| dist(rgb, ANSI16[i])).unwrap_or(0);
    NAMED[i]
}

/// Maps a colour to what the terminal can display.
pub fn downgrade(color: Color, depth: ColorDepth) -> Color {
    match (color, depth) {
        (_, ColorDepth::TrueColor) => color,
        (Color::Rgb(r, g, b), ColorDepth::Ansi256) => Color::Indexed(nearest_256((r, g, b))),
        (Color::Rgb(r, g, b), ColorDepth::Ansi16) => nearest_16((r, g, b)),
        (Color::Indexed(i), ColorDepth::Ansi16) if i < 16 => NAMED[i as usize],
        (Color::Indexed(i), ColorDepth::Ansi16) => nearest_16(palette_rgb(i)),
        _ => color,
    }
}
