#!/usr/bin/env python3
"""Differential test of sandyfs: random sequences of file operations,
replayed step by step on a native directory and through a mount, every
result compared, and the two trees compared every so often and at the end.

usage: differential.py [--seed N] [--seconds S] [--ops N] [--label L]
                       [--owner-modes] NATIVE MOUNTED

NATIVE and MOUNTED are empty directories: one on the host filesystem, one
through a sandyfs mount of a directory on the same filesystem. The
operations (from a small pool of names, so they meet each other): open
with creation and access flags and modes (0444, 0400 and 0000 among
them), write and pwrite at offsets, read, ftruncate, truncate, fstat, stat,
fsync, fdatasync, fchmod, chmod, futimens, utime, fsetxattr, setxattr,
listxattr, getxattr, close, rename with RENAME_NOREPLACE and
RENAME_EXCHANGE, link, symlink (to names of files, relative: the mount
refuses symlinks out of its source and loops under any policy), unlink,
mkdir, rmdir, readlink, readdir, and the same on descriptors whose names
are gone. No set-uid bits and no device nodes (the mount never makes
them).

Prints TAP: one "ok" when the time box ends with no divergence, else
"not ok" with the seed, the step, both results and the steps before.
Exit status 0 or 1.
"""
import argparse
import ctypes
import errno
import hashlib
import os
import random
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2

FILES = ["f0", "f1", "f2", "d0/f3", "d0/f4", "d1/f5"]
DIRS = ["d0", "d1", "d0/e0"]
LINKS = ["l0", "d0/l1"]
MODES = [0o644, 0o600, 0o444, 0o400, 0o000, 0o755, 0o664]
# Modes that leave the owner free to open a file again for reading, for a
# daemon that runs as the user: without CAP_DAC_OVERRIDE it cannot open a
# mode-000 file at all, so what comes to one through a name it no longer
# has (fstat, fsetxattr after an unlink) fails (docs/DESIGN.md,
# Credentials). Read-only modes are in: the fds it keeps serve the writes.
OWNER_MODES = [0o644, 0o600, 0o444, 0o400, 0o755, 0o664]
XATTRS = ["user.a", "user.b"]


def renameat2(src, dst, flags):
    r = libc.renameat2(AT_FDCWD, src.encode(), AT_FDCWD, dst.encode(), flags)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def outcome(fn):
    """What a call gave: ("ok", value) or ("err", errno name)."""
    try:
        return ("ok", fn())
    except OSError as e:
        return ("err", errno.errorcode.get(e.errno, str(e.errno)))


def stat_view(s):
    return (oct(s.st_mode), s.st_nlink, s.st_size)


