//! `palimpsest replay --projection NAME`: rebuild a read model with a progress bar.

use crate::config::Settings;
use crate::contexts;
use indicatif::{ProgressBar, ProgressStyle};
use palimpsest_log::EventStore;
use palimpsest_projections::{ReadDatabase, rebuild_in};

/// Rebuilds the named read model from position 0 and swaps it in, in its read database.
pub async fn run(settings: &Settings, name: &str) -> anyhow::Result<()> {
    let projections = contexts::projections(&contexts::all());
    let Some(projection) = projections.iter().find(|p| p.name() == name) else {
        anyhow::bail!(
            "unknown projection `{name}`; known: {}",
            projections
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let store = EventStore::connect(&settings.database_url).await?;
    let read = match settings.platform().read_databases.get(name) {
        Some(url) => ReadDatabase::apart(palimpsest_log::store::pool(url, 4)?),
        None => ReadDatabase::of_log(&store),
    };
    let bar = ProgressBar::new(store.head_position().await?.max(0) as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len} events ({per_sec}, eta {eta})",
        )?
        .progress_chars("=> "),
    );
    bar.set_message(format!("replaying {name}"));
    let report = rebuild_in(&store, &read, projection.as_ref(), |done, total| {
        bar.set_length(total.max(done) as u64);
        bar.set_position(done as u64);
    })
    .await?;
    bar.finish_and_clear();
    println!(
        "rebuilt {name}: {} events up to position {} in {:.2}s ({:.0} events/s)",
        report.events,
        report.position,
        report.seconds,
        report.events as f64 / report.seconds.max(1e-9)
    );
    Ok(())
}
