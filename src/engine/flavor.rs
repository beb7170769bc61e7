//! Flavor assignment (semantics notes §4; `pkg/scheduler/flavorassigner/flavorassigner.go`).
//!
//! Per pod set, per resource group: flavors in the ClusterQueue's order, eligibility
//! by taints and node labels, `fitsResourceQuota` with the preemption oracle, the
//! mode preference and the flavorFungibility stop rule. gangplank always starts the
//! scan at the first flavor (no `lastTriedIdx` scan progress).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::model::{
    FlavorFungibility, FungibilityPolicy, FungibilityPreference, PodSet, ResourceFlavor,
};

use super::preemption::PreemptionCtx;
use super::preemption::search::{Possibility, oracle};
use super::quota::FrId;
use super::state::{CqIdx, EngineState};

/// `preemptionMode`, worst to best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PMode {
    NoFit,
    NoCandidates,
    Preempt,
    Reclaim,
    Fit,
}

impl PMode {
    fn is_preempt(self) -> bool {
        matches!(self, PMode::Preempt | PMode::Reclaim)
    }
}

/// `granularMode`: preemption mode plus borrowing level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granular {
    pub mode: PMode,
    pub borrow: usize,
}

const WORST: Granular = Granular {
    mode: PMode::NoFit,
    borrow: usize::MAX,
};
const BEST: Granular = Granular {
    mode: PMode::Fit,
    borrow: 0,
};

/// `isPreferred`: is `a` better than `b`?
fn is_preferred(a: Granular, b: Granular, ff: &FlavorFungibility) -> bool {
    if a.mode == PMode::NoFit {
        return false;
    }
    if b.mode == PMode::NoFit {
        return true;
    }
    let (a_nc, b_nc) = (a.mode == PMode::NoCandidates, b.mode == PMode::NoCandidates);
    if a_nc != b_nc {
        return !a_nc;
    }
    let borrowing_over_preemption = || {
        if a.mode != b.mode {
            a.mode > b.mode
        } else {
            a.borrow < b.borrow
        }
    };
    match ff.preference {
        Some(FungibilityPreference::PreemptionOverBorrowing) => {
            if a.borrow != b.borrow {
                a.borrow < b.borrow
            } else {
                a.mode > b.mode
            }
        }
        _ => borrowing_over_preemption(),
    }
}

/// `shouldTryNextFlavor`.
fn should_try_next(m: Granular, ff: &FlavorFungibility) -> bool {
    if matches!(m.mode, PMode::NoFit | PMode::NoCandidates) {
        return true;
    }
    if m.mode.is_preempt() && ff.when_can_preempt == FungibilityPolicy::TryNextFlavor {
        return true;
    }
    m.borrow > 0 && ff.when_can_borrow == FungibilityPolicy::TryNextFlavor
}

/// Workload-level mode (`FlavorAssignmentMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    NoFit,
    Preempt,
    Fit,
}

/// The flavor chosen for one resource of one pod set (names borrowed from the
/// ClusterQueue's spec: a cycle builds thousands of these).
#[derive(Clone, Debug)]
pub struct ResourceChoice<'a> {
    pub flavor: &'a str,
    pub fr: FrId,
    pub mode: PMode,
    pub borrow: usize,
}

/// Resource name → quantity (milli-units), sorted by name. Names are borrowed from the
/// workload's pod set unless Kueue's resource transformations made them up.
pub type Requests<'a> = Vec<(Cow<'a, str>, i128)>;

#[derive(Clone, Debug)]
pub struct PodSetAssign<'a> {
    pub name: &'a str,
    pub count: i32,
    /// Totals for `count` pods.
    pub requests: Requests<'a>,
    /// Resource (as the ClusterQueue's resource group names it) → choice.
    pub flavors: BTreeMap<&'a str, ResourceChoice<'a>>,
}

/// What was found for one (flavor, resource) that did not simply fit: the raw
/// figures for explanations.
#[derive(Clone, Debug)]
pub struct QuotaNote<'a> {
    pub pod_set: &'a str,
    pub count: i32,
    pub per_pod: i128,
    pub flavor: &'a str,
    pub resource: &'a str,
    /// Needed in this flavor (earlier pod sets of the workload included).
    pub needed: i128,
    pub available: i128,
    pub nominal: i128,
    pub usage: i128,
    pub potential: i128,
    pub mode: PMode,
}

