# tests/workflows/lib.bash: the harness of the workflow tests (sourced by
# tests/workflows/*.sh; not a test itself, hence not *.sh).
#
# A workflow test builds a tiny project (a "template"), then runs one
# recipe of real developer tools on it twice:
#
#   native  on a plain copy of the template at WORLD/at;
#   mount   on a second copy, SOURCE (WORLD/src), served through sandyfs
#           with the shipped, detected rules at the same path WORLD/at.
#
# Both runs use the same absolute paths (the native copy is moved aside
# before the mount takes its place, and HOME is recreated at the same path),
# so whatever a tool writes that embeds a path (CMake's cache, meson's
# build.ninja, objects with debug info, a venv's scripts) is byte-identical
# on both sides, and the host-side trees can be compared file by file.
#
# After every step: its exit status must be 0 on both sides, and SOURCE on
# the host must hold exactly what the native run holds (names, types,
# modes, symlink targets, sizes and checksums), apart from the private
# directories, which must be absent from SOURCE and present in the store.
#
# WORKFLOW_NATIVE_ONLY=1 runs the second recipe natively too (no mount):
# every case must then pass, which shows that the recipes and the
# expectations are right; the checks that only a mount can pass (refusals,
# the store) are reported as "# skip" lines and counted neither way.
source "$SANDY_SRC/tests/lib.sh"

WF_NATIVE_ONLY=${WORKFLOW_NATIVE_ONLY:-0}
WF_TIMEOUT=${WORKFLOW_TIMEOUT:-120}

# Directories the policy makes private at any depth (plus Rust's target/
# where Rust is detected): never compared as part of the project tree,
# checked with wf_private instead.
WF_PRIVATE_NAMES=(node_modules .venv venv __pycache__ .tox .nox target)
# Paths (find -path patterns relative to the project root) whose content
# differs from one native run to the next: logs with times, tool state with
# random names. Their names and types are still compared. Set per world.
WF_VOLATILE=()

wf_base=$(scratch)

# The toolchain, resolved once from the caller's PATH: cargo is whichever
# is on PATH (a rustup proxy on a developer machine), else Debian's.
# Everything else runs from the system directories, so that a pyenv or
# nvm shim of the caller cannot stand in for the system tools.
WF_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WF_CARGO=$(command -v cargo 2>/dev/null || echo /usr/bin/cargo)
WF_RUSTUP_HOME=${RUSTUP_HOME:-}
case $WF_CARGO in
/usr/bin/cargo | /bin/cargo) ;;
*)
	WF_PATH=$(dirname "$WF_CARGO"):$WF_PATH
	# A rustup proxy finds its toolchains under RUSTUP_HOME, which
	# defaults to the real HOME that the tools do not get.
	[ -z "$WF_RUSTUP_HOME" ] && [ -d "${HOME:-/root}/.rustup" ] && WF_RUSTUP_HOME=${HOME:-/root}/.rustup
	;;
esac
WF_PYTHON=/usr/bin/python3
[ -x "$WF_PYTHON" ] || WF_PYTHON=$(command -v python3 2>/dev/null || echo python3)

WF_STORE_OPT=()
if "$SANDYFS" mount --help 2>&1 | grep -q -- --store; then
	WF_HAVE_STORE=1
else
	WF_HAVE_STORE=0
fi

# The tools' environment: nothing of the caller's but the toolchain. HOME,
# caches and temporary files live in WORLD/home, recreated for each run;
# no registry, proxy or toolchain download is reachable from here.
_wf_env() {
	local home=$1
	WF_ENV=(env -i PATH="$WF_PATH" HOME="$home" TMPDIR="$home/tmp"
		LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb USER=root LOGNAME=root SHELL=/bin/sh
		GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
		npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
		npm_config_offline=true npm_config_registry=http://127.0.0.1:9/
		GOPATH="$home/go" GOCACHE="$home/go-cache" GOPROXY=off GOSUMDB=off
		GOFLAGS=-mod=mod GOTOOLCHAIN=local GOTELEMETRY=off
		CARGO_HOME="$home/cargo" CARGO_TERM_COLOR=never CARGO_NET_OFFLINE=true)
	[ -n "$WF_RUSTUP_HOME" ] && WF_ENV+=(RUSTUP_HOME="$WF_RUSTUP_HOME")
}

