#!/usr/bin/env bash
# The README's first command: install dependencies, build, start speakermemd
# on its embedded defaults (offline, no model endpoint) with a temporary data
# dir, ingest the sample multi-party conversation, ask it questions and print
# the answers with their evidence. Stops the server at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/deploy/install-deps.sh"
"$root/scripts/build.sh" >/dev/null
build="${BUILD_DIR:-$root/build}"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$build/server/speakermemd" --data-dir "$work/data" --listen 127.0.0.1:0 \
  --metrics-listen 127.0.0.1:0 --port-file "$work/ports" 2>"$work/speakermemd.log" &
server_pid=$!
for _ in $(seq 1 200); do
  [ -s "$work/ports" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/speakermemd.log" >&2; exit 1; }
  sleep 0.05
done
read -r grpc_port metrics_port <"$work/ports"
export SPEAKERMEM_ADDR="127.0.0.1:$grpc_port"
cli="$build/client/speakermem"

echo "== speakermemd on $SPEAKERMEM_ADDR (metrics on 127.0.0.1:$metrics_port)"
echo "== ingest examples/team_chat.jsonl"
"$cli" ingest "$root/examples/team_chat.jsonl"
echo
echo "== roster of team-offsite"
"$cli" roster --channel team-offsite
echo
echo "== System 2: let the Writer (offline, rule-based) derive the records, then list them"
"$cli" flush --channel team-offsite --wait
"$cli" records --channel team-offsite
echo
echo "== questions: answer, System 1 evidence, System 2 rows"
for q in "Where is the offsite now?" \
         "What does Dana need from the venue?" \
         "Who does not want to fly?" \
         "What is the budget per person?" \
         "Who hosts the workshop?"; do
  echo
  # The server's default budgets (System 1 top 10): the configuration the
  # defaults were chosen for, not a shorter one for the screen.
  "$cli" query --channel team-offsite "$q"
done
head_id=$("$cli" records --channel team-offsite --json | grep '"supersedes"' | head -n 1 |
  sed 's/.*"record_id":"\([^"]*\)".*/\1/')
if [ -n "$head_id" ]; then
  echo
  echo "== an update chain: history of $head_id"
  "$cli" history --channel team-offsite "$head_id"
fi
echo
echo "== metrics (excerpt)"
curl -s "127.0.0.1:$metrics_port/metrics" |
  grep -E '^speakermem_(ingested_messages_total|store_size_bytes|ready|writer_segments_total|writer_actions_total)'

