#!/usr/bin/env bash
# Real tools inside the mount, as root
# through --allow-other and as the unprivileged test user. git status, diff
# and log work and agree with the host; everything that would write .git or
# plant a protected name (git checkout of a branch that adds .envrc, git
# restore, git commit, git stash, git worktree add, git config, a shell
# redirect) fails cleanly and leaves the host-side repository exactly as it
# was (every file, mode and checksum compared, .git included); an
# editor-style save (sed -i: a temporary file renamed over the original)
# works on a writable file and fails on a protected one without leaving its
# temporary file behind.
source "$SANDY_SRC/tests/lib.sh"
source "$SANDY_SRC/tests/attack/repo.bash"

base=$(scratch)
have_user=true
if ! ensure_test_user; then
	echo "# skip the unprivileged caller: cannot create user $TEST_USER"
	have_user=false
fi

# The repository: .envrc absent on main; the branch with-envrc adds
# .envrc, src/a/b/c/.envrc and .vscode/tasks.json. Protected files that
# exist: .pre-commit-config.yaml at the root (a read-only place) and
# src/conf/.pre-commit-config.yaml (a protected name in a writable place).
repo=$base/repo
if ! {
	make_world absent "$repo" "$base" &&
		printf 'repos: []\n' >"$repo/.pre-commit-config.yaml" &&
		mkdir -p "$repo/src/conf" &&
		printf 'repos: []\n' >"$repo/src/conf/.pre-commit-config.yaml" &&
		G -C "$repo" add -A && G -C "$repo" commit -qm "pre-commit config" &&
		G -C "$repo" checkout -q -b with-envrc &&
		mkdir -p "$repo/src/a/b/c" "$repo/.vscode" &&
		echo 'echo pwned' >"$repo/.envrc" &&
		echo 'echo pwned' >"$repo/src/a/b/c/.envrc" &&
		echo '{"tasks": []}' >"$repo/.vscode/tasks.json" &&
		G -C "$repo" add -A && G -C "$repo" commit -qm "add .envrc" &&
		G -C "$repo" checkout -q main &&
		printf 'fn helper() {}\n' >>"$repo/src/lib.rs" &&
		G -C "$repo" commit -qam "third commit"
} >"$base/make.log" 2>&1; then
	not_ok "build the repository"
	sed 's/^/# /' "$base/make.log"
	done_testing
fi

# Everything on the host side: names, types, modes, owners, sizes and
# checksums, .git included (but not atimes).
manifest() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s\n' | LC_ALL=C sort &&
		find . -type f -exec cksum {} + | LC_ALL=C sort -k3)
}

