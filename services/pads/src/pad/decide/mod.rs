//! The pad's pure deciders, one file per family of commands. Each takes the states the command
//! read (the pad, and the groups and authors it touches) and returns an
//! [`Outcome`](crate::outcome::Outcome) or a [`DomainError`](crate::error::DomainError); none
//! reads a clock or a random source.

pub mod chat;
pub mod creation;
pub mod marks;
pub mod revision;
pub mod submission;
pub mod text;
pub mod transfer;
