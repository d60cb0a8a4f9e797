#!/bin/sh
# import-vs.sh: `agentmem import` of a conversation data set into a store
# directory and into PostgreSQL, timed as users run it (the whole command).
#
#   eval "$(scripts/pg-test.sh start)"        # or any PostgreSQL with pgvector
#   scripts/import-vs.sh ../shared/data/realmem            # all its turns
#   scripts/import-vs.sh ../shared/data/realmem 10000      # the first 10,000
#   COPIES=8 scripts/import-vs.sh ../shared/data/realmem   # 8 times over
#
# DIR holds turns.jsonl in the common format (shared/data's README); each
# turn becomes an import line with its conversation as namespace (with
# "-K" for copy K when COPIES > 1), its id, speaker and date. The store
# URL is $AGENTMEM_TEST_PG (scripts/pg-test.sh) or $AGENTMEM_PG, a fresh
# schema each run, dropped after it. RUNS (default 3) runs each store in
# turns and prints each run's seconds and the directory's time over
# PostgreSQL's (PostgreSQL's records/s over the directory's), then
# imports the same file again into PostgreSQL (everything stored already).
set -eu
dir=${1:?usage: import-vs.sh DIR [LINES]}
lines=${2:-0}
copies=${COPIES:-1}
runs=${RUNS:-3}
url=${AGENTMEM_PG:-${AGENTMEM_TEST_PG:?set AGENTMEM_TEST_PG (scripts/pg-test.sh start) or AGENTMEM_PG}}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$dir/turns.jsonl" "$lines" "$copies" >"$work/import.jsonl" <<'EOF'
import json, sys
path, limit, copies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
turns = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
n = 0
for k in range(copies):
    for t in turns:
        if limit and n >= limit:
            sys.exit(0)
        suffix = f"-{k}" if copies > 1 else ""
        line = {"id": f"{t['conv']}{suffix}/{t['id']}", "text": t["text"], "namespace": t["conv"] + suffix,
                "speaker": t.get("speaker", "")}
        if len(t.get("date", "")) == 10:
            line["time"] = t["date"] + "T12:00:00Z"
        print(json.dumps(line, ensure_ascii=False))
        n += 1
EOF
echo "import-vs: $(wc -l <"$work/import.jsonl") lines" >&2
go build -o "$work/agentmem" ./cmd/agentmem

seconds() { # prints the wall seconds of "$@"
	start=$(date +%s.%N)
	"$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	end=$(date +%s.%N)
	awk "BEGIN { print $end - $start }"
}
case $url in *\?*) sep='&' ;; *) sep='?' ;; esac
for i in $(seq "$runs"); do
	schema="import_vs_$$_$i"
	rm -rf "$work/dirstore"
	d=$(seconds "$work/agentmem" import --memory long --store "$work/dirstore" --skip-empty "$work/import.jsonl")
	p=$(seconds "$work/agentmem" import --memory long --store "$url${sep}schema=$schema" --skip-empty "$work/import.jsonl")
	again=$(seconds "$work/agentmem" import --memory long --store "$url${sep}schema=$schema" --skip-empty "$work/import.jsonl")
	psql "$url" -qc "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1 || true
	printf 'run %d: directory %.2f s, PostgreSQL %.2f s (pg/dir records/s %.2f), PostgreSQL again %.2f s\n' \
		"$i" "$d" "$p" "$(awk "BEGIN { print $d / $p }")" "$again"
done
