#!/usr/bin/env bash
# Planting the executable config of every shipped type and editor through a
# real mount, as sandy mounts it (--lazy-open --allow-other), as root and as
# the unprivileged test user. For each block of tests/rules/ecosystems.txt,
# a project of that type (its markers present), and every protected name of
# the block at the root, at depth 1 and at depth 4:
#
#   absent:  the missing directories, then create, mkdir, mkfifo, symlink,
#            hard link and rename of an owned file onto the name: each
#            refused with EROFS, and afterwards neither the name nor its
#            outermost protected directory exists on the host;
#   present: overwrite, append, truncate, chmod, utimes, setxattr, an
#            editor's save (temporary file renamed over it), rename of an
#            owned file over it, rename away, hard link from it, unlink:
#            each refused with EROFS, and afterwards the host file has its
#            content, size, mode and mtime, and its directory no new name.
#
# tests/attack/plant.c makes the attempts (as the caller) and reads the
# host before and after (as root).
# The private names of the block of no type are written through the mount
# instead: that works, and lands in the store, never in SOURCE.
source "$SANDY_SRC/tests/lib.sh"

table=$SANDY_SRC/tests/rules/ecosystems.txt
base=$(scratch)
export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
export SANDY_CONFIG_DIR=$base/config
prefixes=("" "d1/" "a/b/c/d/")
FIXTURE_MTIME=1000000000

callers=(root)
if ensure_test_user; then
	callers+=(user)
else
	diag "skip the unprivileged caller: cannot create user $TEST_USER"
fi

plant=$SANDY_BUILD/tests/attack/plant
if [ ! -x "$plant" ]; then
	not_ok "the planting driver is built ($plant)"
	done_testing
fi

file_of() { case $1 in */) echo "${1}x" ;; *) echo "$1" ;; esac; }

# as CALLER COMMAND...: COMMAND as root or as the test user.
as() {
	local who=$1
	shift
	if [ "$who" = user ]; then
		runuser -u "$TEST_USER" -- "$@"
	else
		"$@"
	fi
}

