#!/usr/bin/env bash
# run.sh COMMAND [ARG...]
#
# Runs COMMAND against private PostgreSQL and Redis servers:
#   1. installs PostgreSQL and Redis from Debian packages if their server
#      binaries are missing (apt-get, as root or through sudo);
#   2. starts both on free 127.0.0.1 ports, with their data in a temporary
#      directory (PostgreSQL as a non-root user: it refuses to run as root);
#   3. exports WINDTUNNEL_PG_URL, WINDTUNNEL_REDIS_ADDR and
#      WINDTUNNEL_INTEGRATION=1 and runs COMMAND;
#   4. stops both servers and removes the directory on exit, also when
#      COMMAND fails or the script is interrupted, and exits with COMMAND's
#      exit status (128+signal when interrupted).
#
# Example (what `make integration` runs):
#   impl/edge/testenv/run.sh go test -v -count=1 ./impl/edge/...
#
# Environment:
#   WINDTUNNEL_PG_BIN   directory holding initdb, pg_ctl and postgres
#                       (default: found in /usr/lib/postgresql/*/bin or PATH)
#   WINDTUNNEL_PG_USER  user that runs PostgreSQL when run.sh runs as root
#                       (default: postgres, created as a system user if absent)
#   WINDTUNNEL_KEEP=1   keep the temporary directory (logs) after exit
set -euo pipefail

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[ $# -ge 1 ] || { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

as_root() { # run a command as root: directly, or through sudo
	if [ "$(id -u)" -eq 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo -n "$@"
	else die "need root to run: $* (no sudo); install postgresql and redis-server yourself"
	fi
}

# ---- 1. find or install the servers ----------------------------------------

find_pg_bin() {
	if [ -n "${WINDTUNNEL_PG_BIN:-}" ]; then echo "$WINDTUNNEL_PG_BIN"; return; fi
	local d
	# Debian keeps the server binaries out of PATH, one directory per major
	# version; take the newest.
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then echo "$d"; return; fi
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null && command -v postgres >/dev/null; then
		dirname "$(command -v initdb)"
	fi
}

PG_BIN=$(find_pg_bin)
missing=()
[ -n "$PG_BIN" ] || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]} from Debian packages (apt-get)"
	command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} yourself, or set WINDTUNNEL_PG_BIN"
	# The packages' maintainer scripts would start system-wide services on
	# the default ports; this script starts its own instances, so keep them
	# from starting (policy-rc.d 101 = "action forbidden"), unless the
	# machine already has a policy.
	policy=/usr/sbin/policy-rc.d
	made_policy=0
	if [ ! -e "$policy" ]; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
		made_policy=1
	fi
	set +e
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
	rc=$?
	set -e
	[ "$made_policy" = 0 ] || as_root rm -f "$policy"
	[ $rc -eq 0 ] || die "apt-get install ${missing[*]} failed (exit $rc)"
	PG_BIN=$(find_pg_bin)
	[ -n "$PG_BIN" ] || die "PostgreSQL installed but initdb/pg_ctl/postgres not found; set WINDTUNNEL_PG_BIN"
	command -v redis-server >/dev/null || die "redis-server installed but not on PATH"
fi
log "PostgreSQL binaries: $PG_BIN ($("$PG_BIN/postgres" --version))"
log "Redis binary: $(command -v redis-server) ($(redis-server --version | cut -d' ' -f1-3))"

# ---- 2. start the servers --------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/windtunnel-testenv.XXXXXX")
PG_DATA="$WORK/pg"
PG_STARTED=0
REDIS_PID=""
CHILD=""

# PostgreSQL refuses to run as root; run it as an ordinary user then.
RUN_PG=()
if [ "$(id -u)" -eq 0 ]; then
	PG_USER=${WINDTUNNEL_PG_USER:-postgres}
	if ! id "$PG_USER" >/dev/null 2>&1; then
		log "creating system user $PG_USER to run PostgreSQL"
		useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
	fi
	chown "$PG_USER" "$WORK"
	RUN_PG=(runuser -u "$PG_USER" --)
