# tests/attack/repo.bash: builds the SOURCE trees the attack scripts mount
# (sourced by tests/attack/*.sh; not a test itself, hence not *.sh).
#
# make_world WORLD DIR [BASE]: a Rust project (Cargo.toml at the root, so
# the shipped rust rules apply by detection: src/, tests/, examples/, ...
# are writable) that is
#   present: a real git repository with history, a submodule "a" at
#            src/deps/a that has a submodule "b" of its own (gitdirs
#            .git/modules/a and .git/modules/a/modules/b), core.hooksPath
#            .husky/_ (absent) in the top repository and "hooks" (absent,
#            inside the writable src/) in the submodule, and a hook in the
#            nested gitdir;
#   absent:  a real git repository without submodules (the protected
#            files are removed by `attack prepare`);
#   missing: no git repository at all.
# BASE (default: DIR/..) holds the repositories the submodules come from.
# `attack prepare WORLD DIR` adds the protected fixtures afterwards.

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0

G() {
	git -c user.name=sandy-test -c user.email=test@sandy.invalid -c init.defaultBranch=main \
		-c protocol.file.allow=always -c advice.detachedHead=false "$@"
}

_rust_project() {
	local dir=$1
	mkdir -p "$dir/src" "$dir/tests" "$dir/docs"
	printf '[package]\nname = "victim"\nversion = "0.1.0"\nedition = "2021"\n' >"$dir/Cargo.toml"
	printf 'fn main() {\n    println!("hello");\n}\n' >"$dir/src/main.rs"
	printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' >"$dir/src/lib.rs"
	printf '# victim\n\nA project served through sandyfs.\n' >"$dir/README.md"
	printf '# guide\n' >"$dir/docs/guide.md"
}

make_world() {
	local world=$1 dir=$2 base=${3:-$(dirname "$2")}
	mkdir -p "$dir"
	_rust_project "$dir"
	case $world in
	missing) return 0 ;;
	absent)
		G init -q "$dir" && G -C "$dir" add -A && G -C "$dir" commit -qm "initial" || return 1
		return 0
		;;
	present) ;;
	*) return 1 ;;
	esac
	local remotes=$base/remotes
	rm -rf "$remotes" && mkdir -p "$remotes/a" "$remotes/b"
	G init -q "$remotes/b" && echo b >"$remotes/b/b.txt" &&
		G -C "$remotes/b" add -A && G -C "$remotes/b" commit -qm b || return 1
	G init -q "$remotes/a" && echo a >"$remotes/a/a.txt" &&
		G -C "$remotes/a" add -A && G -C "$remotes/a" commit -qm a &&
		G -C "$remotes/a" submodule -q add --name b "$remotes/b" b &&
		G -C "$remotes/a" commit -qm "add b" || return 1
	G init -q "$dir" && G -C "$dir" add -A && G -C "$dir" commit -qm "initial" || return 1
	G -C "$dir" submodule -q add --name a "$remotes/a" src/deps/a &&
		G -C "$dir" submodule -q update --init --recursive &&
		G -C "$dir" commit -qm "add submodule a" || return 1
	[ -d "$dir/.git/modules/a/modules/b" ] || return 1
	G -C "$dir" config core.hooksPath .husky/_
	G -C "$dir/src/deps/a" config core.hooksPath hooks
	mkdir -p "$dir/.git/modules/a/modules/b/hooks"
	printf '#!/bin/sh\nexit 0\n' >"$dir/.git/modules/a/modules/b/hooks/pre-commit"
	chmod 644 "$dir/.git/modules/a/modules/b/hooks/pre-commit"
}
