-- One day's request-log retention, by DELETE (the janitor before migration 0030: batches of 5,000
-- rows by id) against by DROP (a day's partition), on the same rows. Run on a migrated database:
--   psql "$DATABASE_URL" -v rows=500000 -f scripts/retention-cost.sql
-- It makes its own organization, origin and two tables (dropped at the end) and prints, for each
-- way, the time and the WAL bytes written (pg_current_wal_lsn difference), CHECKPOINT first.
\set ON_ERROR_STOP on
\timing off
SELECT set_config('retention.rows', :'rows', false);
WITH org AS (INSERT INTO organizations (name) VALUES ('retention-cost') RETURNING id)
INSERT INTO origins (organization_id, label) SELECT id, 'retention-cost' FROM org;
CREATE TEMP TABLE cost_origin AS SELECT organization_id, id FROM origins WHERE label = 'retention-cost';
-- The day: 2001-01-01, far from any real row.
SELECT logged_requests_add_partitions('2001-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
CREATE TABLE cost_unpartitioned (LIKE request_log INCLUDING ALL);
INSERT INTO logged_requests (organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome,
                             idempotency_key, duration_ms)
SELECT o.organization_id, gen_random_uuid(), 'req_' || n, timestamptz '2001-01-01T00:00:00Z' + n * interval '1 ms',
       o.id, 'lk_live_abcdefgh', 201, 'created', 'idem-' || n, 12.5
FROM cost_origin o, generate_series(1, current_setting('retention.rows')::int) n;
INSERT INTO cost_unpartitioned (id, organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome,
                                idempotency_key, duration_ms)
OVERRIDING SYSTEM VALUE
SELECT id, organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome, idempotency_key, duration_ms
FROM logged_requests_20010101;
VACUUM ANALYZE cost_unpartitioned;
VACUUM ANALYZE logged_requests_20010101;
SELECT pg_size_pretty(pg_total_relation_size('cost_unpartitioned')) AS unpartitioned_size,
       pg_size_pretty(pg_total_relation_size('logged_requests_20010101')) AS partition_size;

CHECKPOINT;
SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset delete_
DO $$
DECLARE n integer;
BEGIN
  LOOP
    DELETE FROM cost_unpartitioned WHERE id IN (
      SELECT id FROM cost_unpartitioned WHERE at < '2001-01-02T00:00:00Z' LIMIT 5000);
    GET DIAGNOSTICS n = ROW_COUNT;
    COMMIT;
    EXIT WHEN n < 5000;
  END LOOP;
END $$;
SELECT 'DELETE in batches of 5,000' AS way, current_setting('retention.rows') AS rows,
       round(extract(epoch FROM clock_timestamp() - :'delete_t'::timestamptz)::numeric, 2) AS seconds,
       pg_current_wal_lsn() - :'delete_lsn'::pg_lsn AS wal_bytes;

CHECKPOINT;
SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset drop_
SELECT logged_requests_drop_partitions('2001-01-02T00:00:00Z');
SELECT 'DROP of the day''s partition' AS way, current_setting('retention.rows') AS rows,
       round(extract(epoch FROM clock_timestamp() - :'drop_t'::timestamptz)::numeric, 2) AS seconds,
       pg_current_wal_lsn() - :'drop_lsn'::pg_lsn AS wal_bytes;

DROP TABLE cost_unpartitioned;
DELETE FROM origins WHERE label = 'retention-cost';
