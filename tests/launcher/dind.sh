#!/usr/bin/env bash
# sandy on an engine that does not see this host's mounts, as Docker
# Desktop's, colima's or a remote one: a docker daemon in a container of
# its own (docker-in-docker, an image made from Debian packages), whose
# filesystem is not this host's, with the test's directories shared into
# it at their own paths, as Docker Desktop's file sharing does, and sandy
# pointed at it with DOCKER_HOST. Without any option saying so, sandy must
# serve the project through sandyfs in a container of its own there, with
# the same policy, summary and private repository, the agent's container
# holding no capability and sandyfs's daemon no CAP_SYS_ADMIN once it has
# mounted; and leave nothing in that engine.
#
# The inner engine's container is not --privileged (this machine's
# capability bounding set lacks CAP_SYS_RESOURCE, which --privileged asks
# for): it gets the capabilities an engine needs to run containers, and
# sandy never asks the inner engine for more than those.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

DIND_CAPS=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
	SETFCAP NET_BIND_SERVICE NET_RAW NET_ADMIN SYS_CHROOT SYS_ADMIN SYS_PTRACE MKNOD
	AUDIT_WRITE)
DIND_PACKAGES=docker.io,iptables,procps,ca-certificates,mount
DIND_IMAGE=sandy-test-dind:$(echo "$DIND_PACKAGES" | sha256sum | cut -c1-12)

# The image of the inner engine, from Debian packages (made once).
if ! docker image inspect "$DIND_IMAGE" >/dev/null 2>&1; then
	sources=()
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] && grep -q bookworm "$f" && sources+=("$f")
	done
	mmdebstrap --quiet --variant=apt --include="$DIND_PACKAGES" \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
		bookworm - "${sources[@]}" 2>"$_scratch_base/mmdebstrap.err" |
		docker import - "$DIND_IMAGE" >/dev/null
fi
if ! check "the inner engine's image $DIND_IMAGE is made from Debian packages" \
	eval 'docker image inspect "$DIND_IMAGE" >/dev/null'; then
	sed 's/^/# /' "$_scratch_base/mmdebstrap.err" | tail -n 5
	done_testing
fi
# sandyfs's own image, which sandy would find missing in the inner engine.
check "sandy build-image --fs-only makes $(echo sandy-fs:latest)" \
	"$SANDY" build-image --fs-only >/dev/null 2>&1 || done_testing

base=$(scratch)
inner=$base/inner
mkdir -p "$inner/run" "$inner/lib"
name=sandy-test-dind-$$
cap_args=(--cap-drop=ALL)
for c in "${DIND_CAPS[@]}"; do cap_args+=(--cap-add="$c"); done
# Shared at their own paths: the projects (scratch), the test's runtime
# directory (sessions, HOME, the agents' data), the stores, and the test
# user's home (a sudo session binds its ~/specs), as Docker Desktop shares
# the home directories.
check "the test user $TEST_USER exists" ensure_test_user
thome=$(getent passwd "$TEST_USER" | cut -d: -f6)
shares=()
for d in "$_scratch_base" "$_sandy_run" "$SANDY_CACHE_DIR" ${thome:+"$thome"}; do
	mkdir -p "$d" && shares+=(--volume="$d:$d")
done
at_exit "docker rm -f $name >/dev/null 2>&1"
docker run -d --name "$name" "${cap_args[@]}" --security-opt seccomp=unconfined \
	--security-opt apparmor=unconfined --device /dev/fuse \
	--volume /sys/fs/cgroup:/sys/fs/cgroup --volume "$inner/lib:/var/lib/docker" \
	--volume "$inner/run:/run" "${shares[@]}" "$DIND_IMAGE" \
	sh -c 'mount --make-rshared / && exec dockerd --host unix:///run/docker.sock' >/dev/null
INNER=unix://$inner/run/docker.sock
inner() { DOCKER_HOST=$INNER docker "$@"; }
# This host's engine, whatever DOCKER_HOST says.
outer() { env -u DOCKER_HOST docker "$@"; }
# in_world CMD: runs CMD in the inner engine's world (its container).
in_world() { outer exec "$name" sh -c "$1"; }
wait_until 30 inner info >/dev/null 2>&1
if ! check "the inner engine answers at $INNER" eval 'inner info >/dev/null 2>&1'; then
	docker logs "$name" 2>&1 | tail -n 10 | sed 's/^/# /'
	done_testing
fi
check "the inner engine has a filesystem of its own (no $SANDY_BUILD there)" \
	in_world "[ ! -e '$SANDY_BUILD' ]"
