//! End-to-end tests live in `tests/tests/`; the library holds the chaos harness they and
//! `just chaos` (`src/bin/chaos.rs`) share, the real topology built on it (`just topology`,
//! `src/bin/topology.rs`), and the route-by-principal authorization walk
//! (`tests/tests/authorization.rs`).

pub mod authorization;
pub mod chaos;
pub mod postgres;
pub mod topology;
pub mod workload;
