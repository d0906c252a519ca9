-- The whole append as one server-side call (decision 0025). The appender plans a batch in
-- memory (versions checked against the heads it remembers or read under the lock, hashes
-- chained, the batch signed with a key that is never in this database) and sends every row in
-- this one call, in autocommit when warm: the call takes the append lock, checks that the log
-- still ends where the plan assumed (so every version check and hash chained in memory still
-- holds), writes the idempotency rows, the batch's signature, the events, the stream heads and
-- the head, and announces the new head. Its transaction commits when the call returns, with
-- `synchronous_commit` set by `flushed` (on: the commit's own WAL flush makes the batch
-- durable; off: the appender answers only after a later synchronous commit).
CREATE FUNCTION log.append_batch(
    expected bigint, last_event uuid, flushed boolean,
    positions bigint[], event_ids uuid[], contexts text[], categories text[],
    stream_keys text[], versions bigint[], event_types text[], schema_versions integer[],
    payloads json[], actors text[], correlation_ids uuid[], causation_ids uuid[],
    idempotency_keys text[], recorded_ats timestamptz[], prev_hashes bytea[], hashes bytea[],
    head_contexts text[], head_categories text[], head_keys text[], head_versions bigint[],
    head_hashes bytea[],
    keys text[], key_firsts bigint[], key_lasts bigint[], request_hashes bytea[],
    reply_statuses smallint[], reply_content_types text[], reply_bodies bytea[],
    signature bytea
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    last_position bigint := positions[cardinality(positions)];
BEGIN
    -- Transaction-local and not undone when the call returns (the function has no SET
    -- clause), so it holds at the commit that ends the call's transaction.
    PERFORM set_config('synchronous_commit', CASE WHEN flushed THEN 'on' ELSE 'off' END, true);
    PERFORM pg_advisory_xact_lock(80455301);
    -- What log.require_append_lock looks for before it asks pg_locks (decision 0026).
    PERFORM set_config('palimpsest.append_lock', 'held', true);
    -- The guard of log.expect_head (migration 0004), inline: a nested call costs more than it.
    IF (SELECT position FROM log.head WHERE id = 1) IS DISTINCT FROM expected
       OR (last_event IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM log.events WHERE position = expected AND event_id = last_event))
    THEN
        RAISE EXCEPTION 'the log moved since this appender planned (expected head %)', expected
            USING ERRCODE = 'serialization_failure';
    END IF;
    -- No ON CONFLICT: a key stored before fails the batch, which is planned again carefully.
    IF cardinality(keys) > 0 THEN
        INSERT INTO log.idempotency (key, first_position, last_position, request_hash,
            reply_status, reply_content_type, reply_body)
        SELECT * FROM unnest(keys, key_firsts, key_lasts, request_hashes, reply_statuses,
            reply_content_types, reply_bodies);
    END IF;
    IF last_position IS NULL THEN
        RETURN;
    END IF;
    IF signature IS NOT NULL THEN
        INSERT INTO log.batches (first_position, last_position, signature)
        VALUES (positions[1], last_position, signature);
    END IF;
    INSERT INTO log.events (position, event_id, context, category, stream_key, version,
        event_type, schema_version, payload, actor, correlation_id, causation_id,
        idempotency_key, recorded_at, prev_hash, hash)
    SELECT * FROM unnest(positions, event_ids, contexts, categories, stream_keys, versions,
        event_types, schema_versions, payloads, actors, correlation_ids, causation_ids,
        idempotency_keys, recorded_ats, prev_hashes, hashes);
    INSERT INTO log.streams (context, category, stream_key, version, last_hash)
    SELECT * FROM unnest(head_contexts, head_categories, head_keys, head_versions, head_hashes)
    ON CONFLICT (context, category, stream_key)
    DO UPDATE SET version = excluded.version, last_hash = excluded.last_hash;
    UPDATE log.head SET position = last_position WHERE id = 1;
    PERFORM pg_notify('palimpsest_log', last_position::text);
END $$;

-- The append lock's check before each insert into log.events (migration 0001), cheaper when
-- the insert comes from log.append_batch (decision 0026): asking pg_locks copies the server's
-- whole lock table (0.06-0.13 ms a statement on the shared machine, a fifth of the call), so
-- the call marks its transaction once it holds the lock, and only an insert without that mark
-- asks pg_locks. The mark is transaction-local and is set only after the lock is granted; a
-- session that sets it by hand without the lock bypasses the check on purpose, as one that
-- disables the trigger would.
CREATE OR REPLACE FUNCTION log.require_append_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('palimpsest.append_lock', true) IS DISTINCT FROM 'held' AND NOT EXISTS (
        SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
          AND classid = 0 AND objid = 80455301 AND objsubid = 1
    ) THEN
        RAISE EXCEPTION 'inserts into log.events must hold the append lock'
            USING ERRCODE = 'lock_not_available';
    END IF;
    RETURN NULL;
END $$;
