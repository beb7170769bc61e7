//! Pure types and parsing of real Kubernetes and Kueue manifests.
