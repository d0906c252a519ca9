-- The appender's guard. A batch planned from what its process remembers (the heads it wrote,
-- and batches it has sent but not yet seen committed) is sent in one round trip with this check
-- first: unless the log ends where the plan assumed — at `expected`, with the event
-- `last_event` there when known — the check aborts the transaction and the batch is planned
-- again from the database. The event id makes the check exact: another writer appending as many
-- events as a failed batch of ours would have cannot pass it.
CREATE FUNCTION log.expect_head(expected bigint, last_event uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT position FROM log.head WHERE id = 1) IS DISTINCT FROM expected
       OR (last_event IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM log.events WHERE position = expected AND event_id = last_event))
    THEN
        RAISE EXCEPTION 'the log moved since this appender planned (expected head %)', expected
            USING ERRCODE = 'serialization_failure';
    END IF;
END $$;
