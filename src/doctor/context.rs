//! Shared, precomputed lookups for the checks: object references, which pods Kueue
//! manages, which pods belong to which workload, node usage. Built once per [`super::run`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{DoctorOptions, MANAGED_LABEL, QUEUE_NAME_LABEL};
use crate::model::{
    ClusterQueue, ClusterState, JobInfo, LocalQueue, Node, Pod, Quantity, ResourceFlavor,
    ResourceList, Workload, WorkloadSource, well_known,
};

pub use crate::model::well_known::JOB_NAME_LABELS;
/// Label of Kueue plain-pod groups; the Workload is named after the group.
use crate::model::well_known::POD_GROUP_NAME_LABEL as POD_GROUP_LABEL;

/// `Kind/namespace/name`.
pub fn ns_ref(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}/{namespace}/{name}")
}

/// `Kind/name` for cluster-scoped objects.
pub fn cluster_ref(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

/// "a, b, c" or "a, b, c and 4 more" when there are more than `max` names.
pub fn list_names<S: AsRef<str>>(names: &[S], max: usize) -> String {
    let shown: Vec<&str> = names.iter().take(max).map(AsRef::as_ref).collect();
    let mut s = shown.join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}

/// A workload's object reference: `Workload/ns/name`, or `Kind/ns/name` for a
/// workload derived from a job that has no Workload object yet.
pub fn workload_ref(w: &Workload) -> String {
    match &w.source {
        WorkloadSource::Workload => ns_ref("Workload", &w.namespace, &w.name),
        WorkloadSource::Job { kind } => ns_ref(kind, &w.namespace, &w.name),
    }
}

/// A job's object reference, `Kind/ns/name`.
pub fn job_ref(j: &JobInfo) -> String {
    ns_ref(&j.kind, &j.namespace, &j.name)
}

/// Succeeded or Failed pods hold no resources.
pub fn pod_is_finished(pod: &Pod) -> bool {
    matches!(pod.phase.as_str(), "Succeeded" | "Failed")
}

/// Pods of a DaemonSet (device plugins, exporters) are node infrastructure, not jobs.
pub fn is_daemonset_pod(pod: &Pod) -> bool {
    pod.owner_references.iter().any(|o| o.kind == "DaemonSet")
}

/// Ready and not cordoned: the node can take new pods.
pub fn node_usable(node: &Node) -> bool {
    node.ready && !node.unschedulable
}

/// A node carries every label of the flavor (an empty `nodeLabels` matches all nodes).
pub fn flavor_matches_node(flavor: &ResourceFlavor, node: &Node) -> bool {
    flavor
        .node_labels
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v))
}

/// Precomputed state shared by all checks.
pub struct Context<'a> {
    pub state: &'a ClusterState,
    pub opts: &'a DoctorOptions,
    /// (namespace, kind, name) of jobs/owners that Kueue manages.
    managed_owners: BTreeSet<(String, String, String)>,
    managed_uids: BTreeSet<String>,
    /// (namespace, kind, name) and uids of the jobs listed in `state.jobs`.
    listed_jobs: BTreeSet<(String, String, String)>,
    listed_job_uids: BTreeSet<String>,
    /// node name → summed requests of the unfinished pods bound to it.
    node_used: BTreeMap<String, ResourceList>,
    /// Pod indexes for [`Context::pods_of_workload`] (keys of `state.pods`), so matching
    /// pods to workloads is a few lookups, not a scan of every pod per workload.
    pod_index: PodIndex<'a>,
}

/// A key of `state.pods`.
type PodKey<'a> = &'a (String, String);

/// Keys of `state.pods` by each way a pod can belong to a workload.
#[derive(Default)]
struct PodIndex<'a> {
    /// owner uid → pods.
    by_owner_uid: HashMap<&'a str, Vec<PodKey<'a>>>,
    /// (namespace, owner kind, owner name) → pods.
    by_owner: HashMap<(&'a str, &'a str, &'a str), Vec<PodKey<'a>>>,
    /// (namespace, value of a job-name label) → pods.
    by_job_label: HashMap<(&'a str, &'a str), Vec<PodKey<'a>>>,
    /// (namespace, pod-group label) → pods.
    by_group: HashMap<(&'a str, &'a str), Vec<PodKey<'a>>>,
}

