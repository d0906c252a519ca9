//! `palimpsest atlas import <sqlite-file>`: carries a History Map deployment's SQLite database
//! into the log as the atlas context's events (see `palimpsest_atlas::import`).

use crate::config::Settings;
use clap::Subcommand;
use palimpsest_atlas::import;
use std::path::PathBuf;

/// The atlas subcommands.
#[derive(Debug, Subcommand)]
pub enum AtlasCommand {
    /// Import a History Map SQLite database (read-only; older shapes repaired in memory): its
    /// sections, commits, submissions and reviews, and its published entities, geometries and
    /// links. Refuses, appending nothing, if any row cannot be carried; a second run of the same
    /// file appends nothing.
    Import {
        /// The SQLite file (e.g. `BackEnd/data/polygons.db`).
        file: PathBuf,
    },
}

/// Runs an atlas subcommand.
pub async fn run(settings: &Settings, cmd: AtlasCommand) -> anyhow::Result<()> {
    match cmd {
        AtlasCommand::Import { file } => {
            let source = import::read(&file)?;
            // A new deployment's first step: its database may not exist yet (as `serve` does).
            palimpsest_log::store::create_database_if_missing(&settings.database_url).await?;
            let store = settings.store().await?;
            let plan = import::plan(&source, &store.limits());
            let report = import::import(&store, plan).await?;
            let c = &report.counts;
            println!(
                "imported {}: {} sections, {} commits, {} submissions ({} reviewed), {} entities, \
                 {} geometries, {} links ({} legacy geometry types repaired); {} appends made \
                 ({} events), {} already made by an earlier run",
                file.display(),
                c.sections,
                c.commits,
                c.submissions,
                c.reviews,
                c.entities,
                c.geometries,
                c.links,
                c.repaired_types,
                report.appended,
                report.events,
                report.already
            );
            Ok(())
        }
    }
}
