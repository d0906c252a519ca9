//! The `palimpsest` binary as a library: the one process that can serve any context over HTTP,
//! relay the log to NATS, run projectors, replay, audit and tail — and the test harness that
//! starts the real app on a random port against a fresh database.

pub mod cli;
pub mod config;
pub mod contexts;
pub mod processes;
pub mod server;
pub mod testing;
