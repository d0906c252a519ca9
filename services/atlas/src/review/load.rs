//! What an approval reads besides the section (steps 2 and 3 of [`crate::review::command`]):
//! the read model's answer at exactly the publication version read, then every entity and
//! geometry stream involved.

use crate::command::{rejected, stream_of};
use crate::projection::NAME;
use crate::published::PublishedView;
use crate::read::publication::{Answer, Candidates, candidates};
use crate::review::state::PublicationHead;
use crate::snapshot::Snapshot;
use crate::streams;
use palimpsest_events::StreamName;
use palimpsest_web::command::{Attempt, CommandError};
use palimpsest_web::{ApiError, AppState};

/// Step 2: the read model's answer at exactly the publication version read. A read model
/// already past it means another approval published meanwhile: decide again.
pub async fn published_candidates(
    state: &AppState,
    attempt: &Attempt,
    publication_stream: &StreamName,
    publication: &PublicationHead,
    snapshot: &Snapshot,
) -> Result<Candidates, CommandError<ApiError>> {
    let pv = attempt.version(publication_stream);
    if publication.last_position > 0 {
        state.wait_for(NAME, publication.last_position).await?;
    }
    // The wait above is for the read database's checkpoint: read there, never on a replica.
    let mut client = state
        .read
        .read_database()
        .get()
        .await
        .map_err(|e| CommandError::Unavailable(format!("atlas read model: {e}")))?;
    let asked = candidates(
        &mut client,
        pv,
        &snapshot.deleted_entity_ids(),
        &snapshot.deleted_geometry_ids(),
        &snapshot.written_slugs(),
    )
    .await
    .map_err(|e| rejected(ApiError::internal(e)))?;
    match asked {
        Answer::Exact(found) => Ok(found),
        Answer::Elsewhere(at) if at > pv => Err(CommandError::Conflict {
            stream: publication_stream.clone(),
        }),
        Answer::Elsewhere(at) => Err(CommandError::Unavailable(format!(
            "the atlas read model is behind the log (publication {at} of {pv}); retry"
        ))),
    }
}

/// Step 3: every entity and geometry the approval reads, from their streams.
pub async fn load_view(
    attempt: &Attempt,
    snapshot: &Snapshot,
    found: Candidates,
) -> Result<PublishedView, CommandError<ApiError>> {
    let mut view = PublishedView {
        slug_owners: found.slug_owners,
        ..PublishedView::default()
    };
    for id in snapshot.entity_ids() {
        let stream = stream_of(streams::entity, &id).map_err(rejected)?;
        view.entities.insert(id, attempt.load(&stream).await?);
    }
    let mut geometry_ids = snapshot.geometry_ids();
    geometry_ids.extend(found.geometries);
    geometry_ids.sort();
    geometry_ids.dedup();
    for id in geometry_ids {
        let stream = stream_of(streams::geometry, &id).map_err(rejected)?;
        view.geometries.insert(id, attempt.load(&stream).await?);
    }
    Ok(view)
}