fi

# run_pg runs a PostgreSQL program as RUN_PG's user, from WORK: PostgreSQL
# programs fail when they cannot read their working directory, and the
# caller's (say /root/src) may be closed to that user.
run_pg() { (cd "$WORK" && "${RUN_PG[@]}" "$@"); }

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	if [ -n "$REDIS_PID" ]; then
		log "stopping Redis (pid $REDIS_PID)"
		kill -TERM "$REDIS_PID" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$REDIS_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$REDIS_PID" 2>/dev/null || true
	fi
	if [ "$PG_STARTED" = 1 ]; then
		log "stopping PostgreSQL"
		run_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			run_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
	fi
	if [ "${WINDTUNNEL_KEEP:-}" = 1 ]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	log "exit status $rc"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # a port nobody listens on now (the start below retries on a race)
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		port_in_use "$p" || { echo "$p"; return; }
	done
	die "no free port found"
}

log "initdb into $PG_DATA"
run_pg "$PG_BIN/initdb" -D "$PG_DATA" -U windtunnel --auth=trust --encoding=UTF8 --no-locale >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }

for attempt in 1 2 3 4 5; do
	PG_PORT=$(free_port)
	log "starting PostgreSQL on 127.0.0.1:$PG_PORT (attempt $attempt)"
	# A throwaway test server: durability off makes bulk seeding fast.
	if run_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/postgres.log" -w -t 60 start \
		-o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$WORK -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null; then
		PG_STARTED=1
		break
	fi
	tail -n 5 "$WORK/postgres.log" >&2 || true
done
[ "$PG_STARTED" = 1 ] || die "PostgreSQL did not start; log: $WORK/postgres.log"
"$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U windtunnel windtunnel 2>/dev/null ||
	run_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U windtunnel windtunnel ||
	die "createdb failed"

redis_ping() ( # PING over bash's /dev/tcp, so redis-cli is not needed
	exec 4<>"/dev/tcp/127.0.0.1/$1" || exit 1
	printf 'PING\r\n' >&4
	reply=""
	read -r -t 2 reply <&4 || true
	[ "${reply%$'\r'}" = "+PONG" ]
)

for attempt in 1 2 3 4 5; do
	REDIS_PORT=$(free_port)
	log "starting Redis on 127.0.0.1:$REDIS_PORT (attempt $attempt)"
	redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
		--dir "$WORK" --logfile "$WORK/redis.log" --daemonize no >/dev/null 2>&1 &
	REDIS_PID=$!
	for _ in $(seq 100); do
		kill -0 "$REDIS_PID" 2>/dev/null || break
		redis_ping "$REDIS_PORT" 2>/dev/null && break
		sleep 0.1
	done
	if kill -0 "$REDIS_PID" 2>/dev/null && redis_ping "$REDIS_PORT" 2>/dev/null; then break; fi
	tail -n 5 "$WORK/redis.log" >&2 || true
	kill -KILL "$REDIS_PID" 2>/dev/null || true
	REDIS_PID=""
done
[ -n "$REDIS_PID" ] || die "Redis did not start; log: $WORK/redis.log"

# ---- 3. run the command ----------------------------------------------------

export WINDTUNNEL_PG_URL="postgres://windtunnel@127.0.0.1:$PG_PORT/windtunnel?sslmode=disable"
export WINDTUNNEL_REDIS_ADDR="127.0.0.1:$REDIS_PORT"
export WINDTUNNEL_INTEGRATION=1
log "WINDTUNNEL_PG_URL=$WINDTUNNEL_PG_URL"
log "WINDTUNNEL_REDIS_ADDR=$WINDTUNNEL_REDIS_ADDR"
log "running: $*"

# The command runs in its own process group (set -m), in the background, so
# that a signal to this script runs the traps at once (bash defers traps
# while a foreground command runs) and cleanup can stop the whole group.
set -m
"$@" &
CHILD=$!
set +m
set +e
wait "$CHILD"
rc=$?
set -e
CHILD=""
exit "$rc"
