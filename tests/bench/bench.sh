#!/usr/bin/env bash
# The benchmark (not a test: it asserts nothing, it measures).
# Builds a >= 15,000-file git repository, serves it through sandyfs with the
# realistic policy (base + detected types), and runs every workload on the
# native directory, through sandyfs (opens judged, and --lazy-open), through
# sandyfs in its own container over a bind of the tree as sandy runs it for
# an engine that does not see this host's mounts (when docker answers), and,
# when installed, through bindfs, in alternation, after a warm-up; prints medians and ratios, the daemon's peak
# RSS and fd count, then does it all again on a tmpfs copy.
#
#   tests/bench/bench.sh [--runs N] [--quick] [--no-tmpfs | --tmpfs-only]
#                        [--flavour normal|bundled]
# Run as root from the repository root (it mounts tmpfs and bindfs).
# --flavour bundled measures sandyfs built with libfuse 3.18.3
# (scripts/build.sh bundled), over io_uring when the fuse module has it on.
set -eu
cd "$(dirname "$0")/../.."
runs=5 quick=0 tmpfs=1 ext4=1 flavour=normal
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift ;;
	--quick) quick=1 runs=3 ;;
	--no-tmpfs) tmpfs=0 ;;
	--tmpfs-only) ext4=0 ;;
	--flavour) flavour=$2; shift ;;
	*) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
scripts/deps.sh
build=$(scripts/build.sh "$flavour")
sandyfs=$PWD/$build/fusefs/sandyfs
repo=$PWD
work=/var/tmp/sandy-bench
have_bindfs=0
command -v bindfs >/dev/null && have_bindfs=1
# The container column: a docker daemon that answers, and sandy-fs:latest
# made from this build's sandyfs.
have_container=0
docker info >/dev/null 2>&1 && "$build/launcher/sandy" build-image --fs-only >/dev/null 2>&1 &&
	have_container=1

cleanup() {
	docker ps -q --filter name=sandy-bench-fs- 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
	for m in "$work"/*/box-*/mnt "$work"/*/box-* "$work"/*/mnt-* "$work"/tmpfs/t/mnt-*; do
		grep -q " $m " /proc/self/mountinfo && umount -l "$m"
	done
	grep -q " $work/tmpfs " /proc/self/mountinfo && umount -l "$work/tmpfs"
	true
}
trap cleanup EXIT
cleanup
rm -rf "$work" && mkdir -p "$work"

