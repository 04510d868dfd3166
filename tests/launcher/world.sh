#!/usr/bin/env bash
# The agent's world, with docker and with --runtime=none: a home that lasts
# across sessions, the host's agent configuration shown read-only (and
# byte-identical afterwards), credentials copied once, the generated
# settings with the agent's sandbox off, git identity from a throwaway copy
# of the host's git config, ssh-agent forwarding and a dedicated key, the
# environment allowlist and --env, the shared folders. (badinput.sh checks
# that sandy never falls back to running without a sandbox.)
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project

# The host user's agent configuration and git identity.
mkdir -p "$HOME/.claude/commands" "$HOME/.claude/agents"
cat >"$HOME/.claude/settings.json" <<'JSON'
{"model": "host-model", "sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}}
JSON
echo "host memory line" >"$HOME/.claude/CLAUDE.md"
echo "say hello" >"$HOME/.claude/commands/hello.md"
echo "a reviewer" >"$HOME/.claude/agents/reviewer.md"
echo '{"claudeAiOauth": {"accessToken": "host-token"}}' >"$HOME/.claude/.credentials.json"
printf '[user]\n\temail = host@example.invalid\n\tname = Host User\n' >"$HOME/.gitconfig"
host_state() {
	(cd "$HOME" && find .claude .gitconfig -type f -print0 | sort -z | xargs -0 sha256sum)
}
before=$(host_state)

share=$base/share-not-yet
export SANDY_SHARE_DIR=$share

# --- docker, first session
out=$(ANTHROPIC_API_KEY=test-key UNRELATED_VAR=leak "$SANDY" -q --rules "$rules" \
	--env FOO=bar --env EMPTY= "$proj" -- sh -c '
	echo "home=$HOME"
	echo persisted >"$HOME/note.txt" && echo "home writable"
	echo "--- settings"; cat "$HOME/.claude/settings.json"; echo "--- end"
	echo x >"$HOME/.claude/settings.json" 2>/dev/null && echo "settings writable"
	echo x >>"$HOME/.claude/CLAUDE.md" 2>/dev/null && echo "memory writable"
	echo x >"$HOME/.claude/commands/hello.md" 2>/dev/null && echo "command writable"
	echo x >"$HOME/.claude/commands/new.md" 2>/dev/null && echo "commands dir writable"
	echo x >"$HOME/.claude/agents/reviewer.md" 2>/dev/null && echo "agent writable"
	grep -q "host memory line" "$HOME/.claude/CLAUDE.md" && echo "memory has the host line"
	grep -q "/run/sandy/POLICY.md" "$HOME/.claude/CLAUDE.md" && echo "memory points at the note"
	cat "$HOME/.claude/commands/hello.md"
	grep -q host-token "$HOME/.claude/.credentials.json" && echo "credentials copied"
	echo "email=$(git config --global user.email)"
	git config --global credential.helper x && echo "git config writable"
	echo "helper=$(git config --global credential.helper)"
	echo "FOO=${FOO-unset} EMPTY=${EMPTY-unset} KEY=${ANTHROPIC_API_KEY-unset} UNRELATED=${UNRELATED_VAR-unset}"
	echo shared >"$HOME/shared/from-inside" && echo "shared writable"
	echo spec >"$HOME/specs/from-inside" && echo "specs writable"
	grep -q "shared" /run/sandy/POLICY.md && echo "note names the shared folders"
	grep -qi "git" /run/sandy/POLICY.md && echo "note says how git works"' </dev/null 2>"$base/err")
rc=$?
f=$_failed
check_eq "session 1: the command succeeds" 0 "$rc"
check "the agent's home is at /home/sandy" grep -qx "home=/home/sandy" <<<"$out"
check "the agent's home is writable" grep -qx "home writable" <<<"$out"
check_eq "the agent's home is kept on the host under SANDY_DATA_DIR" persisted \
	"$(cat "$SANDY_DATA_DIR/home/claude/note.txt" 2>&1)"
settings=$(sed -n '/^--- settings$/,/^--- end$/p' <<<"$out" | sed '1d;$d')
json_get() { python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v[k]
print(json.dumps(v))' "$1"; }
check_eq "the generated settings switch the agent's sandbox off" false \
	"$(json_get sandbox.enabled <<<"$settings" 2>&1)"
check_eq "the generated settings keep the host's other settings" '"host-model"' \
	"$(json_get model <<<"$settings" 2>&1)"
check_fails "the settings are read-only inside" grep -q "settings writable" <<<"$out"
check_fails "the memory file is read-only inside" grep -q "memory writable" <<<"$out"
check_fails "a host command file is read-only inside" grep -q "command writable" <<<"$out"
check_fails "the commands directory is read-only inside" grep -q "commands dir writable" <<<"$out"
check_fails "a host agent file is read-only inside" grep -q "agent writable" <<<"$out"
check "the memory file keeps the host's memory" grep -q "memory has the host line" <<<"$out"
check "the memory file points the agent at the policy note" \
	grep -q "memory points at the note" <<<"$out"
check "the host's commands are visible" grep -qx "say hello" <<<"$out"
check "the host's credentials are copied into the new home" grep -q "credentials copied" <<<"$out"
check_eq "the host's agent configuration is byte-identical afterwards" "$before" "$(host_state)"
check_eq "the credentials copy is the user's only (mode 600)" 600 \
	"$(stat -c %a "$SANDY_DATA_DIR/home/claude/.claude/.credentials.json" 2>&1)"
check "git inside has the host's identity" grep -qx "email=host@example.invalid" <<<"$out"
check "git config --global is writable inside" grep -qx "git config writable" <<<"$out"
check "the change is read back inside" grep -qx "helper=x" <<<"$out"
check_fails "the host's git config did not get the change" grep -q helper "$HOME/.gitconfig"
check "--env NAME=VALUE, an empty value and an allowlisted key reach the container" \
	grep -qx "FOO=bar EMPTY= KEY=test-key UNRELATED=unset" <<<"$out"
check "SANDY_SHARE_DIR was created and ~/shared writes reach it" \
	test "$(cat "$share/from-inside" 2>&1)" = shared
check_eq "~/specs writes reach the host's ~/specs" spec "$(cat "$HOME/specs/from-inside" 2>&1)"
check "the note names the shared folders" grep -q "note names the shared folders" <<<"$out"
check "the note says how git works" grep -q "note says how git works" <<<"$out"
check "the mount is gone afterwards" no_sandy_mounts "$proj"
check "the session directory is removed (git and ssh trees too)" no_session_dir "$proj"
[ "$_failed" = "$f" ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; sed 's/^/#   /' "$base/err"; }

# The key never shows on a command line: docker gets the name only.
SANDY_DEBUG=1 ANTHROPIC_API_KEY=secret-value-123 "$SANDY" -q "$proj" -- true </dev/null \
	>/dev/null 2>"$base/debug"
check "an API key reaches docker by name, not on its command line" \
	eval "grep -q -- '--env=ANTHROPIC_API_KEY' '$base/debug' && ! grep -q secret-value-123 '$base/debug'"

# --- docker, second session: the home lasts, the git config copy does not
echo '{"claudeAiOauth": {"accessToken": "changed-on-host"}}' >"$HOME/.claude/.credentials.json"
out=$("$SANDY" -q "$proj" -- sh -c '
	cat "$HOME/note.txt"
	echo "helper=$(git config --global credential.helper)"
	grep -q changed-on-host "$HOME/.claude/.credentials.json" && echo "credentials copied again"
	true' </dev/null 2>"$base/err")
check "session 2: a file the agent wrote into its home is still there" \
	grep -qx persisted <<<"$out"
check "session 2: the git config is a fresh copy of the host's" grep -qx "helper=" <<<"$out"
check_fails "session 2: credentials are copied only into a new home" \
	grep -q "credentials copied again" <<<"$out"
before=$(host_state)

# A malformed host settings file: a clear error naming it, nothing started.
cp "$HOME/.claude/settings.json" "$base/settings.good"
echo '{"model": ' >"$HOME/.claude/settings.json"
"$SANDY" -q "$proj" -- sh -c 'echo started' </dev/null >"$base/out" 2>"$base/err"
rc=$?
check_eq "malformed settings: sandy fails with 125" 125 "$rc"
check "malformed settings: the error names the file" \
	grep -qF "$HOME/.claude/settings.json" "$base/err"
check_fails "malformed settings: the command did not start" grep -q started "$base/out"
check "malformed settings: nothing left mounted" no_sandy_mounts "$proj"
check "malformed settings: no session directory left" no_session_dir "$proj"
cp "$base/settings.good" "$HOME/.claude/settings.json"

# --- ssh: an agent holding a throwaway key, an empty one, a dedicated key
ssh-keygen -q -t ed25519 -N '' -C sandy-test -f "$base/deploy_key" || exit 1
eval "$(ssh-agent -a "$base/agent.sock" -s)" >/dev/null
at_exit "kill $SSH_AGENT_PID"
ssh-add -q "$base/deploy_key" 2>/dev/null
fp=$(ssh-keygen -lf "$base/deploy_key.pub" | awk '{print $2}')
out=$("$SANDY" -q "$proj" -- sh -c 'ssh-add -l' </dev/null 2>"$base/err")
check "ssh-add -l inside lists the forwarded agent's key" grep -qF "$fp" <<<"$out"
check_fails "no empty-agent warning for an agent with a key" grep -q 'no identities' "$base/err"
ssh-add -qD 2>/dev/null
"$SANDY" -q "$proj" -- true </dev/null 2>"$base/err"
check "an empty ssh-agent gives a warning" grep -q 'holds no identities' "$base/err"
unset SSH_AUTH_SOCK

mkdir -p "$base/keys"
cp "$base/deploy_key" "$base/keys/id_ed25519"
SANDY_SSH_KEY=$base/keys/id_ed25519 "$SANDY" -q "$proj" -- true </dev/null 2>"$base/err"
check "a key named id_ed25519 gives a warning" grep -q 'looks like a personal key' "$base/err"
out=$(SANDY_SSH_KEY=$base/deploy_key "$SANDY" -q "$proj" -- sh -c '
	stat -c "%a %u" "$SANDY_SSH_KEY"; cmp "$SANDY_SSH_KEY" /dev/null >/dev/null || echo nonempty
	echo "$GIT_SSH_COMMAND"' </dev/null 2>"$base/err")
check_fails "a key named deploy_key gives no warning" grep -q 'personal key' "$base/err"
check_eq "the key inside is mode 0400, the agent user's" "400 $(id -u)" "$(sed -n 1p <<<"$out")"
check "git's ssh uses the key" grep -q -- "-i /run/sandy/ssh/deploy_key" <<<"$out"
# Through sudo the key is the user's, not root's.
ensure_test_user
tuid=$(id -u "$TEST_USER")
out=$(SUDO_UID=$tuid SUDO_GID=$(id -g "$TEST_USER") SUDO_USER=$TEST_USER \
	SANDY_DATA_DIR=$base/sudo-data SANDY_SSH_KEY=$base/deploy_key "$SANDY" -q "$proj" -- \
	sh -c 'stat -c "%a %u" "$SANDY_SSH_KEY"; head -c 10 "$SANDY_SSH_KEY" >/dev/null && echo readable' \
	</dev/null 2>"$base/err")
check_eq "through sudo, the key inside is mode 0400, the user's" "400 $tuid" "$(sed -n 1p <<<"$out")"
check "through sudo, the agent can read its key" grep -qx readable <<<"$out"
SANDY_SSH_KEY=$base/no-such-key "$SANDY" -q "$proj" -- sh -c 'echo started' </dev/null \
	>"$base/out" 2>"$base/err"
check_eq "a missing SANDY_SSH_KEY: sandy fails with 125" 125 "$?"
check "a missing SANDY_SSH_KEY: the error names it" grep -qF "$base/no-such-key" "$base/err"
check_fails "a missing SANDY_SSH_KEY: nothing started" grep -q started "$base/out"
check_eq "the host's agent configuration is byte-identical after all sessions" "$before" \
	"$(host_state)"

# --- --runtime=none: a bubblewrap sandbox
echo "host bashrc" >"$HOME/.bashrc"
bashrc=$(sha256sum <"$HOME/.bashrc")
tmpname=sandy-probe-$$
out=$(cd "$proj" && "$SANDY" -q --runtime=none --rules "$rules" -- sh -c "
	echo \"home=\$HOME\"
	echo evil >>\"\$HOME/.bashrc\" && echo 'home bashrc written'
	echo x >/etc/$tmpname 2>/dev/null && echo 'etc writable'
	echo x >'$base/outside' 2>/dev/null && echo 'outside writable'
	echo x >/tmp/$tmpname && echo 'tmp writable'
	echo x >/var/tmp/$tmpname 2>/dev/null && echo 'var tmp writable'
	test -e /run/docker.sock && echo 'docker socket visible'
	echo mine >notes.txt && echo 'project write'
	echo x >\"\$HOME/.claude/settings.json\" 2>/dev/null && echo 'settings writable'
	grep -Eq '\"enabled\":[[:space:]]*false' \"\$HOME/.claude/settings.json\" && echo 'sandbox off'
	echo \"email=\$(git config --global user.email)\"
	git config --global core.editor vi && echo 'git config writable'
	grep NoNewPrivs /proc/self/status
	cat \"\$SANDY_POLICY\" | grep -q 'What you may write' && echo 'note readable'
	echo \"KEY=\${ANTHROPIC_API_KEY-unset} UNRELATED=\${UNRELATED_VAR-unset}\"" \
	</dev/null 2>"$base/err")
rc=$?
f=$_failed
check_eq "none: the command succeeds" 0 "$rc"
check "none: the home inside is the user's home path" grep -qx "home=$HOME" <<<"$out"
check "none: ~/.bashrc inside is the agent's own" grep -q 'home bashrc written' <<<"$out"
check_eq "none: the host's ~/.bashrc is unchanged" "$bashrc" "$(sha256sum <"$HOME/.bashrc")"
check_fails "none: /etc is read-only" grep -q 'etc writable' <<<"$out"
check "none: nothing reached /etc" test ! -e "/etc/$tmpname"
check_fails "none: a path outside the project and home is read-only" \
	grep -q 'outside writable' <<<"$out"
check "none: nothing reached it" test ! -e "$base/outside"
check "none: /tmp is writable inside" grep -q 'tmp writable' <<<"$out"
check "none: /tmp is private (nothing on the host's)" test ! -e "/tmp/$tmpname"
check_fails "none: /var/tmp is read-only" grep -q 'var tmp writable' <<<"$out"
check_fails "none: the docker socket is not reachable" grep -q 'docker socket visible' <<<"$out"
check_eq "none: the project write is on the host" mine "$(cat "$proj/notes.txt" 2>&1)"
check_fails "none: the agent settings are read-only" grep -q 'settings writable' <<<"$out"
check "none: the agent's sandbox is off in its settings" grep -q 'sandbox off' <<<"$out"
check "none: git has the host's identity" grep -qx "email=host@example.invalid" <<<"$out"
check "none: git config --global is writable" grep -q 'git config writable' <<<"$out"
check_fails "none: the host's git config did not change" grep -q editor "$HOME/.gitconfig"
check "none: no new privileges" grep -Eq '^NoNewPrivs:\s+1' <<<"$out"
check "none: the policy note is readable" grep -q 'note readable' <<<"$out"
check "none: unrelated variables do not pass" grep -qx "KEY=unset UNRELATED=unset" <<<"$out"
check "none: nothing left mounted" no_sandy_mounts "$proj"
check "none: the session directory is removed" no_session_dir "$proj"
check_eq "none: the host's agent configuration is byte-identical" "$before" "$(host_state)"
[ "$_failed" = "$f" ] || { diag "stdout:"; sed 's/^/#   /' <<<"$out"; sed 's/^/#   /' "$base/err"; }

# Bad --env and --agent are usage errors.
"$SANDY" --env '1BAD=x' "$proj" -- true </dev/null 2>"$base/err"
check_eq "a bad --env name is a usage error" 125 "$?"
"$SANDY" --agent nosuch "$proj" -- true </dev/null 2>"$base/err"
check_eq "an unknown --agent is a usage error" 125 "$?"
done_testing
