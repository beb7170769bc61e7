//! External tools the tests drive (kubectl, tmux, the OpenSSH client): one rule for
//! all of them. A missing tool skips the test on a developer's machine (with a line on
//! stderr) but FAILS it under `CI=true`, so CI never passes with nothing tested.
//! `.ci/run` installs the tools and exports `CI=true`.

#![allow(dead_code)]

use std::process::{Command, Stdio};

/// `CI=true` (or `1`): a missing tool is a failure, not a skip.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether `tool` can be run (`tool probe…` starts; its exit status does not matter,
/// e.g. `ssh-keygen --help` exits 1). When it cannot: panics under `CI=true` naming
/// the tool and `needed_by`; otherwise prints `SKIPPED` and returns `false`.
pub fn require_tool(tool: &str, probe: &[&str], needed_by: &str) -> bool {
    let present = Command::new(tool)
        .args(probe)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !present {
        assert!(
            !ci(),
            "{tool} is not installed (not on PATH), and CI=true: it is needed by {needed_by} \
             (.ci/run installs it)"
        );
        eprintln!("SKIPPED: {tool} is not installed; {needed_by} did not run");
    }
    present
}

/// [`require_tool`] for each tool, in order; `true` when all are present.
pub fn require_tools(tools: &[(&str, &[&str])], needed_by: &str) -> bool {
    tools
        .iter()
        .all(|(tool, probe)| require_tool(tool, probe, needed_by))
}

/// `kubectl` (client only).
pub fn require_kubectl(needed_by: &str) -> bool {
    require_tool("kubectl", &["version", "--client"], needed_by)
}

/// The OpenSSH client, `ssh-keygen` and tmux (interactive ssh runs inside tmux).
pub fn require_openssh_and_tmux(needed_by: &str) -> bool {
    require_tools(
        &[
            ("ssh", &["-V"]),
            ("ssh-keygen", &["--help"]),
            ("tmux", &["-V"]),
        ],
        needed_by,
    )
}
