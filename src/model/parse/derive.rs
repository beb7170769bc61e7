//! Finalization: turning jobs into the pending Workloads Kueue's job integration would
//! create, after every document has been read (priority classes may come later).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::model::types::*;

pub use crate::model::well_known::{JOB_UID_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL};
/// WorkloadPriorityClass applied to jobs without the label (WorkloadPriorityClassDefaulting).
pub const DEFAULT_WORKLOAD_PRIORITY_CLASS: &str = "default";

/// The LocalQueue a job asks for: the label, else the legacy annotation.
pub fn job_queue_name(job: &JobInfo) -> Option<String> {
    job.labels
        .get(QUEUE_NAME_LABEL)
        .or_else(|| job.annotations.get(QUEUE_NAME_LABEL))
        .filter(|q| !q.is_empty())
        .cloned()
}

/// Priority as Kueue's `ExtractPriority` derives it for a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedPriority {
    pub value: i32,
    pub class: Option<PriorityClassRef>,
    /// Set when the named class does not exist: Kueue would not create the Workload.
    pub error: Option<String>,
}

/// Kueue's priority derivation for a job:
/// 1. label `kueue.x-k8s.io/priority-class` (or the `default` WorkloadPriorityClass when it
///    exists and the label is absent) → that WorkloadPriorityClass, no fallback;
/// 2. else the integration's own class (Kubeflow `runPolicy.schedulingPolicy.priorityClass`),
///    else the first pod template's `priorityClassName` → that PriorityClass;
/// 3. else the `globalDefault` PriorityClass with the lowest value; else 0.
pub fn job_priority(job: &JobInfo, state: &ClusterState) -> DerivedPriority {
    let wpc_name = job.labels.get(PRIORITY_CLASS_LABEL).cloned().or_else(|| {
        state
            .workload_priority_classes
            .contains_key(DEFAULT_WORKLOAD_PRIORITY_CLASS)
            .then(|| DEFAULT_WORKLOAD_PRIORITY_CLASS.to_string())
    });
    if let Some(name) = wpc_name {
        let class = Some(PriorityClassRef {
            kind: PriorityClassKind::WorkloadPriorityClass,
            name: name.clone(),
        });
        return match state.workload_priority_classes.get(&name) {
            Some(wpc) => DerivedPriority {
                value: wpc.value,
                class,
                error: None,
            },
            None => DerivedPriority {
                value: 0,
                class,
                error: Some(format!(
                    "WorkloadPriorityClass {name:?} (label {PRIORITY_CLASS_LABEL}) not found: \
                     Kueue does not create a Workload for this job"
                )),
            },
        };
    }
    let pc_name = job.custom_priority_class.clone().or_else(|| {
        job.pod_sets
            .iter()
            .find_map(|p| p.priority_class_name.clone())
    });
    if let Some(name) = pc_name {
        let class = Some(PriorityClassRef {
            kind: PriorityClassKind::PriorityClass,
            name: name.clone(),
        });
        return match state.priority_classes.get(&name) {
            Some(pc) => DerivedPriority {
                value: pc.value,
                class,
                error: None,
            },
            None => DerivedPriority {
                value: 0,
                class,
                error: Some(format!(
                    "PriorityClass {name:?} (priorityClassName) not found: \
                     Kueue fails to create a Workload for this job"
                )),
            },
        };
    }
    let default = state
        .priority_classes
        .values()
        .filter(|pc| pc.global_default)
        .min_by_key(|pc| pc.value);
    DerivedPriority {
        value: default.map_or(0, |pc| pc.value),
        class: default.map(|pc| PriorityClassRef {
            kind: PriorityClassKind::PriorityClass,
            name: pc.name.clone(),
        }),
        error: None,
    }
}

