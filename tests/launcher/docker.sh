#!/usr/bin/env bash
# sandy with docker: a session in a test git
# repository writes an allowed file, is refused .envrc and a planted
# src/.git, writes .git/config in its own repository (the host's stays as
# it was), and the summary says so; the container runs as the host user without
# capabilities or docker socket. Every case checks the host side afterwards:
# file contents, /proc/self/mountinfo, `docker ps -a`.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project
gitconfig_before=$(sha256sum <"$proj/.git/config")

# --- an allowed write, .envrc and .git/config refused, the summary
check "no .envrc on the host before the session" test ! -e "$proj/.envrc"
out=$(cd "$proj" && "$SANDY" --rules "$rules" -- sh -c '
	echo allowed >notes.txt && echo "notes.txt written"
	echo "export EVIL=1" >.envrc || echo "envrc refused"
	echo "[core] fsmonitor = evil" >>.git/config && echo "gitconfig written"
	echo "gitdir: /tmp" >src/.git || echo "nested refused"
	echo "--- audit"
	cat /run/sandy/denials.jsonl' </dev/null 2>"$base/err")
rc=$?
err=$(cat "$base/err")
check_eq "the exit status is the command's" 0 "$rc"
check "the allowed write succeeds inside" grep -qx "notes.txt written" <<<"$out"
check_eq "the allowed write is on the host afterwards" allowed "$(cat "$proj/notes.txt" 2>&1)"
check "writing .envrc fails with EROFS inside" \
	grep -q '\.envrc: Read-only file system' <<<"$err"
check "the command saw the .envrc write fail" grep -qx "envrc refused" <<<"$out"
check ".envrc is absent on the host afterwards" test ! -e "$proj/.envrc"
check "the .git/config write lands in the agent's own repository" \
	grep -qx "gitconfig written" <<<"$out"
check_eq ".git/config is unchanged on the host" "$gitconfig_before" \
	"$(sha256sum <"$proj/.git/config")"
check "the planted src/.git is refused inside" grep -qx "nested refused" <<<"$out"
check "src/.git is absent on the host afterwards" test ! -e "$proj/src/.git"
audit=$(sed -n '/^--- audit$/,$p' <<<"$out" | tail -n +2)
check "the audit log, read inside, has a record for .envrc" \
	grep -q '"path": *"\.envrc"' <<<"$audit"
check "the audit log has a record for src/.git" grep -q '"path": *"src/\.git"' <<<"$audit"
check "the summary counts the denials" grep -Eq '^sandy: [0-9]+ operations denied, by rule:' <<<"$err"
check "the summary lists the .envrc denial with its rule" \
	grep -Eq "^ +[0-9]+ +.*\.envrc.*e\.g\. [a-z]+ '\.envrc'" <<<"$err"
check "the summary lists the src/.git denial with its rule" \
	grep -Eq "^ +[0-9]+ +.*\.git.*e\.g\. [a-z]+ 'src/\.git'" <<<"$err"
# Every rule file the audit log names appears in the summary (by name).
missing=
for f in $(grep -o '"rule_file": *"[^"]*"' <<<"$audit" | sed 's/.*: *"//; s/"$//' | sort -u); do
	grep -qF -- "${f##*/}: " <<<"$err" || missing="$missing $f"
done
check_eq "the summary names every deciding rule file of the audit log" "" "$missing"
check "the summary lists the changed file" grep -Eq '^ +A +notes\.txt$' <<<"$err"
check "the summary lists nothing else as changed" grep -Eq '^sandy: 1 file changed:$' <<<"$err"
check "the mount is gone afterwards (mountinfo)" no_sandy_mounts "$proj"
check "no container is left (docker ps -a)" no_container "$proj"
check "the session directory is removed" no_session_dir "$proj"
[ "$_failed" = 0 ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; diag "stderr:"; sed 's/^/#   /' <<<"$err"; }

# --quiet: no banner, no summary; the command's output only.
out=$("$SANDY" --quiet --rules "$rules" "$proj" -- sh -c 'echo only-this' </dev/null 2>"$base/err")
check_eq "--quiet: stdout is the command's" only-this "$out"
check_eq "--quiet: nothing on stderr" "" "$(cat "$base/err")"

# Exit status of a failing command.
"$SANDY" -q "$proj" -- sh -c 'exit 7' </dev/null 2>/dev/null
check_eq "a command's non-zero status is sandy's" 7 "$?"
"$SANDY" -q "$proj" -- /no/such/command </dev/null 2>/dev/null
check_eq "a missing command gives 127 (docker's status)" 127 "$?"

# --- the container's identity and confinement
out=$("$SANDY" -q --rules "$rules" "$proj" -- sh -c '
	echo "uid=$(id -u) gid=$(id -g)"
	grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs):" /proc/self/status
	for s in /var/run/docker.sock /run/docker.sock; do test -e $s && echo "socket $s"; done
	env | grep -q "^DOCKER_HOST=" && echo "DOCKER_HOST set"
	echo "pwd=$(pwd)"
	grep " /workspace " /proc/self/mountinfo
	echo probe >/tmp/probe && echo "tmp writable"
	echo x >>/run/sandy/denials.jsonl 2>/dev/null && echo "audit writable"
	cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null | sed "s/^/pids.max=/"
	cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null |
		sed "s/^/memory.max=/"
	echo "policy=$SANDY_POLICY denials=$SANDY_DENIALS"
	echo "--- policy"; cat "$SANDY_POLICY"' </dev/null 2>"$base/err")
check_eq "the container runs as the host uid:gid" "uid=$(id -u) gid=$(id -g)" \
	"$(grep '^uid=' <<<"$out")"
check_eq "no effective capabilities" "CapEff:	0000000000000000" "$(grep '^CapEff' <<<"$out")"
check_eq "no permitted capabilities" "CapPrm:	0000000000000000" "$(grep '^CapPrm' <<<"$out")"
check_eq "an empty bounding set (--cap-drop ALL)" "CapBnd:	0000000000000000" \
	"$(grep '^CapBnd' <<<"$out")"
check_eq "no-new-privileges" "NoNewPrivs:	1" "$(grep '^NoNewPrivs' <<<"$out")"
check_fails "no docker socket inside" grep -q '^socket' <<<"$out"
check_fails "no DOCKER_HOST inside" grep -q 'DOCKER_HOST set' <<<"$out"
check_eq "the working directory is /workspace" "pwd=/workspace" "$(grep '^pwd=' <<<"$out")"
check "/workspace is the sandyfs mount" grep -q ' /workspace .* fuse\.sandyfs ' <<<"$out"
check "/workspace receives mounts from the host (rslave: master:N)" \
	grep -Eq ' /workspace [^-]* master:[0-9]+ .*- fuse' <<<"$out"
check "/tmp is writable" grep -qx "tmp writable" <<<"$out"
check_fails "the audit log is read-only inside" grep -qx "audit writable" <<<"$out"
check "a pids limit is set" grep -Eq '^pids.max=[0-9]+$' <<<"$out"
mem=$(grep '^memory.max=' <<<"$out" | head -1 | cut -d= -f2)
total=$(awk '/^MemTotal:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
limited() { [[ $mem =~ ^[0-9]+$ ]] && [ "$mem" -lt "$total" ]; }
check "a memory limit below the host's memory is set ($mem of $total)" limited
check_eq "SANDY_POLICY and SANDY_DENIALS point into /run/sandy" \
	"policy=/run/sandy/POLICY.md denials=/run/sandy/denials.jsonl" "$(grep '^policy=' <<<"$out")"
policy=$(sed -n '/^--- policy$/,$p' <<<"$out")
check "the policy note explains EROFS and where denials are logged" \
	grep -q 'EROFS' <<<"$policy"
check "the policy note names the audit log" grep -qF /run/sandy/denials.jsonl <<<"$policy"
check "the policy note lists the writable globs of the rules" grep -qF 'src/**' <<<"$policy"
check "the mount is gone afterwards" no_sandy_mounts "$proj"
check "no container is left" no_container "$proj"

# Through sudo: the container runs as the user sudo acted for.
ensure_test_user
tuid=$(id -u "$TEST_USER") tgid=$(id -g "$TEST_USER")
out=$(SUDO_UID=$tuid SUDO_GID=$tgid SUDO_USER=$TEST_USER SANDY_DATA_DIR=$base/sudo-data "$SANDY" -q "$proj" -- \
	sh -c 'echo "uid=$(id -u) gid=$(id -g)"; grep ^CapEff /proc/self/status' </dev/null 2>&1)
check_eq "run through sudo, the container runs as the invoking user" "uid=$tuid gid=$tgid" \
	"$(grep '^uid=' <<<"$out")"
check_eq "... still without capabilities" "CapEff:	0000000000000000" "$(grep '^CapEff' <<<"$out")"

# A terminal on stdin gives the container one (-t).
if command -v script >/dev/null; then
	out=$(script -qec "'$SANDY' -q '$proj' -- sh -c 'test -t 0 && test -t 1 && echo has-a-tty'" \
		/dev/null </dev/null 2>&1)
	check "a TTY on stdin gives the container a TTY" grep -q has-a-tty <<<"$out"
	grep -q has-a-tty <<<"$out" || sed 's/^/#   /' <<<"$out"
	out=$("$SANDY" -q "$proj" -- sh -c 'test -t 0 || echo no-tty' </dev/null 2>&1)
	check "no TTY on stdin, none in the container" grep -q no-tty <<<"$out"
else
	not_ok "script(1) is available to give sandy a terminal"
fi

check "nothing mounted at the end" no_sandy_mounts "$proj"
check "no container at the end" no_container "$proj"
done_testing
