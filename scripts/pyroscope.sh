#!/usr/bin/env bash
# Build, start and stop a real Grafana Pyroscope server on loopback, for the
# push/read-back integration test (internal/pyroscope) and for trying
# `perflab push` by hand.
#
#   scripts/pyroscope.sh build   # build (or reuse) the cached binary, print its path
#   scripts/pyroscope.sh start   # build if needed, start, wait for /ready, print the URL
#   scripts/pyroscope.sh stop    # stop the server started by `start`, remove its data
#
# start refuses a port already in use (the server needs PYROSCOPE_PORT and
# the ports 5055 and 3906 above it) and checks that a pid file names the
# server it started before reporting or stopping it.
#   scripts/pyroscope.sh url     # print the URL of the running server
#
# Pyroscope ships no Debian or npm package and we cannot download release
# binaries, so we build it from the Go module proxy. Its module zip lacks the
# nested ./api module that go.mod replaces and go.work uses, so we drop both
# and require the published api module instead (issue 6 has the measurements:
# about 3-4 minutes cold on 2 cores, a ~71 MB static binary). The binary is
# cached per version, so only the first build pays.
#
# Environment:
#   PYROSCOPE_VERSION      server version (default v1.12.0)
#   PYROSCOPE_API_VERSION  matching github.com/grafana/pyroscope/api version
#   PYROSCOPE_PORT         HTTP port (default 4040)
#   PERFLAB_CACHE          cache root (default ~/.cache/perflab)
#   PYROSCOPE_EXTRA_ARGS   more server flags, split at spaces (e.g.
#                          -auth.multitenancy-enabled=true)
#
# The integration tests find the server through PERFLAB_PYROSCOPE_URL:
#   export PERFLAB_PYROSCOPE_URL=$(scripts/pyroscope.sh start)
set -euo pipefail

VERSION=${PYROSCOPE_VERSION:-v1.12.0}
case "$VERSION" in
v1.12.0) DEFAULT_API=v1.1.0 ;;
v1.9.0) DEFAULT_API=v1.0.0 ;;
*) DEFAULT_API= ;;
esac
API_VERSION=${PYROSCOPE_API_VERSION:-$DEFAULT_API}
PORT=${PYROSCOPE_PORT:-4040}
CACHE=${PERFLAB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/perflab}
BIN_DIR=$CACHE/pyroscope-$VERSION
BIN=$BIN_DIR/pyroscope
STATE=$CACHE/pyroscope-run-$PORT # pid, data dir and log of the running server
URL=http://127.0.0.1:$PORT

log() { echo "pyroscope.sh: $*" >&2; }

# SRC is the writable copy of the server's source during a build; the EXIT
# trap removes it however the script ends. (A RETURN trap set inside build
# stayed set after it returned and fired again, with $src unset, at the next
# function's return: under set -u that killed `start` on every cold build.)
SRC=
cleanup() { if [ -n "$SRC" ]; then rm -rf "$SRC"; fi; }
trap cleanup EXIT

build() {
	if [ -x "$BIN" ]; then
		echo "$BIN"
		return
	fi
	if [ -z "$API_VERSION" ]; then
		log "no known api module version for $VERSION; set PYROSCOPE_API_VERSION"
		exit 2
	fi
	if ! command -v go >/dev/null 2>&1; then
		log "building Pyroscope needs Go, and there is no go command on PATH"
		exit 1
	fi
	mkdir -p "$BIN_DIR"
	SRC=$(mktemp -d "${TMPDIR:-/tmp}/pyroscope-src.XXXXXX")
	log "building Pyroscope $VERSION from the Go module proxy (cold: ~4 min on 2 cores)"
	# go mod download -json reports a failure in the JSON on stdout, not
	# on stderr: keep it to show it.
	local info dir
	if ! info=$(cd "$SRC" && GOFLAGS=-mod=mod go mod download -json "github.com/grafana/pyroscope@$VERSION"); then
		log "could not download github.com/grafana/pyroscope@$VERSION:"
		printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p' | sed 's/\\n\\t*/ /g' >&2
		exit 1
	fi
	dir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		log "could not download github.com/grafana/pyroscope@$VERSION: go mod download named no directory"
		exit 1
	fi
	# The module cache is read-only; build from a writable copy.
	cp -r "$dir/." "$SRC/"
	chmod -R u+w "$SRC"
	rm -f "$SRC/go.work" "$SRC/go.work.sum"
	# set -e does not apply inside an if's condition: chain with &&.
	if ! (
		cd "$SRC" &&
			export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 &&
			go mod edit -dropreplace=github.com/grafana/pyroscope/api \
				-require="github.com/grafana/pyroscope/api@$API_VERSION" &&
			go build -trimpath -o "$BIN.tmp" ./cmd/pyroscope
	); then
		rm -f "$BIN.tmp"
		log "building Pyroscope $VERSION failed (see above)"
		exit 1
	fi
	mv "$BIN.tmp" "$BIN"
	rm -rf "$SRC"
	SRC=
	log "built $BIN"
	echo "$BIN"
}

# ready reports whether the server on $PORT answers /ready with 200. Without
# curl it speaks HTTP/1.0 over bash's /dev/tcp.
ready() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsS -o /dev/null --max-time 2 "$URL/ready" 2>/dev/null
		return
	fi
	limit 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
		printf "GET /ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 &&
		head -n 1 <&3 | grep -q " 200 "' _ "$PORT" 2>/dev/null
}

# limit runs a command for at most $1 seconds where timeout(1) exists.
limit() {
	local s=$1
	shift
	if command -v timeout >/dev/null 2>&1; then
		timeout "$s" "$@"
	else
		"$@"
	fi
}

