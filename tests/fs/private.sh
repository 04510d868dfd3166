#!/usr/bin/env bash
# Private directories as a directory listing shows them: a SOURCE directory
# lists its own entries, then the private directories the store holds for
# it (SOURCE's own copies of those never show). Every listing must be whole
# whatever the reader's buffer size (glibc reads 32 KiB at a time, musl
# 2 KiB, and a getdents of a hundred bytes must still resume right), the
# kernel's cached listing must follow a private directory made or removed
# through the mount, and find, du and rm -rf must walk into them. Checked
# against the store and SOURCE on the host.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
src=$base/src mnt=$base/mnt store=$base/store
mkdir -p "$src/sub" "$mnt"
for i in 1 2 3 4 5; do echo "$i" >"$src/file$i.c"; done
# SOURCE's own node_modules, which the mount must neither show nor touch.
mkdir -p "$src/node_modules/host-only" "$src/sub/__pycache__"
echo host >"$src/node_modules/host-only/index.js"

if ! mount_policy --store "$store" "$src" "$mnt"; then
	not_ok "mount"
	done_testing
fi

# names DIR BUFSIZE: the names getdents64 gives with a buffer of BUFSIZE
# bytes, sorted, one per line.
names() {
	python3 -c '
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
size = int(sys.argv[2])
buf = ctypes.create_string_buffer(size)
names = []
while True:
    n = libc.syscall(217, fd, buf, size)  # getdents64
    if n < 0:
        sys.exit("getdents64: " + os.strerror(ctypes.get_errno()))
    if n == 0:
        break
    raw, off = buf.raw, 0
    while off < n:
        reclen = struct.unpack_from("H", raw, off + 16)[0]
        name = raw[off + 19:off + reclen].split(b"\0", 1)[0].decode()
        if name not in (".", ".."):
            names.append(name)
        off += reclen
print("\n".join(sorted(names)))
' "$1" "$2"
}

check "no private directory is listed before one is made" \
	eval '! names "$mnt" 32768 | grep -qx node_modules'
check "SOURCE's own sub/__pycache__ is not listed" eval '! names "$mnt/sub" 32768 | grep -qx __pycache__'
for d in node_modules .venv venv __pycache__ sub/__pycache__ sub/node_modules; do
	mkdir "$mnt/$d" || not_ok "mkdir $d"
done
echo x >"$mnt/node_modules/pkg.js"
want_root=$(printf '%s\n' .venv __pycache__ file1.c file2.c file3.c file4.c file5.c \
	node_modules sub venv | LC_ALL=C sort)
for size in 32768 2048 280 96; do
	check_eq "root listing with a $size-byte buffer: its files and the private directories" \
		"$want_root" "$(names "$mnt" $size | LC_ALL=C sort)"
done
check_eq "sub's listing: its private directories, not SOURCE's own" \
	"$(printf '%s\n' __pycache__ node_modules | LC_ALL=C sort)" "$(names "$mnt/sub" 96 | LC_ALL=C sort)"
check_eq "ls -a shows each once" 1 "$(ls -a "$mnt" | grep -cx node_modules)"

# Many of them, listed through a small buffer: a directory whose private
# directories are more than one reply holds.
many=$mnt/deep/a
mkdir -p "$many"
for i in $(seq 1 30); do mkdir -p "$many/p$i/node_modules" "$many/p$i/.venv"; done
mkdir "$many/node_modules" "$many/venv" "$many/.venv" "$many/__pycache__"
check_eq "a directory with four private directories, 96-byte buffer" \
	"$(printf '%s\n' .venv __pycache__ node_modules venv $(seq -f 'p%g' 1 30) | LC_ALL=C sort)" \
	"$(names "$many" 96 | LC_ALL=C sort)"
check_eq "find walks into every private directory (deep, a, 30 p*, 60 below them, 4)" 96 \
	"$(find "$mnt/deep" -type d | wc -l)"
check "the store holds them, SOURCE does not" \
	eval '[ -d "$store/tree/deep/a/p30/node_modules" ] && [ ! -e "$src/deep/a/p30/node_modules" ] && [ -d "$src/deep/a/p30" ]'

# The kernel's cached listing follows changes made through the mount.
ls "$mnt/sub" >/dev/null
check "rm -rf of a private directory" rm -rf "$mnt/sub/node_modules"
check "the listing no longer shows it" eval '! ls -a "$mnt/sub" | grep -qx node_modules'
check "it is gone from the store" test ! -e "$store/tree/sub/node_modules"
mkdir "$mnt/sub/node_modules"
check "made again, the listing shows it" eval 'ls -a "$mnt/sub" | grep -qx node_modules'
check "find -name finds a file inside a private directory" \
	eval '[ "$(find "$mnt" -name pkg.js)" = "$mnt/node_modules/pkg.js" ]'
check "du counts into it" eval 'du -s "$mnt/node_modules" >/dev/null'

# A directory made in SOURCE and renamed to a private name, then used at
# once through the name the kernel keeps, as cargo makes target/: every
# step answers, and it all lands in the store, none in SOURCE.
moved=$(python3 -c '
import errno, os, shutil, sys
m = sys.argv[1]
fails = []
for i in range(200):
    tmp = os.path.join(m, "sub", ".tmp%d" % i)
    os.mkdir(tmp)
    with open(os.path.join(tmp, "CACHEDIR.TAG"), "w") as f:
        f.write("tag")
    os.rename(tmp, os.path.join(m, "sub", "node_modules"))
    for what, fn in (("mkdir", lambda: os.mkdir(os.path.join(m, "sub", "node_modules", "debug"))),
                     ("listdir", lambda: os.listdir(os.path.join(m, "sub", "node_modules"))),
                     ("stat", lambda: os.stat(os.path.join(m, "sub", "node_modules", "CACHEDIR.TAG")))):
        try:
            fn()
        except OSError as e:
            fails.append("%d %s %s" % (i, what, errno.errorcode[e.errno]))
    if i < 199:
        shutil.rmtree(os.path.join(m, "sub", "node_modules"))
print(" ".join(fails[:5]) or "all answered")
' "$mnt")
check_eq "a directory renamed to a private name is used at once, 200 times" "all answered" "$moved"
check "... and is in the store" test -f "$store/tree/sub/node_modules/CACHEDIR.TAG" -a \
	-d "$store/tree/sub/node_modules/debug"
check "... not in SOURCE" test ! -e "$src/sub/node_modules" -a ! -e "$src/sub/.tmp199"

check_eq "SOURCE's own node_modules is untouched" host "$(cat "$src/node_modules/host-only/index.js")"
check "SOURCE's own sub/__pycache__ is still there" test -d "$src/sub/__pycache__"
check "and nothing of the mount's reached SOURCE's node_modules" \
	eval '[ "$(ls -A "$src/node_modules")" = host-only ]'
done_testing