impl<'a> PodIndex<'a> {
    fn new(state: &'a ClusterState) -> Self {
        let mut ix = PodIndex::default();
        for (key, p) in &state.pods {
            let ns = p.namespace.as_str();
            for o in &p.owner_references {
                if !o.uid.is_empty() {
                    ix.by_owner_uid.entry(o.uid.as_str()).or_default().push(key);
                }
                ix.by_owner
                    .entry((ns, o.kind.as_str(), o.name.as_str()))
                    .or_default()
                    .push(key);
            }
            for l in JOB_NAME_LABELS {
                if let Some(v) = p.labels.get(l) {
                    ix.by_job_label
                        .entry((ns, v.as_str()))
                        .or_default()
                        .push(key);
                }
            }
            if let Some(g) = p.labels.get(POD_GROUP_LABEL) {
                ix.by_group.entry((ns, g.as_str())).or_default().push(key);
            }
        }
        ix
    }
}

impl<'a> Context<'a> {
    pub fn new(state: &'a ClusterState, opts: &'a DoctorOptions) -> Self {
        let mut managed_owners = BTreeSet::new();
        let mut managed_uids = BTreeSet::new();
        let mut listed_jobs = BTreeSet::new();
        let mut listed_job_uids = BTreeSet::new();
        for j in &state.jobs {
            let key = (j.namespace.clone(), j.kind.clone(), j.name.clone());
            if j.labels.contains_key(QUEUE_NAME_LABEL) {
                managed_owners.insert(key.clone());
                if !j.uid.is_empty() {
                    managed_uids.insert(j.uid.clone());
                }
            }
            listed_jobs.insert(key);
            if !j.uid.is_empty() {
                listed_job_uids.insert(j.uid.clone());
            }
        }
        for w in state.workloads.values() {
            if w.queue_name.is_none() && w.admission.is_none() {
                continue;
            }
            if let Some(o) = &w.owner {
                managed_owners.insert((w.namespace.clone(), o.kind.clone(), o.name.clone()));
                if !o.uid.is_empty() {
                    managed_uids.insert(o.uid.clone());
                }
            }
            if let WorkloadSource::Job { kind } = &w.source {
                managed_owners.insert((w.namespace.clone(), kind.clone(), w.name.clone()));
            }
        }
        let mut node_used: BTreeMap<String, ResourceList> = BTreeMap::new();
        for pod in state.pods.values() {
            let Some(node) = &pod.node_name else { continue };
            if pod_is_finished(pod) {
                continue;
            }
            let used = node_used.entry(node.clone()).or_default();
            for (r, q) in &pod.requests {
                *used.entry(r.clone()).or_default() += *q;
            }
        }
        Context {
            state,
            opts,
            managed_owners,
            managed_uids,
            listed_jobs,
            listed_job_uids,
            node_used,
            pod_index: PodIndex::new(state),
        }
    }

    /// Whether `resource` is one of the configured accelerator resources (a pattern
    /// ending in `*` matches any suffix: `nvidia.com/mig-*`).
    pub fn is_accelerator(&self, resource: &str) -> bool {
        self.opts
            .accelerator_resources
            .iter()
            .any(|r| well_known::resource_matches(r, resource))
    }

    /// The positive accelerator entries of a resource list, in option order.
    pub fn accelerators_in(&self, list: &ResourceList) -> Vec<(String, Quantity)> {
        self.opts
            .accelerator_resources
            .iter()
            .flat_map(|pattern| {
                list.iter()
                    .filter(|(name, q)| {
                        well_known::resource_matches(pattern, name) && **q > Quantity::ZERO
                    })
                    .map(|(name, q)| (name.clone(), *q))
            })
            .collect()
    }

    /// A node with a positive allocatable amount of some accelerator resource.
    pub fn is_gpu_node(&self, node: &Node) -> bool {
        !self.accelerators_in(&node.allocatable).is_empty()
    }

    /// Managed by Kueue: the pod has the queue-name (or Kueue's managed) label, or an
    /// owner reference to a job that has the queue-name label or to the owner of a
    /// Workload that is queued or admitted.
    pub fn pod_is_managed(&self, pod: &Pod) -> bool {
        if pod.labels.contains_key(QUEUE_NAME_LABEL)
            || pod.labels.get(MANAGED_LABEL).is_some_and(|v| v == "true")
        {
            return true;
        }
        pod.owner_references.iter().any(|o| {
            (!o.uid.is_empty() && self.managed_uids.contains(&o.uid))
                || self.managed_owners.contains(&(
                    pod.namespace.clone(),
                    o.kind.clone(),
                    o.name.clone(),
                ))
        })
    }