# listening reports whether something accepts connections on port $1.
listening() { limit 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

# state prints process $1's state letter (Z for a zombie) and args prints
# its command line: from /proc where there is one, else from ps (macOS),
# so a minimal Linux image without procps still works.
state() {
	if [ -r "/proc/$1/stat" ]; then
		sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null
	else
		ps -o stat= -p "$1" 2>/dev/null
	fi
}
args() {
	if [ -r "/proc/$1/cmdline" ]; then
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null
	else
		ps -o args= -p "$1" 2>/dev/null
	fi
}

# alive reports whether process $1 runs: kill -0 alone also succeeds for a
# zombie, which a server that died at startup is until we reap it.
alive() {
	kill -0 "$1" 2>/dev/null || return 1
	case "$(state "$1")" in
	Z*) return 1 ;;
	esac
}

# ours reports whether the pid in $STATE/pid is alive and is the server this
# script started: its command line names the data directory we made for it.
# A pid file left by a crash or a reboot can name a pid that is now some
# other process, which must be neither reported as the server nor killed.
ours() {
	[ -f "$STATE/pid" ] && [ -f "$STATE/data" ] || return 1
	local pid cmd
	pid=$(cat "$STATE/pid")
	alive "$pid" || return 1
	cmd=$(args "$pid") || return 1
	case "$cmd" in
	*"$(cat "$STATE/data")"*) return 0 ;;
	esac
	return 1
}

start() {
	if ours; then
		if ready; then
			log "already running (pid $(cat "$STATE/pid"))"
			echo "$URL"
			return
		fi
		log "a server started earlier (pid $(cat "$STATE/pid")) is not ready; restarting it"
	fi
	stop # a crashed server's pid file and data, if any
	build >/dev/null
	# The server would fail to bind and exit, and a server someone else
	# runs on the port would answer /ready in its place.
	local grpc=$((PORT + 5055)) gossip=$((PORT + 3906)) p
	for p in "$PORT" "$grpc" "$gossip"; do
		if listening "$p"; then
			log "port $p is in use (the server needs $PORT, $grpc and $gossip); stop what uses it or pick other ports with PYROSCOPE_PORT=<port>"
			exit 1
		fi
	done
	mkdir -p "$STATE"
	local data
	data=$(mktemp -d "${TMPDIR:-/tmp}/pyroscope-data.XXXXXX")
	echo "$data" >"$STATE/data"
	mkdir -p "$data/data" "$data/shared" "$data/compactor"
	# Every listen and advertise address on loopback, and the hash rings kept
	# in memory: the server must never listen on, advertise or try to reach
	# anything but this machine. The gRPC and memberlist ports are offset
	# from the HTTP port so two servers can run side by side.
	local ring
	local ringflags=()
	for ring in ring distributor.ring compactor.ring overrides-exporter.ring \
		query-scheduler.ring store-gateway.sharding-ring; do
		ringflags+=("-$ring.store=inmemory")
	done
	for ring in distributor.ring compactor.ring overrides-exporter.ring \
		query-scheduler.ring store-gateway.sharding-ring; do
		ringflags+=("-$ring.instance-addr=127.0.0.1")
	done
	"$BIN" \
		-target=all \
		-server.http-listen-address=127.0.0.1 \
		-server.http-listen-port="$PORT" \
		-server.grpc-listen-address=127.0.0.1 \
		-server.grpc-listen-port="$grpc" \
		-memberlist.bind-addr=127.0.0.1 \
		-memberlist.bind-port="$gossip" \
		-memberlist.advertise-addr=127.0.0.1 \
		-memberlist.advertise-port="$gossip" \
		-ingester.lifecycler.addr=127.0.0.1 \
		-query-frontend.instance-addr=127.0.0.1 \
		-ingester.min-ready-duration=0s \
		"${ringflags[@]}" \
		-usage-stats.enabled=false \
		-self-profiling.disable-push=true \
		-pyroscopedb.data-path="$data/data" \
		-storage.backend=filesystem \
		-storage.filesystem.dir="$data/shared" \
		-compactor.data-dir="$data/compactor" \
		${PYROSCOPE_EXTRA_ARGS:-} \
		>"$STATE/log" 2>&1 &
	local pid=$!
	echo "$pid" >"$STATE/pid"
	local i
	for i in $(seq 1 60); do # 30 s
		# Alive first: /ready from another process must not count.
		if ! alive "$pid"; then
			log "the server exited during startup; last log lines:"
			tail -n 30 "$STATE/log" >&2 || true
			stop
			exit 1
		fi
		if ready; then
			log "ready at $URL (pid $pid, log $STATE/log)"
			echo "$URL"
			return
		fi
		sleep 0.5
	done
	log "the server did not become ready in 30 s; last log lines:"
	tail -n 30 "$STATE/log" >&2 || true
	stop
	exit 1
}

# stop stops the server started by start, if it still runs, and removes its
# data and state; it never signals a process that is not that server.
stop() {
	if ours; then
		local pid
		pid=$(cat "$STATE/pid")
		if kill "$pid" 2>/dev/null; then
			for _ in $(seq 1 20); do
				alive "$pid" || break
				sleep 0.5
			done
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	if [ -f "$STATE/data" ]; then
		rm -rf "$(cat "$STATE/data")"
	fi
	rm -rf "$STATE"
}

case "${1:-}" in
build) build ;;
start) start ;;
stop) stop ;;
url) echo "$URL" ;;
*)
	echo "usage: $0 build|start|stop|url" >&2
	exit 2
	;;
esac
