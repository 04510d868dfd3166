#!/usr/bin/env bash
# sandy without a container and with a plain bind mount: --runtime=none gives the same verdicts as docker, on the
# project's own path, as root, through sudo and as an unprivileged user;
# --fs=bind lets the .envrc write through, which proves the comparison is
# real. Every case checks the host side afterwards.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

base=$(scratch)
rules=$base/rules.json
write_test_rules "$rules" || exit 1

# The session of docker.sh in PROJ with sandy's extra arguments ARGS;
# leaves OUT, ERR and RC.
session() {
	local proj=$1
	shift
	out=$(cd "$proj" && "$SANDY" "$@" -- sh -c '
		echo allowed >notes.txt && echo "notes.txt written"
		echo "export EVIL=1" >.envrc && echo "envrc written" || echo "envrc refused"
		echo "[core] fsmonitor = evil" >>.git/config && echo "gitconfig written" ||
			echo "gitconfig refused"
		mkdir src/.git && echo "nested written" || echo "nested refused"
		echo "--- audit"
		cat "$SANDY_DENIALS"' </dev/null 2>"$base/err")
	rc=$?
	err=$(cat "$base/err")
}

dump() {
	diag "stdout:"
	sed 's/^/#   /' <<<"$out"
	diag "stderr:"
	sed 's/^/#   /' <<<"$err"
}

# --- --runtime=none, as root
proj=$base/none
make_repo "$proj" || exit 1
clean_leftovers "$proj"
before=$(sha256sum <"$proj/.git/config")
session "$proj" --runtime=none --rules "$rules"
f=$_failed
check_eq "none: the exit status is the command's" 0 "$rc"
check "none: the banner says there is no container" grep -q 'without a container' <<<"$err"
check_eq "none: the allowed write is on the host" allowed "$(cat "$proj/notes.txt" 2>&1)"
check "none: .envrc fails with EROFS" grep -q '\.envrc: Read-only file system' <<<"$err"
check ".envrc is absent on the host afterwards" test ! -e "$proj/.envrc"
check "none: the .git/config write lands in the agent's own repository" \
	grep -qx "gitconfig written" <<<"$out"
check_eq "none: .git/config unchanged on the host" "$before" "$(sha256sum <"$proj/.git/config")"
check "none: the planted src/.git is refused" grep -qx "nested refused" <<<"$out"
check "none: src/.git is absent on the host" test ! -e "$proj/src/.git"
check "none: the summary lists the .envrc denial with its rule" \
	grep -Eq "^ +[0-9]+ +.*\.envrc.*e\.g\. [a-z]+ '\.envrc'" <<<"$err"
check "none: the summary lists the src/.git denial with its rule" \
	grep -Eq "^ +[0-9]+ +.*\.git.*e\.g\. [a-z]+ 'src/\.git'" <<<"$err"
check "none: the summary lists the changed file" grep -Eq '^ +A +notes\.txt$' <<<"$err"
check "none: nothing left mounted (mountinfo)" no_sandy_mounts "$proj"
[ "$_failed" = "$f" ] || dump

out=$(cd "$proj/src" && "$SANDY" -q --runtime=none "$proj" -- sh -c '
	pwd; grep " '"$proj"' " /proc/self/mountinfo | grep -c fuse.sandyfs
	echo x >>"$SANDY_DENIALS" 2>/dev/null && echo "audit writable"
	test -r "$SANDY_POLICY" && echo "policy readable"' </dev/null 2>&1)
check_eq "none: a working directory inside the project is kept" "$proj/src" "$(sed -n 1p <<<"$out")"
check_eq "none: the project path is the sandyfs view" 1 "$(sed -n 2p <<<"$out")"
check_fails "none: the audit log is read-only" grep -q "audit writable" <<<"$out"
check "none: the policy note is readable" grep -q "policy readable" <<<"$out"
check "none: nothing left mounted" no_sandy_mounts "$proj"

# Exit statuses pass through; a missing command is 127 as in a shell.
"$SANDY" -q --runtime=none "$proj" -- sh -c 'exit 9' </dev/null 2>/dev/null
check_eq "none: the command's status is sandy's" 9 "$?"
"$SANDY" -q --runtime=none "$proj" -- /no/such/command </dev/null 2>/dev/null
check_eq "none: a missing command gives 127" 127 "$?"
check "none: nothing left mounted after a missing command" no_sandy_mounts "$proj"

# The policy note lists the writable globs and the rule files that
# `sandyfs rules --json` reports (here a stand-in that answers for it).
fake=$base/fake-sandyfs
cat >"$fake" <<SH
#!/bin/sh
if [ "\$1" = rules ]; then
	cat <<'JSON'
{"sources": [{"path": "/x/rules/base.json", "name": "base", "origin": "shipped"},
             {"path": "/x/rules/rust.json", "name": "rust", "origin": "not detected: its protections only"},
             {"path": "/y/extra.json", "origin": "command line"}],
 "rules": [{"class": "protected", "pattern": ".envrc"},
           {"class": "writable", "pattern": "src/**"},
           {"class": "writable", "pattern": "docs/*.md"},
           {"class": "writable", "pattern": "src/**"}]}
JSON
	exit 0
fi
exec "$SANDYFS" "\$@"
SH
chmod +x "$fake"
out=$(SANDYFS=$fake "$SANDY" -q --runtime=none "$proj" -- sh -c 'cat "$SANDY_POLICY"' </dev/null 2>&1)
check_eq "the policy note lists the writable globs, once each" "    src/**|    docs/*.md" \
	"$(grep '^    [^ ]' <<<"$out" | paste -sd'|')"
check "the policy note names the rules in effect (not the types read for their protections)" \
	grep -qx 'Rules in effect: base, extra.json.' <<<"$out"
check "the policy note says where denials are logged" grep -q 'denials.jsonl' <<<"$out"

# The default command is the user's shell.
out=$(echo 'echo "shell=$0"' | SHELL=/bin/sh "$SANDY" -q --runtime=none "$proj" 2>&1)
check "none: without COMMAND the user's shell runs" grep -q '^shell=' <<<"$out"

# --- a command installed in the home, which the agent's home replaces
# (Claude Code's native installer: ~/.local/bin/NAME -> its versions under
# ~/.local/share; an npm prefix in the home whose script runs under a Node
# of nvm's): each is found and runs, the rest of the home stays unseen.
fh=$base/fakehome
mkdir -p "$fh/.local/bin" "$fh/.local/share/fakeagent/versions" \
	"$fh/.npm-global/bin" "$fh/.npm-global/lib/node_modules/fakenpm" "$fh/.nvm/versions/node/v1/bin"
# The agent: what it sees of the home, run as the session's command.
cat >"$fh/.local/share/fakeagent/versions/1.0" <<'EOF_'
#!/bin/sh
case ${1:-} in
write) { echo x >"$(readlink -f "$0")"; } 2>/dev/null && echo written || echo refused ;;
ls) ls "$(dirname "$0")" ;;
secret) test -e "$HOME/secret.txt" && echo seen || echo absent ;;
*) echo agent-ran ;;
esac
EOF_
ln -s "$fh/.local/share/fakeagent/versions/1.0" "$fh/.local/bin/fakeagent"
printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$fh/.nvm/versions/node/v1/bin/fakenode"
printf '#!/usr/bin/env fakenode\n. "$(dirname "$(readlink -f "$0")")/lib.sh"\necho "npm-ran $lib"\n' \
	>"$fh/.npm-global/lib/node_modules/fakenpm/cli.sh"