# wf_template NAME: a fresh directory to build a project template in.
wf_template() {
	local d=$wf_base/templates/$1
	rm -rf "$d" && mkdir -p "$d" && echo "$d"
}

# wf_git_commit DIR: make DIR a git repository with everything committed.
wf_git_commit() {
	local g=(git -c user.name=sandy-test -c user.email=test@sandy.invalid
		-c init.defaultBranch=main -c core.hooksPath=/dev/null)
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "${g[@]}" init -q "$1" &&
		GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "${g[@]}" -C "$1" add -A &&
		GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "${g[@]}" -C "$1" commit -qm initial
}

# wf_need TOOL...: every TOOL is a command; otherwise one failing case
# names the missing ones (a tool that is not there is not a pass).
wf_need() {
	local t missing=()
	for t in "$@"; do
		PATH=$WF_PATH command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	not_ok "$WF_WORLD: tools installed: missing ${missing[*]} (scripts/deps.sh installs them)"
	return 1
}

# The manifest of a project tree: one line per path (type, mode, symlink
# target) and one per regular file's content (checksum and size), private
# directories left out, volatile files' content left out. Directory sizes
# are not compared: they depend on the history of the directory (temporary
# names created and removed), not on what it holds.
wf_manifest() {
	local d=$1 n p
	local prune=(-false) vol=(-false)
	for n in "${WF_PRIVATE_NAMES[@]}"; do prune+=(-o -name "$n"); done
	for p in "${WF_VOLATILE[@]}"; do vol+=(-o -path "./$p"); done
	(
		cd "$d" || exit 1
		{
			find . \( "${prune[@]}" \) -prune -o -printf '%p %y %m %l\n'
			find . \( "${prune[@]}" \) -prune -o -type f ! \( "${vol[@]}" \) -print0 |
				xargs -0r cksum | awk '{ print $3, "content", $1, $2 }'
		} | LC_ALL=C sort
	)
}

_wf_diag_file() { sed -n "1,${2:-20}p" "$1" | sed 's/^/#   /'; }

# wf_step LABEL DIR COMMAND...: one step of the recipe: COMMAND run in DIR
# (relative to the project root) in the tools' environment, with a time
# limit. Natively, records the exit status and the tree; through the mount,
# checks the exit status and compares the host-side tree with the native
# one.
wf_step() { _wf_step 0 "$@"; }
# wf_step_same_output LABEL DIR COMMAND...: the same, and the output (stdout
# and stderr) must be the native one too.
wf_step_same_output() { _wf_step 1 "$@"; }

_wf_step() {
	local same_out=$1 label=$2 dir=$3
	shift 3
	WF_N=$((WF_N + 1))
	local what="$WF_WORLD: $label"
	[ "$dir" != . ] && what+=" (in $dir)"
	local rec=$WF_REC/$WF_PHASE.$WF_N nrec=$WF_REC/native.$WF_N
	local rc t0=$EPOCHREALTIME
	(cd "$WF_ROOT/$dir" && exec timeout -k 5 "$WF_TIMEOUT" "${WF_ENV[@]}" "$@") \
		>"$rec.out" 2>&1 </dev/null
	rc=$?
	echo "$rc" >"$rec.rc"
	[ -n "${WORKFLOW_TIMES:-}" ] && diag "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f s", b - a }'): $what ($WF_PHASE)"
	wf_manifest "$WF_HOSTDIR" >"$rec.manifest"
	if [ "$WF_PHASE" = native ]; then
		if [ "$rc" -eq 0 ]; then
			ok "$what: exits 0 natively"
		else
			not_ok "$what: exits 0 natively (status $rc)"
			_wf_diag_file "$rec.out"
		fi
		return
	fi
	if [ "$rc" -eq 0 ]; then
		ok "$what: exits 0$WF_WHERE"
	else
		not_ok "$what: exits 0$WF_WHERE (status $rc)"
		_wf_diag_file "$rec.out"
	fi
	if diff "$nrec.manifest" "$rec.manifest" | sed -n 's/^< /-/p; s/^> /+/p' >"$rec.diff" && [ ! -s "$rec.diff" ]; then
		ok "$what: the project on the host is what the native run made"
	else
		not_ok "$what: the project on the host is what the native run made"
		# What an earlier step already got wrong is said once.
		local prev=$WF_REC/$WF_PHASE.$((WF_N - 1)).diff
		[ -f "$prev" ] || prev=/dev/null
		grep -vxF -f "$prev" "$rec.diff" >"$rec.new"
		if [ -s "$rec.new" ]; then
			diag "  native only (-), host side only (+):"
			head -n 30 "$rec.new" | sed 's/^/#   /'
		else
			diag "  the differences the previous step left"
		fi
	fi
	if [ "$same_out" = 1 ]; then
		if cmp -s "$nrec.out" "$rec.out"; then
			ok "$what: prints what it prints natively"
		else
			not_ok "$what: prints what it prints natively"
			[ "$rc" -eq 0 ] && diff -u "$nrec.out" "$rec.out" | sed -n '3,30p' | sed 's/^/#   /'
		fi
	fi
}

