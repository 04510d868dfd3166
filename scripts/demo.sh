#!/usr/bin/env bash
# The main job on the bundled demo project: installs what is missing, builds
# sandyfs, serves a copy of demo/project through it and walks through what
# an agent inside the mount sees. The copy lives in a temporary directory;
# the repository is never touched.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
build=$(scripts/build.sh normal)
sandyfs="$PWD/$build/fusefs/sandyfs"

work=$(mktemp -d /tmp/sandy-demo.XXXXXX)
project="$work/project" view="$work/view"
cleanup() {
	grep -q " $view fuse" /proc/self/mountinfo && "$sandyfs" umount "$view"
	rm -rf "$work"
}
trap cleanup EXIT

cp -a demo/project "$project"
mkdir "$view"
git -C "$project" init -q -b main
git -C "$project" -c user.name=demo -c user.email=demo@example.invalid add -A
git -C "$project" -c user.name=demo -c user.email=demo@example.invalid commit -qm "demo project"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() {
	step "$*"
	(cd "$view" && eval "$@") || echo "(exit status $?)"
}

echo "sandyfs demo: serving $project at $view"
"$sandyfs" mount "$project" "$view"
run ls -la
run cat src/hello.c
run make -s check
run "echo '/* added inside the mount */' >> src/hello.c"
step "git -C <host copy> status --short    # seen on the host side"
git -C "$project" status --short
run git status --short
run "echo 'export EVIL=1' >> .envrc"
run "mkdir -p .vscode && echo '{}' > .vscode/tasks.json"
step "cat <host copy>/.envrc"
cat "$project/.envrc"
step "sandyfs umount $view"
"$sandyfs" umount "$view"
echo
echo "done: the mount is gone and the host copy holds what the walk wrote."
