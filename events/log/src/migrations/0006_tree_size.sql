-- The tree keeps only its nodes from level 4 up (decision 0024, "What the tree stores"): a node
-- below is the root of at most 16 leaves, made again from the events' stored hashes when a proof
-- needs it. Its size can no longer be read off the leaves' rows, so it is kept here, written in
-- the same statement as the nodes it completes.
CREATE TABLE log.tree_size (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    size      bigint  NOT NULL CHECK (size >= 0)
);
INSERT INTO log.tree_size (size)
    SELECT coalesce(max(index) + 1, 0) FROM log.tree_nodes WHERE level = 0;
DELETE FROM log.tree_nodes WHERE level < 4;