# wf_private PATH...: after the steps that made them, each PATH (relative
# to the project root) is private: through the mount it is absent from
# SOURCE and present in the store; natively, it is where the tool put it.
wf_private() {
	local p
	for p in "$@"; do
		if [ "$WF_PHASE" = native ]; then
			check "$WF_WORLD: $p is made natively" test -e "$WF_ROOT/$p" -o -L "$WF_ROOT/$p"
		elif [ "$WF_NATIVE_ONLY" = 1 ]; then
			check "$WF_WORLD: $p is made (second native run)" test -e "$WF_ROOT/$p" -o -L "$WF_ROOT/$p"
		else
			if [ -e "$WF_HOSTDIR/$p" ] || [ -L "$WF_HOSTDIR/$p" ]; then
				not_ok "$WF_WORLD: $p is private: absent from SOURCE on the host"
			else
				ok "$WF_WORLD: $p is private: absent from SOURCE on the host"
			fi
			if [ -e "$WF_STORE/tree/$p" ] || [ -L "$WF_STORE/tree/$p" ]; then
				ok "$WF_WORLD: $p is private: present in the store"
			else
				not_ok "$WF_WORLD: $p is private: present in the store (STORE/tree/$p)"
				[ "$WF_HAVE_STORE" = 1 ] || diag "  this sandyfs has no --store option"
			fi
		fi
	done
}

# _wf_private_listing DIR: every path under DIR's private directories,
# with its type, mode, size, symlink target and content checksum.
_wf_private_listing() {
	local n sel=(-false)
	for n in "${WF_PRIVATE_NAMES[@]}"; do sel+=(-o -name "$n"); done
	(
		cd "$1" || exit 1
		find . \( "${sel[@]}" \) -prune -print0 |
			xargs -0r sh -c 'find "$@" -printf "%p %y %m %s %l\n"; find "$@" -type f -exec cksum {} +' sh |
			LC_ALL=C sort
	)
}

# wf_source_private_unchanged: through the mount, SOURCE's own private
# directories are what they were before the session: nothing was written
# under a private name in SOURCE (and what the host had there is intact).
wf_source_private_unchanged() {
	[ "$WF_PHASE" = mount ] && [ "$WF_NATIVE_ONLY" != 1 ] || return 0
	_wf_private_listing "$WF_HOSTDIR" >"$WF_REC/private.after"
	if cmp -s "$WF_REC/private.before" "$WF_REC/private.after"; then
		ok "$WF_WORLD: nothing was written under a private name (${WF_PRIVATE_NAMES[*]}) in SOURCE"
	else
		not_ok "$WF_WORLD: nothing was written under a private name (${WF_PRIVATE_NAMES[*]}) in SOURCE"
		diff "$WF_REC/private.before" "$WF_REC/private.after" | sed -n 's/^< /-/p; s/^> /+/p' |
			head -n 10 | sed 's/^/#   /'
	fi
}

