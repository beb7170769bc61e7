//! Themes: semantic style roles read from TOML, embedded presets, user overrides.
//!
//! A theme file is a flat TOML table: `role = { fg = "#rrggbb", bg = "…",
//! modifiers = ["bold"] }` (colours: hex, a name such as `light-red`, a 256-palette
//! index such as `"214"`, or `reset`). A user file overrides any subset of the roles of
//! the chosen base theme; a role it names replaces that role's whole style. Views only
//! ever name roles, never colours.

use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};

use super::color::{ColorEnv, downgrade};

macro_rules! roles {
    ($($name:ident : $doc:literal),* $(,)?) => {
        /// A resolved theme: one [`Style`] per semantic role.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Theme {
            pub name: String,
            $(#[doc = $doc] pub $name: Style,)*
        }

        /// Every role: (key in theme files, what it styles).
        pub const ROLES: &[(&str, &str)] = &[$((stringify!($name), $doc)),*];

        impl Theme {
            fn slot(&mut self, key: &str) -> Option<&mut Style> {
                match key {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }

            fn slots(&mut self) -> Vec<&mut Style> {
                vec![$(&mut self.$name),*]
            }
        }
    };
}

roles! {
    text: "ordinary text",
    muted: "secondary text: ages, empty-state hints, dashes",
    border: "pane borders",
    title: "pane titles",
    header: "table header rows",
    tab: "inactive view tabs",
    tab_active: "the current view's tab",
    selection: "the selected row",
    status_bar: "the status bar",
    readonly_badge: "the READ-ONLY badge",
    message: "the message line (feedback, errors)",
    command_line: "the : and / input lines",
    danger: "errors, failed sync, preemptions",
    warning: "warnings, resyncing",
    ok: "synced, healthy",
    cohort: "cohort lines in the queue tree",
    queue_over_quota: "a queue using more than its nominal quota",
    borrowing: "borrowed quota figures",
    lending: "lendable quota figures",
    gauge_fill: "used part of a quota gauge",
    gauge_borrowed: "borrowed part of a quota gauge",
    gauge_empty: "unused part of a quota gauge",
    sparkline: "GPU usage sparklines",
    wl_pending: "Pending workloads",
    wl_reserved: "QuotaReserved workloads",
    wl_admitted: "Admitted workloads",
    wl_evicted: "Evicted workloads",
    wl_preempted: "Preempted workloads",
    wl_finished: "Finished workloads",
    wl_inactive: "Inactive (held) workloads",
    verdict: "shadow-engine verdicts",
    help_key: "key names in the help",
}

/// The embedded presets, by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("monochrome", include_str!("../../themes/monochrome.toml")),
];

/// A theme file that does not parse; names the file, key and value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: {message}")]
pub struct ThemeError {
    pub file: String,
    pub message: String,
}

impl Theme {
    /// Resolves the theme to use: the base preset, the user's overrides, then the
    /// colour environment (`NO_COLOR` forces monochrome; colours are downgraded to
    /// the terminal's depth).
    pub fn resolve(
        base: &str,
        user: Option<(&str, &str)>,
        env: ColorEnv,
    ) -> Result<Theme, ThemeError> {
        let base = if env.no_color { "monochrome" } else { base };
        let text = PRESETS
            .iter()
            .find(|p| p.0 == base)
            .map(|p| p.1)
            .ok_or_else(|| ThemeError {
                file: "config".into(),
                message: format!("unknown theme {base:?} (dark, light, high-contrast, monochrome)"),
            })?;
        let mut theme = Theme::default();
        theme.apply(&format!("themes/{base}.toml"), text)?;
        if let Some((file, text)) = user {
            theme.apply(file, text)?;
        }
        for style in theme.slots() {
            if env.no_color {
                style.fg = None;
                style.bg = None;
                style.underline_color = None;
            } else {
                style.fg = style.fg.map(|c| downgrade(c, env.depth));
                style.bg = style.bg.map(|c| downgrade(c, env.depth));
            }
        }
        Ok(theme)
    }

    /// A preset by name at full colour (for tests).
    pub fn preset(name: &str) -> Theme {
        Theme::resolve(name, None, ColorEnv::TRUECOLOR).unwrap_or_default()
    }

    /// Applies a theme file's roles over this theme.
    pub fn apply(&mut self, file: &str, text: &str) -> Result<(), ThemeError> {
        let err = |message: String| ThemeError {
            file: file.to_string(),
            message,
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| err(e.to_string()))?;
        for (key, value) in table {
            if key == "name" {
                self.name = value.as_str().unwrap_or_default().to_string();
                continue;
            }
            let style = parse_style(&key, &value).map_err(err)?;
            *self
                .slot(&key)
                .ok_or_else(|| err(format!("unknown theme key {key:?}")))? = style;
        }
        Ok(())
    }
}

fn parse_style(key: &str, value: &toml::Value) -> Result<Style, String> {
    let table = value
        .as_table()
        .ok_or_else(|| format!("{key}: expected {{ fg = …, bg = …, modifiers = […] }}"))?;
    let mut style = Style::default();
    for (field, v) in table {
        match field.as_str() {
            "fg" | "bg" => {
                let s = v
                    .as_str()
                    .ok_or_else(|| format!("{key}.{field}: expected a string"))?;
                let color =
                    parse_color(s).ok_or_else(|| format!("{key}.{field}: invalid colour {s:?}"))?;
                if field == "fg" {
                    style.fg = Some(color);
                } else {
                    style.bg = Some(color);
                }
            }
            "modifiers" => {
                let list = v
                    .as_array()
                    .ok_or_else(|| format!("{key}.modifiers: expected a list"))?;
                for m in list {
                    let name = m.as_str().unwrap_or_default();
                    style = style
                        .add_modifier(parse_modifier(name).ok_or_else(|| {
                            format!("{key}.modifiers: unknown modifier {name:?}")
                        })?);
                }
            }
            other => {
                return Err(format!(
                    "{key}: unknown field {other:?} (fg, bg, modifiers)"
                ));
            }
        }
    }
    Ok(style)
}

fn parse_color(s: &str) -> Option<Color> {
    match s.to_ascii_lowercase().as_str() {
        "default" | "reset" => Some(Color::Reset),
        _ => Color::from_str(s).ok(),
    }
}

fn parse_modifier(name: &str) -> Option<Modifier> {
    Some(match name.to_ascii_lowercase().as_str() {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underline" | "underlined" => Modifier::UNDERLINED,
        "reverse" | "reversed" => Modifier::REVERSED,
        "crossed_out" | "strikethrough" => Modifier::CROSSED_OUT,
        _ => return None,
    })
}
