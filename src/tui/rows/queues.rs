//! The queue tree: cohorts → ClusterQueues → LocalQueues, with per flavor × resource
//! quota figures computed from the workloads that hold quota.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::gpus;
use super::workloads::WlState;
use crate::model::{ClusterState, Quantity, ResourceList};

/// Quota figures of one (flavor, resource) of a ClusterQueue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaFigures {
    pub flavor: String,
    pub resource: String,
    pub nominal: Quantity,
    /// Sum of the usage of workloads holding quota.
    pub used: Quantity,
    /// Used beyond nominal (borrowed from the cohort).
    pub borrowed: Quantity,
    /// Unused nominal this queue can lend: `min(lendingLimit ?? nominal, nominal - used)`.
    pub lendable: Quantity,
    pub borrowing_limit: Option<Quantity>,
}

#[derive(Clone, Debug, Default)]
pub struct CqSummary {
    pub name: String,
    pub cohort: Option<String>,
    pub quotas: Vec<QuotaFigures>,
    pub pending: usize,
    pub admitted: usize,
    pub gpu_used: i64,
    pub gpu_nominal: i64,
    pub held: bool,
    /// Fair sharing on: weight and dominant resource share ("w1 0.31").
    pub share: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct LqSummary {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    pub pending: usize,
    pub admitted: usize,
    pub held: bool,
}

/// One selectable line of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueLine {
    Cohort { name: String, depth: usize },
    ClusterQueue { index: usize, depth: usize },
    LocalQueue { index: usize, depth: usize },
}

#[derive(Clone, Debug, Default)]
pub struct QueueTree {
    pub cqs: Vec<CqSummary>,
    pub lqs: Vec<LqSummary>,
    pub lines: Vec<QueueLine>,
    /// Kueue's configuration enables fair sharing: the SHARE column is shown.
    pub fair_sharing: bool,
    /// Cohort → weight and dominant resource share, when fair sharing is on.
    pub cohort_shares: BTreeMap<String, String>,
}

impl QueueTree {
    pub fn build(state: &ClusterState) -> QueueTree {
        let mut used: HashMap<&str, HashMap<(&str, &str), Quantity>> = HashMap::new();
        let mut lq_counts: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
        for wl in state.workloads.values() {
            let st = WlState::of(wl);
            if let Some(adm) = wl.admission.as_ref().filter(|_| wl.has_quota_reservation())
                && st != WlState::Finished
            {
                let per = used.entry(adm.cluster_queue.as_str()).or_default();
                for psa in &adm.pod_set_assignments {
                    for (res, flavor) in &psa.flavors {
                        let q = psa.resource_usage.get(res).copied().unwrap_or_default();
                        *per.entry((flavor.as_str(), res.as_str())).or_default() += q;
                    }
                }
            }
            let Some(q) = wl.queue_name.as_deref() else {
                continue;
            };
            let c = lq_counts.entry((wl.namespace.as_str(), q)).or_default();
            match st {
                WlState::Pending | WlState::Evicted | WlState::Preempted => c.0 += 1,
                WlState::Admitted | WlState::QuotaReserved => c.1 += 1,
                _ => {}
            }
        }
        let mut tree = QueueTree::default();
        let mut cq_index = HashMap::new();
        for cq in state.cluster_queues.values() {
            let per = used.get(cq.name.as_str());
            let mut s = CqSummary {
                name: cq.name.clone(),
                cohort: cq.cohort.clone(),
                held: cq.stop_policy != crate::model::StopPolicy::None,
                ..CqSummary::default()
            };
            let (mut used_total, mut nominal_total) = (ResourceList::new(), ResourceList::new());
            for fq in cq.resource_groups.iter().flat_map(|g| &g.flavors) {
                for rq in &fq.resources {
                    let key = (fq.name.as_str(), rq.name.as_str());
                    let u = per.and_then(|p| p.get(&key)).copied().unwrap_or_default();
                    let free = rq.nominal.saturating_sub_zero(u);
                    let lend_cap = rq.lending_limit.unwrap_or(rq.nominal);
                    *used_total.entry(rq.name.clone()).or_default() += u;
                    *nominal_total.entry(rq.name.clone()).or_default() += rq.nominal;
                    s.quotas.push(QuotaFigures {
                        flavor: fq.name.clone(),
                        resource: rq.name.clone(),
                        nominal: rq.nominal,
                        used: u,
                        borrowed: u.saturating_sub_zero(rq.nominal),
                        lendable: free.min(lend_cap),
                        borrowing_limit: rq.borrowing_limit,
                    });
                }
            }
            // Every accelerator the queue covers, each device counted once.
            s.gpu_used = gpus(&used_total);
            s.gpu_nominal = gpus(&nominal_total);
            cq_index.insert(cq.name.clone(), tree.cqs.len());
            tree.cqs.push(s);
        }
        for lq in state.local_queues.values() {
            let (pending, admitted) = lq_counts
                .get(&(lq.namespace.as_str(), lq.name.as_str()))
                .copied()
                .unwrap_or_default();
            if let Some(&i) = cq_index.get(&lq.cluster_queue) {
                tree.cqs[i].pending += pending;
                tree.cqs[i].admitted += admitted;
            }
            tree.lqs.push(LqSummary {
                namespace: lq.namespace.clone(),
                name: lq.name.clone(),
                cluster_queue: lq.cluster_queue.clone(),
                pending,
                admitted,
                held: lq.stop_policy != crate::model::StopPolicy::None,
            });
        }
        if let Some((cqs, cohorts)) = crate::engine::fair::share_report(state) {
            tree.fair_sharing = true;
            for cq in &mut tree.cqs {
                cq.share = cqs.get(&cq.name).map(|f| f.text());
            }
            tree.cohort_shares = cohorts.iter().map(|(n, f)| (n.clone(), f.text())).collect();
        }
        tree.lines = tree.layout(state);
        tree
    }

