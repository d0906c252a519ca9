//! The `palimpsest` command: parses the command line, sets up tracing, runs.

use clap::Parser;
use palimpsest::cli::{self, Cli};
use tracing_subscriber::EnvFilter;

/// mimalloc rather than glibc's malloc: under 64 concurrent writers glibc's arenas (locks,
/// `malloc_consolidate`) were ~20% of the process's CPU per write (ARCHITECTURE.md, records).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,tokio_postgres=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    cli::run(Cli::parse()).await
}
