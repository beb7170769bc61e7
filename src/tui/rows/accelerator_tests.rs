//! The Nodes and Queues rows count every accelerator, not only `nvidia.com/gpu`: a
//! dump of AMD and Trainium nodes (tests/fixtures/manifests/accelerators).

use super::nodes::NodeTable;
use super::queues::QueueTree;
use crate::model::Loader;

const DUMP: &str = include_str!("../../../tests/fixtures/manifests/accelerators/amd-neuron.yaml");

fn state() -> crate::model::ClusterState {
    let mut loader = Loader::new();
    loader
        .add_str("amd-neuron.yaml", DUMP)
        .expect("the fixture parses");
    loader.finish()
}

#[test]
fn nodes_count_amd_and_neuron_devices() {
    let table = NodeTable::build(&state());
    let row = |name: &str| {
        table
            .rows
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .clone()
    };
    let amd = row("mi300x-0");
    assert_eq!(
        (amd.gpu_allocatable, amd.gpu_used, amd.gpu_free()),
        (8, 4, 4)
    );
    assert_eq!(amd.flavor, "mi300x");
    assert_eq!(row("mi300x-1").gpu_allocatable, 8);
    // 16 devices advertised under two names and as 32 cores: 16, counted once.
    let trn = row("trn1-0");
    assert_eq!(
        (trn.gpu_allocatable, trn.gpu_used, trn.gpu_free()),
        (16, 8, 8)
    );
    // The fragmentation line: the largest free block is an idle AMD node's 8 GPUs.
    let free = table.largest_free().expect("a node with accelerators");
    assert_eq!((free.name.as_str(), free.gpu_free()), ("mi300x-1", 8));
}

#[test]
fn queues_count_amd_and_neuron_quota() {
    let tree = QueueTree::build(&state());
    let cq = |name: &str| {
        tree.cqs
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no queue {name}"))
            .clone()
    };
    let amd = cq("amd-queue");
    assert_eq!((amd.gpu_used, amd.gpu_nominal), (4, 16));
    // neuron and neuroncore quotas name the same devices: the devices count.
    let trn = cq("trn-queue");
    assert_eq!((trn.gpu_used, trn.gpu_nominal), (8, 16));
    let usage: Vec<(&str, i64)> = tree.gpu_usage().collect();
    assert!(
        usage.contains(&("amd-queue", 4)) && usage.contains(&("trn-queue", 8)),
        "{usage:?}"
    );
}
