//! The quota tree: ClusterQueues and Cohorts as resource nodes, with Kueue's
//! SubtreeQuota / localQuota / usage-bubbling arithmetic.
//!
//! Mirrors `pkg/cache/scheduler/resource_node.go` (see the semantics notes §3.2).
//! Quantities are `i128` milli-units; every (flavor, resource) pair is interned to a
//! dense index ([`FrId`]) so a node's figures are plain vectors.

use super::shared::Shared;

/// Index of an interned (flavor, resource) pair.
pub type FrId = usize;
/// Index of a node (ClusterQueue or Cohort) in the tree arena.
pub type NodeId = usize;

type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// Interned (flavor, resource) pairs.
#[derive(Clone, Debug, Default)]
pub struct FrTable {
    pairs: Vec<(String, String)>,
    /// flavor → resource → id (two levels so lookups by `&str` do not allocate; hashed:
    /// flavor assignment looks pairs up for every head, the snapshot for every admitted
    /// workload; never iterated).
    index: FastMap<String, FastMap<String, FrId>>,
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
    /// `localQuota` per fr, set by [`QuotaTree::finish`] (it depends on quotas only).
    /// Usage lives in the tree's cells ([`QuotaTree::usage`]).
    pub local: Vec<i128>,
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
}

/// What usage bubbling reads and writes for one node and fr, side by side: the
/// preemption search removes and restores thousands of workloads per head, and with
/// these spread over a node's separate vectors most of that time was cache misses.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    usage: i128,
    local: i128,
}

/// No parent, in [`QuotaTree`]'s compact parent array.
const NO_PARENT: u32 = u32::MAX;

/// The arena of all nodes. Build it with [`QuotaTree::new`], set quotas and parents,
/// then call [`QuotaTree::finish`] before adding usage.
#[derive(Clone, Debug, Default)]
pub struct QuotaTree {
    /// Read-only once [`QuotaTree::finish`] has run, as are the other tables but `cells`:
    /// shared between the copies nomination workers take of the tree every cycle.
    pub nodes: Shared<Vec<Node>>,
    pub nfr: usize,
    /// Per node, then per fr (`n * nfr + fr`); made by [`QuotaTree::finish`].
    cells: Vec<Cell>,
    /// Each node's parent ([`NO_PARENT`] at a root), a copy of `Node::parent` for the
    /// usage walk.
    up: Shared<Vec<u32>>,
    /// Pre-order number of each node, and one past the last number in its subtree: `n`
    /// is in `root`'s subtree iff `order[root].0 <= order[n].0 < order[root].1`.
    order: Shared<Vec<(u32, u32)>>,
    /// [`QuotaTree::potential_available`] per node and fr, laid out as `cells`.
    potential: Shared<Vec<i128>>,
    /// What `available` reads of a node's quotas, laid out as `cells` (the search asks
    /// for it hundreds of thousands of times a cycle; `Node`'s vectors are scattered).
    limits: Shared<Vec<Limits>>,
}

/// A node's subtree quota and borrowing limit of one fr.
#[derive(Clone, Copy, Debug, Default)]
struct Limits {
    subtree: i128,
    /// `i128::MAX` when there is no limit.
    borrowing_limit: i128,
}

impl QuotaTree {
    pub fn new(nodes: Vec<Node>, nfr: usize) -> Self {
        QuotaTree {
            nodes: Shared::new(nodes),
            nfr,
            cells: Vec::new(),
            up: Shared::default(),
            order: Shared::default(),
            potential: Shared::default(),
            limits: Shared::default(),
        }
    }