    pub fn local_queue(&self, namespace: &str, name: &str) -> Option<&'a LocalQueue> {
        self.state
            .local_queues
            .get(&(namespace.to_string(), name.to_string()))
    }

    /// The LocalQueues of a namespace, by name.
    pub fn local_queues_in(&self, namespace: &str) -> Vec<&'a LocalQueue> {
        // keys are (namespace, name): the namespace's queues are one contiguous range
        self.state
            .local_queues
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|(_, lq)| lq)
            .filter(|lq| lq.namespace == namespace)
            .collect()
    }

    /// The ClusterQueue a workload is (or would be) in: its admission's, else via its
    /// LocalQueue. `None` when a reference is missing.
    pub fn cluster_queue_of(&self, w: &Workload) -> Option<&'a ClusterQueue> {
        if let Some(adm) = &w.admission
            && let Some(cq) = self.state.cluster_queues.get(&adm.cluster_queue)
        {
            return Some(cq);
        }
        let lq = self.local_queue(&w.namespace, w.queue_name.as_deref()?)?;
        self.state.cluster_queues.get(&lq.cluster_queue)
    }

    /// Whether a workload corresponds to a job in `state.jobs` (so job-level checks
    /// already cover it and workload-level ones should not repeat the finding).
    pub fn workload_has_listed_job(&self, w: &Workload) -> bool {
        if let Some(o) = &w.owner
            && ((!o.uid.is_empty() && self.listed_job_uids.contains(&o.uid))
                || self.listed_jobs.contains(&(
                    w.namespace.clone(),
                    o.kind.clone(),
                    o.name.clone(),
                )))
        {
            return true;
        }
        match &w.source {
            WorkloadSource::Job { kind } => {
                self.listed_jobs
                    .contains(&(w.namespace.clone(), kind.clone(), w.name.clone()))
            }
            WorkloadSource::Workload => false,
        }
    }

    /// The pods of a workload, matched in the workload's namespace by (first hit wins):
    /// an owner reference to the workload's owner (uid, else kind + name; for a
    /// job-derived workload the job itself); a job-name label (`batch.kubernetes.io/job-name`,
    /// `job-name`, `training.kubeflow.org/job-name`) equal to the owner's name; the
    /// plain-pod group label `kueue.x-k8s.io/pod-group-name` equal to the workload's name;
    /// or the pod being the workload's owner itself (a single plain pod).
    pub fn pods_of_workload(&self, w: &Workload) -> Vec<&'a Pod> {
        let (owner_kind, owner_name, owner_uid) = match (&w.owner, &w.source) {
            (Some(o), _) => (o.kind.as_str(), o.name.as_str(), o.uid.as_str()),
            (None, WorkloadSource::Job { kind }) => (kind.as_str(), w.name.as_str(), ""),
            (None, WorkloadSource::Workload) => ("", "", ""),
        };
        let ix = &self.pod_index;
        let ns = w.namespace.as_str();
        let mut keys: Vec<PodKey<'a>> = Vec::new();
        if !owner_name.is_empty() {
            if !owner_uid.is_empty() {
                keys.extend(ix.by_owner_uid.get(owner_uid).into_iter().flatten());
            }
            keys.extend(
                ix.by_owner
                    .get(&(ns, owner_kind, owner_name))
                    .into_iter()
                    .flatten(),
            );
            keys.extend(ix.by_job_label.get(&(ns, owner_name)).into_iter().flatten());
        }
        keys.extend(
            ix.by_group
                .get(&(ns, w.name.as_str()))
                .into_iter()
                .flatten(),
        );
        if owner_kind == "Pod"
            && let Some((k, _)) = self
                .state
                .pods
                .get_key_value(&(ns.to_string(), owner_name.to_string()))
        {
            keys.push(k);
        }
        // the order of `state.pods`, each pod once, only in the workload's namespace
        keys.sort_unstable();
        keys.dedup();
        keys.into_iter()
            .filter_map(|k| self.state.pods.get(k))
            .filter(|p| p.namespace == w.namespace)
            .map(|p| &**p)
            .collect()
    }

    /// All nodes matching a flavor's node labels, by name.
    pub fn flavor_nodes(&self, flavor: &ResourceFlavor) -> Vec<&'a Node> {
        self.state
            .nodes
            .values()
            .filter(|n| flavor_matches_node(flavor, n))
            .map(|n| &**n)
            .collect()
    }

    /// Allocatable minus the requests of unfinished pods bound to the node (floored at 0).
    pub fn node_free(&self, node: &Node, resource: &str) -> Quantity {
        let alloc = node.allocatable.get(resource).copied().unwrap_or_default();
        let used = self
            .node_used
            .get(&node.name)
            .and_then(|u| u.get(resource))
            .copied()
            .unwrap_or_default();
        alloc.saturating_sub_zero(used)
    }
}
