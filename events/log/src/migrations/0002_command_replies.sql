-- The first answer of a command appended under an idempotency key, kept with its events (same
-- transaction), so a repeated request gets that very answer back. `request_hash` tells a true
-- repeat (same method, path and body) from a reuse of the key for another request.
ALTER TABLE log.idempotency
    ADD COLUMN request_hash bytea,
    ADD COLUMN reply_status smallint,
    ADD COLUMN reply_content_type text,
    ADD COLUMN reply_body bytea;
