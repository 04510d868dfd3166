#!/usr/bin/env bash
# What `sandyfs explain`, `sandyfs rules` and the agent's POLICY.md say is
# what the mount does, over the git layouts the mount reads: core.hooksPath
# inside the tree and outside it, a linked worktree, a submodule, a
# worktree whose common directory (commondir) lies inside the tree, a
# "gitdir:" file naming a directory inside the tree, each served plainly
# and with the agent's own repository (--private-git).
#
# For every path asked: explain's class and rule; then a write through the
# mount (open for append, created when absent). A refused write must leave
# an audit record with explain's class and rule and the host unchanged; an
# allowed one must be a class explain calls writable or private, and land
# on the host (writable) or not (private). Every path `rules` lists as
# git's layout is refused by the mount under that rule, and a session's
# POLICY.md names each.
source "$SANDY_SRC/tests/lib.sh"
source "$SANDY_SRC/tests/attack/repo.bash"

SANDY=$SANDY_BUILD/launcher/sandy
base=$(scratch)
# Under the sanitizers, full stacks for what is allocated: the leak of
# libgit2 1.5 that tests/lsan.supp names (git_submodule_foreach, which the
# submodule layout runs) is told from sandy's own by its whole stack, and
# libgit2 and PCRE2 keep no frame pointers for the fast unwinder.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}fast_unwind_on_malloc=0"
export GIT_CONFIG_GLOBAL=$base/gitconfig
printf '[user]\n\tname = t\n\temail = t@example.com\n[protocol "file"]\n\tallow = always\n' >"$GIT_CONFIG_GLOBAL"

commit_all() { G -C "$1" add -A && G -C "$1" commit -qm "$2"; }

# layout_NAME SRC: builds the project; prints the paths to ask, one a line.
layout_hooks_in() {
	local s=$1
	G init -q "$s" && mkdir -p "$s/tools/hooks" &&
		printf '#!/bin/sh\nexit 0\n' >"$s/tools/hooks/pre-commit" && echo 'int a;' >"$s/tools/a.c" &&
		echo readme >"$s/README.md" && commit_all "$s" one &&
		G -C "$s" config core.hooksPath tools/hooks || return 1
	printf '%s\n' tools/hooks/pre-commit tools/hooks/post-merge tools/a.c tools/b.c README.md
}
layout_hooks_out() {
	local s=$1
	G init -q "$s" && mkdir -p "$s/hooks" "$base/outside-hooks" &&
		printf '#!/bin/sh\nexit 0\n' >"$s/hooks/pre-commit" && echo 'int a;' >"$s/hooks/a.c" &&
		commit_all "$s" one && G -C "$s" config core.hooksPath "$base/outside-hooks" || return 1
	printf '%s\n' hooks/pre-commit hooks/a.c hooks/b.c .git/hooks/pre-commit
}
layout_worktree() {
	local s=$1
	G init -q "$s" && echo 'int a;' >"$s/a.c" && commit_all "$s" one &&
		G -C "$s" worktree add -q -b wt "$s/wt" || return 1
	printf '%s\n' wt/.git wt/a.c wt/b.c .git/worktrees/wt/HEAD a.c
}
layout_submodule() {
	local s=$1 sub=$base/subrepo-$RANDOM
	G init -q "$sub" && echo 'int s;' >"$sub/s.c" && commit_all "$sub" sub &&
		G init -q "$s" && echo 'int a;' >"$s/a.c" && commit_all "$s" one &&
		G -C "$s" submodule add -q "$sub" libs/sub && commit_all "$s" two || return 1
	printf '%s\n' libs/sub/.git libs/sub/s.c libs/sub/t.c .git/modules/libs/sub/config .gitmodules a.c
}
# SOURCE is a linked worktree; its repository (the common directory) was
# moved inside it, so the gitdir its .git file names and the commondir
# that gitdir names are both in the tree.
layout_commondir() {
	local s=$1 main=$base/main-$RANDOM
	G init -q "$main" && echo 'int a;' >"$main/a.c" && commit_all "$main" one &&
		G -C "$main" worktree add -q -b w "$s" && mv "$main/.git" "$s/meta" &&
		echo "gitdir: $s/meta/worktrees/$(basename "$s")" >"$s/.git" &&
		G -C "$s" status --short >/dev/null || return 1
	printf '%s\n' meta/config meta/hooks/pre-commit "meta/worktrees/$(basename "$s")/HEAD" meta/new a.c b.c
}
layout_gitdir_file() {
	local s=$1
	mkdir -p "$s/src" && G init -q --separate-git-dir "$s/src/gitdir" "$s" &&
		echo 'int m;' >"$s/src/main.c" && commit_all "$s" one || return 1
	printf '%s\n' src/gitdir/config src/gitdir/hooks/pre-commit src/gitdir/new src/main.c src/other.c .git
}

