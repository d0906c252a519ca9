-- The log's identity: a uuid made once, when this migration runs on a new (or upgraded)
-- database. The relay records it on the JetStream stream and on every message, and refuses to
-- publish into a stream that holds another log's events. It never changes.
CREATE TABLE log.identity (
    singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    log_id     uuid        NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO log.identity DEFAULT VALUES;
CREATE FUNCTION log.refuse_identity_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'log.identity never changes: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER identity_never_changes BEFORE UPDATE OR DELETE ON log.identity
    FOR EACH ROW EXECUTE FUNCTION log.refuse_identity_change();
CREATE TRIGGER identity_no_truncate BEFORE TRUNCATE ON log.identity
    FOR EACH STATEMENT EXECUTE FUNCTION log.refuse_identity_change();
