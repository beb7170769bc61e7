//! Config: the default file parses to the defaults; overrides apply; unknown keys and
//! bad values name the file, the key and the value.

use gangplank::tui::color::ColorEnv;
use gangplank::tui::keymap::{KeyAction, KeyChord};
use gangplank::tui::*;

#[test]
fn default_file_parses_to_the_defaults() {
    let cfg = Config::parse("default", default_config_toml()).unwrap();
    assert_eq!(
        Config {
            source: "defaults".into(),
            ..cfg
        },
        Config::default()
    );
}

#[test]
fn values_and_key_overrides_apply() {
    let text = r#"
theme = "high-contrast"
default_view = "queues"
readonly = true
max_fps = 20
tick_ms = 500
[keys]
hold = ["H", "ctrl-h"]
quit = "ctrl-q"
"#;
    let cfg = Config::parse("c.toml", text).unwrap();
    assert_eq!(cfg.theme, "high-contrast");
    assert_eq!(cfg.default_view, ViewId::Queues);
    assert!(cfg.readonly);
    assert_eq!((cfg.max_fps, cfg.tick_ms), (20, 500));
    let km = cfg.keymap().unwrap();
    assert_eq!(
        km.keys_for(KeyAction::Hold),
        &[
            KeyChord::parse("H").unwrap(),
            KeyChord::parse("ctrl-h").unwrap()
        ]
    );
    assert_eq!(
        km.keys_for(KeyAction::Quit),
        &[KeyChord::parse("ctrl-q").unwrap()]
    );
    let opts = RunOptions::from_config(&cfg, Some(false), ColorEnv::TRUECOLOR).unwrap();
    assert!(!opts.readonly, "the --write flag wins over the file");
    assert_eq!(opts.theme.name, "high-contrast");
}

#[test]
fn errors_name_file_key_and_value() {
    let err = |text: &str| {
        Config::parse("/home/op/.config/gangplank/config.toml", text)
            .unwrap_err()
            .to_string()
    };
    let e = err("colour = \"red\"");
    assert_eq!(
        e,
        "/home/op/.config/gangplank/config.toml: unknown key \"colour\""
    );
    let e = err("theme = \"neon\"");
    assert!(
        e.contains("config.toml: invalid value \"neon\" for \"theme\""),
        "{e}"
    );
    let e = err("max_fps = 0");
    assert!(
        e.contains("invalid value 0 for \"max_fps\": expected an integer 1-120"),
        "{e}"
    );
    let e = err("default_view = \"pods\"");
    assert!(e.contains("\"pods\" for \"default_view\""), "{e}");
    let e = err("readonly = \"yes\"");
    assert!(e.contains("\"yes\" for \"readonly\""), "{e}");
    let e = err("[keys]\nhold = [\"hyper-h\"]");
    assert!(
        e.contains("for \"keys.hold\"") && e.contains("unknown modifier \"hyper\""),
        "{e}"
    );
    let e = err("[keys]\nfly = \"x\"");
    assert!(
        e.contains("\"keys.fly\"") && e.contains("unknown action"),
        "{e}"
    );
    let e = err("[keys]\nhold = \"q\"");
    assert!(e.contains("bound to both"), "{e}");
    let e = err("theme = ");
    assert!(
        e.starts_with("/home/op/.config/gangplank/config.toml:"),
        "{e}"
    );
}

#[test]
fn missing_file_means_defaults_and_theme_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("config.toml");
    assert_eq!(Config::load(Some(&missing)).unwrap(), Config::default());
    let theme = dir.path().join("mine.toml");
    std::fs::write(&theme, "header = { modifiers = [\"bold\"] }\n").unwrap();
    let cfg_text = format!("theme_file = {:?}\n", theme.display().to_string());
    std::fs::write(&missing, cfg_text).unwrap();
    let cfg = Config::load(Some(&missing)).unwrap();
    let t = cfg.theme(ColorEnv::TRUECOLOR).unwrap();
    assert_eq!(
        t.header,
        ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::BOLD)
    );
    std::fs::write(&theme, "header = 3\n").unwrap();
    let e = cfg.theme(ColorEnv::TRUECOLOR).unwrap_err().to_string();
    assert!(e.contains("mine.toml") && e.contains("header"), "{e}");
}