# host_state PATH: what the host has there (absent, or a checksum).
host_state() { if [ -e "$1" ]; then cksum <"$1"; else echo absent; fi; }

# ask LABEL SRC MNT AUDIT STORE PRIVATE PATH: one path, explain against the mount.
ask() {
	local label=$1 src=$2 mnt=$3 audit=$4 store=$5 priv=$6 p=$7
	local flags=(--store "$store") ex cls rule before after rc rec err
	[ -n "$priv" ] && flags+=(--private-git)
	# A directory is asked about through a file in it.
	[ -d "$mnt/$p" ] && p=$p/agree-probe
	ex=$("$SANDYFS" explain --json "${flags[@]}" "$src" "$p") || {
		not_ok "$label: sandyfs explain '$p' answers"
		return
	}
	cls=$(jq -r '.[0].class' <<<"$ex")
	rule=$(jq -r '.[0].rule.pattern' <<<"$ex")
	before=$(host_state "$src/$p")
	# The agent's own repository lacks what the host's has (hooks/,
	# worktrees/): made through the mount first, as the agent's git would.
	[ "$cls" = private ] && mkdir -p "$(dirname "$mnt/$p")"
	err=$( (: >>"$mnt/$p") 2>&1)
	rc=$?
	after=$(host_state "$src/$p")
	if [ $rc -ne 0 ] && ! [[ $err =~ Read-only\ file\ system|Operation\ not\ permitted|Permission\ denied ]]; then
		not_ok "$label: '$p': the write failed, but not by a refusal: $err"
		return
	fi
	rec=$(jq -c --arg p "$p" 'select(.path == $p)' "$audit" 2>/dev/null | tail -n 1)
	if [ $rc -ne 0 ]; then
		case $cls in
		writable | private)
			not_ok "$label: '$p': explain says $cls, the mount refused it"
			return
			;;
		esac
		if [ "$before" != "$after" ]; then
			not_ok "$label: '$p': refused, yet the host changed"
		elif [ -z "$rec" ]; then
			not_ok "$label: '$p': refused with no audit record (explain: $cls by '$rule')"
		elif [ "$(jq -r .class <<<"$rec")" != "$cls" ] || [ "$(jq -r .rule <<<"$rec")" != "$rule" ]; then
			not_ok "$label: '$p': explain says $cls by '$rule', the mount $(jq -r '"\(.class) by \u0027\(.rule)\u0027"' <<<"$rec")"
		else
			ok "$label: '$p': $cls by '$rule', as explain says"
		fi
		return
	fi
	case $cls in
	writable)
		if [ "$after" = absent ]; then
			not_ok "$label: '$p': writable, yet the write is not on the host"
		else
			ok "$label: '$p': writable, as explain says"
		fi
		;;
	private)
		if [ "$before" != "$after" ]; then
			not_ok "$label: '$p': private, yet the host changed"
		else
			ok "$label: '$p': private (the host unchanged), as explain says"
		fi
		;;
	*) not_ok "$label: '$p': explain says $cls by '$rule', the mount took the write" ;;
	esac
}

# The paths `rules` lists as git's layout (built-in immutable entries
# after .git itself), one a line.
layout_rules() {
	local priv=$1 src=$2
	"$SANDYFS" rules --json ${priv:+--private-git} "$src" |
		jq -r '.rules[] | select(.class == "immutable" and .file == "(built-in)" and .index > 0) | .pattern'
}

