//! Property tests: the parser never panics, whatever it is fed.

use gangplank::model::parse::parse_str;
use gangplank::model::{ClusterState, Quantity};
use proptest::prelude::*;

fn quantityish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[+-]?[0-9]{0,40}(\\.[0-9]{0,40})?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]{0,4})?",
        "[0-9.eEKMGTPimnu+-]{0,24}",
        ".{0,12}",
    ]
}

/// YAML-ish text assembled from manifest vocabulary, so that the parser gets past the
/// syntax layer into the object readers.
fn manifestish() -> impl Strategy<Value = String> {
    let kinds = prop::sample::select(vec![
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n",
        "apiVersion: batch/v1\nkind: Job\n",
        "apiVersion: v1\nkind: Node\n",
        "apiVersion: v1\nkind: List\n",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n",
        "",
    ]);
    let lines = prop::collection::vec(
        prop::sample::select(vec![
            "metadata: {name: x, namespace: y}\n",
            "metadata: {name: [1]}\n",
            "metadata: {name: a, creationTimestamp: '2024-01-01T00:00:00Z', labels: {kueue.x-k8s.io/queue-name: q}}\n",
            "spec: {resourceGroups: [{coveredResources: [gpu], flavors: [{name: f, resources: [{name: gpu, nominalQuota: 3}]}]}]}\n",
            "spec: {podSets: [{count: -1, template: {spec: {containers: [{resources: {limits: {gpu: 1e40}}}]}}}]}\n",
            "spec: {pytorchReplicaSpecs: {Master: {replicas: 2, template: {spec: {initContainers: [{restartPolicy: Always}]}}}}}\n",
            "spec: {template: {spec: {containers: [{resources: {requests: {cpu: 1m}}}]}}, parallelism: 99999999999}\n",
            "status: {conditions: [{type: Ready, status: 'True', lastTransitionTime: nope}]}\n",
            "status: {admission: {clusterQueue: c, podSetAssignments: [{name: m, resourceUsage: {gpu: 1}}]}}\n",
            "items: [{kind: Node, apiVersion: v1, metadata: {name: n}}, 3, null]\n",
            "value: 2147483648\n",
            "spec: null\n",
            "---\n",
            "  - ]\n",
        ]),
        0..8,
    );
    (kinds, lines).prop_map(|(k, ls)| format!("{k}{}", ls.concat()))
}

proptest! {
    #[test]
    fn quantity_parse_never_panics(s in quantityish()) {
        let _ = Quantity::parse(&s);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let mut state = ClusterState::default();
        let _ = parse_str("fuzz.yaml", &s, &mut state);
        let _ = parse_str("fuzz.json", &s, &mut state);
    }

    #[test]
    fn manifest_like_yaml_never_panics(s in manifestish()) {
        let mut state = ClusterState::default();
        let _ = parse_str("fuzz.yaml", &s, &mut state);
    }
}

#[test]
fn overflow_near_i128_limit_is_an_error_not_a_panic() {
    // mantissa 2^67-1 scaled by 2^60 sits just under i128::MAX; rounding must not overflow.
    let e = Quantity::parse("0.0147573952589676412927Ei").unwrap_err();
    assert_eq!(e.why, "too large");
}
