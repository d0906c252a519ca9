//! Test support shared by every crate's tests: a fresh Postgres database per test and a private
//! nats-server, so tests never share state and can run in parallel beside the machine's services.

mod database;
mod nats;
mod nats_cluster;
mod postgres;

pub use database::{TestDb, admin_url};
pub use nats::{NatsServer, free_port};
pub use nats_cluster::NatsCluster;
pub use postgres::PgCluster;
