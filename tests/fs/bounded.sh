#!/usr/bin/env bash
# Bounded resources. A 100,000-file tree served by a
# daemon started under `ulimit -n 1024` can be walked and read in full, with
# no EMFILE anywhere, while the daemon's fd count (sampled every 100 ms) stays
# under the limit. The daemon's peak memory (VmHWM) is reported, and held to
# 100 MiB on builds without a sanitizer.
source "$SANDY_SRC/tests/lib.sh"

FD_LIMIT=1024
NFILES=100000 # 10 x 10 x 10 directories of 100 files
NDIRS=1111    # those directories and the root
MEM_LIMIT_KIB=$((100 * 1024))

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"

# SOURCE on a private tmpfs (about 500 MB for this tree) when there is room:
# creating the tree takes a second instead of several, and unmounting it
# frees it at once. Deleting 100,000 files on ext4 without a journal makes
# every file creation after it slow for minutes (ext4 skips recently
# deleted inodes), which would slow every later test down.
# BOUNDED_ON_DISK=1 keeps SOURCE on the scratch filesystem.
avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ -z "${BOUNDED_ON_DISK:-}" ] && [ "${avail_kib:-0}" -gt $((2 * 1024 * 1024)) ] &&
	mount -t tmpfs -o size=1g,nr_inodes=200k,mode=755 sandy-bounded "$src" 2>/dev/null; then
	at_exit "umount -l '$src'"
	diag "SOURCE is a private tmpfs"
else
	diag "SOURCE is a plain directory under ${TEST_BASE:-/var/tmp}"
fi

# The tree: every file holds its own relative path and a newline, so the
# concatenation of everything read back, sorted, must equal the sorted list
# of paths: a file served with another file's content shows up.
cat >"$base/mktree.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char p[64];
	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	for (int a = 0; a < 10; a++)
		for (int b = 0; b < 10; b++)
			for (int c = 0; c < 10; c++) {
				snprintf(p, sizeof p, "%d", a);
				mkdir(p, 0755);
				snprintf(p, sizeof p, "%d/%d", a, b);
				mkdir(p, 0755);
				snprintf(p, sizeof p, "%d/%d/%d", a, b, c);
				if (mkdir(p, 0755) != 0)
					return 1;
				for (int f = 0; f < 100; f++) {
					int n = snprintf(p, sizeof p, "%d/%d/%d/f%02d\n", a, b, c, f);
					p[n - 1] = '\0';
					int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
					p[n - 1] = '\n';
					if (fd < 0 || write(fd, p, n) != n || close(fd) != 0)
						return 1;
				}
			}
	return 0;
}
EOF
t0=$SECONDS
if ! "${CC:-cc}" -O2 -o "$base/mktree" "$base/mktree.c" || ! "$base/mktree" "$src"; then
	not_ok "build the $NFILES-file tree"
	done_testing
fi
diag "tree of $NFILES files built in $((SECONDS - t0)) s"
expected=$(cd "$src" && find . -type f -printf '%P\n' | LC_ALL=C sort | cksum)

# The daemon, in the foreground so that its stderr is ours, under the limit
# (soft and hard: the shell's ulimit sets both).
limited() { ulimit -n $FD_LIMIT && exec "$@"; }
if ! mount_foreground "$mnt" "$base/daemon.err" \
	limited "$SANDYFS" mount "${ALLOW_ALL[@]}" -f "$src" "$mnt"; then
	not_ok "sandyfs mount -f under ulimit -n $FD_LIMIT becomes live"
	diag "daemon stderr: $(head -c 2000 "$base/daemon.err")"
	done_testing
fi
ok "sandyfs mount -f under ulimit -n $FD_LIMIT becomes live"
pid=$FG_PID

daemon_limit=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
check "the daemon runs with at most $FD_LIMIT open files allowed (soft limit: $daemon_limit)" \
	test "${daemon_limit:-unlimited}" -le $FD_LIMIT 2>/dev/null

