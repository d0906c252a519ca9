-- The appender's guard. A batch planned from the stream heads its process remembers (it wrote
-- them itself) is sent in one round trip with this check first: if any other writer moved the
-- log since, the check aborts the transaction and the batch is planned again from the database.
CREATE FUNCTION log.expect_head(expected bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT position FROM log.head WHERE id = 1) IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'the log moved since this appender last wrote (expected head %)', expected
            USING ERRCODE = 'serialization_failure';
    END IF;
END $$;