class Side:
    """One of the two directories, with its open descriptors by slot."""

    def __init__(self, root):
        self.root = root
        self.fds = {}

    def p(self, name):
        return os.path.join(self.root, name)

    def close_all(self):
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def op_table(rng, modes):
    """One random operation: (description, function of a Side)."""
    f = rng.choice(FILES)
    g = rng.choice(FILES)
    d = rng.choice(DIRS)
    slot = rng.randrange(4)
    off = rng.choice([0, 1, 7, 4096, 70000])
    data = bytes([rng.randrange(256)]) * rng.choice([1, 5, 4096, 9000])
    mode = rng.choice(modes)
    size = rng.choice([0, 3, 5000, 100000])
    x = rng.choice(XATTRS)
    kind = rng.choice([
        "open", "open", "open", "write", "write", "pwrite", "read", "ftruncate", "truncate",
        "fstat", "stat", "fsync", "fdatasync", "fchmod", "chmod", "futimens", "utime",
        "fsetxattr", "setxattr", "listxattr", "getxattr", "close", "rename", "rename_noreplace",
        "rename_exchange", "link", "symlink", "unlink", "mkdir", "rmdir", "readlink", "readdir",
        "rename_dir", "unlink_link"])

    if kind == "open":
        acc = rng.choice([os.O_RDONLY, os.O_WRONLY, os.O_RDWR])
        extra = 0
        for flag in (os.O_CREAT, os.O_EXCL, os.O_TRUNC, os.O_APPEND):
            if rng.random() < 0.35:
                extra |= flag
        flags = acc | extra

        def fn(s):
            if slot in s.fds:
                os.close(s.fds.pop(slot))
            fd = os.open(s.p(f), flags, mode)
            s.fds[slot] = fd
            return None
        return "open %s flags=%#o mode=%#o -> slot %d" % (f, flags, mode, slot), fn

    def with_fd(action):
        def fn(s):
            if slot not in s.fds:
                return "no fd"
            return action(s.fds[slot])
        return fn

    if kind == "write":
        return "write slot %d %d bytes" % (slot, len(data)), with_fd(lambda fd: os.write(fd, data))
    if kind == "pwrite":
        return ("pwrite slot %d %d bytes at %d" % (slot, len(data), off),
                with_fd(lambda fd: os.pwrite(fd, data, off)))
    if kind == "read":
        return ("pread slot %d at %d" % (slot, off),
                with_fd(lambda fd: hashlib.sha1(os.pread(fd, 20000, off)).hexdigest()))
    if kind == "ftruncate":
        return "ftruncate slot %d %d" % (slot, size), with_fd(lambda fd: os.ftruncate(fd, size))
    if kind == "truncate":
        return "truncate %s %d" % (f, size), lambda s: os.truncate(s.p(f), size)
    if kind == "fstat":
        return "fstat slot %d" % slot, with_fd(lambda fd: stat_view(os.fstat(fd)))
    if kind == "stat":
        name = rng.choice(FILES + DIRS + LINKS)
        return "lstat %s" % name, lambda s: stat_view(os.lstat(s.p(name)))
    if kind == "fsync":
        return "fsync slot %d" % slot, with_fd(os.fsync)
    if kind == "fdatasync":
        return "fdatasync slot %d" % slot, with_fd(os.fdatasync)
    if kind == "fchmod":
        return "fchmod slot %d %#o" % (slot, mode), with_fd(lambda fd: os.fchmod(fd, mode))
    if kind == "chmod":
        name = rng.choice(FILES + DIRS)
        # A directory keeps its owner's search: the next steps need it.
        m = mode | 0o700 if name in DIRS else mode
        return "chmod %s %#o" % (name, m), lambda s: os.chmod(s.p(name), m)
    if kind == "futimens":
        t = rng.randrange(10 ** 9)
        return ("futimens slot %d %d" % (slot, t),
                with_fd(lambda fd: (os.utime(fd, (t, t)), os.fstat(fd).st_mtime)[1]))
    if kind == "utime":
        name = rng.choice(FILES + DIRS)
        t = rng.randrange(10 ** 9)
        return ("utime %s %d" % (name, t),
                lambda s: (os.utime(s.p(name), (t, t), follow_symlinks=False),
                           os.lstat(s.p(name)).st_mtime)[1])
    if kind == "fsetxattr":
        return ("fsetxattr slot %d %s" % (slot, x),
                with_fd(lambda fd: os.setxattr(fd, x, data[:16])))
    if kind == "setxattr":
        name = rng.choice(FILES + DIRS)
        return "setxattr %s %s" % (name, x), lambda s: os.setxattr(s.p(name), x, data[:16])
    if kind == "listxattr":
        name = rng.choice(FILES + DIRS)
        return ("listxattr %s" % name,
                lambda s: sorted(a for a in os.listxattr(s.p(name)) if a.startswith("user.")))
    if kind == "getxattr":
        name = rng.choice(FILES + DIRS)
        return "getxattr %s %s" % (name, x), lambda s: os.getxattr(s.p(name), x)
    if kind == "close":
        return "close slot %d" % slot, lambda s: os.close(s.fds.pop(slot)) if slot in s.fds \
            else "no fd"
    if kind == "rename":
        return "rename %s %s" % (f, g), lambda s: os.rename(s.p(f), s.p(g))
    if kind == "rename_noreplace":
        return ("renameat2 NOREPLACE %s %s" % (f, g),
                lambda s: renameat2(s.p(f), s.p(g), RENAME_NOREPLACE))
    if kind == "rename_exchange":
        a, b = rng.choice([(f, g), (rng.choice(DIRS), rng.choice(DIRS))])
        return ("renameat2 EXCHANGE %s %s" % (a, b),
                lambda s: renameat2(s.p(a), s.p(b), RENAME_EXCHANGE))
    if kind == "rename_dir":
        a, b = rng.choice(DIRS), rng.choice(DIRS)
        return "rename %s %s" % (a, b), lambda s: os.rename(s.p(a), s.p(b))
    if kind == "link":
        return "link %s %s" % (f, g), lambda s: os.link(s.p(f), s.p(g))
    if kind == "symlink":
        name = rng.choice(LINKS)
        # Relative, to a file's name in the same directory or below.
        target = rng.choice(["f0", "f1", "d0/f3"] if "/" not in name else ["f3", "f4"])
        return ("symlink %s -> %s" % (name, target),
                lambda s: os.symlink(target, s.p(name)))
    if kind == "unlink":
        return "unlink %s" % f, lambda s: os.unlink(s.p(f))
    if kind == "unlink_link":
        name = rng.choice(LINKS)
        return "unlink %s" % name, lambda s: os.unlink(s.p(name))
    if kind == "mkdir":
        return "mkdir %s" % d, lambda s: os.mkdir(s.p(d), 0o755)
    if kind == "rmdir":
        return "rmdir %s" % d, lambda s: os.rmdir(s.p(d))
    if kind == "readlink":
        name = rng.choice(LINKS)
        return "readlink %s" % name, lambda s: os.readlink(s.p(name))
    return "readdir %s" % d, lambda s: sorted(os.listdir(s.p(d)))