/// Why the assignment failed, or what made it need preemption.
#[derive(Clone, Debug)]
pub enum Failure {
    /// A non-zero request of a resource no resource group covers.
    Uncovered { pod_set: String, resource: String },
    /// No flavor of the group is eligible by taints / node labels.
    NoMatchingFlavor {
        pod_set: String,
        reasons: Vec<String>,
    },
    /// Quota-based: see the notes.
    Quota { pod_set: String },
}

#[derive(Clone, Debug)]
pub struct Assignment<'a> {
    pub pod_sets: Vec<PodSetAssign<'a>>,
    pub mode: Mode,
    pub borrowing: usize,
    /// Total usage per (flavor, resource).
    pub usage: Vec<(FrId, i128)>,
    pub failure: Option<Failure>,
    pub notes: Vec<QuotaNote<'a>>,
    /// Preempt mode but the oracle found no candidates for some resource.
    pub no_candidates: bool,
}

impl Assignment<'_> {
    /// (flavor, resource) pairs whose mode needs preemption.
    pub fn frs_need_preemption(&self) -> Vec<FrId> {
        let mut v: Vec<FrId> = self
            .pod_sets
            .iter()
            .flat_map(|p| p.flavors.values())
            .filter(|c| c.mode < PMode::Fit)
            .map(|c| c.fr)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// pod set → resource → flavor.
    /// pod set → resource → flavor, as any map type (the plan's admissions use compact
    /// `SmallMap`s, proposals `BTreeMap`s).
    pub fn flavors_as<M, I>(&self) -> M
    where
        M: FromIterator<(String, I)>,
        I: FromIterator<(String, String)>,
    {
        self.pod_sets
            .iter()
            .map(|p| {
                (
                    p.name.to_string(),
                    p.flavors
                        .iter()
                        .map(|(r, c)| (r.to_string(), c.flavor.to_string()))
                        .collect(),
                )
            })
            .collect()
    }

    pub fn flavor_map(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        self.flavors_as()
    }
}

/// Why a flavor is not eligible for a pod set; formatted only when a failure is
/// explained (every head of every cycle asks, and most answers are never read).
#[derive(Clone, Copy, Debug)]
pub enum Ineligible<'f> {
    Taint(&'f ResourceFlavor, &'f crate::model::Taint),
    NodeSelector(&'f ResourceFlavor, &'f str, &'f str),
    NodeAffinity(&'f ResourceFlavor),
}

impl std::fmt::Display for Ineligible<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ineligible::Taint(flavor, t) => {
                let v = t
                    .value
                    .as_deref()
                    .map(|v| format!("={v}"))
                    .unwrap_or_default();
                write!(
                    f,
                    "untolerated taint {}{}:{} in flavor {}",
                    t.key, v, t.effect, flavor.name
                )
            }
            Ineligible::NodeSelector(flavor, k, v) => {
                write!(
                    f,
                    "flavor {} doesn't match node selector {k}={v}",
                    flavor.name
                )
            }
            Ineligible::NodeAffinity(flavor) => {
                write!(f, "flavor {} doesn't match node affinity", flavor.name)
            }
        }
    }
}

