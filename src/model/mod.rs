//! Pure types and parsing of real Kubernetes and Kueue manifests.
//!
//! No I/O beyond reading the files a caller names, no clock, no async runtime.

pub mod kueue_config;
pub mod quantity;
mod selector;
pub mod small_map;
pub mod synthetic;
pub mod types;
pub mod well_known;

pub use quantity::{Quantity, QuantityError};
pub use types::*;
pub mod parse;

pub use parse::{Loader, ParseError, load_paths, parse_str};
