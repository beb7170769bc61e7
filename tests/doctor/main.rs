//! Integration tests of the doctor area, in one test binary to keep link time and disk small.

#[path = "../doctor_support/mod.rs"]
mod doctor_support;
use doctor_support as support;

mod cli_doctor;
mod cli_doctor_live;
mod doctor_checks;
mod doctor_kueue_config;
mod doctor_report;