# The real agent image, as `sandy build-image` makes it (from Debian
# packages and the npm registry, cached by content: tests/launcher/image.sh
# checks the build itself).
check "sandy build-image makes the real agent image" \
	eval 'SANDY_IMAGE= "$SANDY" build-image >"$base/build.log" 2>&1' ||
	tail -n 20 "$base/build.log" | sed 's/^/# /'
# One archive: they share the Debian base's layers.
images=("$TEST_IMAGE" sandy-fs:latest sandy-gateway:latest sandy-agent:latest)
docker save "${images[@]}" | inner load >/dev/null 2>&1
for image in "${images[@]}"; do
	check "the inner engine has $image" eval 'inner image inspect "$image" >/dev/null'
done

export DOCKER_HOST=$INNER
# Only docker: a podman that answers must not stand in for the inner engine.

new_project
f=$_failed
out=$(cd "$proj" && "$SANDY" --runtime=docker --rules "$rules" -- sh -c '
	grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status
	grep " /workspace " /proc/self/mountinfo | grep -q fuse.sandyfs && echo "workspace is sandyfs"
	[ -e /dev/fuse ] && echo "has /dev/fuse"
	[ -e /var/run/docker.sock ] || [ -e /run/docker.sock ] && echo "has the engine socket"
	echo "int hello;" >src/hello.c && echo "hello written"
	echo "export EVIL=1" >.envrc || echo "envrc refused"
	mkdir -p .vscode && echo "{}" >.vscode/tasks.json || echo "tasks refused"
	git add src/hello.c && git -c user.name=agent -c user.email=a@example.invalid \
		commit -qm "agent: hello" && echo "committed"' </dev/null 2>"$base/err")
rc=$?
err=$(cat "$base/err")
check_eq "the session ends with the command's status" 0 "$rc"
# The portable shape (a Mac's) does not ask: it never mounts on this host.
portable=
grep -q portable <<<"$("$SANDY" --version)" && portable=1
if [ -z "$portable" ]; then
	check "sandy says the engine does not see this host's mounts" \
		grep -q "does not see this host's mounts" <<<"$err"
fi
check "and that sandyfs serves in a container of its own" \
	grep -q "through sandyfs in a container of its own" <<<"$err"
check "/workspace is the sandyfs mount" grep -qx "workspace is sandyfs" <<<"$out"
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "the agent's $k is 0" grep -qx "$k:[[:space:]]*0000000000000000" <<<"$out"
done
check "the agent's NoNewPrivs is 1" grep -qx "NoNewPrivs:[[:space:]]*1" <<<"$out"
check "the agent has no /dev/fuse" eval '! grep -qx "has /dev/fuse" <<<"$out"'
check "the agent has no engine socket" eval '! grep -qx "has the engine socket" <<<"$out"'
check_eq "the allowed write is on the host" "int hello;" "$(cat "$proj/src/hello.c" 2>&1)"
check ".envrc is refused" grep -qx "envrc refused" <<<"$out"
check ".envrc is absent on the host" test ! -e "$proj/.envrc"
check ".vscode/tasks.json is refused" grep -qx "tasks refused" <<<"$out"
check ".vscode is absent on the host" test ! -e "$proj/.vscode"
check "the summary lists the .envrc denial with its rule" \
	grep -Eq "^ +[0-9]+ +.*\.envrc.*e\.g\. [a-z]+ '\.envrc'" <<<"$err"
check "the summary lists the changed file" grep -Eq '^ +A +src/hello\.c$' <<<"$err"
check "the agent committed into its own repository" grep -qx committed <<<"$out"
imp=$(cd "$proj" && "$SANDY" git import main 2>&1)
check_eq "sandy git import main: exit status 0" 0 "$?" || diag "$imp"
check_eq "the commit is on the host as sandy/main" "agent: hello" \
	"$(git -C "$proj" log -1 --format=%s sandy/main 2>&1)"
check_eq "the host's checkout did not move" init "$(git -C "$proj" log -1 --format=%s main)"
check "no container is left in the inner engine" \
	eval '[ -z "$(inner ps -aq --filter label=sandy.session)" ]'
check "no mount is left in the inner engine's world" \
	in_world '! grep -q /var/lib/sandy/sessions/ /proc/self/mountinfo'
check "no session directory is left in the inner engine's world" \
	in_world '[ -d /var/lib/sandy/sessions ] && [ -z "$(ls -A /var/lib/sandy/sessions)" ]'
check "no session directory is left here" no_session_dir "$proj"
[ "$_failed" = "$f" ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; diag "stderr:"; sed 's/^/#   /' <<<"$err"; }

# The real agent image in container mode: the agent's CLI runs, holds no
# capability, and writes through the mount.
new_project
f=$_failed
out=$(cd "$proj" && "$SANDY" --runtime=docker --image sandy-agent:latest --rules "$rules" -- sh -c '
	grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status
	grep " /workspace " /proc/self/mountinfo | grep -q fuse.sandyfs && echo "workspace is sandyfs"
	claude --version >/dev/null && echo "claude runs"
	echo "int real;" >src/real.c && echo "real written"' </dev/null 2>"$base/err")
check_eq "the real agent image: the session ends with the command's status" 0 "$?"
check "the real agent image: /workspace is the sandyfs mount" \
	grep -qx "workspace is sandyfs" <<<"$out"
check "the real agent image: the agent's CLI runs" grep -qx "claude runs" <<<"$out"
for k in CapEff CapBnd; do
	check "the real agent image: the agent's $k is 0" \
		grep -qx "$k:[[:space:]]*0000000000000000" <<<"$out"
done
check "the real agent image: NoNewPrivs is 1" grep -qx "NoNewPrivs:[[:space:]]*1" <<<"$out"
check_eq "the real agent image: the write is on the host" "int real;" \
	"$(cat "$proj/src/real.c" 2>&1)"
[ "$_failed" = "$f" ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; diag "stderr:"; sed 's/^/#   /' "$base/err"; }

# Through sudo: what the agent writes is the invoking user's on the host,
# and an edit made on the host reaches the agent while it works.
tuid=$(id -u "$TEST_USER") tgid=$(id -g "$TEST_USER")
sproj=$base/sudo
make_repo "$sproj" && chown -R "$TEST_USER:" "$sproj" || exit 1
clean_leftovers "$sproj"
f=$_failed
out=$(cd "$sproj" && SUDO_UID=$tuid SUDO_GID=$tgid SUDO_USER=$TEST_USER \
	SANDY_DATA_DIR=$base/sudo-data "$SANDY" -q --runtime=docker --rules "$rules" -- sh -c '
	echo "uid=$(id -u)"
	echo mine >notes.txt && echo "notes.txt written"
	for i in $(seq 1 50); do
		[ "$(cat src/host.c 2>/dev/null)" = "edited on the host" ] && { echo "host edit seen"; break; }
		sleep 0.1
	done' </dev/null 2>"$base/sudo.err" &
	sleep 1.5; echo "edited on the host" >"$sproj/src/host.c"; wait)
check_eq "sudo: the agent runs as the invoking user" "uid=$tuid" "$(grep '^uid=' <<<"$out")"
check_eq "sudo: its file is the user's on the host" "$tuid:$tgid mine" \
	"$(stat -c %u:%g "$sproj/notes.txt" 2>&1) $(cat "$sproj/notes.txt" 2>&1)"
check "sudo: an edit on the host reached the agent within 5 s" grep -qx "host edit seen" <<<"$out"
[ "$_failed" = "$f" ] || { diag "$out"; sed 's/^/#   /' "$base/sudo.err"; }

# What a session would do, as sandy doctor says it.
doc=$(cd "$proj" && "$SANDY" doctor --runtime=docker 2>&1)
check "sandy doctor says sandyfs serves in a container of its own" \
	grep -Eq "^ok +fs mode +container: sandyfs serves in a container of its own" <<<"$doc" ||
	diag "$doc"
check "and that its image is there" grep -Eq "^ok +fs image +'sandy-fs:latest' is in docker" \
	<<<"$doc"

# The network gateway in the engine's world: a name off the allowlist
# does not resolve, one on it does (this machine's resolver answers for
# registry.npmjs.org), and without the gateway it would.
lookup() { # NETWORK [SANDY OPTION...]
	local net=$1
	shift
	(cd "$proj" && SANDY_NETWORK=$net "$SANDY" -q --runtime=docker --rules "$rules" "$@" -- \
		sh -c 'nslookup registry.npmjs.org >/dev/null 2>&1 && echo resolved || echo unresolved') \
		</dev/null 2>"$base/net.err"
}
check_eq "--network=open: registry.npmjs.org resolves in the inner engine" resolved \
	"$(lookup open)" || sed 's/^/#   /' "$base/net.err"
check_eq "--network=filtered: registry.npmjs.org, off the allowlist, does not resolve" \
	unresolved "$(lookup filtered)" || sed 's/^/#   /' "$base/net.err"
check_eq "--network=filtered --allow registry.npmjs.org: it resolves" resolved \
	"$(lookup filtered --allow registry.npmjs.org)" || sed 's/^/#   /' "$base/net.err"
check "no container is left in the inner engine after the gateway's sessions" \
	eval '[ -z "$(inner ps -aq --filter label=sandy.session)" ]'

# sandy itself killed while the agent works (a crash): the next session
# clears what it left in the engine's world.
f=$_failed
(cd "$proj" && exec "$SANDY" -q --runtime=docker --rules "$rules" -- sh -c 'sleep 120') </dev/null \
	>/dev/null 2>"$base/crash.err" &
pid=$!
wait_until 60 eval '[ -n "$(inner ps -q --filter label=sandy.role=fs)" ] &&
	[ -n "$(inner ps -q --filter label=sandy.project="$(realpath "$proj")")" ]'
old=$(inner ps --filter label=sandy.role=fs --format '{{.Label "sandy.session"}}' | head -n 1)
kill -KILL $pid
wait $pid 2>/dev/null
check "a crashed session leaves sandyfs's container serving" \
	eval '[ -n "$old" ] && [ -n "$(inner ps -q --filter label=sandy.session="$old")" ] &&
	in_world "grep -q \" /var/lib/sandy/sessions/$old/workspace \" /proc/self/mountinfo"'
out=$(cd "$proj" && "$SANDY" --runtime=docker --rules "$rules" -- true </dev/null 2>&1)
check "the next session says it cleans up after it" \
	grep -q "cleaning up after an earlier session" <<<"$out" || diag "$out"
check "no container of the crashed session is left" \
	eval '[ -z "$(inner ps -aq --filter label=sandy.session="$old")" ]'
check "no mount of it is left in the engine's world" \
	in_world "! grep -q /var/lib/sandy/sessions/$old/ /proc/self/mountinfo"
check "nor its directory" in_world "[ ! -e /var/lib/sandy/sessions/$old ]"
[ "$_failed" = "$f" ] || sed 's/^/#   /' "$base/crash.err"

# sandyfs's container killed while the agent works: the session stops and
# says so, and nothing stays.
f=$_failed
(cd "$proj" && exec "$SANDY" -q --runtime=docker --rules "$rules" -- sh -c 'sleep 120') </dev/null \
	>"$base/kill.out" 2>"$base/kill.err" &
pid=$!
wait_until 60 eval '[ -n "$(inner ps -q --filter label=sandy.role=fs)" ] &&
	[ -n "$(inner ps -q --filter label=sandy.project="$(realpath "$proj")")" ]'
# While it serves: the daemon in sandyfs's container has given up
# CAP_SYS_ADMIN in every thread; its container lacks CAP_SETPCAP, so the
# bounding set keeps it and no_new_privs stops an exec from taking it back.
# The container's shell keeps it for the unmount at the end, and runs the
# image's sandyfs then: the container's own files are read-only.
box=$(inner ps -q --filter label=sandy.role=fs)
box_status=$(inner exec "$box" sh -c 'for d in /proc/[0-9]*; do
	[ "$(cat "$d/comm" 2>/dev/null)" = sandyfs ] && cat "$d"/task/*/status; done' 2>&1)
threads=0 admin=0 nnp=0
while read -r k v; do
	case $k in
	CapEff: | CapPrm:) (((16#$v >> 21) & 1)) && admin=$((admin + 1)) ;;
	NoNewPrivs:) threads=$((threads + 1)) && [ "$v" = 1 ] && nnp=$((nnp + 1)) ;;
	esac
done <<<"$box_status"
check "sandyfs serves in its container, in several threads ($threads)" test "$threads" -ge 2
check_eq "no thread of it has CAP_SYS_ADMIN in CapEff or CapPrm" 0 "$admin"
check_eq "every thread of it has no_new_privs" "$threads" "$nnp"
shell=$(inner exec "$box" awk '$1 == "CapEff:" { print $2 }' /proc/1/status 2>&1)
check "its container's shell keeps CAP_SYS_ADMIN ($shell)" eval '(((16#$shell >> 21) & 1))'
out=$(inner exec "$box" sh -c ': >/usr/local/bin/sandyfs.new' 2>&1)
check "nothing can be put in place of the container's sandyfs ($out)" \
	grep -q "Read-only file system" <<<"$out"
inner kill "$(inner ps -q --filter label=sandy.role=fs)" >/dev/null 2>&1
wait_until 60 eval '! kill -0 $pid 2>/dev/null'
check "the session ended once sandyfs's container was killed" eval '! kill -0 $pid 2>/dev/null'
kill $pid 2>/dev/null
wait $pid
rc=$?
check "sandy exits with a failure status ($rc)" [ "$rc" != 0 ]
check "and says sandyfs's container is gone" \
	grep -q "sandyfs stopped serving .*its container 'sandy-fs-[^']*' is gone" "$base/kill.err"
check "no container is left in the inner engine after the kill" \
	eval '[ -z "$(inner ps -aq --filter label=sandy.session)" ]'
check "no dead mount is left in the inner engine's world" \
	in_world '! grep -q /var/lib/sandy/sessions/ /proc/self/mountinfo'
check "nor its directory" \
	in_world '[ -d /var/lib/sandy/sessions ] && [ -z "$(ls -A /var/lib/sandy/sessions)" ]'
[ "$_failed" = "$f" ] || sed 's/^/#   /' "$base/kill.err"

# sandyfs's image carries the version of the sandy that built it; one of
# another sandy (its sandyfs and shipped rules another policy than `sandy
# explain` shows) is refused before anything starts, and doctor says so.
version=$("$SANDY" --version | cut -d' ' -f2)
check_eq "sandy-fs:latest is labelled with this sandy's version" "$version" \
	"$(inner image inspect sandy-fs:latest --format '{{index .Config.Labels "org.sandy.version"}}')"
stale_image() { # TAG VERSION: sandy-fs:latest relabelled
	printf 'FROM sandy-fs:latest\nLABEL org.sandy.version=%s\n' "$2" | inner build -q -t "$1" - >/dev/null
}
if stale_image sandy-fs-stale:test 0.0.0-test && stale_image sandy-fs-unlabelled:test '""'; then
	at_exit "DOCKER_HOST=$INNER docker image rm sandy-fs-stale:test sandy-fs-unlabelled:test >/dev/null 2>&1"
	out=$(cd "$proj" && SANDY_FS_IMAGE=sandy-fs-stale:test "$SANDY" --runtime=docker --rules "$rules" \
		-- sh -c 'echo started' </dev/null 2>&1)
	check_eq "an image of another sandy: refused (status 125)" 125 "$?"
	check "and says which and what to do" grep -q \
		"'sandy-fs-stale:test' holds the sandyfs and rules of sandy 0.0.0-test, not of this one ($version); rebuild it with 'sandy build-image --fs-only'" \
		<<<"$out" || diag "$out"
	check "and the command never started" eval '! grep -qx started <<<"$out"'
	check "no container is left" eval '[ -z "$(inner ps -aq --filter label=sandy.session)" ]'
	out=$(cd "$proj" && SANDY_FS_IMAGE=sandy-fs-unlabelled:test "$SANDY" --runtime=docker \
		--rules "$rules" -- sh -c 'echo started' </dev/null 2>&1)
	check "an image without the label: refused as an earlier sandy's" grep -q \
		"'sandy-fs-unlabelled:test' was built by an earlier sandy (it has no version label)" \
		<<<"$out" || diag "$out"
	doc=$(cd "$proj" && SANDY_FS_IMAGE=sandy-fs-stale:test "$SANDY" doctor --runtime=docker 2>&1)
	check "sandy doctor fails the image of another sandy, and says how to rebuild it" eval \
		'grep -Eq "^fail +fs image +.sandy-fs-stale:test. holds the sandyfs and rules of sandy 0.0.0-test" <<<"$doc" &&
		grep -q "sandy build-image.* --fs-only" <<<"$doc"' || diag "$doc"
else
	not_ok "an image of another sandy: made for the test"
fi

# Told to serve on this host, with an engine that cannot see it: the
# container never starts on an empty directory.
out=$(cd "$proj" && "$SANDY" --runtime=docker --fs-mode=host --rules "$rules" -- sh -c 'echo started' </dev/null 2>&1)
check "--fs-mode=host on such an engine fails" [ $? != 0 ]
if [ -z "$portable" ]; then
	check "and says why" grep -q "does not see this host's mounts .* cannot serve on this host" \
		<<<"$out"
else
	check "and says why" grep -q "mounts sandyfs on this host, which needs Linux" <<<"$out"
fi
check "and the command never started on an empty directory" \
	eval '! grep -qx started <<<"$out"' || diag "$out"
check "no container is left after --fs-mode=host" \
	eval '[ -z "$(inner ps -aq --filter label=sandy.session)" ]'

# The same engine this host runs: sandy serves on this host (the
# portable shape never does).
unset DOCKER_HOST
[ -n "$portable" ] && done_testing
out=$(cd "$proj" && "$SANDY" --rules "$rules" -- true </dev/null 2>&1)
check "with this host's engine sandyfs serves on this host" \
	grep -q "through sandyfs on this host" <<<"$out" || diag "$out"
done_testing
