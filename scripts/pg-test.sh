#!/usr/bin/env bash
# pg-test.sh: a throwaway PostgreSQL with pgvector for the vdb/pgvector tests
# and benchmarks.
#
#   scripts/pg-test.sh install            install PostgreSQL 15 and pgvector if missing
#   eval "$(scripts/pg-test.sh start)"    install if missing, start a cluster, export its DSN
#   scripts/pg-test.sh stop [DIR]         stop the cluster and remove its folder
#   scripts/pg-test.sh halt DIR           stop the cluster's server, keeping its data (fault tests)
#   scripts/pg-test.sh resume DIR         start a halted cluster's server again, same socket and data
#   scripts/pg-test.sh check              exit 1 unless PostgreSQL and pgvector are installed
#
# `start` prints two shell lines on stdout (everything else goes to stderr):
#
#   export AGENTMEM_TEST_PG='postgres://postgres@/agentmem_test?host=DIR&port=5432'
#   export AGENTMEM_TEST_PGDIR='DIR'
#
# The cluster lives in a fresh temporary folder DIR (data and Unix socket; no
# TCP port is opened), runs as the `postgres` user when started by root
# (PostgreSQL refuses to run as root) and trusts local connections. The
# database agentmem_test already has the vector extension. `stop` uses
# $AGENTMEM_TEST_PGDIR when DIR is not given. `start --no-install` fails
# instead of installing (the Go tests use it to start a cluster themselves).
# PG_SHARED_BUFFERS sets the server's shared_buffers (default 128MB; the
# benchmarks use 1GB). The cluster does not flush its WAL to disk (fsync,
# synchronous_commit and full_page_writes off): a commit waits for no
# disk. PG_DURABLE=1 turns the three on, as a production server runs, for
# benchmarks that compare with a store directory (which fsyncs each write).
#
# Install (needs root and apt; about 40 s to build pgvector on two cores):
# Debian 12's postgresql-15 and postgresql-server-dev-15, then pgvector
# built from its sources, copied to a temporary folder first (the sources may
# be read-only). The sources are $PGVECTOR_SRC when set, else
# ../shared/vendor/pgvector-$PGVECTOR_VERSION (relative to the repository
# root) when present, else pgvector's release fetched through the Go module
# proxy (`go mod download github.com/pgvector/pgvector@v$PGVECTOR_VERSION`,
# checked against Go's checksum database: the same files as the release's
# tag), so a fresh clone needs nothing beside Go and apt. Skipped when
# vector.control is already in PostgreSQL's extension folder.
set -euo pipefail

PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGVECTOR_VERSION=${PGVECTOR_VERSION:-0.8.6}
PGVECTOR_SRC=${PGVECTOR_SRC:-}
DB=agentmem_test

log() { echo "pg-test: $*" >&2; }
die() {
	log "$*"
	exit 1
}

