#!/usr/bin/env bash
# Does a Citus shard move by logical replication lose writes it let commit and acknowledge?
#
# Needs no part of the service: it starts a throwaway cluster with `.ci/citus` (a coordinator and two
# workers, PostgreSQL 15 and Citus 13.2), then, RUNS times, creates a distributed table and a
# delegated PL/pgSQL write function (schema.sql), writes rows of one distribution key on WRITERS
# psql connections to the coordinator, each write acknowledged when its statement returns, moves
# that key's shard to the other worker with `citus_move_shard_placement(…, shard_transfer_mode =>
# MODE)` while they write, and counts the acknowledged rows the moved table lacks, and how many of
# those the source worker's old shard still holds (the old shard is kept: the nodes run with
# `citus.defer_shard_delete_interval = -1`).
#
#   scripts/citus-move/repro.sh [--runs 10] [--worker-sync on|off] [--session-sync on|off]
#                               [--mode force_logical|auto|block_writes] [--write function|insert]
#                               [--writers 4] [--pause-ms 20]
#
# --worker-sync   the workers' synchronous_commit (ALTER SYSTEM, reloaded; .ci/citus starts them with
#                 PostgreSQL's default, on); each move checks what a delegated call's session has
# --session-sync  the writers' own sessions on the coordinator (PGOPTIONS), as an application's
# --write         function: SELECT move_repro_write(1, id), run on the worker (delegated);
#                 insert: INSERT INTO move_repro … RETURNING id, routed to the worker's shard
# --pause-ms      each writer's pause after each acknowledged write: a load the logical
#                 replication keeps up with (at full speed on a small machine it lags, and the
#                 move's final catch-up waits a round more)
#
# Prints one line per move and a summary; exits 1 when an acknowledged row was missing after any
# move. Every loop is bounded (each writer stops after MAX_WRITES statements, every wait after
# 60-120 s); the writers and the cluster are stopped by their PIDs on exit, and its directory removed.
# Run as root (or postgres), from the repository, with PostgreSQL 15 and Citus as .ci/citus installs them.
set -euo pipefail

runs=10 worker_sync=off session_sync=on mode=force_logical write=function writers=4 pause_ms=20
while [ $# -gt 0 ]; do
  case "$1" in
  --runs) runs=$2 ;;
  --worker-sync) worker_sync=$2 ;;
  --session-sync) session_sync=$2 ;;
  --mode) mode=$2 ;;
  --write) write=$2 ;;
  --writers) writers=$2 ;;
  --pause-ms) pause_ms=$2 ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
  shift 2
