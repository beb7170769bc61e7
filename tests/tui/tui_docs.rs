//! docs/console.md embeds generated text: the keys table (from the keymap), the theme
//! roles, the default config and a screenshot. This test fails when they drift;
//! `UPDATE_DOCS=1 cargo test --test tui tui_docs` rewrites them.

use crate::tui_fixture;

use gangplank::tui::keymap::Keymap;
use gangplank::tui::theme::ROLES;
use gangplank::tui::*;

fn sections() -> Vec<(&'static str, String)> {
    let roles: String = ROLES
        .iter()
        .map(|(k, d)| format!("| `{k}` | {d} |\n"))
        .collect();
    let shot = tui_fixture::screen(&tui_fixture::app(ViewId::Workloads, 80, 24, "dark"), 80, 24);
    vec![
        ("keys", Keymap::default().markdown_table()),
        ("roles", format!("| Role | Styles |\n|---|---|\n{roles}")),
        ("config", format!("```toml\n{}```\n", default_config_toml())),
        ("screenshot", format!("```text\n{shot}```\n")),
    ]
}

#[test]
fn docs_match_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/console.md");
    let mut doc = std::fs::read_to_string(path).unwrap();
    let update = std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1");
    for (name, body) in sections() {
        let start = format!("<!-- {name}:start -->\n");
        let end = format!("<!-- {name}:end -->");
        let s = doc.find(&start).unwrap_or_else(|| panic!("no {start}")) + start.len();
        let e = doc[s..].find(&end).unwrap_or_else(|| panic!("no {end}")) + s;
        if update {
            doc.replace_range(s..e, &body);
        } else {
            assert_eq!(
                doc[s..e],
                body,
                "docs/console.md section {name} is stale: UPDATE_DOCS=1"
            );
        }
    }
    if update {
        std::fs::write(path, doc).unwrap();
    }
}
