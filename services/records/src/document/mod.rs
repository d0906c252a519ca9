//! Documents on the write side: their state ([`state`]) and the operation decider ([`decide`]).

pub mod decide;
pub mod purge;
pub mod reseal;
pub mod state;
#[cfg(test)]
mod tests;

pub use decide::{Action, Outcome, Prepared, View, Write, decide, prepare, unique_locks};
pub use purge::{Purge, decide_purge};
pub use reseal::{decide_reseal, ivs_needed};
pub use state::{DocumentState, UniqueState, evolve, evolve_unique};
