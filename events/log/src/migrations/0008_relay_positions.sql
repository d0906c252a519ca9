-- Where each relay stands: the last position JetStream acknowledged into each stream, written by
-- the relay every quarter second while it publishes, so any process (a `serve` without the
-- relay, the console) can show the relay against the log's head. Not history: a row is only
-- ever moved forward, never read by the log itself.
CREATE TABLE log.relay_positions (
    stream text PRIMARY KEY,
    position bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