/// The pending Workload Kueue would create for `job` (keyed by the job's namespace/name).
pub fn workload_from_job(job: &JobInfo, state: &ClusterState) -> Workload {
    let p = job_priority(job, state);
    Workload {
        namespace: job.namespace.clone(),
        name: job.name.clone(),
        uid: job.uid.clone(),
        creation_timestamp: job.creation_timestamp.unwrap_or(0),
        labels: job.labels.clone(),
        annotations: job.annotations.clone(),
        queue_name: job_queue_name(job),
        pod_sets: job.pod_sets.as_slice().into(),
        priority: p.value,
        priority_class: p.class,
        active: true,
        conditions: Vec::new(),
        admission: None,
        reclaimable_pods: BTreeMap::new(),
        owner: Some(OwnerReference {
            api_version: job.api_version.clone(),
            kind: job.kind.clone(),
            name: job.name.clone(),
            uid: job.uid.clone(),
            controller: true,
        }),
        source: WorkloadSource::Job {
            kind: job.kind.clone(),
        },
        priority_error: p.error,
        api_version: KueueApiVersion::default(),
        origin: job.origin.clone(),
    }
}

/// Whether `wl` (a Workload object) belongs to `job`: owner uid, the job-uid label, or —
/// when either side has no uid — owner kind and name in the same namespace.
fn owned_by(wl: &Workload, job: &JobInfo) -> bool {
    if wl.namespace != job.namespace {
        return false;
    }
    if !job.uid.is_empty() {
        if wl.labels.get(JOB_UID_LABEL) == Some(&job.uid) {
            return true;
        }
        if let Some(o) = &wl.owner
            && !o.uid.is_empty()
        {
            return o.uid == job.uid;
        }
    }
    wl.owner
        .as_ref()
        .is_some_and(|o| o.kind == job.kind && o.name == job.name)
}

/// Warning for a derived workload whose key is taken by an unrelated Workload object.
pub(crate) const KEY_TAKEN: &str =
    "job not turned into a pending workload: a Workload object with the job's name exists";

