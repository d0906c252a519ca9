//! Test support shared by every crate's tests: the real app on a random port ([`TestApp`]), a
//! fresh Postgres database per test and a private nats-server, so tests never share state and
//! can run in parallel beside the machine's services. Only tests depend on this crate: nothing
//! of it is compiled into the `palimpsest` binary.

mod app;
mod database;
mod nats;
mod nats_cluster;
mod postgres;
pub mod schema_check;

pub use app::TestApp;
pub use database::{TestDb, admin_url};
pub use nats::{NatsServer, free_port};
pub use nats_cluster::NatsCluster;
pub use postgres::PgCluster;
