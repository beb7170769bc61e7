//! The Kubernetes and Kueue vocabulary gangplank reads and writes, in one place: label
//! and annotation keys, API groups, and which extended resources are accelerators.
//!
//! Every module (model, engine, doctor, actions, source, simulator, console) names
//! these through this module, so that a key or a resource name cannot drift between
//! the part that writes it and the part that reads it.

use super::types::ResourceList;

// === API groups ===

/// Kueue's API group.
pub const KUEUE_GROUP: &str = "kueue.x-k8s.io";
/// Prefix of every label and annotation Kueue owns.
pub const KUEUE_PREFIX: &str = "kueue.x-k8s.io/";

// === labels ===

/// Label that puts a job (or pod) into a LocalQueue.
pub const QUEUE_NAME_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// Job label naming a WorkloadPriorityClass.
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// Label Kueue puts on a Workload: the uid of the job it was created for.
pub const JOB_UID_LABEL: &str = "kueue.x-k8s.io/job-uid";
/// Label Kueue's pod integration puts on the plain pods it manages.
pub const MANAGED_LABEL: &str = "kueue.x-k8s.io/managed";
/// Label grouping plain pods into one Workload (Kueue's pod groups).
pub const POD_GROUP_NAME_LABEL: &str = "kueue.x-k8s.io/pod-group-name";
/// Label every Namespace carries with its own name (namespace selectors match it).
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// The batch Job controller's label naming a pod's Job.
pub const BATCH_JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// The older, unprefixed form of [`BATCH_JOB_NAME_LABEL`] (still set by the controller).
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// The batch Job controller's label with the Job's uid.
pub const BATCH_CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The Kubeflow training operator's label naming a pod's job.
pub const KUBEFLOW_JOB_NAME_LABEL: &str = "training.kubeflow.org/job-name";
/// The Kubeflow training operator's label naming a pod's replica type.
pub const KUBEFLOW_REPLICA_TYPE_LABEL: &str = "training.kubeflow.org/replica-type";
/// The Kubeflow training operator's label with a pod's replica index.
pub const KUBEFLOW_REPLICA_INDEX_LABEL: &str = "training.kubeflow.org/replica-index";
/// The Kubeflow training operator's label naming the operator.
pub const KUBEFLOW_OPERATOR_NAME_LABEL: &str = "training.kubeflow.org/operator-name";
/// Labels a job controller puts on its pods naming the job, most specific first.
pub const JOB_NAME_LABELS: [&str; 3] = [
    BATCH_JOB_NAME_LABEL,
    LEGACY_JOB_NAME_LABEL,
    KUBEFLOW_JOB_NAME_LABEL,
];
/// Prefix of the node-role labels (`node-role.kubernetes.io/control-plane`).
pub const NODE_ROLE_LABEL_PREFIX: &str = "node-role.kubernetes.io/";
/// The older node-role label (`kubernetes.io/role: master`).
pub const LEGACY_NODE_ROLE_LABEL: &str = "kubernetes.io/role";
/// Prefix of the taints and labels the node lifecycle controller manages
/// (`node.kubernetes.io/not-ready`, …).
pub const NODE_LIFECYCLE_PREFIX: &str = "node.kubernetes.io/";

// === annotations ===

/// Annotation giving a batch Job's minimum parallelism for partial admission.
pub const JOB_MIN_PARALLELISM_ANNOTATION: &str = "kueue.x-k8s.io/job-min-parallelism";
/// Annotation Kueue puts on the pods it admits: their Workload's name.
pub const WORKLOAD_ANNOTATION: &str = "kueue.x-k8s.io/workload";
/// Topology-aware scheduling requests on a pod template (not modelled).
pub const TOPOLOGY_ANNOTATIONS: [&str; 4] = [
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
    "kueue.x-k8s.io/podset-slice-required-topology",
];
/// gangplank's annotation naming who approved the action that changed an object.
pub const APPROVED_BY_ANNOTATION: &str = "gangplank.io/approved-by";
/// gangplank's annotation on a Workload it reactivated.
pub const REACTIVATE_ANNOTATION: &str = "gangplank.io/reactivate";

// === values ===

/// `spec.priorityClassSource` of a Workload whose priority comes from a
/// WorkloadPriorityClass (v1beta1).
pub const WORKLOAD_PRIORITY_CLASS_SOURCE: &str = "kueue.x-k8s.io/workloadpriorityclass";
/// `spec.priorityClassSource` of a Workload whose priority comes from a PriorityClass.
pub const PRIORITY_CLASS_SOURCE: &str = "scheduling.k8s.io/priorityclass";

// === accelerators ===

