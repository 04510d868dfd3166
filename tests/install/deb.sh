#!/usr/bin/env bash
# The Debian package: scripts/package.sh builds it from this working tree,
# dpkg installs it, the installed programs work from /usr with what the
# package put there, the package holds everything `meson install` puts in
# place (programs, rules, overlays, container files, man pages,
# completions), its man pages are found by man, and `dpkg -r` takes every
# one of its files away again.
#
# The machine is left as found: the package is removed at exit whatever
# happened (purged, when the test did not get as far as removing it), and
# a package named sandy installed before the test makes it fail rather
# than touch that one. The package is built from the source, not from
# BUILD: on a sanitizer build (which runs the suite a second time) the
# test says so and skips.
source "$SANDY_SRC/tests/lib.sh"
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

build=$SANDY_BUILD
unset SANDY_RULES_DIR SANDY_OVERLAYS_DIR SANDY_CONTAINER_DIR

read -r sanitize prefix < <(python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
print(o["b_sanitize"], o["prefix"])' "$build/meson-info/intro-buildoptions.json")
[ "$sanitize" = none ] ||
	skip_all "the package is built from the source, not from this build: tested with the builds without sanitizers"

state=$(dpkg-query -W -f='${db:Status-Status} ${Version}' sandy 2>/dev/null)
if [ -n "$state" ] && [ "${state%% *}" != not-installed ]; then
	not_ok "a package named sandy is on this machine already (${state}): this test installs and removes its own; remove that one first (dpkg --purge sandy)"
	done_testing
fi

base=$(scratch)
cd "$base" || exit 1

# ---- build -------------------------------------------------------------------
start=$SECONDS
deb=$("$SANDY_SRC/scripts/package.sh" "$base/out" 2>"$base/package.err")
rc=$?
check "scripts/package.sh builds the package ($((SECONDS - start)) s)" test "$rc" -eq 0 -a -f "$deb"
if [ "$rc" -ne 0 ] || [ ! -f "$deb" ]; then
	tail -40 "$base/package.err" | sed 's/^/# /'
	done_testing
fi
version=$(dpkg-deb -f "$deb" Version)
check_eq "the package is sandy, for this machine's architecture" \
	"sandy $(dpkg --print-architecture)" "$(dpkg-deb -f "$deb" Package Architecture | awk '{ printf "%s%s", sep, $2; sep = " " }')"

# Every dependency must be installed already: dpkg installs nothing more
# (scripts/deps.sh installs them).
unmet=''
IFS=',' read -ra groups <<<"$(dpkg-deb -f "$deb" Depends)"
for g in "${groups[@]}"; do
	met=''
	IFS='|' read -ra alts <<<"$g"
	for a in "${alts[@]}"; do
		name=$(echo "$a" | sed 's/(.*)//; s/:any//' | tr -d ' ')
		dpkg-query -W -f='${db:Status-Status}' "$name" 2>/dev/null | grep -qx installed && met=1
	done
	[ -z "$met" ] && unmet+=" $(echo "$g" | tr -s ' ')"
done
check_eq "the package's dependencies are installed (scripts/deps.sh)" "" "$unmet"
[ -n "$unmet" ] && done_testing

# ---- install -----------------------------------------------------------------
at_exit "dpkg-query -W sandy >/dev/null 2>&1 && dpkg --purge sandy >/dev/null 2>&1"
if dpkg -i "$deb" >"$base/dpkg-i.out" 2>&1; then
	ok "dpkg -i installs it"
else
	not_ok "dpkg -i installs it"
	sed 's/^/# /' "$base/dpkg-i.out"
fi
check_eq "dpkg says it is installed" "installed $version" \
	"$(dpkg-query -W -f='${db:Status-Status} ${Version}' sandy 2>/dev/null)"
dpkg -L sandy >"$base/list"
files=()
while IFS= read -r f; do
	[ -d "$f" ] && [ ! -L "$f" ] && continue
	files+=("$f")
done <"$base/list"
diag "${#files[@]} files"

# ---- the programs, from /usr -------------------------------------------------
proj=$base/project
mkdir -p "$proj/src"
echo '{"name": "p", "version": "1.0.0"}' >"$proj/package.json"
echo 'export A=1' >"$proj/.envrc"
check_eq "/usr/bin/sandy --version" "sandy ${version%%-*}" \
	"$(env -u SANDYFS /usr/bin/sandy --version | cut -d' ' -f1,2)"
check_eq "/usr/bin/sandyfs --version" "sandyfs ${version%%-*}" \
	"$(/usr/bin/sandyfs --version | cut -d' ' -f1,2)"
out=$(/usr/bin/sandyfs rules "$proj" 2>&1)
check "/usr/bin/sandyfs rules PROJECT reads /usr/share/sandy/rules" \
	grep -q "^    /usr/share/sandy/rules/base.json (always)" <<<"$out"
check "... detects the project's type" \
	grep -q "^    /usr/share/sandy/rules/node.json (detected: package.json)" <<<"$out"
check "... with the overlays of /usr/share/sandy/ro-overlays" \
	grep -q -- "-> /usr/share/sandy/ro-overlays/env-masked" <<<"$out"
out=$(cd "$proj" && env -u SANDYFS /usr/bin/sandy explain .envrc src/a.js 2>&1)
check "/usr/bin/sandy explain runs /usr/bin/sandyfs" \
	grep -q "rule: /usr/share/sandy/rules/base.json:[0-9]*: protect.* '.envrc'" <<<"$out"
check "... and src/ is writable" grep -q "^src/a.js: writable" <<<"$out"

# ---- what it holds -----------------------------------------------------------
absent=''
for f in /usr/bin/sandy /usr/bin/sandyfs /usr/share/sandy/ro-overlays/env-masked \
	/usr/share/sandy/container/Dockerfile /usr/share/sandy/container/gateway/gateway.sh; do
	grep -qx "$f" "$base/list" || absent+=" $f"
done
for f in "$SANDY_SRC"/rules/*.json; do
	grep -qx "/usr/share/sandy/rules/${f##*/}" "$base/list" || absent+=" rules/${f##*/}"
done
check_eq "dpkg -L sandy lists the programs, every rule file, the overlays and the container files" \
	"" "$absent"

# Everything `meson install` of this build puts under its prefix is in the
# package under /usr (man pages compressed), and nothing else but the
# package's own documentation.
check "meson install of this build (for the list of what it installs)" \
	meson install -C "$build" --no-rebuild --quiet --skip-subprojects --destdir "$base/dest"
(cd "$base/dest$prefix" && find . ! -type d | sed 's|^\.||') | sort >"$base/meson-files"
grep "^/usr/" "$base/list" | while IFS= read -r f; do
	[ -d "$f" ] && [ ! -L "$f" ] && continue
	case $f in /usr/share/doc/sandy/*) continue ;; esac
	case $f in /usr/share/man/*.gz) f=${f%.gz} ;; esac
	echo "${f#/usr}"
done | sort >"$base/deb-files"
check "the package holds what meson installs ($(wc -l <"$base/meson-files") files), nothing less or more" \
	cmp -s "$base/meson-files" "$base/deb-files"
diff "$base/meson-files" "$base/deb-files" | grep '^[<>]' | sed 's/^/# meson install vs package: /'

# The man pages: in the package, on disk, and what `man -w` finds.
# A minimal image's dpkg may be told to drop them (path-exclude in
# /etc/dpkg/dpkg.cfg.d): then man cannot find them, and the test says so.
for page in sandy.1 sandyfs.1 sandy-rules.5; do
	sec=${page##*.} name=${page%.*}
	f=/usr/share/man/man$sec/$page.gz
	if ! grep -qx "$f" "$base/list"; then
		not_ok "man page $page in the package ($f)"
		continue
	fi
	ok "man page $page in the package ($f)"
	if [ ! -e "$f" ]; then
		excl=$(grep -Hs '^path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/* | head -n 1)
		if [ -n "$excl" ]; then
			ok "man -w $sec $name # SKIP dpkg drops man pages on this machine ($excl)"
		else
			not_ok "man page $page installed at $f"
		fi
		continue
	fi
	check_eq "man -w $sec $name finds it" "$f" "$(man -w "$sec" "$name" 2>&1)"
done

# ---- remove ------------------------------------------------------------------
if dpkg -r sandy >"$base/dpkg-r.out" 2>&1; then
	ok "dpkg -r removes it"
else
	not_ok "dpkg -r removes it"
	sed 's/^/# /' "$base/dpkg-r.out"
fi
left=''
for f in "${files[@]}"; do
	[ -e "$f" ] || [ -L "$f" ] && left+=" $f"
done
check_eq "none of its ${#files[@]} files is left" "" "$left"
check_fails "dpkg no longer has it installed" \
	sh -c "dpkg-query -W -f='\${db:Status-Status}' sandy 2>/dev/null | grep -qx installed"
check "/usr/share/sandy is gone" test ! -e /usr/share/sandy
done_testing
