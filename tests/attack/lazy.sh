#!/usr/bin/env bash
# The mount as sandy makes it (--allow-other --lazy-open: the kernel opens
# files without asking the daemon), used by root and by the unprivileged
# test user: a protected file opened for writing without O_TRUNC opens, and its
# first write, append, truncate or allocation is refused (EROFS); with
# O_TRUNC the open itself is refused; a shared writable mapping's changes
# are refused at write-back and their pages dropped right after (over
# io_uring a moment after: the test waits up to 2 s for it);
# the host file is unchanged after each (content, mode, size), the refusals
# are audited, and a writable file takes the same operations.
source "$SANDY_SRC/tests/lib.sh"

have_user=true
ensure_test_user || have_user=false
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# One operation on PATH, reported as "ok" or the errno's name.
probe() { # OP PATH
	"$PY" - "$@" <<'PYTHON'
import errno, mmap, os, sys
op, path = sys.argv[1], sys.argv[2]
def run():
    if op == "write":  # open O_WRONLY (no O_TRUNC), then write
        fd = os.open(path, os.O_WRONLY)
        print("opened", flush=True)
        os.write(fd, b"EVIL=1\n")
    elif op == "append":
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"EVIL=1\n")
    elif op == "trunc":
        os.open(path, os.O_WRONLY | os.O_TRUNC)
    elif op == "ftruncate":
        fd = os.open(path, os.O_RDWR)
        os.ftruncate(fd, 0)
    elif op == "fallocate":
        fd = os.open(path, os.O_RDWR)
        os.posix_fallocate(fd, 0, 1 << 20)
    elif op == "mmap":
        fd = os.open(path, os.O_RDWR)
        m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        m[0:6] = b"EVIL=1"
        try:
            m.flush()
        finally:
            m.close()
            os.close(fd)
            with open(path, "rb") as f:
                print("reads", f.read(6).decode(errors="replace"), flush=True)
try:
    run()
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PYTHON
}

# as_caller FUNCTION ARGS...: a function of this script, run as the caller.
as_caller() {
	"${as[@]}" bash -c "$(declare -f "$1"); PY=$PY; \"\$@\"" bash "$@" 2>&1
}

for who in root user; do
	[ $who = user ] && ! $have_user && continue
	base=$(scratch) src=$base/src mnt=$base/mnt audit=$base/audit.jsonl
	mkdir -p "$src/src" "$mnt"
	printf 'export A=1\n' >"$src/.envrc"
	printf 'int a;\n' >"$src/src/a.c"
	chmod 0644 "$src/.envrc" "$src/src/a.c"
	as=()
	if [ $who = user ]; then
		chown -R "$TEST_USER:" "$src" "$mnt"
		chmod 0755 "$base"
		as=(runuser -u "$TEST_USER" --)
	fi
	: >"$audit"
	if ! "$SANDYFS" mount --allow-other --lazy-open --audit "$audit" --no-detect \
		--rules "$SANDY_SRC/tests/rules/allow-all.json" "$src" "$mnt"; then
		not_ok "$who: sandyfs mount --allow-other --lazy-open"
		continue
	fi
	track_mount "$mnt"
	state() { stat -c '%s %a' "$1" && cksum <"$1"; }
	before=$(state "$src/.envrc")
	for op in write append trunc ftruncate fallocate mmap; do
		out=$(as_caller probe "$op" "$mnt/.envrc")
		check_eq "$who: $op on protected .envrc is refused with EROFS" EROFS "$(tail -n 1 <<<"$out")"
		check_eq "$who: $op: the host's .envrc is unchanged (size, mode, content)" "$before" \
			"$(state "$src/.envrc")"
		case $op in
		write) check "$who: write: the open itself succeeds (refused at the write)" \
			grep -qx opened <<<"$out" ;;
		mmap) check "$who: mmap: the refused change does not stay readable through the mount" \
			wait_until 2 eval "[ \"\$(head -c 6 '$mnt/.envrc')\" = export ]" ;;
		esac
	done
	check_eq "$who: .envrc reads as on the host afterwards" "export A=1" "$(cat "$mnt/.envrc")"
	check "$who: the refused writes are in the audit log" \
		grep -q '"path":"\.envrc"' "$audit"
	for op in write mmap; do
		out=$(as_caller probe "$op" "$mnt/src/a.c")
		check_eq "$who: $op on writable src/a.c works" ok "$(tail -n 1 <<<"$out")"
	done
	check "$who: the host's src/a.c holds the change" grep -q 'EVIL=1' "$src/src/a.c"
	"$SANDYFS" umount "$mnt"
done
done_testing
