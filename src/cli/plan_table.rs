//! `plan -o table`: the plan's JSON contract rendered for people.
//!
//! Rendering from the serialized contract (not the engine's Rust types) guarantees the
//! table never shows something the JSON does not say.

use serde_json::Value;

use super::table::{Table, wrap};

fn s(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// "master: p4d-flavor, worker: p4d-flavor" (resources folded when one flavor serves all).
fn flavors_summary(flavors: &Value) -> String {
    let Some(podsets) = flavors.as_object() else {
        return String::new();
    };
    podsets
        .iter()
        .map(|(podset, res)| {
            let mut names: Vec<String> = res
                .as_object()
                .map(|m| {
                    m.values()
                        .filter_map(|f| f.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names.dedup();
            format!("{podset}: {}", names.join("+"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders the plan JSON as text, `width` columns wide.
pub fn render(plan: &Value, width: usize) -> String {
    let mut out = String::new();
    let empty = Vec::new();
    let cycles = plan
        .get("cycles")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if cycles.is_empty() {
        out.push_str("No scheduling cycle changes anything: nothing to admit or preempt.\n");
    }
    for (i, cycle) in cycles.iter().enumerate() {
        out.push_str(&format!("CYCLE {}\n", i + 1));
        let list = |k: &str| {
            cycle
                .get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (admitted, preempted, pending) = (list("admitted"), list("preempted"), list("pending"));
        for a in &admitted {
            let borrow = if a.get("borrowing").and_then(Value::as_bool) == Some(true) {
                "  (borrowing)"
            } else {
                ""
            };
            out.push_str(&format!(
                "  ADMIT    {}  in {}{borrow}\n",
                s(a, "workload"),
                s(a, "clusterQueue")
            ));
            let flavors = a.get("flavors").map(flavors_summary).unwrap_or_default();
            if !flavors.is_empty() {
                out.extend(
                    wrap(&flavors, "           ", width)
                        .into_iter()
                        .map(|l| l + "\n"),
                );
            }
        }
        for p in &preempted {
            out.push_str(&format!(
                "  PREEMPT  {}  ({})\n",
                s(p, "workload"),
                s(p, "reason")
            ));
            out.extend(
                wrap(&format!("by {}", s(p, "by")), "           ", width)
                    .into_iter()
                    .map(|l| l + "\n"),
            );
        }
        // Pending reasons in full for the first cycle (why jobs wait now) and the last
        // (why they still wait at the end); a count in between keeps the table short.
        let in_full = i == 0 || i + 1 == cycles.len();
        if !in_full && !pending.is_empty() {
            out.push_str(&format!("  ({} still pending)\n", pending.len()));
        }
        for p in pending.iter().filter(|_| in_full) {
            let cq = s(p, "clusterQueue");
            let cq = if cq.is_empty() {
                "no ClusterQueue".to_string()
            } else {
                cq
            };
            out.push_str(&format!(
                "  PENDING  #{} {}  in {}\n",
                s(p, "position"),
                s(p, "workload"),
                cq
            ));
            out.extend(
                wrap(&s(p, "reason"), "           ", width)
                    .into_iter()
                    .map(|l| l + "\n"),
            );
        }
        if admitted.is_empty() && preempted.is_empty() && pending.is_empty() {
            out.push_str("  (nothing)\n");
        }
    }

    let cqs = plan
        .get("clusterQueues")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if !cqs.is_empty() {
        out.push_str("\nCLUSTER QUEUES NOW\n");
    }
    // One heading per ClusterQueue, then its flavor × resource rows: stays narrow
    // however long the queue names are.
    for cq in cqs {
        let cohort = match s(cq, "cohort") {
            c if c.is_empty() => "no cohort".to_string(),
            c => format!("cohort {c}"),
        };
        out.push_str(&format!("  {}  ({cohort})\n", s(cq, "name")));
        let mut table = Table::new(&["FLAVOR", "RESOURCE", "NOMINAL", "USED", "BORROWED"]);
        let usage = cq.get("usage").and_then(Value::as_object);
        for (flavor, resources) in usage.into_iter().flatten() {
            for (resource, q) in resources.as_object().into_iter().flatten() {
                table.row(vec![
                    flavor.clone(),
                    resource.clone(),
                    s(q, "nominal"),
                    s(q, "used"),
                    s(q, "borrowed"),
                ]);
            }
        }
        if table.is_empty() {
            out.push_str("    (no quota)\n");
        } else {
            out.push_str(&table.render("    "));
        }
    }
    if let Some(d) = plan.get("detectedCycle") {
        let n = |k: &str| d.get(k).and_then(Value::as_u64).unwrap_or_default();
        let names: Vec<&str> = d
            .get("workloads")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        out.push_str(&format!(
            "\nDETECTED CYCLE {name}: cycles {from} and {to} end in the same state; \
             period {period} cycles, {pre} preemptions per period\n",
            name = d.get("name").and_then(Value::as_str).unwrap_or("loop"),
            from = n("from"),
            to = n("to"),
            period = n("period"),
            pre = n("preemptionsPerPeriod"),
        ));
        let mut list = names.iter().take(8).copied().collect::<Vec<_>>().join(", ");
        if names.len() > 8 {
            list.push_str(&format!(" and {} more", names.len() - 8));
        }
        for l in wrap(&format!("workloads: {list}"), "    ", width) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    let warnings = plan
        .get("warnings")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if !warnings.is_empty() {
        out.push_str("\nWARNINGS\n");
        for w in warnings {
            let text = w
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| w.to_string());
            let mut lines = wrap(&text, "    ", width);
            if let Some(first) = lines.first_mut() {
                first.replace_range(0..2, "- ");
            }
            out.extend(lines.into_iter().map(|l| l + "\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_section_within_80_columns() {
        let plan = serde_json::json!({
            "cycles": [{
                "admitted": [],
                "preempted": [{"workload": "cv-team/yolo-train", "by": "nlp-team/boss-urgent-llama-finetune", "reason": "InClusterQueue"}],
                "pending": [{"workload": "nlp-team/boss-urgent-llama-finetune", "clusterQueue": "hyperpod-global-queue", "position": 1,
                             "reason": "waiting for 2 preempted workloads to release 16 nvidia.com/gpu in flavor p4d-flavor"}]
            }, {
                "admitted": [{"workload": "nlp-team/boss-urgent-llama-finetune", "clusterQueue": "hyperpod-global-queue",
                              "flavors": {"master": {"nvidia.com/gpu": "p4d-flavor"}}, "borrowing": false}],
                "preempted": [], "pending": []
            }],
            "clusterQueues": [{"name": "hyperpod-global-queue", "cohort": null,
                               "usage": {"p4d-flavor": {"nvidia.com/gpu": {"nominal": "32", "used": "32", "borrowed": "0"}}}}],
            "warnings": ["fair sharing is configured on ClusterQueue x but not simulated"]
        });
        let text = render(&plan, 80);
        assert!(text.contains("CYCLE 1"));
        assert!(text.contains("PREEMPT  cv-team/yolo-train  (InClusterQueue)"));
        assert!(
            text.contains("ADMIT    nlp-team/boss-urgent-llama-finetune  in hyperpod-global-queue")
        );
        assert!(text.contains("master: p4d-flavor"));
        assert!(text.contains("WARNINGS"));
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
    }
}
