#!/usr/bin/env bash
# The main job on the bundled demo project: installs what is missing, builds
# sandy and sandyfs, and runs a command inside `sandy` on a copy of
# demo/project: one write the rules allow, three they refuse, and sandy's
# session summary. With a docker daemon answering, the command runs in a
# hardened container of the agent image (`sandy build-image`, from Debian
# packages and npm; a busybox image made locally when that cannot be
# built); without one, in a bubblewrap sandbox (--runtime=none). The copy
# lives in a temporary directory; the repository is never touched, and the
# agent's home and ~/specs are kept apart in it too.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
build=$(scripts/build.sh normal)
sandy="$PWD/$build/launcher/sandy"
sandyfs="$PWD/$build/fusefs/sandyfs"

work=$(mktemp -d /tmp/sandy-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
project="$work/project"
cp -a demo/project "$project"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git -C "$project" init -q -b main
git -C "$project" -c user.name=demo -c user.email=demo@example.invalid add -A
git -C "$project" -c user.name=demo -c user.email=demo@example.invalid commit -qm "demo project"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "what the policy says about a few names (sandyfs explain)"
"$sandyfs" explain "$project" src/hello.c .envrc .vscode/tasks.json .git/config

# The demo's agent world (home, ~/specs) stays in the temporary directory.
export SANDY_DATA_DIR="$work/data" HOME="$work/home"
mkdir -p "$HOME"
if docker info >/dev/null 2>&1; then
	step "the agent image (sandy build-image; cached after the first time)"
	if "$sandy" build-image; then
		runtime=(--runtime=docker)
		step "the agent's CLI in the image"
		"$sandy" -q "$project" -- claude --version </dev/null || true
	elif launcher/container/busybox-image.sh sandy-demo:busybox >/dev/null; then
		echo "demo: the agent image could not be built (is the network reachable?);" \
			"using a local busybox image"
		runtime=(--runtime=docker --image sandy-demo:busybox)
		# The gateway's image may be missing too: no network then.
		docker image inspect sandy-gateway:latest >/dev/null 2>&1 || runtime+=(--network=none)
	else
		runtime=(--runtime=none)
	fi
else
	runtime=(--runtime=none)
fi
step "sandy ${runtime[*]} $project -- sh -c '...'"
"$sandy" "${runtime[@]}" "$project" -- sh -c '
	echo "/* added inside the sandbox */" >>src/hello.c && echo "allowed: src/hello.c"
	echo "export EVIL=1" >.envrc || echo "denied: .envrc"
	mkdir -p .vscode && echo "{}" >.vscode/tasks.json || echo "denied: .vscode/tasks.json"
	echo "[core] fsmonitor = evil" >.git/config || echo "denied: .git/config"
	if [ -e /run/sandy/POLICY.md ] && grep -q "^Network: only" /run/sandy/POLICY.md; then
		getent hosts example.org >/dev/null 2>&1 || nslookup example.org >/dev/null 2>&1 ||
			echo "refused: example.org (not on the network allowlist)"
	fi' </dev/null

step "on the host afterwards"
echo "src/hello.c ends with: $(tail -n 1 "$project/src/hello.c")"
echo ".envrc is still: $(grep -v '^#' "$project/.envrc")"
grep -q fsmonitor "$project/.git/config" && echo ".git/config was changed!" || echo ".git/config is unchanged"
