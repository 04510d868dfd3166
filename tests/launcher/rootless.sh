#!/usr/bin/env bash
# sandy with rootless podman, run by an ordinary user on a host whose / is
# not a shared mount (as this one's): podman's containers live in a mount
# namespace of the user's own that a sandyfs mount made on the host never
# reaches. Without any option saying so, sandy must serve the project
# through sandyfs in a container of its own in that namespace: the policy
# and the summary as on any host, the agent's files the user's on the
# host, its commit in its own repository and `sandy git import`, the
# agent's container without capabilities, /dev/fuse or the mount's
# privilege, and nothing left in podman afterwards, also after a crash.
source "$SANDY_SRC/tests/launcher/helpers.bash"

ensure_test_user || exit 1
user=$TEST_USER
uid=$(id -u "$user") gid=$(id -g "$user")
home=$(getent passwd "$user" | cut -d: -f6)
# Where / is shared (systemd hosts), rootless podman sees this host's
# mounts, and sandy serves on this host as with a rootful engine.
[ -z "$(awk '$5 == "/" && / shared:/' /proc/self/mountinfo)" ] ||
	skip_all "this host's / is a shared mount: rootless podman sees mounts made here"
check "newuidmap is installed (rootless podman needs it)" command -v newuidmap

# The user's own runtime directory and podman, as a login would give them;
# sandy's data and the stores in that directory too (podman's images stay
# in the user's home, where they are kept from one run to the next).
urun=$(mktemp -d /tmp/sandy-rootless.XXXXXX) && chown "$user:" "$urun" && chmod 0700 "$urun"
at_exit "su -s /bin/sh $user -c 'XDG_RUNTIME_DIR=$urun podman ps -aq --filter label=sandy.session |
	xargs -r podman rm -f' >/dev/null 2>&1; rm -rf '$urun'"
as_user() { # CMD: CMD as the user, with the environment a session of theirs has
	su -s /bin/bash "$user" -c "cd ~ && export XDG_RUNTIME_DIR='$urun' HOME='$home' \
		SANDY_DATA_DIR='$urun/data' SANDY_CACHE_DIR='$urun/cache' \
		SANDY_IMAGE='$TEST_IMAGE' SANDY_NETWORK=none && $1" 2>&1 |
		grep -v '"/" is not a shared mount'
	return "${PIPESTATUS[0]}"
}
upodman() { as_user "podman $*"; }
# The mount table of podman's namespace, where its containers' mounts are.
podman_mounts() { as_user "podman unshare cat /proc/self/mountinfo"; }
hgit() { git -c safe.directory='*' "$@"; }

# The images, made as root with docker and handed to the user's podman.
require_docker
check "sandy build-image --fs-only makes sandy-fs:latest" \
	"$SANDY" build-image --fs-only >/dev/null 2>&1 || done_testing
# In the user's own directory: the test's scratch directories are root's.
archive=$urun/images.tar
docker save sandy-fs:latest >"$archive" && chown "$user:" "$archive"
check "the user's podman loads sandy-fs:latest" eval 'upodman "load -i '"'$archive'"'" >/dev/null'
rm -f "$archive"
as_user "ENGINE=podman '$SANDY_SRC/launcher/container/busybox-image.sh' '$TEST_IMAGE' git" >/dev/null
check "the user's podman has sandy-fs:latest and $TEST_IMAGE" \
	eval 'upodman image exists sandy-fs:latest && upodman image exists "$TEST_IMAGE"'
# The one just built, not one an earlier run left there (sandy refuses
# an image another sandy built).
docker_id=$(docker image inspect --format '{{.Id}}' sandy-fs:latest)
check_eq "the user's sandy-fs:latest is docker's" "${docker_id#sha256:}" \
	"$(upodman "image inspect --format '{{.Id}}' sandy-fs:latest")"
check_eq "the user's podman is rootless" "true" \
	"$(upodman info --format '{{.Host.Security.Rootless}}')"

