#!/usr/bin/env bash
# sandy kube's Pod, run by `podman kube play` (rootful) against a git
# server on a test internet of the test's own (a network namespace,
# tests/network/internet.bash): the clone, sandyfs serving it to the agent,
# the gateway's allowlist and the way back, each checked by its effect.
# The agent's command is a script that writes an allowed file, commits it
# on one branch and, on two others, commits a tree that adds .envrc and
# .github/workflows/x.yml (made with git's plumbing: the mount refuses
# the files themselves). Checked on the remote: the allowed branch arrives
# as sandy/NAME/feat with the agent's commit and tree, the two others do
# not arrive at all, and the main branch is untouched; in sandyfs's log:
# each refusal with its commit, path and rule; inside the agent: a name
# off the allowlist does not resolve (one on it does), CapEff, CapPrm and
# CapBnd are 0, and the git credential is nowhere (nor in the container's
# mounts, while sandyfs's has it); in the clone sandyfs served: the
# agent's uncommitted file, and no .envrc. Then a second Pod while the
# first is still there, which podman gives the first one's volumes: its
# clone refuses them and nothing is pushed. Nothing is left afterwards.
#
# What podman 4.3 (Debian 12) lacks, and how the test lives with it:
# - native sidecars (init containers with restartPolicy Always): the Pod
#   is made with --no-native-sidecars, whose agent's entry marks the
#   agent's end for sandyfs, whose script marks its own for the gateway;
# - subPath in volumeMounts (podman 4.4 has it): `--volume-claim` uses one
#   for the agent's view of the claim's git directory, so the test runs
#   on emptyDirs, as sandy kube does without --volume-claim;
# - https with a certificate the Pod trusts: the server is `git daemon`
#   (git://, receive-pack on), which asks for no credential; the Secret
#   is made and mounted all the same, and where it is mounted is checked.
#   (podman 4.3 writes a Secret's data into the files undecoded, base64
#   text, so a credential could not be checked through it anyway.)
# podman and docker (which builds the images: sandy build-image) are
# installed by scripts/deps.sh: when either is missing this fails, it does
# not skip.
source "$SANDY_SRC/tests/network/internet.bash"
require_docker
unset SANDY_NETWORK

name=sandy-kube-$$
token=kube-test-token-$$
base=$(scratch)

# kube play bind-mounts each emptyDir from podman's volume directory, and
# sandyfs's mount (Bidirectional) reaches the agent's container (its
# HostToContainer mount of the same volume) only when that directory is a
# shared mount, as a kubelet's node has its pods' directories. On a host
# whose / is private, podman runs here in a mount namespace of the test's
# own whose / is shared (kept in a file, entered for each podman command);
# its containers and their mounts stay in there, and docker, the test
# internet and everything else in the host's.
kube_ns=
if ! awk '$5 == "/" && / shared:/ { found = 1 } END { exit !found }' /proc/self/mountinfo; then
	kube_ns=/run/sandy-kube-ns.$$
	touch "$kube_ns" && unshare --mount="$kube_ns" --propagation shared true || {
		not_ok "a mount namespace with / shared, for podman"
		done_testing
	}
	at_exit "umount '$kube_ns' 2>/dev/null; rm -f '$kube_ns'"
	diag "/ is not shared here: podman runs in a mount namespace whose / is"
fi
# podman asks for file and process limits of its own (2^20 files), which
# a host with lower hard limits refuses to grant to a container without
# CAP_SYS_RESOURCE, and a Pod's YAML cannot say otherwise (sandy passes
# --ulimit, engine_push_ulimits): podman's configuration with this
# process's file limits and 4096 processes as its defaults (this process's
# own process limit is refused too, where conmon's is lower).
kube_conf=$base/containers.conf
sed "/^\[containers\]\$/a default_ulimits = [\"nofile=$(ulimit -Sn):$(ulimit -Hn)\", \"nproc=4096:4096\"]" \
	/usr/share/containers/containers.conf >"$kube_conf" || exit 1
podman() {
	if [ -n "$kube_ns" ]; then
		CONTAINERS_CONF=$kube_conf nsenter --mount="$kube_ns" podman "$@"
	else
		CONTAINERS_CONF=$kube_conf command podman "$@"
	fi
}

# The images, built with docker and copied into podman's store.
if ! type -P podman >/dev/null; then
	not_ok "podman is installed (scripts/deps.sh installs it)"
	done_testing
