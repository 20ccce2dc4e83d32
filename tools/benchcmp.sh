#!/usr/bin/env bash
# benchcmp.sh BASE [ROUNDS]: the relay's per-message benchmarks (forward,
# reply, event, redacted event) of commit BASE against the working tree,
# side by side on this machine.
#
# Two test binaries of ./relay are built, one from BASE (in a temporary
# worktree) and one from the working tree. Then:
#
#   - time: the binaries run alternately ROUNDS times (default 8), one CPU,
#     one second per benchmark; the median and the fastest run are printed
#     per benchmark. On a shared machine the spread is often wider than the
#     difference sought: read the ratios with the spread in mind.
#   - instructions (when valgrind is installed): each benchmark runs once
#     under callgrind with the garbage collector off, counting only inside
#     the benchmark's own function, and the count is divided by the number
#     of operations. The count does not depend on the machine's load, so a
#     few percent shows.
#
# The allocs column is base/head allocations per op (most per run): the
# per-message paths allocate nothing.
set -euo pipefail

base=${1:?usage: benchcmp.sh BASE [ROUNDS]}
rounds=${2:-8}
benches=(ForwardCommand ForwardReply ForwardEvent ForwardEventRedacted)
ops=20000

root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$root" worktree add --detach -q "$work/base" "$base"
(cd "$work/base" && go test -c -o "$work/base.test" ./relay)
(cd "$root" && go test -c -o "$work/head.test" ./relay)

regex="^Benchmark($(IFS='|'; echo "${benches[*]}"))\$"
for i in $(seq "$rounds"); do
	for bin in base head; do
		"$work/$bin.test" -test.run '^$' -test.bench "$regex" -test.benchmem -test.cpu 1 -test.benchtime 1s |
			awk -v bin="$bin" '/^Benchmark/ { print bin, $1, $3, $(NF-1) }' >>"$work/times"
	done
done

echo "time, ns/op over $rounds alternate rounds (base = $base, head = working tree):"
printf "  %-30s %10s %10s %8s %10s %10s %8s %7s\n" benchmark "base med" "head med" ratio "base min" "head min" ratio allocs
awk '
	{ k = $2; v[k, $1, ++n[k, $1]] = $3; if ($4 > alloc[k, $1]) alloc[k, $1] = $4; names[k] = 1 }
	function median(k, b,   m, i, j, t, a) {
		m = n[k, b]
		for (i = 1; i <= m; i++) a[i] = v[k, b, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		fastest = a[1]
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		for (k in names) {
			bm = median(k, "base"); bf = fastest
			hm = median(k, "head"); hf = fastest
			if (bm == 0 || hm == 0) { printf "  %-30s not run by one of the two\n", k; continue }
			printf "  %-30s %10.1f %10.1f %8.3f %10.1f %10.1f %8.3f %3d/%-3d\n", k, bm, hm, hm / bm, bf, hf, hf / bf, alloc[k, "base"], alloc[k, "head"]
		}
	}' "$work/times" | sort

if ! command -v valgrind >/dev/null; then
	echo "instructions: valgrind is not installed; skipped"
	exit 0
fi
echo "instructions per op inside the benchmark, garbage collector off ($ops ops):"
printf "  %-30s %10s %10s %8s\n" benchmark base head ratio
for b in "${benches[@]}"; do
	declare -A count=()
	for bin in base head; do
		# A run that ends without its count (or with the count of a
		# few instructions only) is tried again, up to five times: the tool does not know every instruction the Go runtime
		# may use (RDTSCP, when a lock is contended) and stops the program.
		for try in 1 2 3 4 5; do
			c=$(GOGC=off valgrind --tool=callgrind --callgrind-out-file=/dev/null "--toggle-collect=*Benchmark$b" \
				"$work/$bin.test" -test.run '^$' -test.bench "^Benchmark$b\$" -test.cpu 1 -test.benchtime "${ops}x" 2>&1 |
				awk '/Collected/ { print $4 }' || true)
			[ -n "$c" ] && [ "$c" -gt $((ops * 100)) ] && break
			c=0
		done
		count[$bin]=${c:-0}
	done
	awk -v b="$b" -v x="${count[base]}" -v y="${count[head]}" -v n="$ops" \
		'BEGIN { if (x > 0 && y > 0) printf "  %-30s %10d %10d %8.3f\n", b, x / n, y / n, y / x; else printf "  %-30s no count\n", b }'
done