now() { echo "${EPOCHREALTIME/./}"; } # microseconds
# timed DIR CMD: seconds CMD takes run inside DIR
timed() {
	local d=$1 t0 t1
	shift
	t0=$(now)
	(cd "$d" && eval "$@") >/dev/null 2>&1 || { echo failed; return; }
	t1=$(now)
	echo $(((t1 - t0) / 1000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The workloads: name, and a command run in the tree's root. Writes go to
# paths the c rules allow (build/, src/).
declare -a names cmds preps
add() { names+=("$1"); cmds+=("$2"); preps+=("${3:-true}"); }
add "git status" "git status --porcelain"
add "rg PATTERN" "rg -c needle_marker"
add "find -type f" "find . -type f"
add "tar c . >/dev/null" "tar c . >/dev/null"
add "C build (ninja -j2)" "ninja -C build/\$FLAVOUR -j2" "ninja -C build/\$FLAVOUR -t clean"
add "create 10,000 files" "mkfiles src/gen" "rm -rf src/gen"
add "delete 10,000 files" "rm -rf src/gen" "mkfiles src/gen"
add "write 1 GiB (MB/s)" "dd if=/dev/zero of=build/big.bin bs=1M count=1024 conv=fsync" "rm -f build/big.bin"
add "read 1 GiB (MB/s)" "cat build/big.bin" \
	"[ \"\$(stat -c %s build/big.bin)\" = 1073741824 ] || dd if=/dev/zero of=build/big.bin bs=1M count=1024"
# 10,000 small files in 200 directories, like an npm install.
mkfiles() {
	local d i
	for d in $(seq 1 200); do
		mkdir -p "$1/d$d"
		for i in $(seq 1 50); do printf 'module %d %d\n' "$d" "$i" >"$1/d$d/f$i.js"; done
	done
}
export -f mkfiles

daemon_stats() { # pid -> "peak RSS MiB, fds"
	local pid=$1
	awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status"
	printf ', %d fds' "$(ls "/proc/$pid/fd" | wc -l)"
}

# The daemon's request counters (sandyfs mount --stats): a fresh copy on
# SIGUSR1, told apart by its serial.
stats_snap() { # PID STATS-FILE COPY
	local before after i
	before=$(sed -n 's/^{"serial": \([0-9]*\).*/\1/p' "$2")
	kill -USR1 "$1"
	for i in $(seq 1 200); do
		after=$(sed -n 's/^{"serial": \([0-9]*\).*/\1/p' "$2" 2>/dev/null)
		[ -n "$after" ] && [ "$after" != "$before" ] && break
		sleep 0.01
	done
	cp "$2" "$3"
}
# Lines "request count usec" (and "host-events N 0") from a counters file.
stats_lines() {
	sed -n -e 's/^  "\([a-z_]*\)": {"count": \([0-9]*\), "usec": \([0-9]*\)}.*/\1 \2 \3/p' \
		-e 's/^{"serial": [0-9]*, "host_events": \([0-9]*\).*/host-events \1 0/p' "$1"
}
# BEFORE AFTER: the difference, appended to the workload's profile.
stats_delta() {
	join <(stats_lines "$1" | sort) <(stats_lines "$2" | sort) |
		awk '{ if ($4 - $2 > 0) print $1, $4 - $2, $5 - $3 }'
}
# PROFILE-FILE RUNS: the requests one run costs, most frequent first.
stats_report() {
	awk -v runs="$2" '{ n[$1] += $2; us[$1] += $3 }
		END { for (k in n) printf "%d %s\n", n[k] / runs, k }' "$1" | sort -rn | head -n 6 |
		while read -r count name; do
			if [ "$name" = host-events ]; then
				printf ' %s %d' "$name" "$count"
			else
				printf ' %s %d (%.1f us)' "$name" "$count" \
					"$(awk -v k="$name" '$1 == k { n += $2; us += $3 } END { print n ? us / n : 0 }' "$1")"
			fi
		done
}

bench_on() { # LABEL TREE
	local label=$1 tree=$2 base
	base=$(dirname "$tree")
	local mnt_s=$base/mnt-sandyfs mnt_b=$base/mnt-bindfs
	mkdir -p "$mnt_s" "$mnt_b"
	# The C project built in every flavour: sandyfs's own sources.
	mkdir -p "$tree/src/sandyfs"
	tar -C "$repo" --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$tree/src/sandyfs" -xf -
	local mnt_l=$base/mnt-lazy
	mkdir -p "$mnt_l"
	"$sandyfs" mount --allow-other --pid-file "$base/pid" --stats "$base/stats.json" "$tree" "$mnt_s"
	"$sandyfs" mount --allow-other --lazy-open "$tree" "$mnt_l"
	local pid
	pid=$(cat "$base/pid")
	rm -f "$base"/profile.*
	[ $have_bindfs = 1 ] && bindfs "$tree" "$mnt_b"
	local flavours=(native sandyfs lazy) dirs=("$tree" "$mnt_s" "$mnt_l")
	[ $have_bindfs = 1 ] && flavours+=(bindfs) dirs+=("$mnt_b")
	# sandyfs in its own container over a bind of the tree, as sandy runs
	# it for an engine that does not see this host's mounts (--lazy-open,
	# as sandy mounts it); its mount comes back here through a shared bind.
	local ci=-1 cbox=$base/box-container box=sandy-bench-fs-$$
	local mnt_c=$cbox/mnt
	if [ $have_container = 1 ]; then
		mkdir -p "$mnt_c" "$base/store-c"
		mount --bind "$cbox" "$cbox" && mount --make-shared "$cbox"
		docker run -d --rm --name "$box" --cap-drop=ALL --cap-add=SYS_ADMIN --cap-add=CHOWN \
			--cap-add=DAC_OVERRIDE --cap-add=DAC_READ_SEARCH --cap-add=FOWNER --cap-add=FSETID \
			--cap-add=SETUID --cap-add=SETGID --device=/dev/fuse --security-opt=apparmor=unconfined \
			--network=none --volume="$tree:$tree" --volume="$base/store-c:$base/store-c" \
			--volume="$cbox:/box:rshared" sandy-fs:latest \
			sandyfs mount -f --allow-other --lazy-open --store "$base/store-c" "$tree" /box/mnt \
			>/dev/null
		for _ in $(seq 1 100); do
			grep -q " $mnt_c .* - fuse.sandyfs " /proc/self/mountinfo && break
			sleep 0.1
		done
		ci=${#flavours[@]}
		flavours+=(container) dirs+=("$mnt_c")
	fi
	for i in "${!flavours[@]}"; do
		(cd "${dirs[$i]}" && meson setup "build/${flavours[$i]}" src/sandyfs >/dev/null 2>&1) || true
	done
	echo
	echo "== $label: $(find "$tree" -type f -not -path '*/.git/*' | wc -l) files in $(find "$tree" -type d -not -path '*/.git*' | wc -l) directories; policy: $("$sandyfs" rules --json "$tree" | sed -n 's/.*"name":[[:space:]]*"\([^"]*\)".*/\1/p' | tr '\n' ' ')"
	printf '%-24s %12s %12s %8s %12s %12s %12s\n' workload native sandyfs ratio "lazy-open" \
		"bindfs ratio" "container"
	local failures=""
	for w in "${!names[@]}"; do
		declare -A samples=()
		for f in "${!flavours[@]}"; do samples[$f]=""; done
		for r in $(seq 0 "$runs"); do # run 0 is the warm-up
			for f in "${!flavours[@]}"; do
				export FLAVOUR=${flavours[$f]}
				(cd "${dirs[$f]}" && eval "${preps[$w]}") >/dev/null 2>&1 || true
				local profiled=0
				[ "$r" -gt 0 ] && [ "${flavours[$f]}" = sandyfs ] && profiled=1
				[ $profiled = 1 ] && stats_snap "$pid" "$base/stats.json" "$base/stats.before"
				ms=$(timed "${dirs[$f]}" "${cmds[$w]}")
				[ $profiled = 1 ] && stats_snap "$pid" "$base/stats.json" "$base/stats.after" &&
					stats_delta "$base/stats.before" "$base/stats.after" >>"$base/profile.$w"
				# A run that failed (a full disk) makes the row say so
				# rather than show how fast a failure is.
				[ "$ms" = failed ] && failures+=" ${flavours[$f]}"
				[ "$r" -gt 0 ] && samples[$f]+="$ms "
			done
		done
		if [ -n "$failures" ]; then
			printf '%-24s failed in:%s\n' "${names[$w]}" "$(echo "$failures" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
			failures=""
			unset samples
			continue
		fi
		local med=()
		for f in "${!flavours[@]}"; do med[$f]=$(echo "${samples[$f]}" | tr ' ' '\n' | grep . | median); done
		local name=${names[$w]}
		if [[ $name == *MB/s* ]]; then
			# throughput: MB/s, ratio is sandyfs/native throughput
			local tn ts tl tb=""
			tn=$(awk -v ms="${med[0]}" 'BEGIN {printf "%.0f", 1024 / (ms / 1000)}')
			ts=$(awk -v ms="${med[1]}" 'BEGIN {printf "%.0f", 1024 / (ms / 1000)}')
			tl=$(awk -v a="${med[0]}" -v b="${med[2]}" 'BEGIN {printf "%.2f", a / b}')
			[ $have_bindfs = 1 ] && tb=$(awk -v a="${med[0]}" -v b="${med[3]}" 'BEGIN {printf "%.2f", a / b}')
			local tc=""
			[ $ci -ge 0 ] && tc=$(awk -v a="${med[0]}" -v b="${med[$ci]}" 'BEGIN {printf "%.2f", a / b}')
			printf '%-24s %10s/s %10s/s %8s %12s %12s %12s\n' "$name" "${tn}MB" "${ts}MB" \
				"$(awk -v a="${med[0]}" -v b="${med[1]}" 'BEGIN {printf "%.2f", a / b}')" "$tl" "$tb" "$tc"
		else
			local tb="" tl
			tl=$(awk -v a="${med[0]}" -v b="${med[2]}" 'BEGIN {printf "%.2f", (a > 0 ? b / a : 0)}')
			[ $have_bindfs = 1 ] && tb=$(awk -v a="${med[0]}" -v b="${med[3]}" 'BEGIN {printf "%.2f", b / a}')
			local tc=""
			[ $ci -ge 0 ] && tc=$(awk -v a="${med[0]}" -v b="${med[$ci]}" 'BEGIN {printf "%.2f", (a > 0 ? b / a : 0)}')
			printf '%-24s %10sms %10sms %8s %12s %12s %12s\n' "$name" "${med[0]}" "${med[1]}" \
				"$(awk -v a="${med[0]}" -v b="${med[1]}" 'BEGIN {printf "%.2f", (a > 0 ? b / a : 0)}')" "$tl" "$tb" "$tc"
		fi
		unset samples
	done
	rm -f "$tree/build/big.bin"
	echo "sandyfs daemon: $(daemon_stats "$pid")"
	echo "requests per run through sandyfs (the daemon's counters; mean handler time):"
	for w in "${!names[@]}"; do
		printf '  %-22s%s\n' "${names[$w]}" "$(stats_report "$base/profile.$w" "$runs")"
	done
	"$sandyfs" umount "$mnt_s"
	"$sandyfs" umount "$mnt_l"
	[ $have_bindfs = 1 ] && umount "$mnt_b"
	if [ $ci -ge 0 ]; then
		docker stop --time 10 "$box" >/dev/null 2>&1
		umount -l "$mnt_c" 2>/dev/null || true
		umount -l "$cbox" 2>/dev/null || true
	fi
	true
}

echo "generating the tree..."
tests/bench/gen-tree.sh "$work/ext4/tree" >/dev/null
if [ $tmpfs = 1 ]; then
	# A copy made before any run, so both start from the same tree.
	mkdir -p "$work/tmpfs"
	mount -t tmpfs -o size=4g tmpfs "$work/tmpfs"
	mkdir -p "$work/tmpfs/t"
	cp -a "$work/ext4/tree" "$work/tmpfs/t/tree"
fi
[ $ext4 = 1 ] && bench_on "$(findmnt -no FSTYPE -T "$work" 2>/dev/null || echo disk)" "$work/ext4/tree"
[ $tmpfs = 1 ] && bench_on "tmpfs" "$work/tmpfs/t/tree"
true
