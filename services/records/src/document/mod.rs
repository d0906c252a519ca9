//! Documents on the write side: their state ([`state`]), the operation decider ([`decide`]) and
//! the running of an operation through the platform's runner ([`command`]).

pub mod command;
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
