//! Quota-tree arithmetic for "can this ever fit": Kueue's `potentialAvailable`.
//!
//! Per (flavor, resource): a ClusterQueue's SubtreeQuota is its nominal quota; a
//! Cohort's is its own nominal plus, for each child, `SubtreeQuota − localQuota`, where
//! a node's localQuota (guaranteed, not lent) is `max(0, SubtreeQuota − lendingLimit)`
//! when lendingLimit is set and 0 otherwise. potentialAvailable is SubtreeQuota at a
//! root, else `localQuota + potentialAvailable(parent)`, capped at
//! `SubtreeQuota + borrowingLimit` when a borrowingLimit is set. Usage is ignored: this
//! is the most a ClusterQueue could ever admit. Cohorts on a parent cycle are treated as
//! roots (Kueue ignores such a tree).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{ClusterQueue, ClusterState, Quantity, ResourceGroup, ResourceQuota};

/// The quota entry of (flavor, resource) in some resource groups.
pub fn quota_in<'a>(
    groups: &'a [ResourceGroup],
    flavor: &str,
    resource: &str,
) -> Option<&'a ResourceQuota> {
    groups
        .iter()
        .flat_map(|g| g.flavors.iter())
        .filter(|f| f.name == flavor)
        .flat_map(|f| f.resources.iter())
        .find(|r| r.name == resource)
}

#[derive(Clone, Copy)]
enum NodeRef<'a> {
    Cq(&'a ClusterQueue),
    Cohort(&'a str),
}

/// The cohort forest of a cluster state.
pub struct QuotaTree<'a> {
    state: &'a ClusterState,
    /// cohort name → member ClusterQueues.
    cq_children: BTreeMap<&'a str, Vec<&'a ClusterQueue>>,
    /// cohort name → child cohorts (cycle-free).
    cohort_children: BTreeMap<&'a str, Vec<&'a str>>,
    cyclic: BTreeSet<&'a str>,
    /// (flavor, resource) → cohort → SubtreeQuota, filled on first use: without it each
    /// question walks the whole tree below the root, once per workload.
    subtree_memo: RefCell<Memo>,
    /// (flavor, resource) → cohort → potentialAvailable.
    potential_memo: RefCell<Memo>,
}

type Memo = HashMap<(String, String), HashMap<String, Quantity>>;

fn memo_get(memo: &RefCell<Memo>, name: &str, flavor: &str, resource: &str) -> Option<Quantity> {
    memo.borrow()
        .get(&(flavor.to_string(), resource.to_string()))
        .and_then(|m| m.get(name).copied())
}

fn memo_put(memo: &RefCell<Memo>, name: &str, flavor: &str, resource: &str, q: Quantity) {
    memo.borrow_mut()
        .entry((flavor.to_string(), resource.to_string()))
        .or_default()
        .insert(name.to_string(), q);
}

impl<'a> QuotaTree<'a> {
    pub fn new(state: &'a ClusterState) -> Self {
        let mut cyclic = BTreeSet::new();
        for start in state.cohorts.keys() {
            let mut seen = BTreeSet::new();
            let mut cur = start.as_str();
            loop {
                if !seen.insert(cur) {
                    if cur == start {
                        cyclic.insert(start.as_str());
                    }
                    break;
                }
                match state.cohorts.get(cur).and_then(|c| c.parent.as_deref()) {
                    Some(p) => cur = p,
                    None => break,
                }
            }
        }
        let mut cq_children: BTreeMap<&str, Vec<&ClusterQueue>> = BTreeMap::new();
        for cq in state.cluster_queues.values() {
            if let Some(c) = cq.cohort.as_deref() {
                cq_children.entry(c).or_default().push(cq);
            }
        }
        let mut cohort_children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in state.cohorts.values() {
            if cyclic.contains(c.name.as_str()) {
                continue;
            }
            if let Some(p) = c.parent.as_deref() {
                cohort_children.entry(p).or_default().push(c.name.as_str());
            }
        }
        QuotaTree {
            state,
            cq_children,
            cohort_children,
            cyclic,
            subtree_memo: RefCell::default(),
            potential_memo: RefCell::default(),
        }
    }

