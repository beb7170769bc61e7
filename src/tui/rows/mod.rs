//! Rows derived from [`ConsoleData`](super::ConsoleData), rebuilt only when the data
//! changes, never while drawing. Views read these; they never walk `ClusterState`
//! themselves except for the one selected workload's detail pane.

pub mod nodes;
pub mod queues;
pub mod workloads;

use crate::model::{Quantity, ResourceList};

/// The resource the console counts as "GPUs".
pub const GPU: &str = "nvidia.com/gpu";

/// Whole GPUs in a quantity (rounded up; GPUs are integral anyway).
pub fn gpus_of(q: Quantity) -> i64 {
    i64::try_from(q.units_ceil()).unwrap_or(i64::MAX)
}

/// Whole GPUs in a resource list.
pub fn gpus(list: &ResourceList) -> i64 {
    list.get(GPU).map_or(0, |q| gpus_of(*q))
}
