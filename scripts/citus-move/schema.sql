-- The reproduction's schema (run on the coordinator by scripts/citus-move/repro.sh before every
-- move, as the table's owner): a table distributed by `key`, and a PL/pgSQL function that writes
-- one row and is distributed by its first argument, colocated with the table, so that
-- `SELECT move_repro_write(1, …)` is handed whole to the worker holding key 1 (Citus's function
-- call delegation). `move_repro_session(1)` is delegated the same way and says which node ran it
-- and the `synchronous_commit` its session commits with there.
DROP FUNCTION IF EXISTS move_repro_write(int, bigint);
DROP FUNCTION IF EXISTS move_repro_session(int);
DROP TABLE IF EXISTS move_repro;

CREATE TABLE move_repro (key int NOT NULL, id bigint NOT NULL, PRIMARY KEY (key, id));
SELECT create_distributed_table('move_repro', 'key', shard_count => 4);

CREATE FUNCTION move_repro_write(p_key int, p_id bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO move_repro (key, id) VALUES (p_key, p_id);
  RETURN p_id;
END
$$;
SELECT create_distributed_function('move_repro_write(int,bigint)', 'p_key', colocate_with => 'move_repro');

CREATE FUNCTION move_repro_session(p_key int) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN format('port %s, synchronous_commit %s', inet_server_port(), current_setting('synchronous_commit'));
END
$$;
SELECT create_distributed_function('move_repro_session(int)', 'p_key', colocate_with => 'move_repro');
