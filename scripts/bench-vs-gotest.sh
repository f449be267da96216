#!/bin/sh
# bench-vs-gotest.sh: perflab bench against go test -bench -count=N and
# benchstat on the same benchmarks, in one alternating sequence (A B A B…),
# as issue 23 asks: each arm's wall time, the width of each benchmark's
# ns/op confidence interval, and whether the two medians agree within 5%.
# Both arms' statistics are benchstat's (the version in go.mod), read from
# perflab's results.txt and from go test's output, so they are computed
# the same way. The load average is printed before each arm: the machine
# may be shared.
#
# Environment (defaults in brackets):
#   PKG [./internal/lab/testdata/benchfix]  BENCH [Mutex|Hash/size=1024]
#   COUNT [10]  BENCHTIME [1s]  CPU [2]  PAIRS [3]
#   PERFLAB_FLAGS [] more flags for perflab bench (--profile none, say)
#
# Run from anywhere in the repository: sh scripts/bench-vs-gotest.sh
set -eu
PKG=${PKG:-./internal/lab/testdata/benchfix}
BENCH=${BENCH:-'Mutex|Hash/size=1024'}
COUNT=${COUNT:-10}
BENCHTIME=${BENCHTIME:-1s}
CPU=${CPU:-2}
PAIRS=${PAIRS:-3}
PERFLAB_FLAGS=${PERFLAB_FLAGS:-}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
version=$(go list -m -f '{{.Version}}' golang.org/x/perf)
go build -o "$tmp/perflab" ./cmd/perflab
GOBIN="$tmp" go install "golang.org/x/perf/cmd/benchstat@$version"

now() { date +%s.%N; }
load() { uptime | sed 's/.*load average: //'; }

# stats FILE ARM PAIR: benchstat's sec/op median and CI of each benchmark,
# one line each: ARM PAIR NAME MEDIAN_NS CI_PERCENT.
stats() {
	"$tmp/benchstat" -format csv "$1" 2>/dev/null | awk -F, -v arm="$2" -v pair="$3" '
	$2 == "sec/op" { in_ = 1; next }
	in_ && ($0 == "" || $1 == "geomean") { in_ = 0 }
	in_ { ci = $3; sub(/%/, "", ci); if (ci == "∞") ci = "inf"; printf "%s %s %s %.1f %s\n", arm, pair, $1, $2 * 1e9, ci }'
}

echo "go: $(go env GOVERSION)  benchstat: $version  package: $PKG  -bench '$BENCH'"
echo "-count $COUNT -benchtime $BENCHTIME -cpu $CPU, $PAIRS pairs; A = perflab bench $PERFLAB_FLAGS, B = go test + benchstat"
: >"$tmp/all"
i=1
while [ "$i" -le "$PAIRS" ]; do
	l=$(load)
	t0=$(now)
	"$tmp/perflab" bench "$PKG" -bench "$BENCH" -count "$COUNT" -benchtime "$BENCHTIME" -cpu "$CPU" \
		-o "$tmp/runs" $PERFLAB_FLAGS >"$tmp/A$i.out" 2>"$tmp/A$i.err" || true
	t1=$(now)
	dir=$(sed -n 's/^perflab: saved //p' "$tmp/A$i.err")
	if [ -z "$dir" ]; then
		cat "$tmp/A$i.err" >&2
		exit 1
	fi
	stats "$dir/results.txt" A "$i" >>"$tmp/all"
	cat "$dir/results.txt" >>"$tmp/perflab.txt"
	echo "$t1 - $t0" | bc >>"$tmp/wallA"
	echo "A$i perflab bench: $(echo "scale=1; ($t1 - $t0) / 1" | bc) s  (load before: $l)"

	l=$(load)
	t0=$(now)
	go test -run '^$' -bench "$BENCH" -count "$COUNT" -benchtime "$BENCHTIME" -cpu "$CPU" -benchmem "$PKG" >"$tmp/B$i.txt"
	"$tmp/benchstat" "$tmp/B$i.txt" >/dev/null
	t1=$(now)
	stats "$tmp/B$i.txt" B "$i" >>"$tmp/all"
	cat "$tmp/B$i.txt" >>"$tmp/gotest.txt"
	echo "$t1 - $t0" | bc >>"$tmp/wallB"
	echo "B$i go test + benchstat: $(echo "scale=1; ($t1 - $t0) / 1" | bc) s  (load before: $l)"
	i=$((i + 1))
done
echo
echo "ns/op, benchstat's median ± its 95% interval (half-width, % of the median), per pair:"
awk '
{ key = $3 " " $2; med[$1, key] = $4; ci[$1, key] = $5; if (!(key in seen)) { seen[key] = 1; keys[n++] = key } }
END {
	printf "%-32s %4s %12s %6s %12s %6s %7s %s\n", "benchmark", "pair", "perflab", "±%", "go test", "±%", "diff", "within 5%"
	for (i = 0; i < n; i++) {
		split(keys[i], k, " ")
		a = med["A", keys[i]]; b = med["B", keys[i]]
		if (a == "" || b == "") continue
		d = 100 * (a - b) / b
		ok = (d <= 5 && d >= -5) ? "yes" : "no"
		agree += (ok == "yes"); total++
		printf "%-32s %4s %12.1f %6s %12.1f %6s %+6.1f%% %s\n", k[1], k[2], a, ci["A", keys[i]], b, ci["B", keys[i]], d, ok
	}
	printf "medians within 5%%: %d of %d\n", agree, total
}' "$tmp/all"
echo
sum() { awk '{ s += $1 } END { printf "%.1f", s }' "$1"; }
echo "total wall time: perflab bench $(sum "$tmp/wallA") s, go test + benchstat $(sum "$tmp/wallB") s"
awk '{ print $1, $5 }' "$tmp/all" | sort -k2 -n | awk '
{ v[$1, ++n[$1]] = $2 }
END { for (a in n) { m = n[a]; med = (m % 2) ? v[a, (m + 1) / 2] : (v[a, m / 2] + v[a, m / 2 + 1]) / 2
	printf "median interval half-width: %s %s%% (of %d)\n", (a == "A" ? "perflab" : "go test"), med, m } }'
echo
echo "All pairs pooled ($PAIRS x $COUNT samples each), benchstat go-test=… perflab=…:"
"$tmp/benchstat" go-test="$tmp/gotest.txt" perflab="$tmp/perflab.txt" 2>&1 | sed -n '/sec\/op/,/^$/p'