/// NVIDIA GPUs (the device plugin's whole-GPU resource).
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
/// NVIDIA MIG slices: `nvidia.com/mig-1g.5gb`, `nvidia.com/mig-3g.40gb`, … (a prefix).
pub const NVIDIA_MIG_PREFIX: &str = "nvidia.com/mig-";
/// AMD GPUs.
pub const AMD_GPU: &str = "amd.com/gpu";
/// AWS Trainium/Inferentia devices (the Neuron device plugin's name).
pub const AWS_NEURON: &str = "aws.amazon.com/neuron";
/// The same devices under their newer name.
pub const AWS_NEURON_DEVICE: &str = "aws.amazon.com/neurondevice";
/// Neuron cores (several per device).
pub const AWS_NEURON_CORE: &str = "aws.amazon.com/neuroncore";
/// Intel Gaudi (Habana) accelerators.
pub const HABANA_GAUDI: &str = "habana.ai/gaudi";
/// Google TPUs.
pub const GOOGLE_TPU: &str = "google.com/tpu";

/// The accelerator resources gangplank knows, one pattern each: a trailing `*` matches
/// any suffix (the MIG profiles). Besides these, any `<vendor>/gpu` is an accelerator.
pub const ACCELERATOR_RESOURCES: &[&str] = &[
    NVIDIA_GPU,
    "nvidia.com/mig-*",
    AMD_GPU,
    AWS_NEURON,
    AWS_NEURON_DEVICE,
    AWS_NEURON_CORE,
    HABANA_GAUDI,
    GOOGLE_TPU,
];

/// Whether `name` matches `pattern` (exact, or a prefix when the pattern ends in `*`).
pub fn resource_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Whether a resource name is an accelerator: one of [`ACCELERATOR_RESOURCES`] or any
/// `<vendor>/gpu`.
pub fn is_accelerator(name: &str) -> bool {
    ACCELERATOR_RESOURCES
        .iter()
        .any(|p| resource_matches(p, name))
        || name.ends_with("/gpu")
}

/// Resources that count the same devices under different names (or a device's cores):
/// only the first one present in a list is counted.
const SAME_DEVICES: [&str; 3] = [AWS_NEURON, AWS_NEURON_DEVICE, AWS_NEURON_CORE];

/// Accelerator devices in a resource list (a node's allocatable, a pod's requests, a
/// queue's quota), rounded up to whole units: the sum over every accelerator resource,
/// except that the Neuron names (`neuron`, `neurondevice`, `neuroncore`) count once,
/// by the first of them present, so a Trainium node that advertises 16 devices under
/// two names and 32 cores counts 16. A MIG slice counts as one unit.
pub fn accelerator_units(list: &ResourceList) -> i64 {
    let same = SAME_DEVICES.iter().find(|r| list.contains_key(**r));
    let total: i128 = list
        .iter()
        .filter(|(name, _)| is_accelerator(name))
        .filter(|(name, _)| !SAME_DEVICES.contains(&name.as_str()) || Some(&name.as_str()) == same)
        .map(|(_, q)| q.units_ceil().max(0))
        .sum();
    i64::try_from(total).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;

    fn list(items: &[(&str, &str)]) -> ResourceList {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn accelerators_by_vendor() {
        for r in [
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.5gb",
            "amd.com/gpu",
            "aws.amazon.com/neuron",
            "aws.amazon.com/neurondevice",
            "aws.amazon.com/neuroncore",
            "habana.ai/gaudi",
            "google.com/tpu",
            "example.com/gpu",
        ] {
            assert!(is_accelerator(r), "{r}");
        }
        for r in [
            "cpu",
            "memory",
            "pods",
            "nvidia.com/gpu.shared-x",
            "hugepages-2Mi",
        ] {
            assert!(!is_accelerator(r), "{r}");
        }
    }

    #[test]
    fn units_count_each_device_once() {
        assert_eq!(
            accelerator_units(&list(&[("cpu", "96"), ("amd.com/gpu", "8")])),
            8
        );
        // A trn1.32xlarge: 16 devices under two names, 32 cores.
        let trn = list(&[
            ("aws.amazon.com/neuron", "16"),
            ("aws.amazon.com/neurondevice", "16"),
            ("aws.amazon.com/neuroncore", "32"),
        ]);
        assert_eq!(accelerator_units(&trn), 16);
        assert_eq!(
            accelerator_units(&list(&[("aws.amazon.com/neuroncore", "2")])),
            2
        );
        assert_eq!(
            accelerator_units(&list(&[
                ("nvidia.com/gpu", "4"),
                ("nvidia.com/mig-1g.5gb", "7")
            ])),
            11
        );
        assert_eq!(accelerator_units(&list(&[("memory", "1Gi")])), 0);
    }
}
