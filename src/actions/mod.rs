//! Operator actions: catalog, pure plans, the kube executor and the audit log.
