#!/usr/bin/env bash
# Chains of symlinks through a real mount with the shipped rules (a C
# project: Makefile protected at the root, build/ a generated tree where
# build tools' names are the agent's). Each chain is a set of links, each
# of which is harmless on its own, that together would lead the host from a
# writable name to a protected, immutable or outside one; every order of
# making its links is tried, each in a fresh directory. Expected, in every
# order: the step that completes the chain is refused with EROFS and every
# other step works (a link whose own target names the protected name is
# refused whenever it comes). Then directories and links renamed so that a
# chain made earlier would change where it leads. Afterwards, on the host,
# every symlink of the tree resolves (realpath, as the host follows it)
# inside SOURCE and to a name of no refused class, and the protected files
# are as they were. Chains whose every hop is allowed (a shared library's
# names, a version directory) work in every order.
source "$SANDY_SRC/tests/lib.sh"

export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
base=$(scratch)
export SANDY_CONFIG_DIR=$base/config
src=$base/src mnt=$base/mnt log=$base/audit.log
mkdir -p "$src" "$mnt" "$base/store"
printf 'all:\n\techo host\n' >"$src/Makefile"
mkdir -p "$src/src/x" "$src/build" "$src/.vscode"
printf 'int main(void) { return 0; }\n' >"$src/src/main.c"
printf 'src Makefile\n' >"$src/src/Makefile"
printf '{"version": "2.0.0"}\n' >"$src/.vscode/tasks.json"
printf 'export HOST=1\n' >"$src/.envrc"
git -C "$src" init -q
printf '#!/bin/sh\n' >"$src/.git/hooks/x"
before=$(cd "$src" && sha256sum Makefile src/Makefile .vscode/tasks.json .envrc .git/hooks/x)

if ! mount_policy --lazy-open --allow-other --audit "$log" --store "$base/store" "$src" "$mnt"; then
	not_ok "mount SOURCE"
	done_testing
fi

# Every chain's links live in build/tN, two levels below the root.
R=../..

# step DIR NAME TARGET: ln -s TARGET DIR/NAME through the mount; sets
# step_err to "" when it worked, else to the error.
step() {
	local out
	if out=$(ln -s "$2" "$mnt/$1/$3" 2>&1); then step_err=; else step_err=${out##*: }; fi
}

# permutations N: every order of 0..N-1, one per line.
permutations() {
	case $1 in
	2) printf '%s\n' "0 1" "1 0" ;;
	3) printf '%s\n' "0 1 2" "0 2 1" "1 0 2" "1 2 0" "2 0 1" "2 1 0" ;;
	esac
}