# Which layout entries each layout must show in `rules`: the ones the
# mount reads from git (none when core.hooksPath points outside the tree).
declare -A expect_rules=(
	[hooks_in]='tools/hooks'
	[hooks_out]=''
	[worktree]=''
	[submodule]=''
	[commondir]='meta'
	[gitdir_file]='src/gitdir'
)

for layout in hooks_in hooks_out worktree submodule commondir gitdir_file; do
	for priv in "" private; do
		label=$layout${priv:+ (--private-git)}
		d=$base/$layout${priv:+-private}
		src=$d/src mnt=$d/mnt store=$d/store audit=$d/audit.jsonl
		mkdir -p "$d" "$mnt"
		if ! paths=$("layout_$layout" "$src" 2>"$d/make.log"); then
			not_ok "$label: build the project"
			sed 's/^/# /' "$d/make.log"
			continue
		fi
		if ! mount_policy --store "$store" --audit "$audit" ${priv:+--private-git} "$src" "$mnt" 2>"$d/mount.err"; then
			not_ok "$label: sandyfs mount"
			sed 's/^/# /' "$d/mount.err"
			continue
		fi
		listed=$(layout_rules "$priv" "$src" | LC_ALL=C sort)
		want=$(for w in ${expect_rules[$layout]}; do
			# The common directory and a gitdir are listed with their
			# parts; the test knows the top one.
			echo "$w"
		done)
		for w in $want; do
			check "$label: rules lists '$w' as git's layout" grep -qx -- "$w" <<<"$listed"
		done
		[ -z "$want" ] && check_eq "$label: rules lists nothing of git's layout" "" "$listed"
		while IFS= read -r p; do
			ask "$label" "$src" "$mnt" "$audit" "$store" "$priv" "$p"
		done <<<"$paths"
		# Every entry rules lists is refused by the mount under it.
		while IFS= read -r w; do
			[ -n "$w" ] || continue
			if [ -d "$src/$w" ]; then probe=$w/agree-probe; else probe=$w; fi
			ask "$label: rules' '$w'" "$src" "$mnt" "$audit" "$store" "$priv" "$probe"
		done <<<"$listed"
		"$SANDYFS" umount "$mnt" || not_ok "$label: sandyfs umount"
	done
done

# POLICY.md, as a session writes it for the agent (bubblewrap: no engine
# needed), names what git's layout keeps read-only, and only that; and
# `sandy explain` asks as the session mounts.
# The portable shape of sandy (the fallback flavour) has no bubblewrap
# sessions: its POLICY.md is the normal flavour's, asked there.
linux_shape=1
"$SANDY" --version | grep -q ', linux)' || linux_shape=0
[ $linux_shape = 1 ] || echo "# this sandy is the portable shape: no bubblewrap session, no POLICY.md to read"
for layout in hooks_in gitdir_file hooks_out; do
	[ $linux_shape = 1 ] || break
	d=$base/session-$layout src=$d/src
	mkdir -p "$d"
	if ! "layout_$layout" "$src" >/dev/null 2>"$d/make.log"; then
		not_ok "session $layout: build the project"
		continue
	fi
	note=$(cd "$src" && "$SANDY" -q --runtime=none . -- sh -c 'cat "$SANDY_POLICY"' </dev/null 2>"$d/err")
	if [ -z "$note" ]; then
		not_ok "session $layout: POLICY.md could be read"
		sed 's/^/# /' "$d/err"
		continue
	fi
	# The layout as the session's mount has it: with the agent's own .git.
	listed=$(layout_rules private "$src")
	shown=$(sed -n '/git layout keeps these read-only/,/^Everything else/p' <<<"$note" |
		sed -n 's/^    \([^ ]*\) (.*/\1/p')
	check_eq "session $layout: POLICY.md lists git's layout as rules does" \
		"$(LC_ALL=C sort <<<"$listed")" "$(LC_ALL=C sort <<<"$shown")"
	check "session $layout: POLICY.md does not call the agent's .git a build directory" \
		grep -q "These directories are private to the sandbox: node_modules/" <<<"$note"
	# `sandy explain` answers as the session mounts: the agent's own .git.
	check_eq "session $layout: sandy explain calls .git/config the agent's own, as the session serves it" \
		private "$(cd "$src" && "$SANDY" explain --json .git/config 2>&1 | jq -r '.[0].class')"
done

done_testing
