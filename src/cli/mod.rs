//! Command-line entry points.

/// Runs the `gangplank` command line and returns the process exit code.
pub fn main() -> i32 {
    0
}
