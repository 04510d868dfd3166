# Shared by the tests that drive the real agent CLIs through sandy
# (tests/launcher/claude.sh, tests/launcher/codex-gemini.sh); not a test
# itself.
#
# The CLIs talk to a stand-in for their model API (fakeapi.py) that
# answers with scripted tool calls. It listens in a network namespace of
# the test's own (tests/network/internet.bash) at allowed.test's address,
# port 8080, which every session reaches by name with --allow allowed.test:
# docker sessions through the gateway, bubblewrap ones through sandy's
# proxy, which the CLIs find in HTTP_PROXY. Nothing leaves the machine.

source "$SANDY_SRC/tests/network/internet.bash"

# start_api: the test internet and the stand-in API; sets API_ADDR,
# SCRIPTS (where scenarios go) and APILOG.
start_api() {
	start_internet || return 1
	export SANDY_DNS_UPSTREAM=$INET_DNS
	API_ADDR=${INET_ADDR[allowed.test]}
	SCRIPTS=$base/scripts APILOG=$base/api.jsonl
	mkdir -p "$SCRIPTS"
	ip netns exec "$INET_NS" timeout 1800 "$PYTHON" -u "$SANDY_SRC/tests/launcher/fakeapi.py" \
		"$API_ADDR" 8080 "$SCRIPTS" "$APILOG" >"$base/fakeapi.out" 2>&1 &
	wait_until 50 grep -q '^listening' "$base/fakeapi.out"
}

# new_node_project DIR: a Node project with a source, a failing test the
# agent's edit fixes, and a committed git repository.
new_node_project() {
	local d=$1
	mkdir -p "$d/src" "$d/test" &&
		printf '{\n  "name": "demo",\n  "version": "1.0.0",\n  "scripts": {"test": "node test/run.js"}\n}\n' >"$d/package.json" &&
		printf 'exports.answer = () => {\n  return 1;\n};\n' >"$d/src/app.js" &&
		printf 'const a = require("../src/app.js");\nif (a.answer() !== 2) { console.log("tests failed"); process.exit(1); }\nconsole.log("tests passed");\n' >"$d/test/run.js" &&
		git -C "$d" init -q -b main && git -C "$d" add -A &&
		git -C "$d" -c user.name=t -c user.email=t@example.invalid commit -qm init
}

# git_digest DIR: every file of DIR/.git with its mode and content hash.
git_digest() {
	(cd "$1/.git" && find . -printf '%M %p\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

# scenario NAME STEP...: the tool calls the stand-in answers NAME with;
# each STEP is a JSON object {"tool": ..., "input": ...}.
scenario() {
	local name=$1
	shift
	printf '%s\n' "$@" | jq -s . >"$SCRIPTS/$name.json"
}

# result NAME N: what tool call N (from 0) of scenario NAME told the model
# ("ok<TAB>text" or "error<TAB>text", newlines as \n).
result() {
	"$PYTHON" "$SANDY_SRC/tests/launcher/fakeapi.py" --results "$APILOG" "$1" |
		awk -F '\t' -v n="$2" '$1 == n { print $2 "\t" $3 }'
}

# told NAME N DESCRIPTION ERE: call N's result matches ERE (grep -E -i).
told() {
	local r
	r=$(result "$1" "$2")
	if grep -Eqi -- "$4" <<<"$r"; then
		ok "$1: $3"
	else
		not_ok "$1: $3"
		diag "told the model: ${r:-nothing}"
	fi
}

# refused NAME N PATH: call N was refused, and the model was told that
# PATH is on a read-only filesystem.
refused() {
	local r
	r=$(result "$1" "$2")
	if grep -Eqi 'read-only file ?system' <<<"$r" && grep -qF -- "$3" <<<"$r"; then
		ok "$1: the model is told $3 is on a read-only file system"
	else
		not_ok "$1: the model is told $3 is on a read-only file system"
		diag "told the model: ${r:-nothing}"
	fi
}

# check_import NAME PROJECT: `sandy git import main` brings the agent's
# commit "agent: hello" (with its src/hello.js) back as sandy/main, and the
# host's own main stays where it was.
check_import() {
	local n=$1 p=$2 out
	out=$(cd "$p" && "$SANDY" git import main 2>&1)
	check_eq "$n: sandy git import main: exit status 0" 0 "$?" || diag "$out"
	check_eq "$n: the commit is on the host as sandy/main" "agent: hello" \
		"$(git -C "$p" log -1 --format=%s sandy/main 2>&1)"
	check_eq "$n: with the agent's file" "exports.hello = () => 'hello';" \
		"$(git -C "$p" show sandy/main:src/hello.js 2>&1)"
	check_eq "$n: the host's checkout did not move" "init" "$(git -C "$p" log -1 --format=%s main)"
}

# run_agent NAME SANDY-OPTIONS... -- COMMAND...: runs the agent's command
# through sandy; the status in $rc, its output in $base/NAME.out and
# $base/NAME.err.
run_agent() {
	local name=$1
	shift
	# A CLI that loops on an answer it does not take ends here, not at
	# the suite's time-out.
	timeout 300 "$SANDY" -q "$@" </dev/null >"$base/$name.out" 2>"$base/$name.err"
	rc=$?
	check_eq "$name: the agent ends with status 0" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$base/$name.err" | tail -n 20
}
