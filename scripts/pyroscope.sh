#!/usr/bin/env bash
# Build, start and stop a real Grafana Pyroscope server on loopback, for the
# push/read-back integration test (internal/pyroscope) and for trying
# `perflab push` by hand.
#
#   scripts/pyroscope.sh build   # build (or reuse) the cached binary, print its path
#   scripts/pyroscope.sh start   # build if needed, start, wait for /ready, print the URL
#   scripts/pyroscope.sh stop    # stop the server started by `start`, remove its data
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

build() {
	if [ -x "$BIN" ]; then
		echo "$BIN"
		return
	fi
	if [ -z "$API_VERSION" ]; then
		log "no known api module version for $VERSION; set PYROSCOPE_API_VERSION"
		exit 2
	fi
	mkdir -p "$BIN_DIR"
	local src
	src=$(mktemp -d "${TMPDIR:-/tmp}/pyroscope-src.XXXXXX")
	trap 'rm -rf "$src"' RETURN
	log "building Pyroscope $VERSION from the Go module proxy (cold: ~4 min on 2 cores)"
	local dir
	dir=$(cd "$src" && GOFLAGS=-mod=mod go mod download -json "github.com/grafana/pyroscope@$VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		log "could not download github.com/grafana/pyroscope@$VERSION"
		exit 1
	fi
	# The module cache is read-only; build from a writable copy.
	cp -r "$dir/." "$src/"
	chmod -R u+w "$src"
	rm -f "$src/go.work" "$src/go.work.sum"
	(
		cd "$src"
		export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
		go mod edit -dropreplace=github.com/grafana/pyroscope/api \
			-require="github.com/grafana/pyroscope/api@$API_VERSION"
		go build -trimpath -o "$BIN.tmp" ./cmd/pyroscope
	)
	mv "$BIN.tmp" "$BIN"
	log "built $BIN"
	echo "$BIN"
}

ready() { curl -fsS -o /dev/null --max-time 2 "$URL/ready" 2>/dev/null; }

start() {
	if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
		log "already running (pid $(cat "$STATE/pid"))"
		echo "$URL"
		return
	fi
	build >/dev/null
	rm -rf "$STATE"
	mkdir -p "$STATE"
	local data
	data=$(mktemp -d "${TMPDIR:-/tmp}/pyroscope-data.XXXXXX")
	echo "$data" >"$STATE/data"
	mkdir -p "$data/data" "$data/shared" "$data/compactor"
	# Every listen and advertise address on loopback, and the hash rings kept
	# in memory: the server must never listen on, advertise or try to reach
	# anything but this machine. The gRPC and memberlist ports are offset
	# from the HTTP port so two servers can run side by side.
	local grpc=$((PORT + 5055)) gossip=$((PORT + 3906)) ring
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
	echo $! >"$STATE/pid"
	local i
	for i in $(seq 1 60); do # 30 s
		if ready; then
			log "ready at $URL (pid $(cat "$STATE/pid"), log $STATE/log)"
			echo "$URL"
			return
		fi
		if ! kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	log "server did not become ready; last log lines:"
	tail -n 30 "$STATE/log" >&2 || true
	stop
	exit 1
}

stop() {
	if [ -f "$STATE/pid" ]; then
		local pid
		pid=$(cat "$STATE/pid")
		if kill "$pid" 2>/dev/null; then
			for _ in $(seq 1 20); do
				kill -0 "$pid" 2>/dev/null || break
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