    /// Recomputes SubtreeQuota bottom-up and heights (`updateCohortResourceNode`), and
    /// sets every usage to zero: usage is added afterwards workload by workload.
    pub fn finish(&mut self) {
        let roots: Vec<NodeId> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].parent.is_none())
            .collect();
        for &r in &roots {
            self.accumulate(r);
        }
        self.up = Shared::new(
            self.nodes
                .iter()
                .map(|n| n.parent.map_or(NO_PARENT, |p| p as u32))
                .collect(),
        );
        self.cells = self
            .nodes
            .iter()
            .flat_map(|n| n.local.iter().map(|&local| Cell { usage: 0, local }))
            .collect();
        self.limits = Shared::new(
            self.nodes
                .iter()
                .flat_map(|n| {
                    (0..self.nfr).map(|fr| Limits {
                        subtree: n.subtree[fr],
                        borrowing_limit: n.borrowing_limit[fr].unwrap_or(i128::MAX),
                    })
                })
                .collect(),
        );
        self.potential = Shared::new(
            (0..self.nodes.len())
                .flat_map(|n| (0..self.nfr).map(move |fr| (n, fr)))
                .map(|(n, fr)| self.compute_potential_available(n, fr))
                .collect(),
        );
        self.order = Shared::new(vec![(0, 0); self.nodes.len()]);
        let mut next = 0;
        for r in roots {
            self.number(r, &mut next);
        }
    }

    /// `n`'s child cohorts, then its ClusterQueues.
    fn children(&self, n: NodeId) -> Vec<NodeId> {
        let node = &self.nodes[n];
        node.child_cohorts
            .iter()
            .chain(node.child_cqs.iter())
            .copied()
            .collect()
    }

    /// Pre-order numbering of `n`'s subtree (see [`QuotaTree::in_subtree_of`]).
    fn number(&mut self, n: NodeId, next: &mut u32) {
        let first = *next;
        *next += 1;
        for c in self.children(n) {
            self.number(c, next);
        }
        self.order[n] = (first, *next);
    }

    /// The pre-order number of `n`: with [`QuotaTree::in_subtree_of`], an O(1) subtree
    /// test for the preemption search, which asks it for every workload it passes over.
    #[inline]
    pub fn preorder(&self, n: NodeId) -> u32 {
        self.order[n].0
    }

    /// Whether the node numbered `pre` ([`QuotaTree::preorder`]) is in `root`'s subtree.
    #[inline]
    pub fn in_subtree_of(&self, pre: u32, root: NodeId) -> bool {
        let (first, end) = self.order[root];
        first <= pre && pre < end
    }

    #[inline]
    fn cell(&self, n: NodeId, fr: FrId) -> &Cell {
        &self.cells[n * self.nfr + fr]
    }

    /// The node's usage of `fr` (its own workloads', plus what its children store in it).
    #[inline]
    pub fn usage(&self, n: NodeId, fr: FrId) -> i128 {
        self.cell(n, fr).usage
    }

    /// Guaranteed quota not yet used (`LocalAvailable`).
    #[inline]
    pub fn local_available(&self, n: NodeId, fr: FrId) -> i128 {
        let c = self.cell(n, fr);
        (c.local - c.usage).max(0)
    }

    /// Usage (+val) above the subtree quota (`BorrowingWith`).
    #[inline]
    pub fn borrowing_with(&self, n: NodeId, fr: FrId, val: i128) -> bool {
        let i = n * self.nfr + fr;
        self.cells[i].usage + val > self.limits[i].subtree
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
        for c in self.children(n) {
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
        self.available_arriving(n, fr, n, 0, 0)
    }

    /// [`QuotaTree::available`] of `n` as it would be with `val` more of `fr` used at node
    /// `at` (as [`QuotaTree::add_usage`] would bubble it), read without changing the tree.
    pub fn available_if_added(&self, n: NodeId, fr: FrId, at: NodeId, val: i128) -> Added {
        // up `at`'s path to its lowest node on `n`'s (`n` and its ancestors): what the
        // addition leaves below it is not read by `available(n)`
        let n_pre = self.preorder(n);
        let (mut m, mut val) = (at, val);
        while !self.in_subtree_of(n_pre, m) {
            let local_available = self.local_available(m, fr);
            let p = self.up[m];
            if p == NO_PARENT || val <= local_available {
                return Added::Unchanged;
            }
            val -= local_available;
            m = p as NodeId;
        }
        Added::Available(self.available_arriving(n, fr, m, val, 0))
    }

    /// `available(x)` with `val` arriving at `join` (`x` or an ancestor) and bubbling on;
    /// `arriving` is what reaches `x` itself.
    fn available_arriving(
        &self,
        x: NodeId,
        fr: FrId,
        join: NodeId,
        val: i128,
        arriving: i128,
    ) -> i128 {
        let arriving = if x == join { val } else { arriving };
        let i = x * self.nfr + fr;
        let (mut cell, limits) = (self.cells[i], self.limits[i]);
        let local_available = (cell.local - cell.usage).max(0);
        cell.usage += arriving;
        match self.up[x] {
            NO_PARENT => limits.subtree - cell.usage,
            p => {
                let up = if arriving > local_available {
                    arriving - local_available
                } else {
                    0
                };
                let parent = self.available_arriving(p as NodeId, fr, join, val, up);
                node_available(cell, limits, parent)
            }
        }
    }

    /// ClusterQueue `Available`, clamped at zero.
    pub fn cq_available(&self, n: NodeId, fr: FrId) -> i128 {
        self.available(n, fr).max(0)
    }

    /// `potentialAvailable`: the most this node could ever get, ignoring usage (it reads
    /// quotas only, so [`QuotaTree::finish`] computes it once).
    #[inline]
    pub fn potential_available(&self, n: NodeId, fr: FrId) -> i128 {
        self.potential[n * self.nfr + fr]
    }

    fn compute_potential_available(&self, n: NodeId, fr: FrId) -> i128 {
        let node = &self.nodes[n];
        let Some(p) = node.parent else {
            return node.subtree[fr];
        };
        let mut avail = node.local_quota(fr) + self.compute_potential_available(p, fr);
        if let Some(bl) = node.borrowing_limit[fr] {
            avail = avail.min(node.subtree[fr] + bl);
        }
        avail
    }

    /// `addUsage`: adds to the node and bubbles the part above the guaranteed quota up.
    pub fn add_usage(&mut self, n: NodeId, fr: FrId, val: i128) {
        let (nfr, mut n, mut val) = (self.nfr, n, val);
        loop {
            let cell = &mut self.cells[n * nfr + fr];
            let local_available = (cell.local - cell.usage).max(0);
            cell.usage += val;
            let p = self.up[n];
            if p == NO_PARENT || val <= local_available {
                return;
            }
            val -= local_available;
            n = p as NodeId;
        }
    }

    /// `removeUsage`: symmetric to [`QuotaTree::add_usage`].
    pub fn remove_usage(&mut self, n: NodeId, fr: FrId, val: i128) {
        let (nfr, mut n, mut val) = (self.nfr, n, val);
        loop {
            let cell = &mut self.cells[n * nfr + fr];
            let stored_in_parent = cell.usage - cell.local;
            cell.usage -= val;
            let p = self.up[n];
            if p == NO_PARENT || stored_in_parent <= 0 {
                return;
            }
            val = val.min(stored_in_parent);
            n = p as NodeId;
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
        if !(self.borrowing_with(cq, fr, val) && node.parent.is_some()) {
            return (0, node.parent.is_some());
        }
        let mut remaining = val - self.local_available(cq, fr);
        let mut tracking = cq;
        for p in self.ancestors_iter(cq) {
            tracking = p;
            if !self.borrowing_with(p, fr, remaining) {
                return (self.nodes[p].height, self.nodes[p].parent.is_some());
            }
            remaining -= self.local_available(p, fr);
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
        let mut fits = true;
        let mut remaining = Vec::with_capacity(requests.len());
        for &(fr, v) in requests {
            if self.borrowing_with(n, fr, v) {
                fits = false;
            }
            remaining.push((fr, (v - self.local_available(n, fr)).max(0)));
        }
        (fits, remaining)
    }

    /// `IsWithinNominalInResources`: usage ≤ subtree quota for every fr given.
    pub fn within_nominal(&self, n: NodeId, frs: &[FrId]) -> bool {
        frs.iter().all(|&fr| !self.borrowing_with(n, fr, 0))
    }
}

/// What [`QuotaTree::available_if_added`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// The addition stops below the node's path: its `available` is as it is now.
    Unchanged,
    Available(i128),
}

/// `available` of a node below the root, given its parent's.
#[inline]
fn node_available(cell: Cell, limits: Limits, parent_available: i128) -> i128 {
    let mut parent_available = parent_available;
    if limits.borrowing_limit != i128::MAX {
        let stored_in_parent = limits.subtree - cell.local;
        let used_in_parent = (cell.usage - cell.local).max(0);
        parent_available =
            parent_available.min(stored_in_parent - used_in_parent + limits.borrowing_limit);
    }
    (cell.local - cell.usage).max(0) + parent_available
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root cohort (own nominal 0) with two CQs: a (nominal 10, lending 4) and b (nominal 6).
    fn tree() -> QuotaTree {
        let mut t = QuotaTree::new(
            vec![
                Node::new("root", false, 1),
                Node::new("a", true, 1),
                Node::new("b", true, 1),
            ],
            1,
        );
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
    fn available_if_added_reads_what_adding_would_show() {
        let mut t = tree();
        // b may borrow at most 3 beyond its own quota
        t.nodes[2].borrowing_limit[0] = Some(3);
        t.finish();
        t.add_usage(1, 0, 7);
        t.add_usage(2, 0, 5);
        for (at, val) in [(1, 1), (1, 9), (2, 3), (2, 12), (0, 2)] {
            for n in [1, 2] {
                let before = t.available(n, 0);
                let read = match t.available_if_added(n, 0, at, val) {
                    Added::Unchanged => before,
                    Added::Available(a) => a,
                };
                t.add_usage(at, 0, val);
                assert_eq!(read, t.available(n, 0), "n={n} at={at} val={val}");
                t.remove_usage(at, 0, val);
            }
        }
    }

    #[test]
    fn subtrees_by_preorder() {
        let t = tree();
        let pre = |n| t.preorder(n);
        assert!(t.in_subtree_of(pre(1), 0) && t.in_subtree_of(pre(2), 0));
        assert!(t.in_subtree_of(pre(1), 1) && !t.in_subtree_of(pre(2), 1));
        assert!(!t.in_subtree_of(pre(0), 2));
    }

    #[test]
    fn usage_bubbles_above_guaranteed() {
        let mut t = tree();
        t.add_usage(1, 0, 8);
        assert_eq!(t.usage(0, 0), 2);
        assert_eq!(t.available(2, 0), 8);
        t.remove_usage(1, 0, 8);
        assert_eq!(t.usage(0, 0), 0);
        assert_eq!(t.usage(1, 0), 0);
    }
}
