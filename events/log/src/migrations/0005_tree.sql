-- The log's Merkle tree (decision 0024). Nothing here is trusted by a verifier: the appender's
-- batch signatures and the signed heads are made with a key that is never in this database,
-- so a superuser who changes a row here or in log.events cannot make them agree again.

-- Each committed batch's Ed25519 signature over the leaves of its positions, written by the
-- appender in the batch's own transaction.
CREATE TABLE log.batches (
    first_position bigint PRIMARY KEY,
    last_position  bigint NOT NULL,
    signature      bytea  NOT NULL
);

-- The log's head when the tree arrived: events up to here were appended before batches were
-- signed, and are trusted once, as the first signed head covers them.
CREATE TABLE log.tree_origin (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    position  bigint  NOT NULL
);
INSERT INTO log.tree_origin (position) SELECT position FROM log.head WHERE id = 1;

-- Every complete node of the tree: (level, index) is the root of leaves
-- [index * 2^level, (index + 1) * 2^level); level 0 holds the leaves, index = position - 1.
CREATE TABLE log.tree_nodes (
    level smallint NOT NULL,
    index bigint   NOT NULL,
    hash  bytea    NOT NULL,
    PRIMARY KEY (level, index)
);

-- The signed tree heads, one per size signed.
CREATE TABLE log.tree_heads (
    tree_size bigint PRIMARY KEY,
    timestamp_ms bigint NOT NULL,
    root_hash bytea NOT NULL,
    signature bytea NOT NULL
);
