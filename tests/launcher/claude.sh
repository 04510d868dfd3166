#!/usr/bin/env bash
# The real Claude Code CLI (installed from the npm registry at set-up,
# scripts/deps.sh; in the image by `sandy build-image`), run headless
# through sandy against a local stand-in for the Messages API
# (fakeapi.py) that answers with scripted tool calls: Write, Read, Edit
# and Bash, as a model would send them. In bubblewrap and in docker (the
# real agent image, the gateway's allowlist), as root and the way sudo
# runs it: the allowed writes land on the host, every planted executable
# config is refused and absent, what each refused call told the model
# names the path and says the filesystem is read-only, the host's .git is
# byte-identical, the agent's home and repository persist into a second
# session, and `sandy git import` brings the agent's commit back.
#
# The stand-in and how sessions reach it: tests/launcher/agents.bash.
source "$SANDY_SRC/tests/launcher/agents.bash"
require_docker
new_project

claude=$(command -v claude)
check "the Claude Code CLI is installed (scripts/deps.sh installs it from npm)" test -n "$claude"
[ -n "$claude" ] || done_testing
diag "$("$claude" --version 2>&1)"
check "the test internet and the stand-in API come up" start_api || done_testing

# The variables Claude Code reads, passed by sandy's allowlist for it.
export ANTHROPIC_API_KEY=sk-ant-test-not-a-key DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
unset SANDY_IMAGE

# agent NAME SANDY-OPTIONS...: runs claude -p NAME through sandy.
agent() {
	local name=$1
	shift
	run_agent "$name" "$@" -- claude -p "$name" --dangerously-skip-permissions --output-format text
}

# Claude Code's tools, as the model calls them.
write() { jq -cn --arg p "$1" --arg c "$2" '{tool: "Write", input: {file_path: $p, content: $c}}'; }
read_() { jq -cn --arg p "$1" '{tool: "Read", input: {file_path: $p}}'; }
edit() { jq -cn --arg p "$1" --arg o "$2" --arg n "$3" '{tool: "Edit", input: {file_path: $p, old_string: $o, new_string: $n}}'; }
bash_() { jq -cn --arg c "$1" '{tool: "Bash", input: {command: $c, description: "run"}}'; }

# planted_first NAME WS: the first session's calls, with the project at WS.
planted_first() {
	local ws=$2
	scenario "$1" \
		"$(write "$ws/src/hello.js" "exports.hello = () => 'hello';
")" \
		"$(read_ "$ws/src/app.js")" \
		"$(edit "$ws/src/app.js" "return 1;" "return 2;")" \
		"$(write "$ws/.envrc" "export PATH=/tmp/evil:\$PATH
")" \
		"$(write "$ws/.claude/settings.json" '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}')" \
		"$(bash_ "mkdir -p .vscode && echo '{\"tasks\": []}' > .vscode/tasks.json")" \
		"$(bash_ "mkdir -p .husky && echo 'touch /tmp/pwned' > .husky/pre-commit")" \
		"$(bash_ "ln -s /etc/passwd src/passwd")" \
		"$(bash_ "npm test")" \
		"$(bash_ "git add src && git -c user.name=agent -c user.email=agent@example.invalid commit -qm 'agent: hello' && echo committed")" \
		"$(bash_ "echo remembered > ~/agent-note")"
}

# check_first NAME PROJECT: the host after planted_first's session.
check_first() {
	local n=$1 p=$2
	told "$n" 0 "the allowed Write succeeds" '^ok'
	check_eq "$n: the allowed write is on the host" "exports.hello = () => 'hello';" "$(cat "$p/src/hello.js" 2>&1)"
	told "$n" 2 "the Edit after a Read succeeds" '^ok'
	check "$n: the edit is on the host" grep -q 'return 2;' "$p/src/app.js"
	refused "$n" 3 .envrc
	check "$n: .envrc is absent on the host" test ! -e "$p/.envrc" -a ! -L "$p/.envrc"
	# The Write tool makes the directory first: that is what is refused.
	refused "$n" 4 .claude
	check "$n: .claude is absent on the host" test ! -e "$p/.claude"
	refused "$n" 5 .vscode
	check "$n: .vscode is absent on the host" test ! -e "$p/.vscode"
	refused "$n" 6 .husky
	check "$n: no hook on the host" test ! -e "$p/.husky"
	refused "$n" 7 src/passwd
	check "$n: the symlink to /etc/passwd is absent on the host" test ! -L "$p/src/passwd"
	told "$n" 8 "npm test passes through the mount" 'tests passed'
	told "$n" 9 "the agent commits into its own repository" '^ok.*committed'
	check "$n: nothing ran on the host (/tmp/pwned absent)" test ! -e /tmp/pwned
}

# --- bubblewrap, as root --------------------------------------------------
p1=$base/none
new_node_project "$p1" || exit 1
clean_leftovers "$p1"
before=$(git_digest "$p1")
planted_first none "$p1"
# Through sandy's proxy, which resolves allowed.test with the test
# internet's resolver (SANDY_DNS_UPSTREAM), as the gateway does.
export ANTHROPIC_BASE_URL=http://allowed.test:8080
# IS_SANDBOX: Claude Code refuses --dangerously-skip-permissions to root
# unless told it is in a sandbox, which it is.
(cd "$p1" && agent none --runtime=none --network=filtered --allow allowed.test -e IS_SANDBOX=1)
check_first none "$p1"
check_eq "none: the host's .git is byte-identical" "$before" "$(git_digest "$p1")"
check "none: nothing left mounted" no_sandy_mounts "$p1"

