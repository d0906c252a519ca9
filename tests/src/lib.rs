//! End-to-end tests live in `tests/tests/`; the library holds the chaos harness they and
//! `just chaos` (`src/bin/chaos.rs`) share.

pub mod chaos;
