//! The `:` command line: k9s-style resource jumps with Kueue's short names.
//!
//! `:wl`, `:cq`, `:lq`, `:cohort`, `:rf`, `:nodes`, `:plan`, `:drift`, `:audit`,
//! `:health`, `:events` (`:ev`), `:ctx`, `:help`, `:q`, plus long names. Arguments become a filter:
//! `:wl nlp-team` (a bare word on the workloads view means `ns=`), `:wl state=pending`.

use super::msg::ViewId;

/// What a command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Switch view, optionally setting the filter to the given text.
    View(ViewId, Option<String>),
    /// Show the current context and the kubeconfig's others (`:ctx`), or ask for one
    /// (`:ctx NAME`).
    Context(Option<String>),
    /// `:ns NAME` scopes every view to a namespace; `:ns all` (or `-`, `*`) removes
    /// the scope; `:ns` alone shows it (`Show`).
    Namespace(NsArg),
    Help,
    Quit,
}

/// The argument of `:ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NsArg {
    Show,
    All,
    Name(String),
}

/// (name, view or special) — every name the command line accepts.
const NAMES: &[(&str, Option<ViewId>)] = &[
    ("cq", Some(ViewId::Queues)),
    ("clusterqueue", Some(ViewId::Queues)),
    ("clusterqueues", Some(ViewId::Queues)),
    ("lq", Some(ViewId::Queues)),
    ("localqueue", Some(ViewId::Queues)),
    ("localqueues", Some(ViewId::Queues)),
    ("cohort", Some(ViewId::Queues)),
    ("cohorts", Some(ViewId::Queues)),
    ("queues", Some(ViewId::Queues)),
    ("rf", Some(ViewId::Queues)),
    ("resourceflavors", Some(ViewId::Queues)),
    ("wl", Some(ViewId::Workloads)),
    ("kwl", Some(ViewId::Workloads)),
    ("workload", Some(ViewId::Workloads)),
    ("workloads", Some(ViewId::Workloads)),
    ("no", Some(ViewId::Nodes)),
    ("node", Some(ViewId::Nodes)),
    ("nodes", Some(ViewId::Nodes)),
    ("plan", Some(ViewId::Plan)),
    ("drift", Some(ViewId::Drift)),
    ("audit", Some(ViewId::Audit)),
    ("health", Some(ViewId::Health)),
    ("events", Some(ViewId::Events)),
    ("ev", Some(ViewId::Events)),
    ("event", Some(ViewId::Events)),
    ("ns", None),
    ("namespace", None),
    ("ctx", None),
    ("context", None),
    ("help", None),
    ("q", None),
    ("quit", None),
];

/// Parses a command line (without the leading `:`).
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let args = args.trim();
    let entry = NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("unknown command :{name} (Tab completes)"))?;
    match (entry.0, entry.1) {
        (_, Some(view)) => {
            let filter = (!args.is_empty()).then(|| filter_from_args(view, args));
            Ok(Command::View(view, filter))
        }
        ("ctx" | "context", None) => Ok(Command::Context(
            (!args.is_empty()).then(|| args.to_string()),
        )),
        ("ns" | "namespace", None) => Ok(Command::Namespace(match args {
            "" => NsArg::Show,
            "all" | "-" | "*" => NsArg::All,
            name if name.contains(char::is_whitespace) => {
                return Err(format!("`:ns` takes one namespace, got {name:?}"));
            }
            name => NsArg::Name(name.to_string()),
        })),
        ("help", None) => Ok(Command::Help),
        _ => Ok(Command::Quit),
    }
}

/// k9s habit: `:wl team-a` filters by namespace; `/x` is a text term.
fn filter_from_args(view: ViewId, args: &str) -> String {
    args.split_whitespace()
        .map(|w| {
            if let Some(text) = w.strip_prefix('/') {
                text.to_string()
            } else if view == ViewId::Workloads && !w.contains('=') {
                format!("ns={w}")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every command name starting with `prefix` (case-insensitive), sorted.
pub fn candidates(prefix: &str) -> Vec<&'static str> {
    let prefix = prefix.to_ascii_lowercase();
    let mut out: Vec<&str> = NAMES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    out.sort_unstable();
    out
}

/// Tab completion: one candidate completes fully (with a trailing space); several
/// complete to their longest common prefix. `None` when nothing would change.
pub fn complete(input: &str) -> Option<String> {
    if input.contains(char::is_whitespace) {
        return None;
    }
    let cands = candidates(input);
    let completed = match cands.as_slice() {
        [] => return None,
        [only] => format!("{only} "),
        [first, rest @ ..] => {
            let mut len = first.len();
            for c in rest {
                len = len.min(common_prefix(first, c));
            }
            first[..len].to_string()
        }
    };
    (completed != input).then_some(completed)
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}
