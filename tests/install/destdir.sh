#!/usr/bin/env bash
# The installed programs find what they ship with beside them: this build,
# installed with `meson install --destdir D`, is run from D (the install
# tree as it would be under /, here below a scratch directory) with no
# variable naming the data, from a directory outside the source tree.
#   - every shipped file is in D: the rules, the read-only overlays, the
#     container files;
#   - `sandyfs rules` and `sandyfs explain` (text and --json) on a small
#     project give the same output as this build's sandyfs, once each
#     output's rules and overlays directory is replaced by a placeholder:
#     the build reads the source tree's, the install D's own (the test
#     checks both), and the decisions are the same;
#   - sandy beside it runs D's sandyfs (`sandy explain`) and builds the
#     images from D's container files (`sandy build-image`, against a
#     stand-in docker that records what it is asked), sandyfs's own with
#     D's sandyfs, or built from D's copy of its source, which holds what
#     the build's sandy copies of the source tree and configures;
#   - D moved elsewhere still works (the install is relocatable);
#   - with D's rules or overlays gone, sandyfs fails and names the places
#     it looked, and never falls back to the source tree; sandy without
#     its sandyfs or its source likewise.
source "$SANDY_SRC/tests/lib.sh"

build=$SANDY_BUILD
unset SANDY_RULES_DIR SANDY_OVERLAYS_DIR SANDY_CONTAINER_DIR
base=$(scratch)
cd "$base" || exit 1

