//! Themes: every preset parses and sets every role; each renders; colours downgrade
//! to 256/16; NO_COLOR forces monochrome; user files override a subset.

use crate::tui_fixture;

use gangplank::tui::color::{ColorDepth, ColorEnv, downgrade, nearest_256};
use gangplank::tui::theme::{PRESETS, ROLES};
use gangplank::tui::*;
use ratatui::style::{Color, Modifier, Style};
use tui_fixture::{app, screen, terminal};

const THEMES: [&str; 4] = ["dark", "light", "high-contrast", "monochrome"];

/// The style of the first cell of the selected (first) workload row.
fn selection_style(theme: &str) -> Style {
    let a = app(ViewId::Workloads, 80, 24, theme);
    let term = terminal(&a, 80, 24);
    // Row 0 tabs, 1 border, 2 header, 3 first row; column 1 is inside the border.
    term.backend().buffer()[(1, 3)].style()
}

#[test]
fn every_preset_sets_every_role() {
    for (name, text) in PRESETS {
        let table: toml::Table = text.parse().unwrap();
        for (role, _) in ROLES {
            assert!(table.contains_key(*role), "themes/{name}.toml lacks {role}");
        }
        assert_eq!(
            table.len(),
            ROLES.len() + 1,
            "themes/{name}.toml has extra keys"
        );
        Theme::resolve(name, None, ColorEnv::TRUECOLOR).unwrap();
    }
}

#[test]
fn each_theme_renders_and_selection_differs() {
    let styles: Vec<Style> = THEMES.iter().map(|t| selection_style(t)).collect();
    for i in 0..styles.len() {
        for j in i + 1..styles.len() {
            assert_ne!(styles[i], styles[j], "{} vs {}", THEMES[i], THEMES[j]);
        }
    }
    assert_eq!(styles[0].bg, Some(Color::Rgb(0x00, 0x5f, 0x87)));
    assert!(styles[3].add_modifier.contains(Modifier::REVERSED));
    // The text is the same whatever the theme.
    let dark = screen(&app(ViewId::Workloads, 80, 24, "dark"), 80, 24);
    for t in &THEMES[1..] {
        assert_eq!(
            dark,
            screen(&app(ViewId::Workloads, 80, 24, t), 80, 24),
            "{t}"
        );
    }
}

#[test]
fn monochrome_has_no_colours() {
    for view in ViewId::ALL {
        let a = app(view, 160, 48, "monochrome");
        let term = terminal(&a, 160, 48);
        for cell in term.backend().buffer().content() {
            assert!(
                matches!(cell.fg, Color::Reset),
                "{view:?}: fg {:?}",
                cell.fg
            );
            assert!(
                matches!(cell.bg, Color::Reset),
                "{view:?}: bg {:?}",
                cell.bg
            );
        }
    }
}

#[test]
fn no_color_forces_monochrome() {
    let env = ColorEnv::from_vars(Some("1"), Some("truecolor"), Some("xterm-256color"));
    assert!(env.no_color);
    let t = Theme::resolve("dark", None, env).unwrap();
    assert_eq!(t.name, "monochrome");
    assert_eq!(
        t.selection,
        Style::default().add_modifier(Modifier::REVERSED)
    );
    // A user override keeps its modifiers but loses its colours.
    let user = r##"selection = { fg = "#ff0000", modifiers = ["bold"] }"##;
    let t = Theme::resolve("dark", Some(("mine.toml", user)), env).unwrap();
    assert_eq!(t.selection, Style::default().add_modifier(Modifier::BOLD));
    // Empty NO_COLOR does not count (no-color.org).
    assert!(!ColorEnv::from_vars(Some(""), None, None).no_color);
}