# Sample the daemon's open fds every 100 ms while it lives.
(
	while pid_alive $pid; do
		fds=("/proc/$pid/fd/"*)
		echo ${#fds[@]}
		sleep 0.1
	done
) >"$base/fds" 2>/dev/null &
sampler=$!
kill_at_exit $sampler

# Walk: every file seen, with its attributes (find stats each one for %s).
t0=$SECONDS
walk=$(find "$mnt" -type f -printf '%s\n' 2>"$base/walk.err" | awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
ndirs=$(find "$mnt" -type d 2>>"$base/walk.err" | wc -l)
diag "walk took $((SECONDS - t0)) s"
check_eq "find through the mount sees $NFILES files and their total size" \
	"$NFILES ${expected##* }" "$walk"
check_eq "find through the mount sees $NDIRS directories" $NDIRS "$ndirs"
check "the walk reported no error" test ! -s "$base/walk.err"
[ -s "$base/walk.err" ] && diag "walk stderr: $(head -5 "$base/walk.err")"

# Read every file (four readers in parallel; each cat writes one short line
# per file, so lines never interleave) and compare what came back.
t0=$SECONDS
got=$(cd "$mnt" && find . -type f -print0 2>"$base/read.err" |
	xargs -0 -n 2000 -P 4 cat 2>>"$base/read.err" | LC_ALL=C sort | cksum)
diag "reading every file took $((SECONDS - t0)) s"
check_eq "reading every file through the mount returns every file's content" "$expected" "$got"
check "reading reported no error" test ! -s "$base/read.err"
[ -s "$base/read.err" ] && diag "read stderr: $(head -5 "$base/read.err")"

# Once more, now that the kernel holds all the inodes: a stat of every file.
nstat=$(find "$mnt" -type f -print0 2>>"$base/walk.err" | xargs -0 stat -c %s 2>>"$base/walk.err" | wc -l)
check_eq "a second walk stats all $NFILES files" $NFILES "$nstat"

check "the daemon is still running after the walks" pid_alive $pid
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
nthreads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
diag "daemon memory after the walks: VmHWM ${hwm:-?} KiB, VmRSS ${rss:-?} KiB, threads ${nthreads:-?}"
if ldd "$SANDYFS" 2>/dev/null | grep -q 'lib[at]san' || grep -qa '__asan_init\|__tsan_init' "$SANDYFS"; then
	diag "skip peak memory under $((MEM_LIMIT_KIB / 1024)) MiB (sanitizer build: shadow memory counts)"
else
	check "the daemon's peak memory stays under $((MEM_LIMIT_KIB / 1024)) MiB (VmHWM ${hwm:-?} KiB)" \
		test "${hwm:-999999999}" -le $MEM_LIMIT_KIB
fi

# Unmount; the daemon exits cleanly (status 0: a sanitizer report makes it
# non-zero). How long it takes is reported, not judged (a loaded machine
# is slow to free 100,000 nodes); two minutes is a hang.
check "sandyfs umount succeeds" "$SANDYFS" umount "$mnt"
check "the mount is gone" wait_until 5 eval '! is_mounted "$mnt"'
t0=$SECONDS
if wait_until 120 eval '! pid_alive $pid'; then
	diag "the daemon exited $((SECONDS - t0)) s after the unmount"
	wait $pid
	check_eq "the daemon exits with status 0 after umount" 0 $?
else
	not_ok "the daemon exits with status 0 after umount"
	diag "daemon $pid still running 120 s after umount"
fi
wait $sampler 2>/dev/null

nsamples=$(wc -l <"$base/fds")
fdmax=$(sort -n "$base/fds" | tail -n 1)
diag "daemon fd count: max ${fdmax:-?} over $nsamples samples (100 ms apart)"
check "the fd count was sampled throughout (at least 10 samples: $nsamples)" test "$nsamples" -ge 10
check "the daemon's fd count stayed under $FD_LIMIT (max ${fdmax:-?})" test "${fdmax:-$FD_LIMIT}" -lt $FD_LIMIT
if grep -qiE 'too many open files|EMFILE' "$base/daemon.err" "$base/walk.err" "$base/read.err"; then
	not_ok "no EMFILE anywhere (daemon, walk, read)"
	grep -iE 'too many open files|EMFILE' "$base/daemon.err" "$base/walk.err" "$base/read.err" | head -5 |
		while read -r l; do diag "$l"; done
else
	ok "no EMFILE anywhere (daemon, walk, read)"
fi
[ -s "$base/daemon.err" ] && diag "daemon stderr: $(head -c 1500 "$base/daemon.err")"
done_testing