def tree(root):
    """Every entry under ROOT: type, mode, size, links, content hash, target,
    user xattrs."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            s = os.lstat(p)
            entry = [oct(s.st_mode), s.st_nlink if not os.path.isdir(p) else None]
            if os.path.islink(p):
                entry.append(os.readlink(p))
            elif os.path.isfile(p):
                entry.append(s.st_size)
                try:
                    with open(p, "rb") as f:
                        entry.append(hashlib.sha1(f.read()).hexdigest())
                except OSError as e:
                    entry.append(errno.errorcode.get(e.errno))
            if not os.path.islink(p):
                try:
                    entry.append(sorted(a for a in os.listxattr(p) if a.startswith("user.")))
                except OSError as e:
                    entry.append(errno.errorcode.get(e.errno))
            out[rel] = entry
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--ops", type=int, default=0, help="stop after N steps (0: the time box)")
    ap.add_argument("--label", default="differential")
    ap.add_argument("--owner-modes", action="store_true",
                    help="only modes that let the owner open a file again")
    ap.add_argument("native")
    ap.add_argument("mounted")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    rng = random.Random(seed)
    os.umask(0o022)
    sides = [Side(args.native), Side(args.mounted)]
    for s in sides:
        os.mkdir(s.p("d0"))
    history = []
    step = 0
    start = time.monotonic()
    while True:
        if args.ops and step >= args.ops:
            break
        if not args.ops and time.monotonic() - start >= args.seconds:
            break
        desc, fn = op_table(rng, OWNER_MODES if args.owner_modes else MODES)
        results = [outcome(lambda: fn(s)) for s in sides]
        history.append(desc)
        step += 1
        bad = None
        if results[0] != results[1]:
            bad = "results differ: native %r, mount %r" % tuple(results)
        elif step % 100 == 0:
            t0, t1 = tree(args.native), tree(args.mounted)
            if t0 != t1:
                bad = "trees differ:\n" + "\n".join(
                    "  %s: native %r, mount %r" % (k, t0.get(k), t1.get(k))
                    for k in sorted(set(t0) | set(t1)) if t0.get(k) != t1.get(k))
        if bad:
            print("not ok - %s: seed %d, step %d: %s" % (args.label, seed, step, desc))
            for line in bad.splitlines():
                print("# " + line)
            print("# the steps before:")
            for h in history[-int(os.environ.get("SANDY_DIFF_HISTORY", "24")) - 1:-1]:
                print("#   " + h)
            return 1
    for s in sides:
        s.close_all()
    t0, t1 = tree(args.native), tree(args.mounted)
    if t0 != t1:
        print("not ok - %s: seed %d: the trees differ at the end" % (args.label, seed))
        for k in sorted(set(t0) | set(t1)):
            if t0.get(k) != t1.get(k):
                print("#   %s: native %r, mount %r" % (k, t0.get(k), t1.get(k)))
        return 1
    print("ok - %s: %d steps (seed %d), every result and the trees the same" % (
        args.label, step, seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
