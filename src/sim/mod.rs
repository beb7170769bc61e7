//! The simulated cluster and its Kubernetes-compatible API server.
//!
//! * [`store::ObjectStore`]: the in-memory object store (JSON objects, one global
//!   resourceVersion, bounded event history, subscriptions). Simulated controllers
//!   call it directly.
//! * [`api::serve`]: an axum server on loopback that real `kubectl` and kube-rs
//!   clients use unchanged; [`api::write_kubeconfig`] points them at it.
//! * [`resources`]: the served resource table; [`convert`]: Kueue v1beta1 ↔
//!   v1beta2 conversion; [`patch`]: merge/JSON/strategic/apply patches.
//! * [`cluster::SimCluster`]: the simulated cluster (store + [`clock`] + controllers
//!   playing Kueue, its job integration, a first-fit scheduler and Deployments);
//!   [`scenario`]: scenario files; [`live`]: the simulator running behind the API server
//!   (`gangplank sim serve`); [`simulate`]: headless runs (`gangplank simulate`).

pub mod api;
pub mod clock;
pub mod cluster;
pub mod convert;
pub mod generate;
pub mod live;
pub mod patch;
pub mod resources;
pub mod scenario;
pub mod simulate;
pub mod store;

pub use api::{
    FaultConfig, FaultRule, Faults, RequestStats, ServerHandle, ServerOptions, serve,
    write_kubeconfig,
};
pub use clock::SimClock;
pub use cluster::{SimCluster, SimCounters, SimOptions};
pub use live::{LiveOptions, LiveSim};
pub use patch::PatchKind;
pub use resources::ResourceKey;
pub use scenario::{Scenario, load_scenario};
pub use store::{
    DeleteOptions, EventType, ListSnapshot, Object, ObjectStore, StoreError, StoreEvent,
    StoreOptions, Subscription, UpdateScope, WriteOptions,
};