# _wf_mount SOURCE MOUNTPOINT: the shipped rules, detected, and nothing
# else: no user-level rule file of this machine (an empty config
# directory), and the world's own store (a scratch cache directory besides,
# for a sandyfs that would put a store there by default).
_wf_mount() {
	mkdir -p "$WF_WORLD_DIR/config" "$WF_WORLD_DIR/cache" || return 1
	SANDY_CONFIG_DIR=$WF_WORLD_DIR/config SANDY_CACHE_DIR=$WF_WORLD_DIR/cache \
		mount_policy --pid-file "$WF_WORLD_DIR/daemon.pid" "${WF_STORE_OPT[@]}" "$1" "$2"
}

# _wf_unmount MOUNTPOINT: unmount, and wait for the daemon to be gone (so
# that the next session finds the store free).
_wf_unmount() {
	local pid
	pid=$(cat "$WF_WORLD_DIR/daemon.pid" 2>/dev/null)
	"$SANDYFS" umount "$1" >/dev/null 2>&1 || fusermount3 -u "$1" 2>/dev/null
	[ -z "$pid" ] || wait_until 10 eval "! pid_alive $pid"
	! is_mounted "$1"
}

# wf_remount: through the mount, unmount and mount again with the same
# store, so that the next steps run in a later session (what was made
# in the first stays the agent's). Natively, nothing.
wf_remount() {
	[ "$WF_PHASE" = mount ] && [ "$WF_NATIVE_ONLY" != 1 ] || return 0
	if ! _wf_unmount "$WF_ROOT"; then
		not_ok "$WF_WORLD: unmount before the next session"
		return 1
	fi
	if _wf_mount "$WF_HOSTDIR" "$WF_ROOT"; then
		ok "$WF_WORLD: a second session mounts the same SOURCE and store"
		WF_WHERE=" through the mount (second session)"
	else
		not_ok "$WF_WORLD: a second session mounts the same SOURCE and store"
	fi
}

# wf_protect PATH...: files that must end both runs byte-identical to the
# template (the build-tool and config files the policy protects: the
# workflow must not need to write them).
wf_protect() { WF_PROTECTED+=("$@"); }

_wf_check_protected() {
	local p where=$WF_WHERE
	[ "$WF_PHASE" = native ] && where=" natively"
	for p in "${WF_PROTECTED[@]}"; do
		if cmp -s "$WF_TEMPLATE/$p" "$WF_HOSTDIR/$p"; then
			ok "$WF_WORLD: $p is unchanged after the workflow$where"
		else
			not_ok "$WF_WORLD: $p is unchanged after the workflow$where"
		fi
	done
}

# wf_denied LABEL DIR FILE COMMAND...: through the mount only: COMMAND (run
# in DIR) fails with "Read-only file system", FILE (relative to the
# project root) keeps its content, and no new name is left in FILE's
# directory on the host (no sed or editor temporary file behind).
wf_denied() {
	local label=$1 dir=$2 file=$3
	shift 3
	local what="$WF_WORLD: $label"
	[ "$dir" != . ] && what+=" (in $dir)"
	if [ "$WF_NATIVE_ONLY" = 1 ] || [ "$WF_PHASE" != mount ]; then
		diag "skip (native run): $what is refused"
		return 0
	fi
	local host=$WF_HOSTDIR/$file fdir before after sum=absent rc out
	fdir=$(dirname "$host")
	# A name that does not exist yet may have no directory either.
	while [ ! -d "$fdir" ]; do fdir=$(dirname "$fdir"); done
	before=$(ls -A "$fdir")
	[ -e "$host" ] && sum=$(cksum <"$host")
	local msg=" with EROFS"
	[ -n "${WF_DENIED_ANY_MESSAGE:-}" ] && msg=""
	out=$(cd "$WF_ROOT/$dir" && timeout -k 5 "$WF_TIMEOUT" "${WF_ENV[@]}" "$@" 2>&1 </dev/null)
	rc=$?
	# Go spells strerror in lower case; some tools say it in their own
	# words (vim), or warn and go on with status 0 (perl -i skips a file it
	# cannot edit).
	if { [ "$rc" -ne 0 ] || [ -n "${WF_DENIED_ANY_STATUS:-}" ]; } &&
		{ [ -n "${WF_DENIED_ANY_MESSAGE:-}" ] || [[ ${out,,} == *"read-only file system"* ]]; }; then
		ok "$what: refused$msg"
	else
		not_ok "$what: refused$msg (status $rc)"
		printf '%s\n' "$out" | head -n 10 | sed 's/^/#   /'
	fi
	if [ "$sum" = absent ]; then
		check "$what: $file is still absent on the host" test ! -e "$host" -a ! -L "$host"
	else
		check_eq "$what: $file is unchanged on the host" "$sum" "$(cksum <"$host" 2>&1)"
	fi
	# An editor that copies the file before it finds it protected (vim's
	# backup) leaves that copy: the agent's own, holding the original.
	local left=${WF_DENIED_LEFTOVER:-}
	if [ -n "$left" ] && [ -e "$fdir/$left" ]; then
		check_eq "$what: $left, left by the tool, holds the original" "$sum" \
			"$(cksum <"$fdir/$left" 2>&1)"
		check "$what: $left is the agent's own: removed through the mount" \
			rm -f "$WF_ROOT/$(dirname "$file")/$left"
	fi
	after=$(ls -A "$fdir")
	if [ "$before" == "$after" ]; then
		ok "$what: no temporary file left beside $file on the host"
	else
		not_ok "$what: no temporary file left beside $file on the host"
		diff <(echo "$before") <(echo "$after") | sed 's/^/#   /'
	fi
}

