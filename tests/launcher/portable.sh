#!/usr/bin/env bash
# The portable shape of sandy (launcher/sys/platform.h), the build a Mac gets,
# made here with -Dportable_fallback=true: common/portable-include refuses
# what only Linux has, so that the shape compiling here means it compiles
# there; and the shape's sandy never mounts on this host, never runs
# bubblewrap, and asks sandyfs's questions (explain, git, clean) of sandyfs
# in a container of its image, with no sandyfs of this host involved.
# In the Linux shape only the first part applies; launcher/dind.sh runs
# whole sessions of either shape against an engine with a world of its own.
source "$SANDY_SRC/tests/launcher/helpers.bash"

inc=$SANDY_SRC/common/portable-include
base=$(scratch)

# compiles NAME: whether the C on stdin compiles in the portable shape
# (its message in $base/NAME.err, NAME made a file name).
compiles() {
	cc -fsyntax-only -D_GNU_SOURCE -I"$inc" -x c - 2>"$base/$(tr -c 'A-Za-z0-9_.\n' _ <<<"$1").err"
}
check "portable-include: POSIX code compiles" compiles posix <<'EOF'
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
int f(void)
{
	int p[2];
	return pipe(p) || fcntl(p[0], F_SETFD, FD_CLOEXEC) || socket(AF_UNIX, SOCK_STREAM, 0);
}
EOF
# refuses NAME CODE: CODE does not compile, and the error names why.
refuses() {
	local name=$1 code=$2
	check "portable-include refuses $name" eval '! compiles "$name" <<<"$code"'
	local err=$base/$(tr -c 'A-Za-z0-9_.\n' _ <<<"$name").err
	check "  and says why" grep -Eq "poisoned|is Linux's" "$err" ||
		sed 's/^/#   /' "$err" | head -n 5
}
refuses "<sys/signalfd.h>" '#include <sys/signalfd.h>'
refuses "<sys/prctl.h>" '#include <sys/prctl.h>'
refuses "<sys/mount.h>" '#include <sys/mount.h>'
refuses "<sys/sysinfo.h>" '#include <sys/sysinfo.h>'
refuses "pipe2" $'#include <unistd.h>\nint f(int *p) { return pipe2(p, 0); }'
refuses "O_PATH" $'#include <fcntl.h>\nint f(void) { return open("/", O_PATH); }'
refuses "AT_EMPTY_PATH" $'#include <fcntl.h>\n#include <unistd.h>\nint f(int d) { return fchownat(d, "", 0, 0, AT_EMPTY_PATH); }'
refuses "SOCK_CLOEXEC" $'#include <sys/socket.h>\nint f(void) { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); }'
refuses "getrandom" $'#include <sys/random.h>\nint f(char *b) { return (int)getrandom(b, 4, 0); }'
refuses "glibc's qsort_r" $'#include <stdlib.h>\nvoid f(void *b) { qsort_r(b, 1, 1, 0, 0); }'
# Linux's own headers have no stand-ins there; the launcher names none.
check "no launcher source includes a <linux/...> header" \
	eval '! grep -n "#include <linux/" "$SANDY_SRC"/launcher/*.c "$SANDY_SRC"/launcher/*.h "$SANDY_SRC"/common/*.c'

version=$("$SANDY" --version)
if ! grep -q "portable" <<<"$version"; then
	check "this build is the Linux shape, and says so" grep -q ", linux)$" <<<"$version"
	done_testing
fi
check "this build is the portable shape, and says so" \
	grep -q "portable: sandyfs serves in the engine's world" <<<"$version"

# A Mac without macFUSE has no libfuse3: sandy builds alone there.
nofs=$base/build-without-sandyfs
if meson setup "$nofs" "$SANDY_SRC" -Dsandyfs=disabled -Dportable_fallback=true -Dtests=false \
	>"$base/nofs.log" 2>&1 && ninja -C "$nofs" >>"$base/nofs.log" 2>&1; then
	ok "without libfuse3 (-Dsandyfs=disabled) sandy builds"
else
	not_ok "without libfuse3 (-Dsandyfs=disabled) sandy builds"
	tail -n 15 "$base/nofs.log" | sed 's/^/#   /'
fi
check "  with no warning" eval '! grep -q "warning:" "$base/nofs.log"' ||
	grep "warning:" "$base/nofs.log" | head -n 5 | sed 's/^/#   /'
check "  and no sandyfs" test ! -e "$nofs/fusefs/sandyfs"
check "  and it runs" grep -q "portable" <<<"$("$nofs/launcher/sandy" --version 2>&1)"

proj=$base/proj
mkdir -p "$proj/src" && echo '{"name": "p"}' >"$proj/package.json" && echo 'x' >"$proj/src/a.js"
(cd "$proj" && git init -q && git add -A &&
	git -c user.name=t -c user.email=t@example.invalid commit -qm init) || exit 1