base=$(scratch)
chmod 0755 "$base"
proj=$base/proj rules=$base/rules.json
make_repo "$proj" && write_test_rules "$rules" && chown -R "$user:" "$proj" "$rules" || exit 1
chmod 0644 "$rules"
gitdigest() { (cd "$proj/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum); }
before=$(gitdigest)

# The agent's output and sandy's messages apart; what the agent's shell
# says of a refusal goes to /dev/null.
f=$_failed
out=$(as_user "cd '$proj' && '$SANDY' --runtime=podman --rules '$rules' -- sh -c '
	grep -E \"^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):\" /proc/self/status
	grep \" /workspace \" /proc/self/mountinfo | grep -q fuse.sandyfs && echo \"workspace is sandyfs\"
	[ -e /dev/fuse ] && echo \"has /dev/fuse\"
	echo \"uid=\$(id -u)\"
	echo \"int hello;\" >src/hello.c && echo \"hello written\"
	echo \"export EVIL=1\" 2>/dev/null >.envrc || echo \"envrc refused\"
	mkdir -p .vscode 2>/dev/null && echo \"{}\" 2>/dev/null >.vscode/tasks.json ||
		echo \"tasks refused\"
	git add src/hello.c && git -c user.name=agent -c user.email=a@example.invalid \
		commit -qm \"agent: hello\" && echo committed' </dev/null 2>'$urun/session.err'")
rc=$?
err=$(cat "$urun/session.err")
check_eq "the session ends with the command's status" 0 "$rc"
check "sandy says rootless podman does not see this host's mounts" \
	grep -q "rootless podman does not see this host's mounts" <<<"$err"
check "and that sandyfs serves in a container of its own" \
	grep -q "through sandyfs in a container of its own" <<<"$err"
check "/workspace is the sandyfs mount" grep -qx "workspace is sandyfs" <<<"$out"
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "the agent's $k is 0" grep -qx "$k:[[:space:]]*0000000000000000" <<<"$out"
done
check "the agent's NoNewPrivs is 1" grep -qx "NoNewPrivs:[[:space:]]*1" <<<"$out"
check "the agent has no /dev/fuse" eval '! grep -qx "has /dev/fuse" <<<"$out"'
check_eq "the agent runs as the user" "uid=$uid" "$(grep '^uid=' <<<"$out")"
check_eq "the allowed write is on the host, the user's" "$uid:$gid int hello;" \
	"$(stat -c %u:%g "$proj/src/hello.c" 2>&1) $(cat "$proj/src/hello.c" 2>&1)"
check ".envrc is refused" grep -qx "envrc refused" <<<"$out"
check ".envrc is absent on the host" test ! -e "$proj/.envrc"
check ".vscode/tasks.json is refused" grep -qx "tasks refused" <<<"$out"
check ".vscode is absent on the host" test ! -e "$proj/.vscode"
check "the summary lists the .envrc denial" grep -Eq '^ +1 +.*\.envrc \(protected\)' <<<"$err"
check "the agent committed into its own repository" grep -qx committed <<<"$out"
check_eq "the host's .git is unchanged" "$before" "$(gitdigest)"
[ "$_failed" = "$f" ] || diag "$out" "$err"
out=$(as_user "cd '$proj' && '$SANDY' git import main")
check_eq "sandy git import brings the commit back as sandy/main" "agent: hello" \
	"$(hgit -C "$proj" log -1 --format=%s sandy/main 2>&1)" || diag "$out"
check_eq "  with the agent's file" "int hello;" "$(hgit -C "$proj" show sandy/main:src/hello.c 2>&1)"
engine_root=$urun/sandy/.engine
check "no container is left in the user's podman" \
	eval '[ -z "$(upodman ps -aq --filter label=sandy.session)" ]'
ns=$(podman_mounts)
check "no mount is left in podman's namespace but its shared directory" \
	eval '[ "$(grep -c " $urun/" <<<"$ns")" = 1 ] &&
	grep -q " $engine_root $engine_root .* shared:" <<<"$ns"' || diag "$ns"
check "no session directory is left" eval '[ -z "$(ls "$engine_root")" ] &&
	[ -z "$(find "$urun/sandy" -mindepth 1 -maxdepth 1 ! -name .engine ! -name "engine-*")" ]'

out=$(as_user "cd '$proj' && '$SANDY' doctor --runtime=podman --rules '$rules'")
check "sandy doctor says sandyfs serves in a container of its own in podman's world" \
	grep -Eq "^ok +fs mode +container: .*rootless podman" <<<"$out" || diag "$out"
check "  that the user's mount needs no user_allow_other" \
	eval '! grep -q "^fail *fuse.conf" <<<"$out"'
check "  and that the session would start" grep -Eq "^ok +session +would start" <<<"$out"

# sandy killed (a crash): the next session clears what it left in podman.
as_user "cd '$proj' && exec '$SANDY' -q --runtime=podman --rules '$rules' -- sleep 120" \
	</dev/null >/dev/null &
pid=$!
wait_until 60 eval '[ -n "$(upodman ps -q --filter label=sandy.role=fs)" ] &&
	[ -n "$(upodman ps -q --filter label=sandy.project="$proj")" ]'
old=$(upodman ps --filter label=sandy.role=fs --format "'{{index .Labels \"sandy.session\"}}'" | head -n 1)
check "a session serves ($old)" [ -n "$old" ]
pkill -KILL -f "^$SANDY -q --runtime=podman" 2>/dev/null
wait $pid 2>/dev/null
out=$(as_user "cd '$proj' && '$SANDY' --runtime=podman --rules '$rules' -- true </dev/null")
check "the next session cleans up after the crashed one" \
	grep -q "cleaning up after an earlier session" <<<"$out" || diag "$out"
check "no container of it is left" \
	eval '[ -z "$(upodman ps -aq --filter label=sandy.session="$old")" ]'
check "no mount of it is left in podman's namespace" \
	eval '! podman_mounts | grep -q "$engine_root/$old"'
check "nor its directory" test ! -e "$engine_root/$old"
done_testing