#[test]
fn colour_depth_detection() {
    assert_eq!(
        ColorDepth::detect(Some("truecolor"), Some("xterm")),
        ColorDepth::TrueColor
    );
    assert_eq!(
        ColorDepth::detect(Some("24bit"), None),
        ColorDepth::TrueColor
    );
    assert_eq!(
        ColorDepth::detect(None, Some("tmux-256color")),
        ColorDepth::Ansi256
    );
    assert_eq!(
        ColorDepth::detect(None, Some("xterm-256color")),
        ColorDepth::Ansi256
    );
    assert_eq!(ColorDepth::detect(None, Some("screen")), ColorDepth::Ansi16);
    assert_eq!(ColorDepth::detect(None, Some("linux")), ColorDepth::Ansi16);
    assert_eq!(ColorDepth::detect(None, None), ColorDepth::Ansi16);
}

#[test]
fn colours_downgrade_to_the_nearest_palette_entry() {
    // Exact cube and grey entries map to themselves.
    assert_eq!(nearest_256((0x00, 0x5f, 0x87)), 24);
    assert_eq!(nearest_256((0xff, 0xaf, 0x00)), 214);
    assert_eq!(nearest_256((0x80, 0x80, 0x80)), 244);
    assert_eq!(
        downgrade(Color::Rgb(250, 10, 10), ColorDepth::Ansi256),
        Color::Indexed(196)
    );
    assert_eq!(
        downgrade(Color::Rgb(250, 10, 10), ColorDepth::Ansi16),
        Color::LightRed
    );
    assert_eq!(
        downgrade(Color::Rgb(0, 0, 0), ColorDepth::Ansi16),
        Color::Black
    );
    assert_eq!(
        downgrade(Color::Rgb(0, 180, 0), ColorDepth::Ansi16),
        Color::Green
    );
    assert_eq!(
        downgrade(Color::Indexed(214), ColorDepth::Ansi16),
        Color::Yellow
    );
    assert_eq!(
        downgrade(Color::Indexed(9), ColorDepth::Ansi16),
        Color::LightRed
    );
    assert_eq!(downgrade(Color::Red, ColorDepth::Ansi16), Color::Red);
    let env16 = ColorEnv::from_vars(None, None, Some("screen"));
    let t = Theme::resolve("dark", None, env16).unwrap();
    for s in [t.selection, t.header, t.wl_pending, t.danger] {
        assert!(
            !matches!(s.fg, Some(Color::Rgb(..) | Color::Indexed(..))),
            "{s:?}"
        );
    }
    let env256 = ColorEnv::from_vars(None, None, Some("xterm-256color"));
    let t = Theme::resolve("dark", None, env256).unwrap();
    assert_eq!(t.selection.bg, Some(Color::Indexed(24)));
}

#[test]
fn user_theme_overrides_a_subset() {
    let user = r##"
selection = { fg = "black", bg = "#ffff00" }
danger = { modifiers = ["reversed"] }
"##;
    let t = Theme::resolve("light", Some(("mine.toml", user)), ColorEnv::TRUECOLOR).unwrap();
    let light = Theme::preset("light");
    assert_eq!(
        t.selection,
        Style::default()
            .fg(Color::Black)
            .bg(Color::Rgb(255, 255, 0))
    );
    assert_eq!(t.danger, Style::default().add_modifier(Modifier::REVERSED));
    assert_eq!(t.header, light.header);
}

#[test]
fn bad_theme_files_name_file_key_and_value() {
    let bad = |text: &str| {
        Theme::resolve("dark", Some(("my-theme.toml", text)), ColorEnv::TRUECOLOR)
            .unwrap_err()
            .to_string()
    };
    let e = bad(r#"selektion = { fg = "red" }"#);
    assert!(
        e.contains("my-theme.toml") && e.contains("unknown theme key \"selektion\""),
        "{e}"
    );
    let e = bad(r#"selection = { fg = "reddish" }"#);
    assert!(
        e.contains("selection.fg: invalid colour \"reddish\""),
        "{e}"
    );
    let e = bad(r#"selection = { modifiers = ["blinky"] }"#);
    assert!(e.contains("unknown modifier \"blinky\""), "{e}");
    let e = bad(r#"selection = { colour = "red" }"#);
    assert!(e.contains("unknown field \"colour\""), "{e}");
    assert!(Theme::resolve("neon", None, ColorEnv::TRUECOLOR).is_err());
}