for who in root user; do
	[ $who = user ] && ! $have_user && continue
	src=$base/$who/src mnt=$base/$who/mnt
	mkdir -p "$mnt" && cp -a "$repo" "$src"
	as=()
	if [ $who = user ]; then
		chown -R "$TEST_USER:" "$src"
		as=(runuser -u "$TEST_USER" --)
	fi
	run() { "${as[@]}" env HOME="$base" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$@"; }
	if ! mount_policy --allow-other "$src" "$mnt"; then
		not_ok "$who: sandyfs mount --allow-other"
		continue
	fi

	# --- git reads, with a change made through the mount -------------
	check "$who: an edit of a writable file through the mount" \
		run sh -c "printf '// edited in the sandbox\n' >>'$mnt/src/main.rs'"
	for cmd in "status --porcelain" "diff" "log --oneline" "diff --stat HEAD~2" "branch -a"; do
		# shellcheck disable=SC2086
		in_mnt=$(run git -C "$mnt" $cmd 2>&1)
		rc=$?
		# shellcheck disable=SC2086
		on_host=$(run git -C "$src" $cmd 2>&1)
		if [ $rc -eq 0 ] && [ "$in_mnt" == "$on_host" ] && [ -n "$on_host" ]; then
			ok "$who: git $cmd works inside the mount and agrees with the host"
		else
			not_ok "$who: git $cmd works inside the mount and agrees with the host (exit $rc)"
			diag "mount: $(echo "$in_mnt" | head -5)"
			diag "host:  $(echo "$on_host" | head -5)"
		fi
	done

	# --- what must fail, and leave the host exactly as it was ----------
	before=$(manifest "$src")
	head=$(run git -C "$src" rev-parse HEAD)
	# fails: DESCRIPTION COMMAND...: COMMAND exits non-zero and the host
	# manifest is unchanged.
	fails() {
		local desc=$1 out rc now
		shift
		out=$(run "$@" 2>&1)
		rc=$?
		now=$(manifest "$src")
		if [ $rc -ne 0 ] && [ "$now" == "$before" ]; then
			ok "$who: $desc fails cleanly, host unchanged"
		else
			not_ok "$who: $desc fails cleanly, host unchanged (exit $rc)"
			diag "output: $(echo "$out" | tail -3)"
			diff <(echo "$before") <(echo "$now") | head -10 | sed 's/^/# /'
			before=$now
		fi
	}
	fails "git checkout of a branch that adds .envrc" git -C "$mnt" checkout with-envrc
	fails "git checkout -f of that branch" git -C "$mnt" checkout -f with-envrc
	fails "git restore --worktree of .envrc from that branch" \
		git -C "$mnt" restore --source=with-envrc --worktree -- .envrc src/a/b/c/.envrc
	fails "git show BRANCH:.envrc > .envrc" \
		sh -c "git -C '$mnt' show with-envrc:.envrc >'$mnt/.envrc'"
	fails "git show BRANCH:src/a/b/c/.envrc > src/a/b/c/.envrc (mkdir -p first)" \
		sh -c "mkdir -p '$mnt/src/a/b/c' && git -C '$mnt' show with-envrc:src/a/b/c/.envrc >'$mnt/src/a/b/c/.envrc'; rc=\$?; rm -r '$mnt/src/a'; exit \$rc"
	fails "git commit -a" git -C "$mnt" commit -qam "from the sandbox"
	fails "git stash" git -C "$mnt" stash
	fails "git worktree add" git -C "$mnt" worktree add "$mnt/src/wt" with-envrc
	fails "git config core.hooksPath" git -C "$mnt" config core.hooksPath src
	fails "git config core.fsmonitor" git -C "$mnt" config core.fsmonitor "touch /tmp/pwned"
	# (git makes src/nested itself, which is allowed; only .git may not be)
	fails "git init of a nested repository" \
		sh -c "git init -q '$mnt/src/nested'; rc=\$?; rmdir '$mnt/src/nested'; exit \$rc"
	fails "a hook written by cat" sh -c "printf '#!/bin/sh\n' >'$mnt/.git/hooks/pre-commit'"
	check_eq "$who: HEAD is unchanged on the host" "$head" "$(run git -C "$src" rev-parse HEAD)"
	check "$who: no .envrc anywhere on the host" \
		test -z "$(find "$src" -iname '.envrc*' -print -quit)"
	check "$who: no index.lock left in .git" test ! -e "$src/.git/index.lock"

	# --- editor-style saves: sed -i writes a temporary, renames it over -
	fails "sed -i on .pre-commit-config.yaml (read-only directory)" \
		sed -i 's/repos/REPOS/' "$mnt/.pre-commit-config.yaml"
	fails "sed -i on src/conf/.pre-commit-config.yaml (writable directory)" \
		sed -i 's/repos/REPOS/' "$mnt/src/conf/.pre-commit-config.yaml"
	fails "cp over .pre-commit-config.yaml" cp "$mnt/Cargo.toml" "$mnt/src/conf/.pre-commit-config.yaml"
	if run sed -i 's/hello/hi/' "$mnt/src/main.rs" && grep -q '"hi"' "$src/src/main.rs"; then
		ok "$who: sed -i on a writable file works, the host shows it"
	else
		not_ok "$who: sed -i on a writable file works, the host shows it"
	fi
	check_eq "$who: src/ and src/conf/ hold no temporary left by the editor saves" \
		"conf lib.rs main.rs | .pre-commit-config.yaml" \
		"$(cd "$src/src" && ls -A | tr '\n' ' ' && echo -n "| " && ls -A conf)"

	"$SANDYFS" umount "$mnt" >/dev/null 2>&1
	check "$who: sandyfs umount" wait_until 5 eval "! is_mounted '$mnt'"
done
done_testing
