//! The shadow engine: a pure, deterministic copy of Kueue admission and preemption.
