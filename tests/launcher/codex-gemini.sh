#!/usr/bin/env bash
# The real Codex CLI and Gemini CLI (installed from the npm registry at
# set-up, scripts/deps.sh; in images of their own by `sandy build-image`),
# run headless through sandy against a local stand-in for their APIs
# (fakeapi.py: OpenAI's Responses API, Google's Gemini API) that answers
# with scripted tool calls in each CLI's own tools (Codex: apply_patch and
# exec_command from its exec tool; Gemini: write_file, replace and
# run_shell_command). Under bubblewrap and in docker: the allowed writes
# land on the host, planted executable config is refused and absent, what
# each refused call told the model names the path and says the filesystem
# is read-only, npm test runs, the agent commits into its own repository,
# the host's .git is byte-identical, the agent's home and repository
# persist into a second session, and `sandy git import` brings the commit
# back. Claude Code's test, with the sudo-style runs: claude.sh.
#
# The stand-in and how sessions reach it: tests/launcher/agents.bash.
source "$SANDY_SRC/tests/launcher/agents.bash"
require_docker
new_project

for cli in codex gemini; do
	check "the $cli CLI is installed (scripts/deps.sh installs it from npm)" command -v "$cli"
	command -v "$cli" >/dev/null || done_testing
	diag "$cli $("$cli" --version 2>&1)"
done
check "the test internet and the stand-in API come up" start_api || done_testing
unset SANDY_IMAGE
export CODEX_API_KEY=sk-test-not-a-key GEMINI_API_KEY=test-not-a-key

# Gemini CLI reads its API key only once told to use one, and asks before
# each tool in a folder it was not told to trust: the user's settings,
# which sandy carries into the agent's home.
mkdir -p "$HOME/.gemini"
printf '{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}}\n' \
	>"$HOME/.gemini/settings.json"

# Codex's tool calls: JavaScript for its exec tool, which calls the nested
# tools and hands their results back.
patch_add() { # PATH CONTENT-LINE
	local p
	p=$(printf '*** Begin Patch\n*** Add File: %s\n+%s\n*** End Patch\n' "$1" "$2" | jq -Rs .)
	jq -cn --arg js "try { text(await tools.apply_patch($p)); } catch (e) { text(String(e)); }" \
		'{tool: "exec", input: $js}'
}
codex_sh() {
	local c
	c=$(jq -cn --arg c "$1" '{cmd: $c}')
	jq -cn --arg js "text(await tools.exec_command($c));" '{tool: "exec", input: $js}'
}
# Gemini CLI's.
gwrite() { jq -cn --arg p "$1" --arg c "$2" '{tool: "write_file", input: {file_path: $p, content: $c}}'; }
greplace() {
	jq -cn --arg p "$1" --arg o "$2" --arg n "$3" \
		'{tool: "replace", input: {file_path: $p, old_string: $o, new_string: $n, instruction: "fix the answer"}}'
}
gsh() { jq -cn --arg c "$1" '{tool: "run_shell_command", input: {command: $c, description: "run"}}'; }

commit_cmd="git add src && git -c user.name=agent -c user.email=agent@example.invalid commit -qm 'agent: hello' && echo committed"

# first_session AGENT NAME WS: the first session's calls for AGENT.
first_session() {
	local ws=$3
	case $1 in
	codex)
		scenario "$2" \
			"$(patch_add src/hello.js "exports.hello = () => 'hello';")" \
			"$(patch_add .envrc "export PATH=/tmp/evil:\$PATH")" \
			"$(codex_sh "sed -i 's/return 1;/return 2;/' src/app.js && npm test")" \
			"$(codex_sh "mkdir -p .vscode && echo '{\"tasks\": []}' > .vscode/tasks.json")" \
			"$(codex_sh "mkdir -p .husky && echo 'touch /tmp/pwned' > .husky/pre-commit")" \
			"$(codex_sh "$commit_cmd")" \
			"$(codex_sh "echo remembered > ~/agent-note")"
		;;
	gemini)
		scenario "$2" \
			"$(gwrite "$ws/src/hello.js" "exports.hello = () => 'hello';
")" \
			"$(gwrite "$ws/.envrc" "export PATH=/tmp/evil:\$PATH
")" \
			"$(greplace "$ws/src/app.js" "return 1;" "return 2;")" \
			"$(gsh "npm test")" \
			"$(gsh "mkdir -p .vscode && echo '{\"tasks\": []}' > .vscode/tasks.json")" \
			"$(gsh "mkdir -p .husky && echo 'touch /tmp/pwned' > .husky/pre-commit")" \
			"$(gsh "$commit_cmd")" \
			"$(gsh "echo remembered > ~/agent-note")"
		;;
	esac
}

