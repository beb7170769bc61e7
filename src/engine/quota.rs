//! The quota tree: ClusterQueues and Cohorts as resource nodes, with Kueue's
//! SubtreeQuota / localQuota / usage-bubbling arithmetic.
//!
//! Mirrors `pkg/cache/scheduler/resource_node.go` (see the semantics notes §3.2).
//! Quantities are `i128` milli-units; every (flavor, resource) pair is interned to a
//! dense index ([`FrId`]) so a node's figures are plain vectors.

use std::collections::BTreeMap;

/// Index of an interned (flavor, resource) pair.
pub type FrId = usize;
/// Index of a node (ClusterQueue or Cohort) in the tree arena.
pub type NodeId = usize;

/// Interned (flavor, resource) pairs.
#[derive(Clone, Debug, Default)]
pub struct FrTable {
    pairs: Vec<(String, String)>,
    /// flavor → resource → id (two levels so lookups by `&str` do not allocate).
    index: BTreeMap<String, BTreeMap<String, FrId>>,
}

impl FrTable {
    pub fn intern(&mut self, flavor: &str, resource: &str) -> FrId {
        if let Some(id) = self.get(flavor, resource) {
            return id;
        }
        let id = self.pairs.len();
        self.pairs.push((flavor.to_string(), resource.to_string()));
        self.index
            .entry(flavor.to_string())
            .or_default()
            .insert(resource.to_string(), id);
        id
    }

    pub fn get(&self, flavor: &str, resource: &str) -> Option<FrId> {
        self.index.get(flavor)?.get(resource).copied()
    }

    pub fn flavor(&self, fr: FrId) -> &str {
        &self.pairs[fr].0
    }

    pub fn resource(&self, fr: FrId) -> &str {
        &self.pairs[fr].1
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// One ClusterQueue or Cohort.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub is_cq: bool,
    pub parent: Option<NodeId>,
    pub child_cohorts: Vec<NodeId>,
    pub child_cqs: Vec<NodeId>,
    /// Whether the node's own spec lists this fr (CQ: in its resource groups).
    pub has_quota: Vec<bool>,
    pub nominal: Vec<i128>,
    pub borrowing_limit: Vec<Option<i128>>,
    pub lending_limit: Vec<Option<i128>>,
    pub subtree: Vec<i128>,
    /// `localQuota` per fr, cached by [`QuotaTree::finish`] (it depends on quotas only;
    /// the preemption search reads it on every usage change).
    pub local: Vec<i128>,
    pub usage: Vec<i128>,
    /// Distance to the furthest leaf (a CQ is a leaf; `getNodeHeight`).
    pub height: usize,
}

impl Node {
    pub fn new(name: &str, is_cq: bool, nfr: usize) -> Self {
        Node {
            name: name.to_string(),
            is_cq,
            parent: None,
            child_cohorts: Vec::new(),
            child_cqs: Vec::new(),
            has_quota: vec![false; nfr],
            nominal: vec![0; nfr],
            borrowing_limit: vec![None; nfr],
            lending_limit: vec![None; nfr],
            subtree: vec![0; nfr],
            local: vec![0; nfr],
            usage: vec![0; nfr],
            height: 0,
        }
    }

    /// Guaranteed quota only visible inside this subtree (`localQuota`), from the
    /// subtree quota and the lending limit.
    fn compute_local_quota(&self, fr: FrId) -> i128 {
        match self.lending_limit[fr] {
            Some(l) => (self.subtree[fr] - l).max(0),
            None => 0,
        }
    }

    /// Guaranteed quota only visible inside this subtree (`localQuota`; cached by
    /// [`QuotaTree::finish`]).
    #[inline]
    pub fn local_quota(&self, fr: FrId) -> i128 {
        self.local[fr]
    }

    /// Guaranteed quota not yet used (`LocalAvailable`).
    pub fn local_available(&self, fr: FrId) -> i128 {
        (self.local_quota(fr) - self.usage[fr]).max(0)
    }