scenario none2 "$(bash_ "git log -1 --format=%s")" "$(bash_ "cat ~/agent-note")"
(cd "$p1" && agent none2 --runtime=none --network=filtered --allow allowed.test -e IS_SANDBOX=1)
told none2 0 "the agent's repository persists into a second session" '^ok	agent: hello'
told none2 1 "the agent's home persists into a second session" '^ok	remembered'
check "none2: Claude Code's own state is in the agent's home" \
	test -f "$SANDY_DATA_DIR/home/claude/.claude.json"

out=$(cd "$p1" && "$SANDY" git list 2>&1)
check "sandy git list shows the agent's main with its commit" grep -q 'main' <<<"$out" || diag "$out"
check_import none "$p1"

# --- bubblewrap, the way sudo runs it -------------------------------------
ensure_test_user
tuid=$(id -u "$TEST_USER") tgid=$(id -g "$TEST_USER")
p2=$base/sudo
new_node_project "$p2" && chown -R "$TEST_USER:" "$p2" || exit 1
clean_leftovers "$p2"
before=$(git_digest "$p2")
scenario sudo \
	"$(write "$p2/src/sudo.js" "exports.who = 'sudo';
")" \
	"$(write "$p2/.envrc" "export EVIL=1
")" \
	"$(bash_ "id -u; git add src && git -c user.name=agent -c user.email=agent@example.invalid commit -qm 'agent: sudo' && echo committed")"
(cd "$p2" && SUDO_UID=$tuid SUDO_GID=$tgid SUDO_USER=$TEST_USER SANDY_DATA_DIR=$base/sudo-data \
	agent sudo --runtime=none --network=filtered --allow allowed.test)
told sudo 0 "the allowed Write succeeds" '^ok'
check_eq "sudo: the allowed write is on the host, the user's" "$tuid" "$(stat -c %u "$p2/src/sudo.js" 2>&1)"
refused sudo 1 .envrc
check "sudo: .envrc is absent on the host" test ! -e "$p2/.envrc"
told sudo 2 "the agent runs as the user and commits" "^ok	$tuid\\\\n.*committed"
check_eq "sudo: the host's .git is byte-identical" "$before" "$(git_digest "$p2")"

# --- docker: the real agent image, the gateway's allowlist ----------------
SANDY_IMAGE= "$SANDY" build-image >"$base/build.log" 2>&1
check_eq "sandy build-image (the agent and gateway images): exit status 0" 0 "$?" ||
	tail -n 20 "$base/build.log" | sed 's/^/#   /'
p3=$base/docker
new_node_project "$p3" || exit 1
clean_leftovers "$p3"
before=$(git_digest "$p3")
planted_first docker /workspace
export ANTHROPIC_BASE_URL=http://allowed.test:8080
(cd "$p3" && agent docker --network=filtered --allow allowed.test -e IS_SANDBOX=1)
check_first docker "$p3"
check_eq "docker: the host's .git is byte-identical" "$before" "$(git_digest "$p3")"
check "docker: nothing left mounted" no_sandy_mounts "$p3"
check "docker: no container left" no_container "$p3"

scenario docker2 "$(bash_ "git log -1 --format=%s")" "$(bash_ "cat ~/agent-note")" \
	"$(bash_ "curl -sS -m 5 -o /dev/null http://${INET_ADDR[blocked.test]}/ && echo reached || echo unreachable")" \
	"$(bash_ "getent hosts blocked.test || echo unresolved")"
(cd "$p3" && agent docker2 --network=filtered --allow allowed.test -e IS_SANDBOX=1)
told docker2 0 "the agent's repository persists into a second session" '^ok	agent: hello'
told docker2 1 "the agent's home persists into a second session" '^ok	remembered'
told docker2 2 "an address off the allowlist is unreachable" 'unreachable'
told docker2 3 "a name off the allowlist does not resolve" 'unresolved'
check_eq "blocked.test's server saw no request" 0 "$(http_hits blocked.test)"
check_import docker "$p3"

# --- docker, the way sudo runs it -----------------------------------------
p4=$base/docker-sudo
new_node_project "$p4" && chown -R "$TEST_USER:" "$p4" || exit 1
clean_leftovers "$p4"
scenario dsudo \
	"$(write /workspace/src/sudo.js "exports.who = 'sudo';
")" \
	"$(bash_ "id -u; git add src && git -c user.name=agent -c user.email=agent@example.invalid commit -qm 'agent: sudo' && echo committed")"
(cd "$p4" && SUDO_UID=$tuid SUDO_GID=$tgid SUDO_USER=$TEST_USER SANDY_DATA_DIR=$base/dsudo-data \
	agent dsudo --network=filtered --allow allowed.test)
told dsudo 0 "the allowed Write succeeds" '^ok'
check_eq "dsudo: the allowed write is on the host, the user's" "$tuid" "$(stat -c %u "$p4/src/sudo.js" 2>&1)"
told dsudo 1 "the agent runs as the user and commits" "^ok	$tuid\\\\n.*committed"
check "dsudo: no container left" no_container "$p4"
done_testing