# world CALLER TYPE absent|present: one mount of a project of TYPE.
world() {
	local who=$1 type=$2 kind=$3
	local d=$base/$who-$type-$kind src mnt log i p f pre
	src=$d/src mnt=$d/mnt log=$d/audit.log
	mkdir -p "$src" "$mnt" "$d/store"
	for p in "${markers[@]}"; do
		mkdir -p "$(dirname "$src/$p")" && echo "marker of $type" >"$src/$p"
	done
	# The cases: I -> name under its prefix, and the owned file it uses.
	local -a name=() own=()
	i=0
	for pre in "${prefixes[@]}"; do
		for f in "${protected[@]}"; do
			# "/NAME": at the project root only.
			[ "${f:0:1}" = / ] && { [ -n "$pre" ] && continue; f=${f#/}; }
			name[i]=$pre$f own[i]=${pre}own-$i.txt
			i=$((i + 1))
		done
	done
	if [ "$kind" = present ]; then
		for i in "${!name[@]}"; do
			p=$src/${name[i]}
			[ -e "$p" ] && continue
			mkdir -p "$(dirname "$p")" && printf 'host file %s\n' "${name[i]}" >"$p" &&
				touch -d "@$FIXTURE_MTIME" "$p"
		done
	fi
	for pre in "${prefixes[@]}"; do mkdir -p "$src/$pre"; done
	[ "$who" = user ] && chown -R "$TEST_USER:" "$src" "$d/store"
	chmod 755 "$d"
	if ! mount_policy --lazy-open --allow-other --audit "$log" --store "$d/store" "$src" "$mnt"; then
		not_ok "$who/$type/$kind: mount SOURCE"
		return
	fi
	# The owned files, made through the mount by the caller.
	for i in "${!name[@]}"; do echo "${own[i]}"; done |
		as "$who" sh -c 'cd "$1" && while read -r o; do printf own >"$o" || exit 1; done' sh "$mnt" ||
		not_ok "$who/$type/$kind: the owned files are made through the mount"
	local as=()
	[ "$who" = user ] && as=(--as "$TEST_USER")
	for i in "${!name[@]}"; do
		echo "${name[i]} ${guard[${name[i]}]:--} ${own[i]}"
	done | "$plant" "${as[@]}" "$kind" "$who/$type/$kind" "$src" "$mnt" || _failed=1
	check "$who/$type/$kind: the mount still answers" ls "$mnt"
	"$SANDYFS" umount "$mnt" >/dev/null 2>&1
	wait_until 10 eval "! is_mounted '$mnt'" || not_ok "$who/$type/$kind: unmount"
}

# The outermost protected directory of each name (".zed" for
# ".zed/tasks.json"), asked of the policy once for all names: after a
# refused attempt it must not exist on the host either.
declare -A guard
find_guards() {
	local src=$base/guards anc p f c
	local -a all=()
	mkdir -p "$src"
	for f in "${allprot[@]}"; do
		for p in "${prefixes[@]}"; do all+=("$p$f"); done
	done
	local -a ask=()
	for p in "${all[@]}"; do
		anc=
		IFS=/ read -r -a comps <<<"$p"
		for c in "${comps[@]}"; do
			anc=${anc:+$anc/}$c
			ask+=("$anc")
		done
	done
	local -A cls=()
	while read -r p c; do cls[$p]=$c; done < <("$SANDYFS" explain --json --no-detect "$src" \
		$(printf '%s\n' "${ask[@]}" | sort -u) | jq -r '.[] | "\(.path) \(.class)"')
	for p in "${all[@]}"; do
		anc=
		IFS=/ read -r -a comps <<<"$p"
		for c in "${comps[@]}"; do
			anc=${anc:+$anc/}$c
			if [ "${cls[$anc]:-}" = protected ]; then
				guard[$p]=$anc
				break
			fi
		done
	done
}

# The table: blocks of markers and protected names.
declare -a btype=() bmarkers=() bprot=() allprot=() privates=()
type=
while read -r key rest; do
	case $key in
	'' | '#'*) continue ;;
	'['*)
		type=${key#[} type=${type%]}
		btype+=("$type") bmarkers+=("$rest") bprot+=("")
		;;
	protected)
		for p in $rest; do
			f=$(file_of "$p")
			bprot[${#bprot[@]} - 1]+=" $f"
			allprot+=("${f#/}")
		done
		;;
	private) [ "$type" = none ] && for p in $rest; do privates+=("$(file_of "$p")"); done ;;
	esac
done <"$table"
find_guards

for who in "${callers[@]}"; do
	for b in "${!btype[@]}"; do
		read -r -a markers <<<"${bmarkers[b]}"
		read -r -a protected <<<"${bprot[b]}"
		# A marker is itself one of the names: present in both worlds.
		for kind in absent present; do
			if [ "$kind" = absent ]; then
				local_prot=()
				for f in "${protected[@]}"; do
					skip=
					for m in "${markers[@]}"; do [ "$m" = "${f#/}" ] && skip=1; done
					[ -z "$skip" ] && local_prot+=("$f")
				done
				protected=("${local_prot[@]}")
			else
				read -r -a protected <<<"${bprot[b]}"
			fi
			world "$who" "${btype[b]}" $kind
		done
	done
done

# Private names: written through the mount, they land in the store.
d=$base/private src=$d/src mnt=$d/mnt
mkdir -p "$src" "$mnt" "$d/store"
echo readme >"$src/README.md"
if mount_policy --lazy-open --allow-other --store "$d/store" "$src" "$mnt"; then
	for p in "${privates[@]}"; do
		if mkdir -p "$(dirname "$mnt/$p")" && printf 'agent\n' >"$mnt/$p"; then
			top=${p%%/*}
			if [ -e "$src/$top" ]; then
				not_ok "private $p: written through the mount, and absent from SOURCE ($top exists)"
			elif [ "$(cat "$d/store/tree/$p" 2>/dev/null)" != agent ]; then
				not_ok "private $p: written through the mount, and in the store"
			else
				ok "private $p: written through the mount, in the store, absent from SOURCE"
			fi
		else
			not_ok "private $p: written through the mount"
		fi
	done
else
	not_ok "mount SOURCE for the private names"
fi
done_testing