fi
start=$SECONDS
if "$SANDY" build-image --fs-only >"$base/fs-build.log" 2>&1 &&
	"$SANDY" build-image --gateway-only >"$base/gw-build.log" 2>&1 &&
	docker save sandy-fs:latest | podman load >"$base/load.log" 2>&1 &&
	docker save sandy-gateway:latest | podman load >>"$base/load.log" 2>&1 &&
	ENGINE=podman "$SANDY_SRC/launcher/container/busybox-image.sh" "$TEST_IMAGE" git ssh-add \
		>"$base/busybox.log" 2>&1; then
	ok "podman has sandy-fs, sandy-gateway and the test image ($((SECONDS - start)) s)"
else
	not_ok "podman has sandy-fs, sandy-gateway and the test image"
	tail -n 20 "$base"/*.log | sed 's/^/# /'
	done_testing
fi

# The remote: a bare repository with one commit on main, served by git
# daemon (receive-pack on) at git.test in the test internet.
INET_HOSTS[git.test]=10
check "the test internet is up" start_internet || done_testing
git_addr=${INET_ADDR[git.test]}
srv=$base/srv
remote=$srv/project.git
git init -q --bare -b main "$remote" &&
	git init -q -b main "$base/seed" &&
	echo hello >"$base/seed/README" &&
	printf 'int main(void) { return 0; }\n' >"$base/seed/main.c" &&
	git -C "$base/seed" add -A &&
	git -C "$base/seed" -c user.name=t -c user.email=t@example.invalid commit -qm init &&
	git -C "$base/seed" push -q "$remote" main || exit 1
main_before=$(git --git-dir="$remote" rev-parse refs/heads/main)
ip netns exec "$INET_NS" timeout 600 git daemon --export-all --enable=receive-pack \
	--base-path="$srv" --listen="$git_addr" --port=9418 --reuseaddr \
	--log-destination=stderr 2>"$INET_DIR/git-daemon.log" &
check "git daemon answers at git.test" wait_until 10 \
	eval 'git ls-remote "git://$git_addr/project.git" main >/dev/null 2>&1 || ! sleep 0.2' 

# The agent's command. Each line it prints is NAME=VALUE. It does not
# start with a newline: podman 4.3's kube play decodes the YAML and encodes
# it again before it reads it, and cannot read back its own encoding of a
# string that starts with one followed by text ("did not find expected '-'
# indicator").
agent_cmd='g() { git -c user.name=agent -c user.email=agent@example.invalid "$@"; }
resolve() { nslookup -type=a "$1" 2>/dev/null | awk "/^Name:/ {n=1} n && /^Address/ {print \$2; exit}"; }
grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status | tr -d "\t" | sed "s/^/cap_/; s/:/=/"
echo "uid=$(id -u)"
echo allowed >notes.txt && echo "write=ok"
if (echo "export EVIL=1" >.envrc) 2>/dev/null; then echo "envrc_write=written"; else echo "envrc_write=refused"; fi
g checkout -q -b feat && g add notes.txt && g commit -q -m "an allowed note" && echo "feat=$(g rev-parse HEAD)"
g checkout -q main && g checkout -q -b envrc &&
	b=$(echo "export EVIL=1" | g hash-object -w --stdin) &&
	g update-index --add --cacheinfo "100644,$b,.envrc" && g commit -q -m "a direnv file" &&
	echo "envrc=$(g rev-parse HEAD)"
g checkout -q main && g checkout -q -b ci &&
	b=$(printf "on: push\njobs: {}\n" | g hash-object -w --stdin) &&
	g update-index --add --cacheinfo "100644,$b,.github/workflows/x.yml" &&
	g commit -q -m "a workflow" && echo "ci=$(g rev-parse HEAD)"
g checkout -q main
echo kept >kept.txt && echo "kept=ok"
echo "allowed_addr=$(resolve allowed.test)"
echo "blocked_addr=$(resolve blocked.test)"
if [ -e /run/secrets/sandy-git ]; then echo "secret_dir=present"; else echo "secret_dir=absent"; fi
if cat /run/secrets/sandy-git/password >/dev/null 2>&1; then echo "secret=readable"; else echo "secret=unreadable"; fi
if env | grep -q "'"$token"'"; then echo "token_env=present"; else echo "token_env=absent"; fi
echo "agent=done"'

yaml=$base/pod.yaml
SANDY_DNS_UPSTREAM=$INET_DNS SANDY_GIT_TOKEN=$token SANDY_IMAGE=$TEST_IMAGE \
	"$SANDY" kube --repo git://git.test/project.git --name "$name" --no-native-sidecars \
	--allow allowed.test -- sh -c "$agent_cmd" >"$yaml" 2>"$base/kube.err"
check_eq "sandy kube --no-native-sidecars: exit status 0" 0 "$?"

# Everything the Pod leaves in podman, removed at exit whatever happens:
# the pod and its containers, the volumes they used (named in a file once
# the Pod runs), the secrets kube play made of the Secrets.
volumes=$base/volumes
: >"$volumes"
at_exit "podman pod rm -f '$name' >/dev/null 2>&1; xargs -r podman volume rm -f <'$volumes' >/dev/null 2>&1; podman secret rm '$name-git' >/dev/null 2>&1"

start=$SECONDS
podman kube play "$yaml" >"$base/play.log" 2>&1
rc=$?
check_eq "podman kube play: exit status 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$base/play.log"
containers=$(podman ps -a --filter "pod=$name" --format '{{.Names}}' 2>/dev/null)
for c in $containers; do
	podman container inspect "$c" \
		--format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}}{{"\n"}}{{end}}{{end}}' \
		2>/dev/null | sed '/^$/d' >>"$volumes"
done
# and those podman made of the Secret and the ConfigMap, named as they are.
printf '%s\n' "$name-git" "$name-config" >>"$volumes"
sort -u -o "$volumes" "$volumes"
# The session ends by itself: the agent's command returns, sandyfs checks
# and pushes, the gateway follows.
ended() {
	[ -n "$(podman ps -a --filter "pod=$name" --format '{{.Names}}')" ] &&
		[ -z "$(podman ps --filter "pod=$name" --filter status=running --format '{{.Names}}' |
			grep -v -- '-infra$')" ]
}
# Polled each second: podman ps is slow.
check "the Pod's containers all end by themselves" eval 'WAIT_INTERVAL=1 wait_until 150 ended'
diag "the Pod ran for $((SECONDS - start)) s"
podman logs "$name-agent" >"$base/agent.log" 2>&1
podman logs "$name-sandyfs" >"$base/fs.log" 2>&1
status_of() { podman container inspect "$name-$1" --format '{{.State.ExitCode}}' 2>/dev/null; }
check_eq "the agent's container: exit status 0" 0 "$(status_of agent)"
check_eq "sandyfs's container: exit status 1 (two branches refused)" 1 "$(status_of sandyfs)"
check_eq "the gateway's container: exit status 0" 0 "$(status_of gateway)"

val() { sed -n "s/^$1=//p" "$base/agent.log" | head -n 1; }
check_eq "the agent ran to its end" done "$(val agent)"
check_eq "the agent runs as uid 1000" 1000 "$(val uid)"
for c in Eff Prm Bnd; do
	check_eq "the agent holds no capability (Cap$c)" 0000000000000000 "$(val "cap_Cap$c")"
done
check_eq "the agent's allowed write succeeds" ok "$(val write)"
check_eq "the agent's .envrc write is refused by the mount" refused "$(val envrc_write)"
check_eq "allowed.test, on the allowlist, resolves inside" \
	"${INET_ADDR[allowed.test]}" "$(val allowed_addr)"
check_eq "a name off the allowlist does not resolve inside" "" "$(val blocked_addr)"
check_fails "no query for blocked.test reached the upstream resolver" upstream_saw blocked.test
check_eq "the git credential's directory is absent in the agent's container" absent \
	"$(val secret_dir)"
check_eq "the agent cannot read the git credential" unreadable "$(val secret)"
check_eq "the token is not in the agent's environment" absent "$(val token_env)"
mounts_of() { podman container inspect "$name-$1" --format '{{range .Mounts}}{{.Destination}}{{"\n"}}{{end}}'; }
check "sandyfs's container mounts the git credential" grep -qx /run/secrets/sandy-git \
	<<<"$(mounts_of sandyfs)"
check_fails "the agent's container does not mount it" grep -qx /run/secrets/sandy-git \
	<<<"$(mounts_of agent)"

# On the remote: feat as sandy/NAME/feat, the agent's very commit and
# tree; nothing of the refused branches; main as it was.
feat=$(val feat) envrc=$(val envrc) ci=$(val ci)
refs=$(git --git-dir="$remote" for-each-ref --format='%(refname)' refs/heads/)
check_eq "the remote's branches: main and sandy/$name/feat alone" \
	"refs/heads/main refs/heads/sandy/$name/feat" "$(echo $refs)"
check_eq "sandy/$name/feat is the agent's commit" "$feat" \
	"$(git --git-dir="$remote" rev-parse "refs/heads/sandy/$name/feat" 2>&1)"
check_eq "its notes.txt holds the agent's write" allowed \
	"$(git --git-dir="$remote" show "refs/heads/sandy/$name/feat:notes.txt" 2>&1)"
check_eq "its parent is main as it was" "$main_before" \
	"$(git --git-dir="$remote" rev-parse "refs/heads/sandy/$name/feat^" 2>&1)"
check_eq "main is untouched" "$main_before" "$(git --git-dir="$remote" rev-parse refs/heads/main)"
check "the agent made the .envrc commit" test -n "$envrc"
check "the agent made the workflow commit" test -n "$ci"
check_fails "the .envrc commit is not on the remote" \
	git --git-dir="$remote" cat-file -e "${envrc:-0000000}^{commit}"
check_fails "the workflow commit is not on the remote" \
	git --git-dir="$remote" cat-file -e "${ci:-0000000}^{commit}"
check_fails "no .envrc in any tree on the remote" \
	eval 'git --git-dir="$remote" rev-list --all --objects | grep -q " \.envrc$"'

# sandyfs's log is the session's summary: each refusal with its commit,
# path and rule, and what was pushed.
check "the log refuses the .envrc commit, naming it, the path and the rule" \
	grep -Eq "^  refused: commit ${envrc:0:12} adds '\.envrc': protected by [^ ]+\.json:[0-9]+ '\.envrc'" \
	"$base/fs.log"
check "the log refuses the workflow commit, naming it, the path and the rule" \
	grep -Eq "^  refused: commit ${ci:0:12} adds '\.github/workflows/x\.yml': protected by [^ ]+\.json:[0-9]+ '[^']*\.github/workflows[^']*'" \
	"$base/fs.log"
check "the log says the two cannot be imported" \
	eval '[ "$(grep -cE "^(envrc|ci): 1 commit, .*; cannot be imported$" "$base/fs.log")" = 2 ]'
check "the log says feat was pushed as sandy/$name/feat" \
	grep -qx "sandy: pushed feat as sandy/$name/feat" "$base/fs.log"
check_fails "the log says nothing of pushing envrc or ci" \
	grep -Eq "pushed (envrc|ci) " "$base/fs.log"
check_fails "the log has no complaint about the unmount" grep -q "cannot unmount" "$base/fs.log"
podman logs "$name-gateway" >"$base/gateway.log" 2>&1
[ "$_failed" = 0 ] || for f in agent fs gateway; do
	diag "$f's log:"
	sed 's/^/#   /' "$base/$f.log"
done

# The clone itself, as sandyfs's SOURCE held it: the allowed write is
# there, the refused one is not.
source_dir=$(podman volume inspect source --format '{{.Mountpoint}}' 2>/dev/null)
check_eq "the clone's work tree holds the agent's kept.txt" kept \
	"$(cat "${source_dir:-/nonexistent}/kept.txt" 2>&1)"
check "the clone's work tree has no .envrc" \
	eval '[ -d "$source_dir" ] && [ ! -e "$source_dir/.envrc" ] && [ ! -L "$source_dir/.envrc" ]'

# A second Pod while the first one is still there: podman 4.3 gives it
# the first one's volumes (an emptyDir is a volume named as it is, until
# its Pod is removed), and the clone refuses to go on with another Pod's
# files; nothing is pushed.
refs_before=$(git --git-dir="$remote" for-each-ref --format='%(refname) %(objectname)')
sed "s/$name/$name-2/g" "$yaml" >"$base/pod-2.yaml"
at_exit "podman pod rm -f '$name-2' >/dev/null 2>&1; podman secret rm '$name-2-git' >/dev/null 2>&1; podman volume rm -f '$name-2-git' '$name-2-config' >/dev/null 2>&1"
podman kube play "$base/pod-2.yaml" >"$base/play-2.log" 2>&1
check_eq "a Pod given a running Pod's volumes: kube play fails (status 125)" 125 "$?"
check "it is the clone that fails" grep -q "init container .* exited with code 1" "$base/play-2.log"
check_fails "sandyfs's container does not start" eval \
	'podman ps -a --filter "pod=$name-2" --filter status=running --format "{{.Names}}" | grep -q sandyfs'
check_eq "the remote is unchanged" "$refs_before" \
	"$(git --git-dir="$remote" for-each-ref --format='%(refname) %(objectname)')"
check_eq "the first Pod's clone is unchanged" kept "$(cat "${source_dir:-/nonexistent}/kept.txt" 2>&1)"
podman pod rm -f "$name-2" >/dev/null 2>&1
podman secret rm "$name-2-git" >/dev/null 2>&1
podman volume rm -f "$name-2-git" "$name-2-config" >/dev/null 2>&1

# Nothing left.
podman pod rm -f "$name" >/dev/null 2>&1
xargs -r podman volume rm -f <"$volumes" >/dev/null 2>&1
podman secret rm "$name-git" >/dev/null 2>&1
check "no pod is left" eval '! podman pod exists "$name"'
check "no container of the Pod is left" \
	eval '[ -z "$(podman ps -aq --filter "name=^$name-")" ]'
check "none of its volumes is left" \
	eval '! podman volume ls -q | grep -qxFf "$volumes"'
check "no secret of its is left" eval '! podman secret ls --format "{{.Name}}" | grep -q "^$name-"'
done_testing
