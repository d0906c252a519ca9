//! The newest row of each document, picked here rather than by `DISTINCT ON` in Postgres, for
//! a sync that answers every row at once.
//!
//! A sub-collection sync answers one row per pk, the newest (`v` descending, a live row before
//! a `del` row of the same `v`). Asked of Postgres, that order comes from the `__sync` index,
//! which hands rows in `pk` order: one random heap fetch per row, 2–5× a sequential scan of the
//! same rows (ARCHITECTURE.md, records). A page needs that order (it resumes after a pk), but a
//! sync without `limit` takes every row anyway: it reads them in heap order and keeps the newest
//! of each pk here, as `DISTINCT ON (pk) … ORDER BY pk, v DESC, del` would.

use crate::http::listing::column;
use tokio_postgres::Row;

/// The newest of each pk among `rows` (largest `v`, then smallest `del`): the rows
/// `SELECT DISTINCT ON (pk) … ORDER BY pk, v DESC, del` answers, in pk order by bytes (the
/// SQL orders by the column's collation; a whole answer has no cursor that depends on it).
/// The rows stay where they are: the answer points at them.
pub fn newest_per_pk(rows: &[Row]) -> Vec<&Row> {
    newest_order(rows.iter().map(key))
        .into_iter()
        .filter_map(|i| rows.get(i))
        .collect()
}

/// What orders a row: its pk, its version, and whether it is a `del` row.
type Key<'a> = (&'a str, i64, i16);

/// The key of a row of the lists' columns ([`COLUMNS`](crate::http::listing::COLUMNS)).
fn key(row: &Row) -> Key<'_> {
    (
        row.get(column::PK),
        row.get(column::V),
        row.get(column::DEL),
    )
}

/// The indexes of the rows to keep, in pk order (bytes): the first of each pk sorted by pk,
/// `v` descending, `del` ascending. The keys are sorted where they lie, each with its pk's
/// first eight bytes as a number, so a comparison reads the pk itself (in its row's buffer,
/// a cache miss) only when those are equal.
fn newest_order<'a>(keys: impl IntoIterator<Item = Key<'a>>) -> Vec<usize> {
    let mut keyed: Vec<(u64, Key<'a>, usize)> = keys
        .into_iter()
        .zip(0..)
        .map(|(key, i)| (prefix(key.0), key, i))
        .collect();
    keyed.sort_unstable_by(|(xa, (pa, va, da), _), (xb, (pb, vb, db), _)| {
        xa.cmp(xb)
            .then_with(|| pa.cmp(pb))
            .then(vb.cmp(va))
            .then(da.cmp(db))
    });
    keyed.dedup_by(|later, kept| later.1.0 == kept.1.0);
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

/// The first eight bytes of `pk` as a big-endian number (zeros after a shorter pk): numbers
/// order as the bytes do.
fn prefix(pk: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let head = &pk.as_bytes()[..pk.len().min(8)];
    bytes[..head.len()].copy_from_slice(head);
    u64::from_be_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys `newest_order` keeps, in its order.
    fn kept<'a>(keys: &[Key<'a>]) -> Vec<Key<'a>> {
        newest_order(keys.iter().copied())
            .into_iter()
            .map(|i| keys[i])
            .collect()
    }

    #[test]
    fn keeps_the_newest_row_of_each_pk_in_pk_order() {
        let keys = [
            ("b", 5, 1),
            ("a", 3, 0),
            ("b", 7, 1),
            ("c", 2, 0),
            ("a", 4, 1),
        ];
        assert_eq!(kept(&keys), vec![("a", 4, 1), ("b", 7, 1), ("c", 2, 0)]);
    }

    #[test]
    fn a_live_row_wins_over_a_del_row_of_the_same_version() {
        let keys = [("a", 9, 1), ("a", 9, 0), ("a", 8, 0)];
        assert_eq!(kept(&keys), vec![("a", 9, 0)]);
    }

    #[test]
    fn pks_sharing_their_first_eight_bytes_order_by_the_rest() {
        let keys = [
            ("abcdefghZ", 1, 0),
            ("abcdefghA", 2, 0),
            ("abcdefgh", 3, 0),
            ("abc", 4, 0),
            ("abcdefghA", 5, 1),
        ];
        assert_eq!(
            kept(&keys),
            vec![
                ("abc", 4, 0),
                ("abcdefgh", 3, 0),
                ("abcdefghA", 5, 1),
                ("abcdefghZ", 1, 0)
            ]
        );
    }

    #[test]
    fn no_rows_keep_nothing() {
        assert!(newest_order(std::iter::empty()).is_empty());
    }
}
