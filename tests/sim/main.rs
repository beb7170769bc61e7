//! Integration tests of the sim area, in one test binary to keep link time and disk small.

#[path = "../support_tools/mod.rs"]
mod support_tools;

mod sim_api_convert;
mod sim_api_faults;
mod sim_api_kube;
mod sim_api_kubectl;
mod sim_api_nesting;
mod sim_cluster_controllers;
mod sim_cluster_live;
mod sim_cluster_seed;
mod sim_cluster_simulate_cli;
mod sim_fuzz;
mod sim_kubectl_cluster;
mod sim_pod_sizing;
mod sim_tutorial_kubectl;
