#!/usr/bin/env bash
# scripts/toxiproxy.sh COMMAND [ARG...]
#
# Runs COMMAND with a private Toxiproxy server (the flight's fault proxy):
#   1. builds the server from the Go module proxy at the pinned version, once,
#      into a cache directory (GOBIN=...; go install; there is no Debian
#      package);
#   2. starts it with its API on a free 127.0.0.1 port and a pinned seed;
#   3. exports WINDTUNNEL_TOXIPROXY_ADDR and runs COMMAND;
#   4. stops it on exit, also when COMMAND fails or the script is
#      interrupted, and exits with COMMAND's status.
#
# Example (what make flight runs, inside impl/edge/testenv/run.sh):
#   scripts/toxiproxy.sh go run ./scenarios/cmd/flight
#
# Environment:
#   GO                     the go command (default: go)
#   WINDTUNNEL_TOXIPROXY_DIR  where the built server is kept
#                          (default: $(go env GOPATH)/windtunnel/toxiproxy-VERSION)
set -euo pipefail

VERSION=v2.5.0
MODULE=github.com/Shopify/toxiproxy/v2/cmd/server

log() { printf 'toxiproxy: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[ $# -ge 1 ] || { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
GO=${GO:-go}
DIR=${WINDTUNNEL_TOXIPROXY_DIR:-$("$GO" env GOPATH)/windtunnel/toxiproxy-$VERSION}
BIN="$DIR/server"
if [ ! -x "$BIN" ]; then
	log "building $MODULE@$VERSION into $DIR"
	mkdir -p "$DIR"
	# Outside any module, so the project's go.mod is not touched.
	(cd "$DIR" && GOBIN="$DIR" GOFLAGS=-buildvcs=false "$GO" install "$MODULE@$VERSION") ||
		die "go install $MODULE@$VERSION failed"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/windtunnel-toxiproxy.XXXXXX")
PID=""
CHILD=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	if [ -n "$PID" ]; then
		log "stopping Toxiproxy (pid $PID)"
		kill -TERM "$PID" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$PID" 2>/dev/null || true
	fi
	if [ "${WINDTUNNEL_KEEP:-}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
api_up() ( # GET /version over bash's /dev/tcp, so curl is not needed
	exec 4<>"/dev/tcp/127.0.0.1/$1" || exit 1
	printf 'GET /version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&4
	read -r -t 2 status <&4 || exit 1
	case "$status" in *" 200 "*) exit 0 ;; *) exit 1 ;; esac
)

for attempt in 1 2 3 4 5; do
	PORT=""
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		port_in_use "$p" || { PORT=$p; break; }
	done
	[ -n "$PORT" ] || die "no free port found"
	log "starting Toxiproxy $VERSION on 127.0.0.1:$PORT (attempt $attempt)"
	"$BIN" -host 127.0.0.1 -port "$PORT" -seed 1 >"$WORK/toxiproxy.log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		kill -0 "$PID" 2>/dev/null || break
		api_up "$PORT" 2>/dev/null && break
		sleep 0.1
	done
	if kill -0 "$PID" 2>/dev/null && api_up "$PORT" 2>/dev/null; then break; fi
	tail -n 5 "$WORK/toxiproxy.log" >&2 || true
	kill -KILL "$PID" 2>/dev/null || true
	PID=""
done
[ -n "$PID" ] || die "Toxiproxy did not start; log: $WORK/toxiproxy.log"

export WINDTUNNEL_TOXIPROXY_ADDR="127.0.0.1:$PORT"
log "WINDTUNNEL_TOXIPROXY_ADDR=$WINDTUNNEL_TOXIPROXY_ADDR"
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
