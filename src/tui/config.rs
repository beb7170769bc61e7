//! Console configuration: `config.toml` in the XDG config dir
//! (`ProjectDirs::from("io", "gangplank", "gangplank")`).
//!
//! A missing file means the defaults. Unknown keys and bad values are errors that
//! name the file, the key and the value, so a typo never silently does nothing.

use std::path::{Path, PathBuf};

use super::color::ColorEnv;
use super::keymap::{KeyAction, KeyChord, Keymap};
use super::msg::ViewId;
use super::theme::{PRESETS, Theme};

const DEFAULT_TOML: &str = r#"# gangplank console configuration.
# Location: $XDG_CONFIG_HOME/gangplank/config.toml (see `gangplank config --print-default`).

# Base theme: dark, light, high-contrast or monochrome. NO_COLOR forces monochrome.
theme = "dark"

# A TOML file whose roles override the base theme (any subset), e.g.
# theme_file = "/home/me/.config/gangplank/my-theme.toml"

# The view shown at start: queues, workloads, nodes, plan, drift, audit or health.
default_view = "workloads"

# Start read-only: action keys (approve, reprioritize, hold, resume) are refused.
# Client-side only: enforce read-only with RBAC as well.
readonly = false

# Redraw at most this many frames per second (1-120).
max_fps = 30

# Refresh ages this often, in milliseconds (100-60000).
tick_ms = 1000

# Key overrides: action = ["key", …] replaces that action's keys. Keys look like
# "q", "G", "ctrl-c", "alt-x", "shift-tab", "enter", "esc", "pgdn", "f5", "space".
[keys]
# quit = ["q", "ctrl-c"]
# hold = ["H"]
"#;

/// The commented default file, for `gangplank config --print-default`.
pub fn default_config_toml() -> &'static str {
    DEFAULT_TOML
}

/// The console's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub theme: String,
    pub theme_file: Option<PathBuf>,
    /// (action config name, keys) overrides, validated.
    pub keys: Vec<(String, Vec<String>)>,
    pub default_view: ViewId,
    pub readonly: bool,
    pub max_fps: u32,
    pub tick_ms: u64,
    /// The file this came from ("defaults" if none), for later error messages.
    pub source: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: "dark".into(),
            theme_file: None,
            keys: Vec::new(),
            default_view: ViewId::Workloads,
            readonly: false,
            max_fps: 30,
            tick_ms: 1000,
            source: "defaults".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: unknown key {key:?}")]
    UnknownKey { file: String, key: String },
    #[error("{file}: invalid value {value} for {key:?}: {reason}")]
    Invalid {
        file: String,
        key: String,
        value: String,
        reason: String,
    },
    #[error(transparent)]
    Theme(#[from] super::theme::ThemeError),
}

impl Config {
    /// `$XDG_CONFIG_HOME/gangplank/config.toml` (or the platform's equivalent).
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("io", "gangplank", "gangplank")
            .map(|d| d.config_dir().join("config.toml"))
    }

    /// Loads `path`, or the default location; a missing file yields the defaults.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let Some(path) = path.map(Path::to_path_buf).or_else(Config::default_path) else {
            return Ok(Config::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(ConfigError::Io {
                file: path.display().to_string(),
                source,
            }),
        }
    }

    /// Parses a config file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
        let f = || file.to_string();
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Syntax {
                    file: f(),
                    message: e.to_string(),
                })?;
        let invalid = |key: &str, value: &toml::Value, reason: &str| ConfigError::Invalid {
            file: f(),
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        };
        let mut cfg = Config {
            source: f(),
            ..Config::default()
        };
        for (key, value) in &table {
            match key.as_str() {
                "theme" => match value.as_str() {
                    Some(s) if PRESETS.iter().any(|p| p.0 == s) => cfg.theme = s.into(),
                    _ => {
                        return Err(invalid(
                            key,
                            value,
                            "dark, light, high-contrast or monochrome",
                        ));
                    }
                },
                "theme_file" => match value.as_str() {
                    Some(s) => cfg.theme_file = Some(PathBuf::from(s)),
                    None => return Err(invalid(key, value, "expected a path string")),
                },
                "default_view" => match value.as_str().and_then(ViewId::from_name) {
                    Some(v) => cfg.default_view = v,
                    None => {
                        let names: Vec<_> = ViewId::ALL.iter().map(|v| v.name()).collect();
                        return Err(invalid(key, value, &names.join(", ")));
                    }
                },
                "readonly" => match value.as_bool() {
                    Some(b) => cfg.readonly = b,
                    None => return Err(invalid(key, value, "expected true or false")),
                },
                "max_fps" => match value.as_integer() {
                    Some(n @ 1..=120) => cfg.max_fps = n as u32,
                    _ => return Err(invalid(key, value, "expected an integer 1-120")),
                },
                "tick_ms" => match value.as_integer() {
                    Some(n @ 100..=60_000) => cfg.tick_ms = n as u64,
                    _ => return Err(invalid(key, value, "expected an integer 100-60000")),
                },
                "keys" => cfg.keys = parse_keys(file, value)?,
                _ => {
                    return Err(ConfigError::UnknownKey {
                        file: f(),
                        key: key.clone(),
                    });
                }
            }
        }
        Ok(cfg)
    }

    /// The keymap: defaults with this config's overrides.
    pub fn keymap(&self) -> Result<Keymap, ConfigError> {
        Keymap::with_overrides(&self.keys).map_err(|reason| ConfigError::Invalid {
            file: self.source.clone(),
            key: "keys".into(),
            value: format!("{:?}", self.keys),
            reason,
        })
    }

    /// The theme: base preset, then `theme_file` if set, then the colour environment.
    pub fn theme(&self, env: ColorEnv) -> Result<Theme, ConfigError> {
        let user = match &self.theme_file {
            Some(p) => Some((
                p.display().to_string(),
                std::fs::read_to_string(p).map_err(|source| ConfigError::Io {
                    file: p.display().to_string(),
                    source,
                })?,
            )),
            None => None,
        };
        let user = user.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
        Ok(Theme::resolve(&self.theme, user, env)?)
    }
}

fn parse_keys(file: &str, value: &toml::Value) -> Result<Vec<(String, Vec<String>)>, ConfigError> {
    let invalid = |key: String, value: &toml::Value, reason: String| ConfigError::Invalid {
        file: file.to_string(),
        key,
        value: value.to_string(),
        reason,
    };
    let table = value
        .as_table()
        .ok_or_else(|| invalid("keys".into(), value, "expected a table".into()))?;
    let mut out = Vec::new();
    for (action, keys) in table {
        let key = format!("keys.{action}");
        let list: Option<Vec<String>> = match keys {
            toml::Value::String(s) => Some(vec![s.clone()]),
            toml::Value::Array(a) => a.iter().map(|k| k.as_str().map(String::from)).collect(),
            _ => None,
        };
        let list = list.ok_or_else(|| {
            invalid(
                key.clone(),
                keys,
                "expected a key string or a list of them".into(),
            )
        })?;
        // Validate each entry on its own so the error points at the offending key.
        if KeyAction::from_config_name(action).is_none() {
            return Err(invalid(key, keys, format!("unknown action {action:?}")));
        }
        for k in &list {
            KeyChord::parse(k).map_err(|reason| invalid(key.clone(), keys, reason))?;
        }
        out.push((action.clone(), list));
    }
    // Then together: two actions must not share a key.
    Keymap::with_overrides(&out).map_err(|reason| invalid("keys".into(), value, reason))?;
    Ok(out)
}