/// (Re)derives the pending workloads of Kueue-managed jobs that have no Workload object.
///
/// Idempotent: earlier derived entries (source `Job`) are dropped and rebuilt, so this can
/// run again after more documents arrive. Jobs without a queue name, finished jobs and
/// jobs whose Workload is present are not derived; a job with a Workload counts once.
pub fn finalize(state: &mut ClusterState) {
    // The previous derivation's workloads: one that comes out the same is kept, so a
    // live source's successive snapshots share it instead of each holding a copy.
    let previous: BTreeMap<(String, String), Arc<Workload>> = state
        .workloads
        .extract_if(.., |_, w| !matches!(w.source, WorkloadSource::Workload))
        .collect();
    let mut by_namespace: BTreeMap<&str, Vec<&Workload>> = BTreeMap::new();
    for w in state.workloads.values() {
        by_namespace
            .entry(w.namespace.as_str())
            .or_default()
            .push(w);
    }
    let mut derived = Vec::new();
    let mut taken = BTreeSet::new();
    for job in &state.jobs {
        if job.finished || job_queue_name(job).is_none() {
            continue;
        }
        let has_workload = by_namespace
            .get(job.namespace.as_str())
            .is_some_and(|ws| ws.iter().any(|w| owned_by(w, job)));
        if has_workload {
            continue;
        }
        let key = (job.namespace.clone(), job.name.clone());
        if state.workloads.contains_key(&key) {
            taken.insert(format!("{}/{}/{}", job.kind, job.namespace, job.name));
            continue;
        }
        derived.push((key, workload_from_job(job, state)));
    }
    for (key, wl) in derived {
        let wl = match previous.get(&key) {
            Some(old) if **old == wl => old.clone(),
            _ => Arc::new(wl),
        };
        state.workloads.insert(key, wl);
    }
    if !taken.is_empty() {
        let line = format!(
            "{KEY_TAKEN}: {}",
            taken.into_iter().collect::<Vec<_>>().join(", ")
        );
        if !state.warnings.contains(&line) {
            state.warnings.push(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(labels: &[(&str, &str)], pc: Option<&str>) -> JobInfo {
        JobInfo {
            kind: "Job".into(),
            namespace: "ns".into(),
            name: "j".into(),
            uid: "ju".into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: 1,
                priority_class_name: pc.map(str::to_string),
                ..Default::default()
            }],
            creation_timestamp: Some(5),
            ..Default::default()
        }
    }

    fn pc(name: &str, value: i32, global_default: bool) -> PriorityClass {
        PriorityClass {
            name: name.into(),
            value,
            global_default,
            ..Default::default()
        }
    }

    #[test]
    fn priority_order_of_sources() {
        let mut s = ClusterState::default();
        s.priority_classes
            .insert("boss".into(), pc("boss", 1_000_000, false));
        s.priority_classes
            .insert("normal".into(), pc("normal", 1000, true));
        s.priority_classes.insert("low".into(), pc("low", 10, true));
        assert_eq!(job_priority(&job(&[], Some("boss")), &s).value, 1_000_000);
        let d = job_priority(&job(&[], None), &s);
        assert_eq!((d.value, d.class.unwrap().name.as_str()), (10, "low"));
        let missing = job_priority(&job(&[], Some("nope")), &s);
        assert!(missing.error.unwrap().contains("\"nope\""));
        let wpc = job_priority(&job(&[(PRIORITY_CLASS_LABEL, "x")], Some("boss")), &s);
        assert_eq!(wpc.value, 0);
        assert!(wpc.error.unwrap().contains("WorkloadPriorityClass \"x\""));
        s.workload_priority_classes.insert(
            "default".into(),
            WorkloadPriorityClass {
                name: "default".into(),
                value: 7,
                ..Default::default()
            },
        );
        let d = job_priority(&job(&[], Some("boss")), &s);
        assert_eq!(d.value, 7);
        assert_eq!(
            d.class.unwrap().kind,
            PriorityClassKind::WorkloadPriorityClass
        );
    }

    #[test]
    fn finalize_derives_and_dedupes() {
        let mut s = ClusterState::default();
        s.jobs
            .push(Arc::new(job(&[(QUEUE_NAME_LABEL, "lq")], None)));
        let mut other = job(&[], None);
        other.name = "unlabelled".into();
        s.jobs.push(Arc::new(other));
        finalize(&mut s);
        assert_eq!(s.workloads.len(), 1);
        let w = &s.workloads[&("ns".to_string(), "j".to_string())];
        assert_eq!(w.source, WorkloadSource::Job { kind: "Job".into() });
        assert_eq!(w.queue_name.as_deref(), Some("lq"));
        let first = s.workloads[&("ns".to_string(), "j".to_string())].clone();
        finalize(&mut s);
        assert_eq!(s.workloads.len(), 1);
        let again = &s.workloads[&("ns".to_string(), "j".to_string())];
        assert!(
            Arc::ptr_eq(&first, again),
            "an unchanged derived workload is kept, not rebuilt (snapshots share it)"
        );
        // A change that reaches it (its class now exists) rebuilds it.
        s.workload_priority_classes.insert(
            DEFAULT_WORKLOAD_PRIORITY_CLASS.into(),
            WorkloadPriorityClass {
                name: DEFAULT_WORKLOAD_PRIORITY_CLASS.into(),
                value: 9,
                ..Default::default()
            },
        );
        finalize(&mut s);
        let rebuilt = &s.workloads[&("ns".to_string(), "j".to_string())];
        assert!(!Arc::ptr_eq(&first, rebuilt));
        assert_eq!(rebuilt.priority, 9);
        // Now the Workload object appears: the derived one goes away.
        s.workloads.insert(
            ("ns".into(), "job-j-abcde".into()),
            Arc::new(Workload {
                namespace: "ns".into(),
                name: "job-j-abcde".into(),
                labels: [(JOB_UID_LABEL.to_string(), "ju".to_string())].into(),
                ..Default::default()
            }),
        );
        finalize(&mut s);
        assert_eq!(s.workloads.len(), 1);
        assert!(
            s.workloads
                .contains_key(&("ns".to_string(), "job-j-abcde".to_string()))
        );
    }
}