    /// Orders the lines: root cohorts (defined or only named by a CQ), their child
    /// cohorts, their CQs and each CQ's LocalQueues; CQs without a cohort last.
    fn layout(&self, state: &ClusterState) -> Vec<QueueLine> {
        let mut cohorts: BTreeMap<String, Option<String>> = state
            .cohorts
            .values()
            .map(|c| (c.name.clone(), c.parent.clone()))
            .collect();
        for cq in &self.cqs {
            if let Some(c) = &cq.cohort {
                cohorts.entry(c.clone()).or_insert(None);
            }
        }
        let roots: Vec<String> = cohorts
            .iter()
            .filter(|(_, p)| p.as_ref().is_none_or(|p| !cohorts.contains_key(p)))
            .map(|(n, _)| n.clone())
            .collect();
        let mut lines = Vec::new();
        let mut seen = BTreeSet::new();
        for root in roots {
            self.push_cohort(&root, 0, &cohorts, &mut seen, &mut lines);
        }
        for (i, cq) in self.cqs.iter().enumerate() {
            if cq.cohort.is_none() {
                self.push_cq(i, 0, &mut lines);
            }
        }
        lines
    }

    fn push_cohort(
        &self,
        name: &str,
        depth: usize,
        cohorts: &BTreeMap<String, Option<String>>,
        seen: &mut BTreeSet<String>,
        lines: &mut Vec<QueueLine>,
    ) {
        // A parent cycle in the input must not loop forever.
        if !seen.insert(name.to_string()) {
            return;
        }
        lines.push(QueueLine::Cohort {
            name: name.to_string(),
            depth,
        });
        for (child, _) in cohorts.iter().filter(|(_, p)| p.as_deref() == Some(name)) {
            self.push_cohort(child, depth + 1, cohorts, seen, lines);
        }
        for (i, cq) in self.cqs.iter().enumerate() {
            if cq.cohort.as_deref() == Some(name) {
                self.push_cq(i, depth + 1, lines);
            }
        }
    }

    fn push_cq(&self, index: usize, depth: usize, lines: &mut Vec<QueueLine>) {
        lines.push(QueueLine::ClusterQueue { index, depth });
        let name = &self.cqs[index].name;
        for (i, lq) in self.lqs.iter().enumerate() {
            if &lq.cluster_queue == name {
                lines.push(QueueLine::LocalQueue {
                    index: i,
                    depth: depth + 1,
                });
            }
        }
    }

    /// GPUs in use per ClusterQueue (for the sparkline history).
    pub fn gpu_usage(&self) -> impl Iterator<Item = (&str, i64)> {
        self.cqs.iter().map(|c| (c.name.as_str(), c.gpu_used))
    }
}
