//! Rows derived from [`ConsoleData`](super::ConsoleData), rebuilt only when the data
//! changes, never while drawing. Views read these; they never walk `ClusterState`
//! themselves except for the one selected workload's detail pane.

pub mod nodes;
pub mod queues;
pub mod workloads;

use crate::model::{Quantity, ResourceList};

/// NVIDIA GPUs only: the Workloads rows still count this one resource; the Nodes and
/// Queues rows count every accelerator ([`gpus`]).
pub const GPU: &str = crate::model::well_known::NVIDIA_GPU;

/// Whole GPUs in a quantity (rounded up; GPUs are integral anyway).
pub fn gpus_of(q: Quantity) -> i64 {
    i64::try_from(q.units_ceil()).unwrap_or(i64::MAX)
}

/// Accelerator devices ("GPUs") in a resource list: NVIDIA, AMD, Neuron, Gaudi, TPU,
/// MIG slices ([`crate::model::well_known::accelerator_units`]).
pub fn gpus(list: &ResourceList) -> i64 {
    crate::model::well_known::accelerator_units(list)
}

#[cfg(test)]
mod accelerator_tests;