# second_session AGENT NAME: the second session's: the repository's last
# commit, the note in the agent's home.
second_session() {
	case $1 in
	codex) scenario "$2" "$(codex_sh "git log -1 --format=%s")" "$(codex_sh "cat ~/agent-note")" ;;
	gemini) scenario "$2" "$(gsh "git log -1 --format=%s")" "$(gsh "cat ~/agent-note")" ;;
	esac
}

# agent AGENT NAME SANDY-OPTIONS...: runs AGENT headless on prompt NAME,
# against the stand-in at BASE (the URL of its host and port).
agent() {
	local cli=$1 name=$2
	shift 2
	case $cli in
	codex)
		run_agent "$name" "$@" -- codex exec -c "openai_base_url=$BASE/v1" \
			--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$name"
		;;
	gemini)
		GOOGLE_GEMINI_BASE_URL=$BASE run_agent "$name" "$@" -- gemini -p "$name" --yolo
		;;
	esac
}

# check_sessions AGENT RUNTIME-NAME PROJECT WS SANDY-OPTIONS...: both
# sessions of AGENT and what the host has after them.
check_sessions() {
	local cli=$1 n=$1-$2 p=$3 ws=$4
	shift 4
	new_node_project "$p" || exit 1
	clean_leftovers "$p"
	local before
	before=$(git_digest "$p")
	first_session "$cli" "$n" "$ws"
	(cd "$p" && agent "$cli" "$n" "$@")
	told "$n" 0 "the allowed write succeeds" '.'
	check_eq "$n: the allowed write is on the host" "exports.hello = () => 'hello';" \
		"$(cat "$p/src/hello.js" 2>&1)"
	if [ "$cli" = codex ]; then
		# Codex's apply_patch reports which file it could not write, not
		# why; its shell commands below get the system's EROFS message.
		told "$n" 1 "the model is told .envrc could not be written" 'failed to write file .*\.envrc'
	else
		refused "$n" 1 .envrc
	fi
	check "$n: .envrc is absent on the host" test ! -e "$p/.envrc" -a ! -L "$p/.envrc"
	local k=2
	if [ "$cli" = gemini ]; then
		told "$n" 2 "the edit succeeds" 'success'
		k=3
	fi
	check "$n: the edit is on the host" grep -q 'return 2;' "$p/src/app.js"
	told "$n" $k "npm test passes through the mount" 'tests passed'
	refused "$n" $((k + 1)) .vscode
	check "$n: .vscode is absent on the host" test ! -e "$p/.vscode"
	refused "$n" $((k + 2)) .husky
	check "$n: .husky is absent on the host" test ! -e "$p/.husky"
	told "$n" $((k + 3)) "the agent commits into its own repository" 'committed'
	check "$n: nothing ran on the host (/tmp/pwned absent)" test ! -e /tmp/pwned
	check_eq "$n: the host's .git is byte-identical" "$before" "$(git_digest "$p")"
	check "$n: nothing left mounted" no_sandy_mounts "$p"
	check "$n: no container left" no_container "$p"

	second_session "$cli" "$n-2"
	(cd "$p" && agent "$cli" "$n-2" "$@")
	told "$n-2" 0 "the agent's repository persists into a second session" 'agent: hello'
	told "$n-2" 1 "the agent's home persists into a second session" 'remembered'
	check_import "$n" "$p"
}

for cli in codex gemini; do
	# --- bubblewrap, the CLI installed on the host -------------------------
	BASE=http://allowed.test:8080
	check_sessions "$cli" none "$base/$cli-none" "$base/$cli-none" --runtime=none --network=filtered \
		--allow allowed.test

	# --- docker: an image with the CLI, the gateway's allowlist ------------
	"$SANDY" build-image --image "sandy-$cli" -- --build-arg "AGENT_PACKAGE=$(
		case $cli in codex) echo @openai/codex ;; gemini) echo @google/gemini-cli ;; esac
	)" --build-arg "AGENT_COMMAND=$cli" >"$base/build-$cli.log" 2>&1
	check_eq "sandy build-image --image sandy-$cli: exit status 0" 0 "$?" ||
		tail -n 20 "$base/build-$cli.log" | sed 's/^/#   /'
	BASE=http://allowed.test:8080
	check_sessions "$cli" docker "$base/$cli-docker" /workspace \
		--image "sandy-$cli" --network=filtered --allow allowed.test
done
done_testing
