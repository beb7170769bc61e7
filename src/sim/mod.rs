//! The simulated cluster and its Kubernetes-compatible API server.