# wf_run WORLD TEMPLATE RECIPE [AFTER]: runs the function RECIPE natively,
# then through the mount, on copies of TEMPLATE, and the function AFTER
# (refusals, extra checks) in the mount run after the recipe.
wf_run() {
	local name=$1 template=$2 recipe=$3 after=${4:-}
	local w=$wf_base/worlds/$name
	WF_WORLD=$name WF_TEMPLATE=$template WF_REC=$w/rec WF_WORLD_DIR=$w
	rm -rf "$w" && mkdir -p "$w/rec" || return 1
	_wf_env "$w/home"

	WF_PHASE=native WF_N=0 WF_WHERE=""
	WF_ROOT=$w/at WF_HOSTDIR=$w/at
	mkdir -p "$w/home/tmp" && cp -a "$template" "$w/at" || return 1
	"$recipe"
	_wf_check_protected
	mv "$w/at" "$w/native"

	WF_PHASE=mount WF_N=0
	rm -rf "${w:?}/home" && mkdir -p "$w/home/tmp" "$w/store" || return 1
	WF_STORE=$w/store
	if [ "$WF_NATIVE_ONLY" = 1 ]; then
		WF_WHERE=" (second native run)"
		cp -a "$template" "$w/at" || return 1
	else
		WF_WHERE=" through the mount"
		WF_HOSTDIR=$w/src
		WF_STORE_OPT=()
		[ "$WF_HAVE_STORE" = 1 ] && WF_STORE_OPT=(--store "$w/store")
		cp -a "$template" "$w/src" && mkdir -p "$w/at" || return 1
		[ -n "$WF_SOURCE_HOOK" ] && "$WF_SOURCE_HOOK" "$w/src"
		_wf_private_listing "$w/src" >"$w/rec/private.before"
		if ! _wf_mount "$w/src" "$w/at"; then
			not_ok "$name: mount SOURCE with the detected rules"
			return 1
		fi
	fi
	"$recipe"
	[ -n "$after" ] && "$after"
	_wf_check_protected
	if [ "$WF_NATIVE_ONLY" != 1 ]; then
		# Still answering after the whole workflow: the daemon did not die
		# on the way (the steps' failures would not say why).
		check "$name: the mount still answers at the end" _wf_answers "$w/at"
		_wf_unmount "$w/at"
	fi
}

_wf_answers() { is_mounted "$1" && ls "$1" >/dev/null 2>&1; }

WF_PROTECTED=()
# WF_SOURCE_HOOK: a function run on SOURCE before it is mounted (what the
# user has on the host side that the native run does not have).
WF_SOURCE_HOOK=
# wf_reset: forget the previous world's settings.
wf_reset() { WF_PROTECTED=() WF_VOLATILE=() WF_SOURCE_HOOK=; }