/// The node-label keys of a resource group: every key of every existing flavor's
/// `nodeLabels` in the group (Kueue's `ResourceGroup.LabelKeys`,
/// `pkg/cache/scheduler/clusterqueue.go` `updateLabelKeys`). A pod set's node selector
/// and required affinity are matched against a flavor on these keys, so a selector key
/// that some other flavor of the group carries and this one lacks excludes it.
pub fn group_label_keys<'c>(
    flavors: &'c BTreeMap<String, ResourceFlavor>,
    rg: &crate::model::ResourceGroup,
) -> Vec<&'c str> {
    let mut keys: Vec<&'c str> = rg
        .flavors
        .iter()
        .filter_map(|fq| flavors.get(&fq.name))
        .flat_map(|f| f.node_labels.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Taints and node-label eligibility (`checkFlavorForPodSets`, `flavorSelector`); `Err`
/// says why not. `label_keys` are the group's ([`group_label_keys`]): selector terms on
/// other keys are ignored, as Kueue drops them.
pub fn flavor_eligible<'f>(
    flavor: &'f ResourceFlavor,
    ps: &'f PodSet,
    label_keys: &[&str],
) -> Result<(), Ineligible<'f>> {
    let relevant = |k: &str| label_keys.binary_search(&k).is_ok();
    for t in &flavor.node_taints {
        if t.effect != "NoSchedule" && t.effect != "NoExecute" {
            continue;
        }
        let tolerated = ps
            .tolerations
            .iter()
            .chain(flavor.tolerations.iter())
            .any(|tol| tol.tolerates(t));
        if !tolerated {
            return Err(Ineligible::Taint(flavor, t));
        }
    }
    let labels = &flavor.node_labels;
    for (k, v) in &ps.node_selector {
        if relevant(k) && labels.get(k) != Some(v) {
            return Err(Ineligible::NodeSelector(flavor, k, v));
        }
    }
    if let Some(aff) = &ps.required_affinity {
        let mut terms = Vec::new();
        let mut any = false;
        for term in &aff.terms {
            let kept: Vec<_> = term.iter().filter(|r| relevant(&r.key)).collect();
            if kept.is_empty() {
                // a term without relevant keys matches every flavor
                any = true;
                break;
            }
            terms.push(kept);
        }
        if !any && !terms.is_empty() && !terms.iter().any(|t| t.iter().all(|r| r.matches(labels))) {
            return Err(Ineligible::NodeAffinity(flavor));
        }
    }
    Ok(())
}

/// Per-pod requests of a pod set (sorted by resource name): Kueue's
/// `resources.excludeResourcePrefixes` and `resources.transformations` applied when
/// the configuration has them; `pods` counted when the ClusterQueue covers it. Every
/// nomination asks, so names are borrowed from the pod set where they can be.
pub fn pod_set_requests<'a>(
    ps: &'a PodSet,
    covers_pods: bool,
    cfg: &crate::model::kueue_config::KueueConfig,
) -> Requests<'a> {
    let mut per_pod: Requests<'a> = if cfg.rewrites_requests() {
        let declared: BTreeMap<String, i128> = ps
            .requests
            .iter()
            .map(|(r, q)| (r.clone(), q.milli()))
            .collect();
        cfg.rewrite_requests(&declared)
            .into_iter()
            .map(|(r, q)| (Cow::Owned(r), q))
            .collect()
    } else {
        ps.requests
            .iter()
            .map(|(r, q)| (Cow::Borrowed(r.as_str()), q.milli()))
            .collect()
    };
    if covers_pods && let Err(at) = per_pod.binary_search_by(|(r, _)| (**r).cmp("pods")) {
        per_pod.insert(at, (Cow::Borrowed("pods"), 1000));
    }
    per_pod
}

/// The pod count a pod set asks quota for: its count (or the count partial admission
/// tries) less its reclaimable pods.
fn pods_to_admit(ps: &PodSet, count: Option<i32>, reclaimable: &BTreeMap<String, i32>) -> i32 {
    let reclaimable = reclaimable.get(&ps.name).copied().unwrap_or(0);
    (count.unwrap_or(ps.count) - reclaimable.max(0)).max(0)
}

