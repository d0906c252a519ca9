//! End-to-end tests live in `tests/tests/`; the library holds the chaos harness they and
//! `just chaos` (`src/bin/chaos.rs`) share, and the route-by-principal authorization walk
//! (`tests/tests/authorization.rs`).

pub mod authorization;
pub mod chaos;
pub mod postgres;
pub mod workload;