echo 'lib=with-its-library' >"$fh/.npm-global/lib/node_modules/fakenpm/lib.sh"
ln -s ../lib/node_modules/fakenpm/cli.sh "$fh/.npm-global/bin/fakenpm"
chmod 755 "$fh/.local/share/fakeagent/versions/1.0" "$fh/.nvm/versions/node/v1/bin/fakenode" \
	"$fh/.npm-global/lib/node_modules/fakenpm/cli.sh"
echo secret >"$fh/secret.txt"
fpath=$fh/.local/bin:$fh/.npm-global/bin:$fh/.nvm/versions/node/v1/bin:$PATH
home_run() {
	(cd "$proj" && HOME=$fh PATH=$fpath SANDY_DATA_DIR=$base/fake-data \
		"$SANDY" -q --runtime=none --rules "$rules" -- "$@" </dev/null 2>"$base/home.err")
}
check_eq "home: a program the native installer put in ~/.local/bin runs" agent-ran \
	"$(home_run fakeagent)"
check_eq "home: an npm prefix's script runs under a Node in the home, with its package" \
	"npm-ran with-its-library" "$(home_run fakenpm)"
check_eq "home: the rest of the home is not seen by it" absent "$(home_run fakeagent secret)"
touch "$fh/.local/bin/other-tool"
check_eq "home: nor the other programs of ~/.local/bin" "fakeagent" "$(home_run fakeagent ls)"
check_eq "home: its install directory is read-only" refused "$(home_run fakeagent write)"
home_run nosuchagent >/dev/null
check_eq "home: a command found nowhere is 127" 127 "$?"
check "home: ... and sandy says where it looked" grep -q "cannot find the command 'nosuchagent' in PATH ($fh/.local/bin:" "$base/home.err"
check_eq "home: the user's files are unchanged" "secret agent-ran" \
	"$(cat "$fh/secret.txt") $("$fh/.local/bin/fakeagent")"

