-- Per-table storage settings for schema `log`, beside postgresql.conf.d/palimpsest.conf.
-- Idempotent; run once after the first `palimpsest` start has created the schema:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f deploy/postgres/log-tables.sql
-- Checked on PostgreSQL 15 against events/log/src/migrations/0001_log.sql.

-- log.events and log.idempotency only ever receive inserts. Vacuum them every 200k new rows
-- whatever their size (a scale factor would make vacuums rarer as the log grows), and freeze
-- every row a vacuum visits: rows never change, so freezing early costs nothing and spares the
-- log a whole-table anti-wraparound vacuum years later. Statistics: reads go by primary key or
-- stream, so re-analyse per million rows rather than per fraction.
ALTER TABLE log.events SET (
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 200000,
    autovacuum_freeze_min_age = 0,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 1000000
);

ALTER TABLE log.idempotency SET (
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 200000,
    autovacuum_freeze_min_age = 0
);

-- One row, updated by every append batch (HOT updates: no indexed column changes). Vacuum by
-- count so the dead versions never spread over many pages.
ALTER TABLE log.head SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);

-- One row per relayed JetStream stream, moved by the relay at most every 250 ms (HOT updates):
-- vacuumed by count, like `head`.
ALTER TABLE log.relay_positions SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);

-- One row per stream, updated by every append to it. Free space on each page keeps those
-- updates HOT (fillfactor applies to pages written from now on); vacuum at 2% dead rows.
ALTER TABLE log.streams SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02);
