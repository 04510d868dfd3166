#!/usr/bin/env bash
# sandy with podman (rootful, as the tests run): the session of docker.sh
# (an allowed write, .envrc and .git/config refused, checked on the host),
# the container's confinement, the agent's home across sessions, and
# nothing left behind (`podman ps -a`, mountinfo, the session directory).
# podman is installed by scripts/deps.sh: when it is missing this fails,
# it does not skip.
source "$SANDY_SRC/tests/launcher/helpers.bash"

if command -v podman >/dev/null && ENGINE=podman \
	"$SANDY_SRC/launcher/container/busybox-image.sh" "$TEST_IMAGE" git ssh-add >/dev/null 2>&1 &&
	podman image inspect "$TEST_IMAGE" >/dev/null 2>&1; then
	ok "podman answers and the test image '$TEST_IMAGE' is present"
else
	not_ok "podman answers and the test image '$TEST_IMAGE' is present"
	done_testing
fi

base=$(scratch)
proj=$base/proj
rules=$base/rules.json
make_repo "$proj" && write_test_rules "$rules" || exit 1
no_podman_container() {
	[ -z "$(podman ps -aq --filter "label=sandy.project=$(realpath -m "$1")")" ]
}
at_exit "podman ps -aq --filter 'label=sandy.project=$proj' | xargs -r podman rm -f >/dev/null 2>&1"
printf '[user]\n\temail = host@example.invalid\n' >"$HOME/.gitconfig"
gitconfig_before=$(sha256sum <"$proj/.git/config")

out=$(cd "$proj" && "$SANDY" --runtime=podman --rules "$rules" -- sh -c '
	echo allowed >notes.txt && echo "notes.txt written"
	echo "export EVIL=1" >.envrc || echo "envrc refused"
	echo "[core] fsmonitor = evil" >>.git/config && echo "gitconfig written"
	echo "gitdir: /tmp" >src/.git || echo "nested refused"
	echo "uid=$(id -u) gid=$(id -g)"
	grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status
	echo "pwd=$(pwd) home=$HOME"
	echo kept >"$HOME/kept" && echo "home writable"
	echo "email=$(git config --global user.email)"
	grep -q "What you may write" /run/sandy/POLICY.md && echo "note readable"' \
	</dev/null 2>"$base/err")
rc=$?
f=$_failed
check_eq "podman: the exit status is the command's" 0 "$rc"
check "podman: the banner names podman" grep -q 'in a podman container' "$base/err"
check_eq "podman: the allowed write is on the host" allowed "$(cat "$proj/notes.txt" 2>&1)"
check "podman: the .envrc write is refused inside" grep -qx "envrc refused" <<<"$out"
check "podman: .envrc is absent on the host" test ! -e "$proj/.envrc"
check "podman: the .git/config write lands in the agent's own repository" \
	grep -qx "gitconfig written" <<<"$out"
check "podman: the planted src/.git is refused inside" grep -qx "nested refused" <<<"$out"
check "podman: src/.git is absent on the host" test ! -e "$proj/src/.git"
check_eq "podman: .git/config is unchanged on the host" "$gitconfig_before" \
	"$(sha256sum <"$proj/.git/config")"
check_eq "podman: the container runs as the host uid:gid" "uid=$(id -u) gid=$(id -g)" \
	"$(grep '^uid=' <<<"$out")"
check_eq "podman: no effective capabilities" "CapEff:	0000000000000000" \
	"$(grep '^CapEff' <<<"$out")"
check_eq "podman: an empty bounding set" "CapBnd:	0000000000000000" "$(grep '^CapBnd' <<<"$out")"
check_eq "podman: no-new-privileges" "NoNewPrivs:	1" "$(grep '^NoNewPrivs' <<<"$out")"
check_eq "podman: /workspace and the agent's home" "pwd=/workspace home=/home/sandy" \
	"$(grep '^pwd=' <<<"$out")"
check "podman: the agent's home is writable" grep -qx "home writable" <<<"$out"
check "podman: git has the host's identity" grep -qx "email=host@example.invalid" <<<"$out"
check "podman: the policy note is readable" grep -qx "note readable" <<<"$out"
check "podman: the summary lists the .envrc denial" \
	grep -Eq "^ +[0-9]+ +.*\.envrc.*e\.g\. [a-z]+ '\.envrc'" "$base/err"
check "podman: the mount is gone afterwards" no_sandy_mounts "$proj"
check "podman: no container is left (podman ps -a)" no_podman_container "$proj"
check "podman: the session directory is removed" no_session_dir "$proj"
[ "$_failed" = "$f" ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; sed 's/^/#   /' "$base/err"; }

out=$("$SANDY" -q --runtime=podman "$proj" -- sh -c 'cat "$HOME/kept"' </dev/null 2>&1)
check "podman: the agent's home lasts into the next session" grep -qx kept <<<"$out"
"$SANDY" -q --runtime=podman "$proj" -- sh -c 'exit 7' </dev/null 2>/dev/null
check_eq "podman: a command's non-zero status is sandy's" 7 "$?"
check "podman: still nothing left mounted" no_sandy_mounts "$proj"
check "podman: still no container left" no_podman_container "$proj"
done_testing