n=0
# chain LABEL NAMED HOP...: HOP is NAME=TARGET; NAMED is the index of the
# hop whose own target names the refused name ("-" when no hop does, and
# only the last step of an order completes the chain).
chain() {
	local label=$1 named=$2
	shift 2
	local -a hops=("$@") order
	local perm i k last name target want got desc
	while read -r perm; do
		read -r -a order <<<"$perm"
		n=$((n + 1))
		local dir=build/t$n
		mkdir -p "$src/$dir"
		last=${order[${#order[@]} - 1]}
		for k in "${!order[@]}"; do
			i=${order[k]}
			name=${hops[i]%%=*} target=${hops[i]#*=}
			if [ "$named" = - ]; then
				[ "$i" = "$last" ] && want="Read-only file system" || want=
			else
				[ "$i" = "$named" ] && want="Read-only file system" || want=
			fi
			step "$dir" "$target" "$name"
			got=$step_err
			desc="$label, order $perm: ln -s $target $name"
			if [ "$want" = "$got" ]; then
				ok "$desc: ${want:-made}"
			else
				not_ok "$desc: ${want:-made}"
				diag "got: ${got:-made}"
			fi
			if [ -z "$want" ] && [ ! -L "$src/$dir/$name" ]; then
				not_ok "$desc: the link is on the host"
			elif [ -n "$want" ] && [ -L "$src/$dir/$name" ]; then
				not_ok "$desc: the refused link is not on the host"
			fi
		done
	done < <(permutations ${#hops[@]})
}

# Two hops.
chain "the root Makefile, through a link to the root" - a=$R b=a/Makefile
chain "the root Makefile, through .. after a later link" - a=$R/src b=a/../Makefile
chain "outside SOURCE, through .. after a link to the root" - a=$R b=a/../outside
chain ".envrc, through a link to the root" 1 a=$R b=a/.envrc
chain ".git/hooks/x, through a link to the root" 1 a=$R b=a/.git/hooks/x
chain ".vscode/tasks.json, through a link to the root" 1 a=$R b=a/.vscode/tasks.json
# Three hops.
chain "the root Makefile, three hops" - a=$R b=a c=b/Makefile
chain "src/Makefile, three hops and .." - a=$R/src b=a/x c=b/../Makefile
chain "outside SOURCE, three hops and .." - a=$R b=a c=b/../../outside
chain ".envrc, three hops" 2 a=$R b=a c=b/.envrc
chain ".git/hooks/x, three hops" 2 a=$R b=a c=b/.git/hooks/x
chain ".vscode/tasks.json, three hops" 2 a=$R b=a c=b/.vscode/tasks.json

# good LABEL HOP...: a chain the policy allows; every order works.
good() {
	local label=$1 perm i k
	shift
	local -a hops=("$@") order
	while read -r perm; do
		read -r -a order <<<"$perm"
		n=$((n + 1))
		local dir=build/t$n
		mkdir -p "$src/$dir"
		local bad=
		for k in "${!order[@]}"; do
			i=${order[k]}
			step "$dir" "${hops[i]#*=}" "${hops[i]%%=*}"
			[ -n "$step_err" ] && bad+=" ${hops[i]}: $step_err;"
		done
		check_eq "$label, order $perm: every link made" "" "$bad"
	done < <(permutations ${#hops[@]})
}
good "a shared library's names" libz.so=libz.so.1 libz.so.1=libz.so.1.3.1 libz.so.1.3.1=../../src/main.c
good "a version directory" current=v2 v2=v2.0 v2.0=$R/src/x
good "through .. to a generated tree" a=$R/src b=a/../build c=b/t1

# Renames that would change where an earlier chain leads.
d=build/moves
mkdir -p "$src/$d/p"
check "a directory is made through the mount" mkdir "$mnt/$d/p/z"
step "$d/p/z" ../../../.. r
check_eq "a link to the root in it" "" "$step_err"
step "$d/p" q/r/Makefile s
check_eq "a link through q (absent)" "" "$step_err"
out=$(mv "$mnt/$d/p/z" "$mnt/$d/p/q" 2>&1)
check_eq "the directory renamed to q: refused" "Read-only file system" "${out##*: }"
check "the directory is still z on the host" test -d "$src/$d/p/z" -a ! -e "$src/$d/p/q"

step "$d" ../.. x
check_eq "a link x to the root" "" "$step_err"
step "$d" a/Makefile b
check_eq "a link through a (absent)" "" "$step_err"
out=$(mv "$mnt/$d/x" "$mnt/$d/a" 2>&1)
check_eq "the link renamed to a: refused" "Read-only file system" "${out##*: }"
check "the link is still x on the host" test -L "$src/$d/x" -a ! -e "$src/$d/a"

check "a directory w is made through the mount" mkdir "$mnt/$d/w"
step "$d" w/Makefile y
check_eq "a link through the directory w" "" "$step_err"
check "w removed" rmdir "$mnt/$d/w"
step "$d" ../.. w
check_eq "a link to the root in its place: refused" "Read-only file system" "$step_err"
check "w is absent on the host" test ! -e "$src/$d/w"

# The host after it all.
bad=
srcreal=$(realpath "$src")
declare -a ask=()
while IFS= read -r -d '' l; do
	r=$(realpath -m "$l")
	case $r in
	"$srcreal") ;;
	"$srcreal"/*) ask+=("${r#"$srcreal"/}") ;;
	*) bad+=" ${l#"$src"/} -> $r (outside);" ;;
	esac
done < <(find "$src" -path "$src/.git" -prune -o -type l -print0)
check "the host has the links to judge (${#ask[@]})" test ${#ask[@]} -gt 50
while read -r p c; do
	case $c in protected | immutable | hidden) bad+=" resolves to $p ($c);" ;; esac
done < <("$SANDYFS" explain --json "$src" "${ask[@]}" | jq -r '.[] | "\(.path) \(.class)"')
check_eq "every link on the host resolves inside SOURCE, to no refused name" "" "$bad"
check_eq "the protected files are unchanged" "$before" \
	"$(cd "$src" && sha256sum Makefile src/Makefile .vscode/tasks.json .envrc .git/hooks/x)"
check_eq "the audit log names the link the rename would redirect" 1 \
	"$(jq -c 'select(.path == "build/moves/x" and .target == "build/moves/b")' "$log" | wc -l)"
check "the mount still answers" stat -c %F "$mnt/build/moves/b"
done_testing
