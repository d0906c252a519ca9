//! The `palimpsest` binary as a library: the one process that can serve any context over HTTP,
//! relay the log to NATS, run projectors, replay, audit and tail.

pub mod cli;
pub mod config;
pub mod contexts;
pub mod processes;
pub mod server;
pub mod stream_state;
