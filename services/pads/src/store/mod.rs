//! Etherpad's key-value store as ueberDB keeps it: which keys exist and what their values look
//! like, byte for byte.
//!
//! The read model is one table, `pads.store (key varchar(100) primary key, value text)`, the
//! table ueberDB's PostgreSQL driver creates; [`keys`] names every key and [`records`] gives the
//! JSON shape of every value, in Etherpad's property order.

pub mod keys;
pub mod records;