# meson's configured prefix, bindir and datadir for this build.
read -r prefix bindir datadir < <(python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
print(o["prefix"], o["bindir"], o["datadir"])' "$build/meson-info/intro-buildoptions.json")
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bin_rel=$(abs "$bindir") data_rel=$(abs "$datadir")

dest=$base/dest
check "meson install --destdir into a scratch directory" \
	meson install -C "$build" --no-rebuild --quiet --skip-subprojects --destdir "$dest"
bin=$dest$bin_rel share=$dest$data_rel/sandy

# ---- the files ---------------------------------------------------------------
check "sandy and sandyfs installed in BINDIR" test -x "$bin/sandy" -a -x "$bin/sandyfs"
missing=''
for f in "$SANDY_SRC"/rules/*.json; do
	cmp -s "$f" "$share/rules/${f##*/}" || missing+=" rules/${f##*/}"
done
for f in "$SANDY_SRC"/ro-overlays/*; do
	cmp -s "$f" "$share/ro-overlays/${f##*/}" || missing+=" ro-overlays/${f##*/}"
done
# Everything of launcher/container: sandy reads it from the installed copy.
while IFS= read -r f; do
	cmp -s "$SANDY_SRC/launcher/container/$f" "$share/container/$f" || missing+=" container/$f"
done < <(cd "$SANDY_SRC/launcher/container" && find . -type f | sed 's|^\./||')
check_eq "every rule file, overlay and container file installed under DATADIR/sandy, as in the source" \
	"" "$missing"
check "the container scripts installed executable" \
	test -x "$share/container/base-image.sh" -a -x "$share/container/busybox-image.sh" \
	-a -x "$share/container/gateway/gateway.sh"
check "rules/README.md is not installed as a rule file" test ! -e "$share/rules/README.md"

# ---- a project ---------------------------------------------------------------
proj=$base/project
mkdir -p "$proj/src" "$proj/crates/foo/src"
# A repository sandyfs can read: a .git it cannot read stops the mount, and
# explain and rules, which load the policy the mount loads, with it.
git init -q "$proj"
echo '{"name": "p", "version": "1.0.0"}' >"$proj/package.json"
echo 'export A=1' >"$proj/.envrc"
echo 'SECRET=1' >"$proj/.env"
echo 'console.log(1)' >"$proj/src/index.js"
printf '[package]\nname = "foo"\nversion = "0.1.0"\n' >"$proj/crates/foo/Cargo.toml"
paths=(.envrc .env package.json src/index.js src/new.js node_modules/x/index.js
	crates/foo/src/lib.rs crates/foo/target/debug/foo .git/config .vscode/settings.json
	README.md)

# run NAME SANDYFS RULES OVERLAYS: the four queries by SANDYFS into
# $base/NAME.*, each output with RULES and OVERLAYS replaced by
# placeholders, and the exit status appended.
run() {
	local name=$1 sfs=$2 rules=$3 overlays=$4 i=0 cmd
	local -a q
	for cmd in "rules" "rules --json" "explain" "explain --json"; do
		i=$((i + 1))
		read -ra q <<<"$cmd"
		if [ "${q[0]}" = rules ]; then
			"$sfs" "${q[@]}" "$proj" >"$base/$name.$i.raw" 2>&1
		else
			"$sfs" "${q[@]}" "$proj" "${paths[@]}" >"$base/$name.$i.raw" 2>&1
		fi
		echo "exit $?" >>"$base/$name.$i.raw"
		sed -e "s|$rules/|@RULES@/|g" -e "s|$overlays/|@OVERLAYS@/|g" \
			"$base/$name.$i.raw" >"$base/$name.$i"
	done
}

# same A B WHAT: the four normalised outputs of A and B are identical.
same() {
	local i bad=''
	for i in 1 2 3 4; do
		if ! cmp -s "$base/$1.$i" "$base/$2.$i"; then
			bad+=" $i"
			diff "$base/$1.$i" "$base/$2.$i" | head -20 | sed 's/^/# /'
		fi
	done
	check_eq "$3" "" "$bad"
}

run built "$build/fusefs/sandyfs" "$SANDY_SRC/rules" "$SANDY_SRC/ro-overlays"
check "the build's sandyfs reads the source tree's rules and overlays" \
	grep -q "@RULES@/base.json" "$base/built.1"
check "... and its overlay file" grep -q "@OVERLAYS@/env-masked" "$base/built.1"
check "... and answers (exit 0 for every query)" \
	test "$(cat "$base"/built.[1-4] | grep -c '^exit 0$')" = 4

run installed "$bin/sandyfs" "$share/rules" "$share/ro-overlays"
check "the installed sandyfs reads D's rules" grep -q "@RULES@/base.json" "$base/installed.1"
check "... and D's overlays" grep -q "@OVERLAYS@/env-masked" "$base/installed.1"
check_fails "... and nothing of the source tree" grep -q "$SANDY_SRC" "$base"/installed.[1-4]
same built installed "installed sandyfs: rules, explain and their --json as the build's, byte for byte"

# ---- sandy beside it ---------------------------------------------------------
(cd "$proj" && env -u SANDYFS "$bin/sandy" explain "${paths[@]}") >"$base/sandy.out" 2>&1
check "the installed sandy runs the sandyfs beside it (its rules are D's)" \
	grep -q "$share/rules/base.json" "$base/sandy.out"
check_fails "... and nothing of the source tree" grep -q "$SANDY_SRC" "$base/sandy.out"
(cd "$proj" && env -u SANDYFS "$build/launcher/sandy" explain "${paths[@]}") >"$base/sandy-built.out" 2>&1
check "the build's sandy runs the build's sandyfs (the source tree's rules)" \
	grep -q "$SANDY_SRC/rules/base.json" "$base/sandy-built.out"

# A docker that answers `version`, says this machine's architecture as
# docker does (`info`), and records every `build` it is asked for and the
# files of its context (context.N, N the build's line in docker.log; with
# the checksum of the sandyfs it holds).
fake=$base/fakebin
mkdir -p "$fake"
cat >"$fake/docker" <<EOF
#!/bin/sh
[ "\$1" = info ] && uname -m
if [ "\$1" = build ]; then
	echo "\$*" >>"$base/docker.log"
	for ctx; do :; done
	(cd "\$ctx" && find . -type f | sort && if [ -f sandyfs ]; then cksum <sandyfs; fi) \
		>"$base/context.\$(wc -l <"$base/docker.log")"
fi
exit 0
EOF
chmod +x "$fake/docker"
# builds SANDY ARGS...: the contexts SANDY's build-image ARGS builds, one a
# line, sandyfs's own (a scratch directory) as "sandy-fs".
builds() {
	rm -f "$base"/context.*
	: >"$base/docker.log"
	env -u SANDYFS PATH="$fake:$PATH" "$@" >"$base/build-image.out" 2>&1
	sed -e 's/.* -- //' -e 's|^/tmp/sandy-fs-image\.[^/]*$|sandy-fs|' "$base/docker.log"
}
check_eq "the installed sandy builds its images from D's container files, and sandyfs's own" \
	"$share/container/gateway
$share/container
sandy-fs" "$(builds "$bin/sandy" build-image --from base:1)"
check "... with D's sandyfs (a program this machine runs), not built from source" \
	eval 'grep -qxF "$(cksum <"$bin/sandyfs")" "$base/context.3" &&
		! grep -q "^./source/" "$base/context.3"'
check_eq "the build's sandy builds them from the source tree's" "$SANDY_SRC/launcher/container/gateway
$SANDY_SRC/launcher/container
sandy-fs" "$(builds "$build/launcher/sandy" build-image --from base:1)"

# sandyfs built in its image: the installed sandy takes D's copy of its
# source, the build's sandy the source tree's parts; the same files.
check_eq "the installed sandy builds sandyfs's image from source on request" sandy-fs \
	"$(builds "$bin/sandy" build-image --fs-only --fs-from-source --from base:1)"
grep '^\./source/' "$base/context.1" >"$base/installed-source"
check "... with sandyfs's source in its context" grep -qx ./source/fusefs/cli/main.c "$base/installed-source"
check_fails "... and not this host's sandyfs" grep -qx ./sandyfs "$base/context.1"
builds "$build/launcher/sandy" build-image --fs-only --fs-from-source --from base:1 >/dev/null
grep '^\./source/' "$base/context.1" >"$base/built-source"
check "the build's sandy copies the same files of the source tree ($(wc -l <"$base/built-source"))" \
	cmp -s "$base/installed-source" "$base/built-source"
diff "$base/installed-source" "$base/built-source" | grep '^[<>]' | head | sed 's/^/# installed vs build: /'
check_fails "... and nothing of tests/" grep -q '^\./source/tests/' "$base/built-source"
# What the image's build runs on it: D's copy configures as installed.
if meson setup -Dtests=false "$base/source-build" "$share/sandyfs-source" \
	>"$base/source-setup.out" 2>&1; then
	ok "D's sandyfs-source configures (meson setup -Dtests=false)"
else
	not_ok "D's sandyfs-source configures (meson setup -Dtests=false)"
	tail -n 20 "$base/source-setup.out" | sed 's/^/# /'
fi

# ---- relocated ---------------------------------------------------------------
moved=$base/elsewhere/deeper
mkdir -p "$moved"
mv "$dest" "$moved/"
mbin=$moved/dest$bin_rel mshare=$moved/dest$data_rel/sandy
run moved "$mbin/sandyfs" "$mshare/rules" "$mshare/ro-overlays"
check "moved elsewhere, the install reads its rules where they are now" \
	grep -q "@RULES@/base.json" "$base/moved.1"
same built moved "moved: the same output as the build's, byte for byte"

# ---- nothing to find ---------------------------------------------------------
configured=$data_rel/sandy
# missing NAME DIR WHAT: with DIR moved away the installed sandyfs fails
# and names where it looked.
missing() {
	local name=$1 dir=$2 what=$3 err
	mv "$mshare/$dir" "$base/away"
	err=$("$mbin/sandyfs" rules "$proj" 2>&1 >/dev/null)
	local rc=$?
	mv "$base/away" "$mshare/$dir"
	if [ -d "$configured/$dir" ]; then
		diag "$configured/$dir exists on this machine: the install falls back to it"
		check_eq "$name: falls back to the configured prefix" 0 "$rc"
		return
	fi
	check "$name: the installed sandyfs fails" test "$rc" -ne 0
	check "$name: and says what it could not find" grep -qF "cannot find $what" <<<"$err"
	check "$name: and names beside itself and the configured prefix" \
		grep -qF "looked in '$mshare/$dir' (beside the program) and '$configured/$dir' (the configured prefix)" <<<"$err"
	check_fails "$name: and never the source tree" grep -qF "$SANDY_SRC" <<<"$err"
	diag "$err"
}
missing "no rules" rules "the shipped rules"
missing "no overlays" ro-overlays "the shipped read-only overlays"

# sandyfs's source likewise, for building sandyfs in its image.
if [ -d "$configured/sandyfs-source" ]; then
	diag "$configured/sandyfs-source exists on this machine: the install falls back to it"
else
	mv "$mshare/sandyfs-source" "$base/away"
	err=$(env -u SANDYFS PATH="$fake:$PATH" "$mbin/sandy" build-image --fs-only --fs-from-source \
		--from base:1 2>&1 >/dev/null)
	rc=$?
	mv "$base/away" "$mshare/sandyfs-source"
	check "no sandyfs-source: the installed sandy cannot build sandyfs in its image" test "$rc" -ne 0
	check "... and names beside itself and the configured prefix" \
		grep -qF "cannot find sandyfs's source: looked in '$mshare/sandyfs-source' (beside the program) and '$configured/sandyfs-source' (the configured prefix)" <<<"$err"
	check_fails "... and never the source tree" grep -qF "$SANDY_SRC" <<<"$err"
	diag "$err"
fi

if PATH=/usr/bin:/bin command -v sandyfs >/dev/null || [ -x "$bin_rel/sandyfs" ]; then
	diag "a sandyfs is installed on this machine: sandy without its own would find that one"
else
	mv "$mbin/sandyfs" "$base/sandyfs.away"
	err=$(cd "$proj" && env -u SANDYFS PATH=/usr/bin:/bin "$mbin/sandy" explain .envrc 2>&1 >/dev/null)
	rc=$?
	mv "$base/sandyfs.away" "$mbin/sandyfs"
	check "no sandyfs beside it: the installed sandy fails" test "$rc" -ne 0
	check "... and names where it looked" \
		grep -qF "looked in '$mbin/sandyfs' (beside the program) and '$bin_rel/sandyfs' (the configured prefix)" <<<"$err"
	diag "$err"
fi
done_testing
