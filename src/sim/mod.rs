//! The simulated cluster and its Kubernetes-compatible API server.
//!
//! * [`store::ObjectStore`]: the in-memory object store (JSON objects, one global
//!   resourceVersion, bounded event history, subscriptions). Simulated controllers
//!   call it directly.
//! * [`api::serve`]: an axum server on loopback that real `kubectl` and kube-rs
//!   clients use unchanged; [`api::write_kubeconfig`] points them at it.
//! * [`resources`]: the served resource table; [`convert`]: Kueue v1beta1 ↔
//!   v1beta2 conversion; [`patch`]: merge/JSON/strategic/apply patches.

pub mod api;
pub mod convert;
pub mod patch;
pub mod resources;
pub mod store;

pub use api::{
    FaultConfig, FaultRule, Faults, RequestStats, ServerHandle, ServerOptions, serve,
    write_kubeconfig,
};
pub use patch::PatchKind;
pub use resources::ResourceKey;
pub use store::{
    DeleteOptions, EventType, ListSnapshot, Object, ObjectStore, StoreError, StoreEvent,
    StoreOptions, Subscription, UpdateScope, WriteOptions,
};
