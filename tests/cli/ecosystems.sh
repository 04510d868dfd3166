#!/usr/bin/env bash
# Every shipped project type, and a project of no type, as `sandyfs explain`
# sees a minimal project of it (tests/rules/ecosystems.txt): the type is
# detected from its marker, its ordinary sources, tests and lock files are
# writable, its executable config is protected, its tool state private, and
# the same holds with the names absent and present on the host, at the root
# and (for protected names) four levels down.
source "$SANDY_SRC/tests/lib.sh"

table=$SANDY_SRC/tests/rules/ecosystems.txt
base=$(scratch)
export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
export SANDY_CONFIG_DIR=$base/config

# The file a table path stands for ("dir/" is a file below it).
file_of() { case $1 in */) echo "${1}x" ;; *) echo "$1" ;; esac; }

# explain_classes SRC PATH...: "PATH CLASS" lines from sandyfs explain --json.
explain_classes() {
	local src=$1
	shift
	timeout -k 5 60 "$SANDYFS" explain --json "$src" "$@" 2>"$base/err" |
		jq -r '.[] | "\(.path) \(.class)"'
}

# check_block TYPE: the cases of one block of the table, read into the
# arrays markers, and want (PATH -> CLASS).
check_block() {
	local type=$1 src=$base/proj-$type world p got n bad
	rm -rf "$src" && mkdir -p "$src" || return
	for p in "${markers[@]}"; do
		mkdir -p "$(dirname "$src/$p")" && echo "marker of $type" >"$src/$p"
	done

	# Detection: the type's own file is read because of its marker.
	local origins
	origins=$("$SANDYFS" rules --json "$src" 2>"$base/err" |
		jq -r '.sources[] | "\(.path | sub(".*/"; "")) \(.origin)"')
	if [ "$type" = none ]; then
		if grep -Eq '^[^ ]+ detected:' <<<"$origins"; then
			not_ok "none: a project of no known type detects nothing"
			grep -E '^[^ ]+ detected:' <<<"$origins" | sed 's/^/#   /'
		else
			ok "none: a project of no known type detects nothing"
		fi
	else
		check "$type: detected from ${markers[*]}" grep -q "^$type.json detected: " <<<"$origins"
	fi

	for world in absent present; do
		if [ $world = present ]; then
			# The host has every name of the table, files of its own.
			for p in "${!want[@]}"; do
				[ -e "$src/$p" ] && continue
				mkdir -p "$(dirname "$src/$p")" && echo "host file $p" >"$src/$p"
			done
		fi
		n=0 bad=0
		while read -r p got; do
			n=$((n + 1))
			if [ "${want[$p]:-?}" != "$got" ]; then
				bad=$((bad + 1))
				[ $bad -le 8 ] && diag "  $type/$world: '$p' is $got, not ${want[$p]:-?}"
			fi
		done < <(explain_classes "$src" "${!want[@]}")
		if [ $n -eq ${#want[@]} ] && [ $bad -eq 0 ]; then
			ok "$type/$world: all $n paths have their class"
		else
			not_ok "$type/$world: all ${#want[@]} paths have their class ($n answered, $bad wrong)"
			sed 's/^/#   /' "$base/err" | head -5
		fi
	done
}

declare -A want
type= markers=()
nblocks=0
while read -r key rest; do
	case $key in
	'' | '#'*) continue ;;
	'['*)
		[ -n "$type" ] && check_block "$type"
		type=${key#[} type=${type%]}
		read -r -a markers <<<"$rest"
		want=()
		nblocks=$((nblocks + 1))
		;;
	writable | protected | private | hidden | readonly)
		for p in $rest; do
			f=$(file_of "${p#/}")
			want[$f]=$key
			# Protection does not depend on depth, but where a name is
			# a root's only.
			[ $key = protected ] && [ "${p:0:1}" != / ] && want[a/b/c/d/$f]=protected
		done
		;;
	*) not_ok "ecosystems.txt: unknown line '$key $rest'" ;;
	esac
done <"$table"
[ -n "$type" ] && check_block "$type"

# Every shipped type has its block.
for f in "$SANDY_SRC"/rules/*.json; do
	t=$(basename "$f" .json)
	[ "$t" = base ] && continue
	check "ecosystems.txt has a block for the shipped type $t" grep -q "^\[$t\]" "$table"
done
check "ecosystems.txt has the block of no type" grep -q '^\[none\]' "$table"
diag "$nblocks blocks"
done_testing