done
case "$write" in
function) statement='SELECT move_repro_write(1, %s);' ;;
insert) statement='INSERT INTO move_repro (key, id) VALUES (1, %s) RETURNING id;' ;;
*) echo "--write function|insert" >&2; exit 2 ;;
esac
max_writes=${MAX_WRITES:-20000}
pause=$(awk -v ms="$pause_ms" 'BEGIN { printf "%.3f", ms / 1000 }')

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
psql=/usr/lib/postgresql/15/bin/psql
dir=$(mktemp -d)
cluster=$(mktemp -d)
writer_pids=()
cleanup() {
  touch "$dir/stop" 2>/dev/null || true
  local pid
  for pid in "${writer_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${writer_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$root/.ci/citus" stop "$cluster"
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CITUS_TEMPLATE_SCHEMA=off "$root/.ci/citus" start "$cluster" >"$dir/env" 2>"$dir/citus.log" ||
  { cat "$dir/citus.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$dir/env"
url=${TEST_DATABASE_URL%/*}/move_repro
coordinator_port=${url##*:}
coordinator_port=${coordinator_port%%/*}
IFS=, read -r -a workers <<<"$TEST_CITUS_WORKERS"

as_superuser() { # port [psql options]
  if [ "$(id -un)" = postgres ]; then
    "$psql" -h "$cluster" -p "$1" -U postgres -d move_repro -X -q -v ON_ERROR_STOP=1 "${@:2}"
  else
    runuser -u postgres -- "$psql" -h "$cluster" -p "$1" -U postgres -d move_repro -X -q -v ON_ERROR_STOP=1 "${@:2}"
  fi
}
on_coordinator() { "$psql" "$url" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# CREATE DATABASE copies template1, which Citus's maintenance daemons connect to now and then
# (on every node): end those sessions and try again.
for attempt in $(seq 1 30); do
  "$psql" "$TEST_DATABASE_URL" -X -q -c 'CREATE DATABASE move_repro' 2>"$dir/createdb.err" && break
  grep -q 'being accessed by other users' "$dir/createdb.err" && [ "$attempt" -lt 30 ] || { cat "$dir/createdb.err" >&2; exit 1; }
  for port in "$coordinator_port" "${workers[@]##*:}"; do
    as_superuser "$port" -d postgres -At >/dev/null \
      -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'template1'"
  done
  sleep 0.5
done

for port in "$coordinator_port" "${workers[@]##*:}"; do
  as_superuser "$port" >/dev/null <<SQL
ALTER SYSTEM SET citus.defer_shard_delete_interval = -1;
$([ "$port" = "$coordinator_port" ] || echo "ALTER SYSTEM SET synchronous_commit = '$worker_sync';")
SELECT pg_reload_conf();
SQL

done
echo "Citus $(on_coordinator -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), $(on_coordinator -c 'SHOW server_version'); \
workers' synchronous_commit $worker_sync, writers' sessions $session_sync, $writers writers pausing ${pause_ms} ms, write: $write, mode: $mode"

# One writer: a psql session fed one statement at a time; a row is acknowledged when psql prints
# its id (the statement returned, its transaction committed), and is then appended with the time.
writer() { # number run_dir
  local n=$1 run_dir=$2 i=0 id line answered acknowledged
  exec {acks}>"$run_dir/acks.$n"
  coproc PSQL { PGOPTIONS="-c synchronous_commit=$session_sync" "$psql" "$url" -X -q -At 2>>"$run_dir/errors.$n"; }
  while [ ! -e "$run_dir/stop" ] && [ "$i" -lt "$max_writes" ]; do
    i=$((i + 1))
    id=$((n * 1000000 + i))
    # shellcheck disable=SC2059
    printf "$statement\n\\\\echo .\n" "$id" >&"${PSQL[1]}"
    answered= acknowledged=
    while IFS= read -r -t 60 line <&"${PSQL[0]}"; do
      if [ "$line" = . ]; then answered=1; break; fi
      [ "$line" = "$id" ] && acknowledged=1
    done
    [ -n "$answered" ] || { echo "writer $n: no answer within 60 s" >&2; break; }
    [ -z "$acknowledged" ] || echo "$id $EPOCHREALTIME" >&"$acks"
    [ "$pause_ms" = 0 ] || sleep "$pause"
  done
  eval "exec ${PSQL[1]}>&-"
  wait "$PSQL_PID" || true
}

acks_in() { cat "$1"/acks.* 2>/dev/null | wc -l; }
wait_for_acks() { # run_dir count
  for _ in $(seq 1 1200); do
    [ "$(acks_in "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "fewer than $2 acknowledged writes within 120 s" >&2
  return 1
}

lost_runs=0 lost_total=0 found_total=0
for run in $(seq 1 "$runs"); do
  run_dir="$dir/run-$run"
  mkdir -p "$run_dir"
  on_coordinator -f "$here/schema.sql" >/dev/null 2>"$run_dir/schema.log" || { cat "$run_dir/schema.log" >&2; exit 1; }
  session=$(PGOPTIONS="-c synchronous_commit=$session_sync" on_coordinator -c 'SELECT move_repro_session(1)')
  [ "${session##* }" = "$worker_sync" ] ||
    { echo "the worker's session commits with synchronous_commit ${session##* }, not $worker_sync" >&2; exit 1; }
  read -r shard source_port <<<"$(on_coordinator -F ' ' -c "
    SELECT shardid, nodeport FROM citus_shards
    WHERE shardid = get_shard_id_for_distribution_column('move_repro', 1)")"
  target_port=$source_port
  for worker in "${workers[@]}"; do [ "${worker##*:}" = "$source_port" ] || target_port=${worker##*:}; done

  writer_pids=()
  for n in $(seq 1 "$writers"); do
    writer "$n" "$run_dir" &
    writer_pids+=($!)
  done
  wait_for_acks "$run_dir" 100
  started=$EPOCHREALTIME
  move_error=
  on_coordinator -c "SELECT citus_move_shard_placement($shard, '127.0.0.1', $source_port, '127.0.0.1', $target_port,
                       shard_transfer_mode => '$mode')" >/dev/null 2>"$run_dir/move.err" ||
    move_error=$(tr '\n' ' ' <"$run_dir/move.err")
  ended=$EPOCHREALTIME
  wait_for_acks "$run_dir" $(($(acks_in "$run_dir") + 100))
  touch "$run_dir/stop"
  for pid in "${writer_pids[@]}"; do wait "$pid"; done
  writer_pids=()

  moved_to=$(on_coordinator -c "SELECT nodeport FROM citus_shards WHERE shardid = $shard")
  cut -d' ' -f1 "$run_dir"/acks.* | sort >"$run_dir/acknowledged"
  on_coordinator -c "SELECT id FROM move_repro WHERE key = 1" | sort >"$run_dir/stored"
  comm -23 "$run_dir/acknowledged" "$run_dir/stored" >"$run_dir/missing"
  as_superuser "$source_port" -At -c "SELECT id FROM move_repro_$shard" 2>"$run_dir/source.err" | sort >"$run_dir/source" ||
    echo "run $run: the source's old shard move_repro_$shard could not be read: $(tr '\n' ' ' <"$run_dir/source.err")" >&2
  missing=$(wc -l <"$run_dir/missing")
  found=$(comm -12 "$run_dir/missing" "$run_dir/source" | wc -l)
  # When the missing rows were acknowledged, in ms after the move's call returned (negative: before).
  times=
  if [ "$missing" -gt 0 ]; then
    times=$(sort "$run_dir"/acks.* | join - "$run_dir/missing" |
      awk -v end="$ended" '{ printf "%s%.0f", sep, ($2 - end) * 1000; sep = "," }')
    times=" acknowledged at ${times} ms from the move's end;"
    lost_runs=$((lost_runs + 1))
  fi
  lost_total=$((lost_total + missing))
  found_total=$((found_total + found))
  printf 'run %2d: shard %s %s -> %s in %.0f ms (%s); acknowledged %d, missing %d,%s of those in the kept source shard (%d rows) %d; worker session: %s%s\n' \
    "$run" "$shard" "$source_port" "$moved_to" "$(awk -v a="$started" -v b="$ended" 'BEGIN { print (b - a) * 1000 }')" \
    "$mode" "$(wc -l <"$run_dir/acknowledged")" "$missing" "$times" "$(wc -l <"$run_dir/source")" "$found" "$session" \
    "${move_error:+; move failed: $move_error}"
done
echo "summary: $runs moves ($mode, workers' synchronous_commit $worker_sync, writers' sessions $session_sync, $write): \
$lost_runs lost acknowledged rows, $lost_total in all, $found_total of them in the kept source shard"
[ "$lost_total" -eq 0 ]