/// Computes the flavor assignment of a workload's pod sets in ClusterQueue `cq` against
/// the current snapshot. `counts`, when given, replaces each pod set's count (partial
/// admission's tries). `ctx` describes the preemptor for the oracle.
pub fn assign<'a>(
    st: &mut EngineState<'a>,
    cq: CqIdx,
    pod_sets: &'a [PodSet],
    counts: Option<&[i32]>,
    reclaimable: &BTreeMap<String, i32>,
    ctx: &PreemptionCtx<'_>,
) -> Assignment<'a> {
    let spec = st.cqs[cq].spec;
    let cluster = st.cluster;
    let node = st.cqs[cq].node;
    let covers_pods = st.cqs[cq].rg_of.contains_key("pods");
    let mut out = Assignment {
        pod_sets: Vec::new(),
        mode: Mode::Fit,
        borrowing: 0,
        usage: Vec::new(),
        failure: None,
        notes: Vec::new(),
        no_candidates: false,
    };
    let mut assigned: BTreeMap<FrId, i128> = BTreeMap::new();
    let mut worst = Mode::Fit;
    for (i, ps) in pod_sets.iter().enumerate() {
        let count = pods_to_admit(ps, counts.map(|c| c[i]), reclaimable);
        let per_pod = pod_set_requests(ps, covers_pods, &st.kueue);
        let requests: Requests<'a> = per_pod
            .iter()
            .map(|(r, q)| (r.clone(), q * i128::from(count)))
            .collect();
        let mut chosen: BTreeMap<&'a str, ResourceChoice<'a>> = BTreeMap::new();
        // Whether some resource group's best flavor is not a Fit (Kueue: the pod set's
        // Status has reasons). When every group's best is a Fit, Kueue's pod set mode is
        // Fit even if a resource of it needs preemption, which happens with
        // `preference: PreemptionOverBorrowing`: a group's representative mode is the
        // worst of its resources by borrowing level first, so (Fit, borrow 1) on one
        // resource hides (Preempt, borrow 0) on another (`findFlavorForPodSets` returns
        // a nil status, `PodSetAssignment.RepresentativeMode` reads it as Fit). The
        // entry then does not fit in the cycle and is skipped.
        let mut status_has_reasons = false;
        for (res, qty) in &requests {
            let Some(&rg_idx) = st.cqs[cq].rg_of.get(&**res) else {
                if *qty == 0 {
                    continue;
                }
                out.failure = Some(Failure::Uncovered {
                    pod_set: ps.name.clone(),
                    resource: res.to_string(),
                });
                out.mode = Mode::NoFit;
                return out;
            };
            if chosen.contains_key(&**res) {
                continue;
            }
            let rg = &spec.resource_groups[rg_idx];
            // the group's requests, named as the spec names them (borrowed for 'a)
            let group: Vec<(&'a str, i128)> = requests
                .iter()
                .filter_map(|(r, q)| {
                    let covered = rg.covered_resources.iter().find(|c| **c == **r)?;
                    Some((covered.as_str(), *q))
                })
                .collect();
            let mut best: Option<BTreeMap<&'a str, ResourceChoice<'a>>> = None;
            let mut best_mode = WORST;
            let mut flavor_notes: Vec<QuotaNote> = Vec::new();
            let label_keys = group_label_keys(&cluster.resource_flavors, rg);
            for fq in &rg.flavors {
                let Some(flavor) = cluster.resource_flavors.get(&fq.name) else {
                    continue;
                };
                if flavor_eligible(flavor, ps, &label_keys).is_err() {
                    continue;
                }
                let mut rep = BEST;
                let mut picks = BTreeMap::new();
                for &(r, val) in &group {
                    let fr = st.frs.get(&fq.name, r);
                    let assumed = fr.map(|f| *assigned.get(&f).unwrap_or(&0)).unwrap_or(0);
                    let need = assumed + val;
                    let g = match fr {
                        Some(fr) => fits_resource_quota(st, node, fr, need, ctx),
                        None => WORST,
                    };
                    if g.mode != PMode::Fit {
                        let (avail, nominal, usage, potential) = match fr {
                            Some(fr) => (
                                st.tree.cq_available(node, fr),
                                st.tree.nodes[node].nominal[fr],
                                st.tree.usage(node, fr),
                                st.tree.potential_available(node, fr),
                            ),
                            None => (0, 0, 0, 0),
                        };
                        flavor_notes.push(QuotaNote {
                            pod_set: &ps.name,
                            count,
                            per_pod: per_pod
                                .iter()
                                .find(|(name, _)| name == r)
                                .map_or(0, |&(_, q)| q),
                            flavor: &fq.name,
                            resource: r,
                            needed: need,
                            available: avail,
                            nominal,
                            usage,
                            potential,
                            mode: g.mode,
                        });
                    }
                    if is_preferred(rep, g, &spec.flavor_fungibility) {
                        rep = g;
                    }
                    if rep.mode == PMode::NoFit {
                        break;
                    }
                    if let Some(fr) = fr {
                        picks.insert(
                            r,
                            ResourceChoice {
                                flavor: &fq.name,
                                fr,
                                mode: g.mode,
                                borrow: g.borrow,
                            },
                        );
                    }
                }
                if !should_try_next(rep, &spec.flavor_fungibility) {
                    best = Some(picks);
                    best_mode = rep;
                    break;
                }
                if is_preferred(rep, best_mode, &spec.flavor_fungibility) {
                    best = Some(picks);
                    best_mode = rep;
                }
            }
            match best {
                Some(picks) if best_mode.mode != PMode::NoFit => {
                    status_has_reasons |= best_mode.mode != PMode::Fit;
                    // keep only the notes of the chosen flavor
                    let chosen_flavor = picks.values().next().map(|c| c.flavor);
                    out.notes.extend(
                        flavor_notes
                            .into_iter()
                            .filter(|n| Some(n.flavor) == chosen_flavor),
                    );
                    if best_mode.mode == PMode::NoCandidates {
                        out.no_candidates = true;
                    }
                    chosen.extend(picks);
                }
                _ => {
                    out.mode = Mode::NoFit;
                    out.failure = Some(if flavor_notes.is_empty() {
                        Failure::NoMatchingFlavor {
                            pod_set: ps.name.clone(),
                            reasons: rg
                                .flavors
                                .iter()
                                .filter_map(|fq| match cluster.resource_flavors.get(&fq.name) {
                                    None => Some(format!("flavor {} not found", fq.name)),
                                    Some(flavor) => flavor_eligible(flavor, ps, &label_keys)
                                        .err()
                                        .map(|w| w.to_string()),
                                })
                                .collect(),
                        }
                    } else {
                        Failure::Quota {
                            pod_set: ps.name.clone(),
                        }
                    });
                    out.notes.extend(flavor_notes);
                    return out;
                }
            }
        }
        for (res, c) in &chosen {
            let total = requests
                .iter()
                .find(|(r, _)| r == res)
                .map_or(0, |&(_, q)| q);
            *assigned.entry(c.fr).or_default() += total;
            let m = if c.mode == PMode::Fit || !status_has_reasons {
                Mode::Fit
            } else {
                Mode::Preempt
            };
            worst = worst.min(m);
            out.borrowing = out.borrowing.max(c.borrow);
        }
        out.pod_sets.push(PodSetAssign {
            name: &ps.name,
            count,
            requests,
            flavors: chosen,
        });
    }
    out.mode = worst;
    if worst == Mode::Preempt && out.failure.is_none() {
        let ps = out
            .pod_sets
            .iter()
            .find(|p| p.flavors.values().any(|c| c.mode != PMode::Fit))
            .map(|p| p.name.to_string())
            .unwrap_or_default();
        out.failure = Some(Failure::Quota { pod_set: ps });
    }
    out.usage = assigned.into_iter().collect();
    out
}