    /// Usage (+val) above the subtree quota (`BorrowingWith`).
    pub fn borrowing_with(&self, fr: FrId, val: i128) -> bool {
        self.usage[fr] + val > self.subtree[fr]
    }
}

/// The arena of all nodes.
#[derive(Clone, Debug, Default)]
pub struct QuotaTree {
    pub nodes: Vec<Node>,
    pub nfr: usize,
}

impl QuotaTree {
    /// Recomputes SubtreeQuota bottom-up and heights (`updateCohortResourceNode`).
    /// Usage must be zero when called; it is added afterwards workload by workload.
    pub fn finish(&mut self) {
        let roots: Vec<NodeId> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].parent.is_none())
            .collect();
        for r in roots {
            self.accumulate(r);
        }
    }

    fn accumulate(&mut self, n: NodeId) {
        let nfr = self.nfr;
        let mut subtree = self.nodes[n].nominal.clone();
        let mut height =
            if self.nodes[n].child_cqs.is_empty() && self.nodes[n].child_cohorts.is_empty() {
                0
            } else {
                1
            };
        let children: Vec<NodeId> = self.nodes[n]
            .child_cohorts
            .iter()
            .chain(self.nodes[n].child_cqs.iter())
            .copied()
            .collect();
        for c in children {
            self.accumulate(c);
            let child = &self.nodes[c];
            if !child.is_cq {
                height = height.max(child.height + 1);
            }
            for (fr, s) in subtree.iter_mut().enumerate().take(nfr) {
                *s += child.subtree[fr] - child.local_quota(fr);
            }
        }
        if self.nodes[n].is_cq {
            height = 0;
        }
        self.nodes[n].subtree = subtree;
        self.nodes[n].height = height;
        let local = (0..nfr)
            .map(|fr| self.nodes[n].compute_local_quota(fr))
            .collect();
        self.nodes[n].local = local;
    }

    /// `available`: what the node can still take, honouring borrowing limits.
    pub fn available(&self, n: NodeId, fr: FrId) -> i128 {
        let node = &self.nodes[n];
        let Some(p) = node.parent else {
            return node.subtree[fr] - node.usage[fr];
        };
        let mut parent_available = self.available(p, fr);
        if let Some(bl) = node.borrowing_limit[fr] {
            let stored_in_parent = node.subtree[fr] - node.local_quota(fr);
            let used_in_parent = (node.usage[fr] - node.local_quota(fr)).max(0);
            parent_available = parent_available.min(stored_in_parent - used_in_parent + bl);
        }
        node.local_available(fr) + parent_available
    }

    /// ClusterQueue `Available`, clamped at zero.
    pub fn cq_available(&self, n: NodeId, fr: FrId) -> i128 {
        self.available(n, fr).max(0)
    }

    /// `potentialAvailable`: the most this node could ever get, ignoring usage.
    pub fn potential_available(&self, n: NodeId, fr: FrId) -> i128 {
        let node = &self.nodes[n];
        let Some(p) = node.parent else {
            return node.subtree[fr];
        };
        let mut avail = node.local_quota(fr) + self.potential_available(p, fr);
        if let Some(bl) = node.borrowing_limit[fr] {
            avail = avail.min(node.subtree[fr] + bl);
        }
        avail
    }

    /// `addUsage`: adds to the node and bubbles the part above the guaranteed quota up.
    pub fn add_usage(&mut self, n: NodeId, fr: FrId, val: i128) {
        let (mut n, mut val) = (n, val);
        loop {
            let node = &mut self.nodes[n];
            let local_available = (node.local[fr] - node.usage[fr]).max(0);
            node.usage[fr] += val;
            match node.parent {
                Some(p) if val > local_available => {
                    val -= local_available;
                    n = p;
                }
                _ => return,
            }
        }
    }

    /// `removeUsage`: symmetric to [`QuotaTree::add_usage`].
    pub fn remove_usage(&mut self, n: NodeId, fr: FrId, val: i128) {
        let (mut n, mut val) = (n, val);
        loop {
            let node = &mut self.nodes[n];
            let stored_in_parent = node.usage[fr] - node.local[fr];
            node.usage[fr] -= val;
            match node.parent {
                Some(p) if stored_in_parent > 0 => {
                    val = val.min(stored_in_parent);
                    n = p;
                }
                _ => return,
            }
        }
    }

    pub fn add_all(&mut self, n: NodeId, usage: &[(FrId, i128)]) {
        for &(fr, v) in usage {
            self.add_usage(n, fr, v);
        }
    }

    pub fn remove_all(&mut self, n: NodeId, usage: &[(FrId, i128)]) {
        for &(fr, v) in usage {
            self.remove_usage(n, fr, v);
        }
    }

    /// Path from the node's parent up to the root.
    pub fn ancestors(&self, n: NodeId) -> Vec<NodeId> {
        self.ancestors_iter(n).collect()
    }

    /// [`QuotaTree::ancestors`] without allocating (the preemption search walks it per
    /// candidate).
    pub fn ancestors_iter(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.nodes[n].parent, |&p| self.nodes[p].parent)
    }

    pub fn root(&self, n: NodeId) -> NodeId {
        let mut cur = n;
        while let Some(p) = self.nodes[cur].parent {
            cur = p;
        }
        cur
    }

    /// `FindHeightOfLowestSubtreeThatFits` (`classical/hierarchical_preemption.go`):
    /// the borrowing level of taking `val` more of `fr` (0 = within the CQ's own quota),
    /// and whether the subtree found is smaller than the whole tree.
    pub fn height_of_lowest_subtree_that_fits(
        &self,
        cq: NodeId,
        fr: FrId,
        val: i128,
    ) -> (usize, bool) {
        let node = &self.nodes[cq];
        if !(node.borrowing_with(fr, val) && node.parent.is_some()) {
            return (0, node.parent.is_some());
        }
        let mut remaining = val - node.local_available(fr);
        let mut tracking = cq;
        for p in self.ancestors_iter(cq) {
            tracking = p;
            if !self.nodes[p].borrowing_with(fr, remaining) {
                return (self.nodes[p].height, self.nodes[p].parent.is_some());
            }
            remaining -= self.nodes[p].local_available(fr);
        }
        (
            self.nodes[tracking].height,
            self.nodes[tracking].parent.is_some(),
        )
    }

    /// `QuantitiesFitInQuota`: whether `requests` fit in the node's subtree quota, and
    /// what remains once its guaranteed local availability is used.
    pub fn quantities_fit_in_quota(
        &self,
        n: NodeId,
        requests: &[(FrId, i128)],
    ) -> (bool, Vec<(FrId, i128)>) {
        let node = &self.nodes[n];
        let mut fits = true;
        let mut remaining = Vec::with_capacity(requests.len());
        for &(fr, v) in requests {
            if node.usage[fr] + v > node.subtree[fr] {
                fits = false;
            }
            remaining.push((fr, (v - node.local_available(fr)).max(0)));
        }
        (fits, remaining)
    }

    /// `IsWithinNominalInResources`: usage ≤ subtree quota for every fr given.
    pub fn within_nominal(&self, n: NodeId, frs: &[FrId]) -> bool {
        let node = &self.nodes[n];
        frs.iter().all(|&fr| node.usage[fr] <= node.subtree[fr])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root cohort (own nominal 0) with two CQs: a (nominal 10, lending 4) and b (nominal 6).
    fn tree() -> QuotaTree {
        let mut t = QuotaTree {
            nodes: vec![
                Node::new("root", false, 1),
                Node::new("a", true, 1),
                Node::new("b", true, 1),
            ],
            nfr: 1,
        };
        t.nodes[0].child_cqs = vec![1, 2];
        t.nodes[1].parent = Some(0);
        t.nodes[2].parent = Some(0);
        t.nodes[1].nominal[0] = 10;
        t.nodes[1].lending_limit[0] = Some(4);
        t.nodes[2].nominal[0] = 6;
        t.finish();
        t
    }

    #[test]
    fn subtree_and_local_quota() {
        let t = tree();
        assert_eq!(t.nodes[0].subtree[0], 4 + 6);
        assert_eq!(t.nodes[1].local_quota(0), 6);
        assert_eq!(t.available(1, 0), 6 + 10);
        assert_eq!(t.available(2, 0), 10);
        assert_eq!(t.potential_available(2, 0), 10);
        assert_eq!(t.nodes[0].height, 1);
    }

    #[test]
    fn usage_bubbles_above_guaranteed() {
        let mut t = tree();
        t.add_usage(1, 0, 8);
        assert_eq!(t.nodes[0].usage[0], 2);
        assert_eq!(t.available(2, 0), 8);
        t.remove_usage(1, 0, 8);
        assert_eq!(t.nodes[0].usage[0], 0);
        assert_eq!(t.nodes[1].usage[0], 0);
    }
}