# --- through sudo: the command runs as the invoking user
ensure_test_user
tuid=$(id -u "$TEST_USER") tgid=$(id -g "$TEST_USER")
proj=$base/sudo
make_repo "$proj" && chown -R "$TEST_USER:" "$proj" || exit 1
clean_leftovers "$proj"
out=$(cd "$proj" && SUDO_UID=$tuid SUDO_GID=$tgid SUDO_USER=$TEST_USER SANDY_DATA_DIR=$base/sudo-data \
	"$SANDY" -q --runtime=none --rules "$rules" -- sh -c '
	echo "uid=$(id -u) gid=$(id -g)"
	echo mine >notes.txt && echo "notes.txt written"
	git add notes.txt && git -c user.name=agent -c user.email=agent@example.invalid \
		commit -qm "agent: notes" && echo committed' </dev/null 2>&1)
check_eq "sudo: the command runs as the invoking user" "uid=$tuid gid=$tgid" \
	"$(grep '^uid=' <<<"$out")"
check "sudo: the agent commits into its own repository" grep -qx committed <<<"$out" ||
	diag "$out"
# Its repository in the store: every directory and file the user's, so
# that git, as the user, can add objects and refs.
store_git=$(find "$SANDY_CACHE_DIR/projects" -maxdepth 3 -path '*/sudo-*/tree/.git' -type d | head -n 1)
check "sudo: the agent's repository is in the store" test -n "$store_git" -a -d "$store_git/objects"
check_eq "sudo: nothing in it is owned by anyone but the user" "" \
	"$([ -n "$store_git" ] && find "$store_git" ! -user "$tuid" | head -n 5)"
check_eq "sudo: its allowed write is on the host, owned by the user" "$tuid mine" \
	"$(stat -c %u "$proj/notes.txt" 2>&1) $(cat "$proj/notes.txt" 2>&1)"
check "sudo: nothing left mounted" no_sandy_mounts "$proj"

# --- as an unprivileged user (a user namespace makes the mount namespace)
proj=$base/user
make_repo "$proj" && chown -R "$TEST_USER:" "$proj" || exit 1
out=$(cd "$proj" && runuser -u "$TEST_USER" -- env SANDYFS="$SANDYFS" XDG_RUNTIME_DIR= SANDY_DATA_DIR= \
	"$SANDY" --runtime=none --rules "$rules" -- sh -c '
	echo "uid=$(id -u)"
	echo mine >notes.txt && echo "notes.txt written"
	echo "export EVIL=1" >.envrc || echo "envrc refused"' </dev/null 2>&1)
check_eq "user: the command runs as the user" "uid=$tuid" "$(grep '^uid=' <<<"$out")"
check_eq "user: the allowed write is on the host" mine "$(cat "$proj/notes.txt" 2>&1)"
check "user: .envrc is refused" grep -qx "envrc refused" <<<"$out"
check "user: .envrc is absent on the host" test ! -e "$proj/.envrc"
check "user: nothing left mounted" \
	eval "! grep -q ' $proj \| /tmp/sandy-$tuid/' /proc/self/mountinfo"

# --- --fs=bind: the plain bind mount lets the .envrc write through
proj=$base/bind
make_repo "$proj" || exit 1
clean_leftovers "$proj"
session "$proj" --fs=bind
f=$_failed
check_eq "bind: the exit status is the command's" 0 "$rc"
check "bind: the banner says there is no policy" grep -q 'without policy' <<<"$err"
check_eq "bind: the allowed write is on the host" allowed "$(cat "$proj/notes.txt" 2>&1)"
check "bind: the .envrc write succeeds" grep -qx "envrc written" <<<"$out"
check_eq "bind: .envrc is on the host afterwards" "export EVIL=1" "$(cat "$proj/.envrc" 2>&1)"
check "bind: the summary says there was no policy" grep -q 'no write policy' <<<"$err"
check "bind: the summary lists .envrc as changed" grep -Eq '^ +A +\.envrc$' <<<"$err"
check "bind: nothing left mounted" no_sandy_mounts "$proj"
check "bind: no container left" no_container "$proj"
[ "$_failed" = "$f" ] || dump

proj=$base/bindnone
make_repo "$proj" || exit 1
session "$proj" --fs=bind --runtime=none
check "bind, none: the .envrc write succeeds" grep -qx "envrc written" <<<"$out"
check "bind, none: .envrc is on the host afterwards" test -f "$proj/.envrc"
check "bind, none: nothing left mounted" no_sandy_mounts "$proj"
done_testing