/// `fitsResourceQuota` for `val` (earlier pod sets included) of one fr.
fn fits_resource_quota(
    st: &mut EngineState<'_>,
    node: usize,
    fr: FrId,
    val: i128,
    ctx: &PreemptionCtx<'_>,
) -> Granular {
    if val > st.tree.potential_available(node, fr) {
        return WORST;
    }
    let (borrow, may_reclaim) = st.tree.height_of_lowest_subtree_that_fits(node, fr, val);
    if val <= st.tree.cq_available(node, fr) {
        return Granular {
            mode: PMode::Fit,
            borrow,
        };
    }
    let nominal = st.tree.nodes[node].nominal[fr];
    // canPreemptWhileBorrowing: borrowWithinCohort, or fair sharing with reclaim
    let while_borrowing = ctx.policy.borrow_within_cohort.policy
        != crate::model::BorrowWithinCohortPolicy::Never
        || (st.fair.enabled
            && ctx.policy.reclaim_within_cohort != crate::model::ReclaimWithinCohort::Never);
    if val <= nominal || may_reclaim || while_borrowing {
        let (p, b) = oracle(st, ctx, fr, val);
        let mode = match p {
            Possibility::NoCandidates => PMode::NoCandidates,
            Possibility::Preempt => PMode::Preempt,
            Possibility::Reclaim => PMode::Reclaim,
        };
        return Granular { mode, borrow: b };
    }
    Granular {
        mode: PMode::NoFit,
        borrow,
    }
}
