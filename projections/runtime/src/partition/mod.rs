//! A read model applied as N partitions of its streams, spread over every `project` process
//! ([0031](../../../../docs/decisions/0031-partitioned-projectors.md)).
//!
//! A read model whose rows each belong to the stream of the event that writes them
//! ([`Projection::partitionable`]) gives the same rows whatever order two streams' events are
//! applied in, so its streams can be split by a hash of their name ([`partition_of`]) and each
//! part applied on its own: partition `i` of `N` keeps its own checkpoint row
//! (`<name>/<i>-of-<N>`, [`partition_name`]) in the read model's checkpoint table, takes its own
//! transaction lock, and passes over the events of the other partitions. The partitions are
//! shared out between the `project` processes by session advisory locks ([`lease`]); a
//! partition whose process dies is free again the moment Postgres closes its connection.
//!
//! Changing N, or going back to one runner, is a rebuild: the checkpoints of the old partitions
//! say nothing about where a partition of another split stands ([`ensure_partitions`]).
//!
//! [`Projection::partitionable`]: crate::Projection::partitionable

pub mod lease;
mod runner;

pub use runner::spawn_partitioned_runner;

use crate::{Projection, ProjectionError, ReadDatabase};
use palimpsest_events::StreamName;
use palimpsest_log::EventStore;

/// Most partitions a read model may be split into: each is a lock and a checkpoint row, and
/// every process tries the free ones in turn.
pub const MAX_PARTITIONS: u32 = 256;

/// The partition of `stream` among `count`: FNV-1a (64 bits) of its context, category and key
/// separated by NUL, modulo `count`. Every process, and every version of the binary, must put a
/// stream in the same partition: this function never changes (a change is a rebuild).
pub fn partition_of(stream: &StreamName, count: u32) -> u32 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let parts = [
        stream.context.as_bytes(),
        b"\0",
        stream.category.as_bytes(),
        b"\0",
        stream.key.as_bytes(),
    ];
    let hash = parts
        .iter()
        .flat_map(|part| part.iter())
        .fold(OFFSET, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        });
    (hash % u64::from(count.max(1))) as u32
}

/// The name of partition `index` of `count` of read model `name`: its checkpoint row, its
/// locks, its metrics label and what its notifications name (`stream_heads/3-of-8`).
pub fn partition_name(name: &str, index: u32, count: u32) -> String {
    format!("{name}/{index}-of-{count}")
}

/// The read model (and schema) a checkpoint name belongs to: `stream_heads/3-of-8` →
/// `stream_heads`; a read model's own name is its own schema.
pub fn schema_of(name: &str) -> &str {
    name.split_once('/').map_or(name, |(schema, _)| schema)
}

/// Makes sure read model `projection` exists in `read` split into `count` partitions, each
/// with its checkpoint row: a new read model's partitions start at 0; a read model applied by
/// one runner until now is split where that runner left it (every event up to there is in its
/// rows); one split another way is rebuilt first ([`crate::runner::ensure_shaped`]).
pub async fn ensure_partitions(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    count: u32,
) -> Result<(), ProjectionError> {
    if !projection.partitionable() {
        return Err(ProjectionError::Invalid(format!(
            "read model {} cannot be partitioned: its rows do not each belong to one stream",
            projection.name()
        )));
    }
    crate::runner::ensure_shaped(store, read, projection, Some(count)).await
}

/// Inserts the checkpoint rows of the `count` partitions of read model `name` that do not exist
/// yet, at the position (and for the log) of the read model's own row, in `tx`.
pub(crate) async fn add_checkpoints(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &str,
    count: u32,
) -> Result<(), ProjectionError> {
    let names: Vec<String> = (0..count).map(|i| partition_name(name, i, count)).collect();
    tx.execute(
        &format!(
            "INSERT INTO {name}.projection_checkpoint (name, version, position, log_id) \
             SELECT p, c.version, c.position, c.log_id \
             FROM {name}.projection_checkpoint c, unnest($2::text[]) AS p \
             WHERE c.name = $1 ON CONFLICT (name) DO NOTHING"
        ),
        &[&name, &names],
    )
    .await?;
    Ok(())
}

/// The partitions' checkpoint rows of read model `name` found in `tx`.
pub(crate) async fn existing_checkpoints(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &str,
) -> Result<Vec<String>, ProjectionError> {
    let rows = tx
        .query(
            &format!(
                "SELECT name FROM {name}.projection_checkpoint WHERE name LIKE $1 ORDER BY name"
            ),
            &[&format!("{name}/%")],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Whether the partitions found (`found`) are the `count` partitions wanted (`None`: the read
/// model is applied by one runner, so there must be none).
pub(crate) fn split_as_wanted(name: &str, found: &[String], count: Option<u32>) -> bool {
    match count {
        None => found.is_empty(),
        Some(count) => found
            .iter()
            .all(|f| (0..count).any(|i| *f == partition_name(name, i, count))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(key: &str) -> StreamName {
        StreamName {
            context: "pads".into(),
            category: "pad".into(),
            key: key.into(),
        }
    }

    #[test]
    fn a_stream_always_falls_in_the_same_partition() {
        // Fixed values: a change of the hash would move streams between partitions.
        assert_eq!(partition_of(&stream("a"), 8), partition_of(&stream("a"), 8));
        let spread: std::collections::BTreeSet<u32> = (0..200)
            .map(|i| partition_of(&stream(&format!("pad-{i}")), 8))
            .collect();
        assert_eq!(
            spread.len(),
            8,
            "200 streams reach every one of 8 partitions"
        );
        assert!((0..50).all(|i| partition_of(&stream(&i.to_string()), 1) == 0));
    }

    #[test]
    fn the_hash_is_the_documented_fnv_1a() {
        // FNV-1a 64 of "pads\0pad\0a", computed by hand from the published constants.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in b"pads\0pad\0a" {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(u64::from(partition_of(&stream("a"), 97)), hash % 97);
    }

    #[test]
    fn names_split_back_to_their_schema() {
        assert_eq!(partition_name("stream_heads", 3, 8), "stream_heads/3-of-8");
        assert_eq!(schema_of("stream_heads/3-of-8"), "stream_heads");
        assert_eq!(schema_of("pads"), "pads");
    }

    #[test]
    fn a_split_is_as_wanted_only_with_the_same_count() {
        let four: Vec<String> = (0..4).map(|i| partition_name("s", i, 4)).collect();
        assert!(split_as_wanted("s", &four, Some(4)));
        assert!(split_as_wanted("s", &four[..2], Some(4)));
        assert!(!split_as_wanted("s", &four, Some(8)));
        assert!(!split_as_wanted("s", &four, None));
        assert!(split_as_wanted("s", &[], None));
    }
}