installed() {
	[ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_config" ] &&
		[ -f "$("$PG_BIN/pg_config" --sharedir)/extension/vector.control" ]
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run: $*"
	fi
}

# pgvector_src prints the folder of pgvector's sources (see Install above).
pgvector_src() {
	if [ -n "$PGVECTOR_SRC" ]; then
		echo "$PGVECTOR_SRC"
		return
	fi
	local vendored=$ROOT/../shared/vendor/pgvector-$PGVECTOR_VERSION
	if [ -f "$vendored/vector.control" ]; then
		echo "$vendored"
		return
	fi
	command -v go >/dev/null 2>&1 || die "pgvector sources: no $vendored and no go command to fetch them (set PGVECTOR_SRC to a pgvector release's folder)"
	log "fetching pgvector v$PGVECTOR_VERSION's sources through the Go module proxy"
	local tmp dir
	tmp=$(mktemp -d)
	# Outside any module, so that no go.mod around decides; -json names the folder.
	dir=$(cd "$tmp" && GOFLAGS= go mod download -json "github.com/pgvector/pgvector@v$PGVECTOR_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	rm -rf "$tmp"
	[ -n "$dir" ] || die "could not fetch github.com/pgvector/pgvector@v$PGVECTOR_VERSION through the Go module proxy"
	echo "$dir"
}

do_install() {
	if installed; then
		log "PostgreSQL $PG_MAJOR and pgvector already installed"
		return
	fi
	local t0=$SECONDS
	if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_config" ] ||
		[ ! -f "/usr/include/postgresql/$PG_MAJOR/server/postgres.h" ]; then
		log "installing postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR"
		export DEBIAN_FRONTEND=noninteractive
		as_root apt-get update >&2
		as_root apt-get install -y --no-install-recommends \
			"postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" make gcc libc6-dev >&2
	fi
	local src
	src=$(pgvector_src)
	[ -f "$src/vector.control" ] || die "pgvector sources not found at $src"
	local build
	build=$(mktemp -d /tmp/pgvector-build.XXXXXX)
	# shellcheck disable=SC2064 # expand $build now
	trap "rm -rf '$build'" RETURN
	cp -r "$src/." "$build/"
	chmod -R u+w "$build"
	log "building pgvector from $src"
	# with_llvm=no: no JIT bitcode, so clang need not match the server's LLVM.
	make -C "$build" -j"$(nproc)" PG_CONFIG="$PG_BIN/pg_config" with_llvm=no >&2
	as_root make -C "$build" PG_CONFIG="$PG_BIN/pg_config" with_llvm=no install >&2
	installed || die "pgvector install did not put vector.control in place"
	log "installed in $((SECONDS - t0))s"
}

# run_pg runs a PostgreSQL binary as the postgres user when we are root.
run_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# server_start starts the server of the cluster in $1 (port 5432, socket in $1).
server_start() {
	local dir=$1 port=5432 durable=off
	if [ "${PG_DURABLE:-}" = 1 ]; then
		durable=on
	fi
	run_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -k $dir -c listen_addresses= -c fsync=$durable -c synchronous_commit=$durable -c full_page_writes=$durable -c max_connections=100 -c shared_buffers=${PG_SHARED_BUFFERS:-128MB}" \
		start >&2
}

# cluster_dir checks that $1 is a folder made by do_start.
cluster_dir() {
	case $1 in
	/tmp/agentmem-pg.*) [ -d "$1/data" ] || die "$2: $1 holds no cluster" ;;
	*) die "$2: $1 is not a folder made by pg-test.sh start" ;;
	esac
}

# do_halt stops the server as an operator's restart does (fast: sessions
# are terminated, nothing committed is lost) and keeps the data.
do_halt() {
	cluster_dir "${1:-}" halt
	run_pg "$PG_BIN/pg_ctl" -D "$1/data" -m fast -w -t 60 stop >&2
}

do_resume() {
	cluster_dir "${1:-}" resume
	server_start "$1"
}

do_start() {
	if [ "${1:-}" = "--no-install" ]; then
		installed || die "PostgreSQL $PG_MAJOR with pgvector is not installed: run scripts/pg-test.sh install (as root)"
	else
		do_install
	fi
	local dir port=5432
	dir=$(mktemp -d /tmp/agentmem-pg.XXXXXX)
	chmod 755 "$dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir"
	fi
	if ! {
		run_pg "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 &&
			server_start "$dir" &&
			run_pg "$PG_BIN/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $DB" >&2 &&
			run_pg "$PG_BIN/psql" -h "$dir" -p "$port" -U postgres -d "$DB" -v ON_ERROR_STOP=1 -qc "CREATE EXTENSION vector" >&2
	}; then
		cat "$dir/initdb.log" "$dir/server.log" >&2 2>/dev/null || true
		do_stop "$dir"
		die "could not start a cluster"
	fi
	log "started PostgreSQL $PG_MAJOR in $dir"
	echo "export AGENTMEM_TEST_PG='postgres://postgres@/$DB?host=$dir&port=$port'"
	echo "export AGENTMEM_TEST_PGDIR='$dir'"
}

do_stop() {
	local dir=${1:-${AGENTMEM_TEST_PGDIR:-}}
	[ -n "$dir" ] || die "stop: no folder given and AGENTMEM_TEST_PGDIR is not set"
	case $dir in
	/tmp/agentmem-pg.*) ;;
	*) die "stop: $dir is not a folder made by pg-test.sh start" ;;
	esac
	if [ -f "$dir/data/postmaster.pid" ]; then
		run_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
	fi
	rm -rf "$dir"
	log "stopped and removed $dir"
}

case ${1:-} in
install) do_install ;;
start) do_start "${2:-}" ;;
stop) do_stop "${2:-}" ;;
halt) do_halt "${2:-}" ;;
resume) do_resume "${2:-}" ;;
check) installed || die "PostgreSQL $PG_MAJOR with pgvector is not installed" ;;
*)
	sed -n '2,11p' "$0" >&2
	exit 2
	;;
esac