sessions() { find "$RUNDIR" -mindepth 1 -maxdepth 1 ! -name '.*' ! -name 'engine-*' 2>/dev/null; }

out=$("$SANDY" --runtime=none "$proj" -- sh -c 'echo started' </dev/null 2>&1)
rc=$?
check_eq "--runtime=none: refused with sandy's status" 125 "$rc"
check "  and says bubblewrap needs Linux" grep -q "bubblewrap, which needs Linux" <<<"$out" ||
	diag "$out"
check "  the command never ran" eval '! grep -qx started <<<"$out"'
out=$("$SANDY" --runtime=docker --fs-mode=host "$proj" -- sh -c 'echo started' </dev/null 2>&1)
rc=$?
check_eq "--fs-mode=host: refused with sandy's status" 125 "$rc"
check "  and says mounting on this host needs Linux" \
	grep -q "mounts sandyfs on this host, which needs Linux" <<<"$out" || diag "$out"
check "  the command never ran" eval '! grep -qx started <<<"$out"'
check "  no session is left" eval '[ -z "$(sessions)" ]'

# No engine: the questions cannot be asked, and sandy says where to go.
out=$(cd "$proj" && DOCKER_HOST=unix://$base/none.sock CONTAINER_HOST=unix://$base/none.sock \
	PATH=/usr/bin:/bin "$SANDY" explain .envrc 2>&1)
check_eq "explain without an engine: sandy's status" 125 "$?"
check "  and says that sandyfs runs in a container here" \
	grep -q "sandyfs runs in a container here, and no container engine answers" <<<"$out" ||
	diag "$out"

require_docker
check "sandy build-image --fs-only makes sandy-fs:latest" \
	"$SANDY" build-image --fs-only >/dev/null 2>&1 || done_testing
# No sandyfs of this host: a Linux-shape sandy would stop at this.
export SANDYFS=$base/no-such-sandyfs
out=$(cd "$proj" && "$SANDY" explain .envrc src/a.js 2>&1)
check_eq "explain through sandyfs's image: status 0" 0 "$?"
check "  .envrc is protected" grep -q '^\.envrc: protected' <<<"$out" || diag "$out"
check "  with its reason" grep -q '^    why: *direnv' <<<"$out"
check "  src/a.js is writable" grep -q '^src/a\.js: writable' <<<"$out"
out=$(cd "$proj/src" && "$SANDY" explain -C .. .envrc 2>&1)
check "  a project named from a subdirectory means what it means here" \
	grep -q '^\.envrc: protected' <<<"$out" || diag "$out"
out=$(cd "$proj" && env -u SANDY_CACHE_DIR -u XDG_CACHE_HOME HOME="$base/fresh-home" \
	"$SANDY" explain .envrc 2>&1)
check "explain with a home that has no ~/.cache yet" grep -q '^\.envrc: protected' <<<"$out" ||
	diag "$out"
check "  makes the store's directory there" test -d "$base/fresh-home/.cache/sandy"
out=$(cd "$proj" && "$SANDY" explain -r "$base/missing.json" .envrc 2>&1)
check_eq "explain with a missing rule file: sandy's status" 125 "$?"
check "  names the file" grep -q "cannot open rule file '$base/missing.json'" <<<"$out" ||
	diag "$out"
check "  and nothing is made at its path" test ! -e "$base/missing.json"
# What this host's sandyfs (of this build) answers, the image answers.
out=$("$SANDY" git list "$proj" 2>&1)
rc=$?
want=$("$SANDY_BUILD/fusefs/sandyfs" git list -- "$proj" 2>&1)
check_eq "git list through the image: sandyfs's status" 1 "$rc"
check_eq "  and its words" "$want" "$out"
# The store that a session would have made, removed by sandy clean.
store=$(docker run --rm --network=none --user "$(id -u):$(id -g)" \
	--env SANDY_CACHE_DIR="$SANDY_CACHE_DIR" -v "$SANDY_CACHE_DIR:$SANDY_CACHE_DIR" \
	-v "$proj:$proj" --entrypoint sandyfs sandy-fs:latest store -- "$proj" | cut -f1)
mkdir -p "$store/node_modules/x" && echo y >"$store/node_modules/x/index.js"
out=$("$SANDY" clean "$proj" 2>&1)
check_eq "clean through the image: status 0" 0 "$?" || diag "$out"
check "  the project's store is gone" test ! -e "$store/node_modules/x/index.js"
check "  the project itself is untouched" eval '[ "$(cat "$proj/src/a.js")" = x ]'
check "no query container is left" \
	eval '[ -z "$(docker ps -aq --filter label=sandy.role=fs-query)" ]'
done_testing
