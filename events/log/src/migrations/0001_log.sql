-- The event log. Rows of log.events are never updated or deleted (triggers below), and are
-- inserted only by a transaction holding the append lock, so positions commit in order.
CREATE TABLE log.events (
    position        bigint      PRIMARY KEY,
    event_id        uuid        NOT NULL UNIQUE,
    context         text        NOT NULL,
    category        text        NOT NULL,
    stream_key      text        NOT NULL,
    version         bigint      NOT NULL CHECK (version >= 1),
    event_type      text        NOT NULL,
    schema_version  integer     NOT NULL,
    payload         json        NOT NULL,
    actor           text,
    correlation_id  uuid,
    causation_id    uuid,
    idempotency_key text,
    recorded_at     timestamptz NOT NULL,
    prev_hash       bytea,
    hash            bytea       NOT NULL,
    UNIQUE (context, category, stream_key, version)
);

-- The head of every stream: what appends check expected versions against and chain from.
CREATE TABLE log.streams (
    context    text   NOT NULL,
    category   text   NOT NULL,
    stream_key text   NOT NULL,
    version    bigint NOT NULL,
    last_hash  bytea  NOT NULL,
    PRIMARY KEY (context, category, stream_key)
);

-- The last global position handed out: positions are gapless because only committed appends
-- move it.
CREATE TABLE log.head (
    id       integer PRIMARY KEY CHECK (id = 1),
    position bigint  NOT NULL
);
INSERT INTO log.head VALUES (1, 0);

-- Commands already appended under an idempotency key, with the positions they wrote.
CREATE TABLE log.idempotency (
    key            text   PRIMARY KEY,
    first_position bigint NOT NULL,
    last_position  bigint NOT NULL
);

CREATE FUNCTION log.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'log.events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON log.events
    FOR EACH ROW EXECUTE FUNCTION log.refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON log.events
    FOR EACH STATEMENT EXECUTE FUNCTION log.refuse_change();

CREATE FUNCTION log.require_append_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
          AND classid = 0 AND objid = 80455301 AND objsubid = 1
    ) THEN
        RAISE EXCEPTION 'inserts into log.events must hold the append lock'
            USING ERRCODE = 'lock_not_available';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER events_need_append_lock BEFORE INSERT ON log.events
    FOR EACH STATEMENT EXECUTE FUNCTION log.require_append_lock();
