//! Kube watchers and the store that publishes immutable snapshots.