    fn own_quota(
        &self,
        node: NodeRef<'a>,
        flavor: &str,
        resource: &str,
    ) -> Option<&'a ResourceQuota> {
        match node {
            NodeRef::Cq(cq) => quota_in(&cq.resource_groups, flavor, resource),
            NodeRef::Cohort(name) => self
                .state
                .cohorts
                .get(name)
                .and_then(|c| quota_in(&c.resource_groups, flavor, resource)),
        }
    }

    fn parent(&self, node: NodeRef<'a>) -> Option<&'a str> {
        match node {
            NodeRef::Cq(cq) => cq.cohort.as_deref(),
            NodeRef::Cohort(name) => {
                if self.cyclic.contains(name) {
                    return None;
                }
                self.state
                    .cohorts
                    .get(name)
                    .and_then(|c| c.parent.as_deref())
            }
        }
    }

    fn subtree_quota(&self, node: NodeRef<'a>, flavor: &str, resource: &str) -> Quantity {
        let own = self
            .own_quota(node, flavor, resource)
            .map(|q| q.nominal)
            .unwrap_or_default();
        let NodeRef::Cohort(name) = node else {
            return own;
        };
        if let Some(q) = memo_get(&self.subtree_memo, name, flavor, resource) {
            return q;
        }
        let mut total = own;
        for cq in self.cq_children.get(name).into_iter().flatten() {
            let child = NodeRef::Cq(cq);
            total += self.subtree_quota(child, flavor, resource)
                - self.local_quota(child, flavor, resource);
        }
        for c in self.cohort_children.get(name).into_iter().flatten() {
            let child = NodeRef::Cohort(c);
            total += self.subtree_quota(child, flavor, resource)
                - self.local_quota(child, flavor, resource);
        }
        memo_put(&self.subtree_memo, name, flavor, resource, total);
        total
    }

    fn local_quota(&self, node: NodeRef<'a>, flavor: &str, resource: &str) -> Quantity {
        match self
            .own_quota(node, flavor, resource)
            .and_then(|q| q.lending_limit)
        {
            Some(lend) => self
                .subtree_quota(node, flavor, resource)
                .saturating_sub_zero(lend),
            None => Quantity::ZERO,
        }
    }

    fn potential(&self, node: NodeRef<'a>, flavor: &str, resource: &str) -> Quantity {
        if let NodeRef::Cohort(name) = node
            && let Some(q) = memo_get(&self.potential_memo, name, flavor, resource)
        {
            return q;
        }
        let q = self.potential_uncached(node, flavor, resource);
        if let NodeRef::Cohort(name) = node {
            memo_put(&self.potential_memo, name, flavor, resource, q);
        }
        q
    }

    fn potential_uncached(&self, node: NodeRef<'a>, flavor: &str, resource: &str) -> Quantity {
        let subtree = self.subtree_quota(node, flavor, resource);
        let Some(parent) = self.parent(node) else {
            return subtree;
        };
        let mut avail = self.local_quota(node, flavor, resource)
            + self.potential(NodeRef::Cohort(parent), flavor, resource);
        if let Some(limit) = self
            .own_quota(node, flavor, resource)
            .and_then(|q| q.borrowing_limit)
        {
            avail = avail.min(subtree + limit);
        }
        avail
    }

    /// The most of `resource` in `flavor` that `cq` could ever admit, ignoring usage.
    pub fn potential_available(
        &self,
        cq: &'a ClusterQueue,
        flavor: &str,
        resource: &str,
    ) -> Quantity {
        self.potential(NodeRef::Cq(cq), flavor, resource)
            .max(Quantity::ZERO)
    }
}
