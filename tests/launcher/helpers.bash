# Shared by the launcher tests (tests/launcher/*.sh); not a test itself.
#
# Docker is a hard requirement here: when the docker CLI is missing the
# tests fail, they do not skip. When no daemon answers, ensure_docker starts
# dockerd in the background and leaves it running for the next test script
# (starting it takes seconds, and several scripts, possibly concurrent, use
# it); its log is /var/log/sandy-test-dockerd.log.
#
# The test image is made without a registry: a busybox-static rootfs loaded
# with `docker import` (launcher/container/busybox-image.sh).

source "$SANDY_SRC/tests/lib.sh"

SANDY=${SANDY:-$SANDY_BUILD/launcher/sandy}
TEST_IMAGE=sandy-test-busybox:3
export SANDY_IMAGE=$TEST_IMAGE
# The tests run as root; a sudo in the caller's past must not make sandy act
# for another user (the cases that want that set these themselves).
unset SUDO_UID SUDO_GID SUDO_USER
# No network for the agent unless a test asks for it: the launcher's tests
# need none, and the allowlist's gateway is tests/network's subject.
export SANDY_NETWORK=none

# Each test script has its own runtime directory, so that concurrent runs
# of the suite (other build flavours, other users of this machine) never see,
# sweep or count each other's sessions. It is outside the scratch
# directories, which are removed recursively: nothing may walk into a mount
# left in it.
_sandy_run=$(mktemp -d /run/sandy-test.XXXXXX) || exit 1
chmod 0755 "$_sandy_run"
export XDG_RUNTIME_DIR=$_sandy_run
RUNDIR=$_sandy_run/sandy
# The host user's home as sandy sees it (its agent configuration, git
# config, ~/specs) and the agents' homes: the test's own, never root's.
export HOME=$_sandy_run/home SANDY_DATA_DIR=$_sandy_run/data
mkdir -p "$HOME" "$SANDY_DATA_DIR"
unset SANDY_SHARE_DIR SANDY_SSH_KEY SSH_AUTH_SOCK GIT_CONFIG_GLOBAL XDG_CONFIG_HOME XDG_DATA_HOME SANDY_AGENT
at_exit "awk -v d='$_sandy_run/' 'index(\$5, d) == 1 { print \$5 }' /proc/self/mountinfo | tac |
	while read -r m; do umount -l \"\$m\"; done; rm -rf --one-file-system '$_sandy_run'"

# ensure_docker: 0 when a daemon answers (started here if need be).
ensure_docker() {
	if ! command -v docker >/dev/null; then
		diag "the docker CLI is missing: install docker.io (scripts/deps.sh does)"
		return 1
	fi
	docker info >/dev/null 2>&1 && return 0
	if ! command -v dockerd >/dev/null; then
		diag "no docker daemon answers and dockerd is not installed"
		return 1
	fi
	diag "starting dockerd (left running; log in /var/log/sandy-test-dockerd.log)"
	# A clean environment: the daemon outlives this script, and would
	# otherwise keep this script's XDG_RUNTIME_DIR (removed at exit) for
	# its console sockets.
	env -i PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root \
		setsid dockerd >>/var/log/sandy-test-dockerd.log 2>&1 </dev/null &
	local i
	for i in $(seq 1 150); do
		docker info >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	diag "dockerd did not answer within 30 s; its log:"
	tail -n 20 /var/log/sandy-test-dockerd.log | sed 's/^/# /'
	return 1
}

# ensure_test_image: the busybox image the tests run (idempotent).
ensure_test_image() {
	"$SANDY_SRC/launcher/container/busybox-image.sh" "$TEST_IMAGE" git ssh-add 2>&1 | sed 's/^/# /'
	docker image inspect "$TEST_IMAGE" >/dev/null 2>&1
}

# require_docker: the preamble of a test that needs docker. Not a skip: a
# failure, reported as a case.
require_docker() {
	if ensure_docker && ensure_test_image; then
		ok "docker answers and the test image '$TEST_IMAGE' is present"
	else
		not_ok "docker answers and the test image '$TEST_IMAGE' is present"
		done_testing
	fi
}

# A rule file for the test projects: src/** and notes.txt are writable.
write_test_rules() {
	cat >"$1" <<'JSON'
{
  "name": "launcher-test",
  "description": "sandy launcher tests: sources and one note are writable",
  "write": ["src/**", "notes.txt"]
}
JSON
}

# make_repo DIR: a small git repository owned by root, committed.
make_repo() {
	local d=$1
	mkdir -p "$d/src" && echo 'int main(void) { return 0; }' >"$d/src/main.c" &&
		echo hello >"$d/README" &&
		git -C "$d" init -q -b main &&
		git -C "$d" add -A &&
		git -C "$d" -c user.name=t -c user.email=t@example.invalid commit -qm init
}

# new_project: sets BASE (a scratch directory), PROJ (BASE/proj, a committed
# git repository) and RULES (BASE/rules.json, the test rules), and removes
# the containers a failed case leaves for PROJ at exit.
new_project() {
	base=$(scratch) && proj=$base/proj && rules=$base/rules.json &&
		make_repo "$proj" && write_test_rules "$rules" || exit 1
	clean_leftovers "$proj"
}

# session_dirs PROJECT: the session directories of sandy's serving PROJECT.
session_dirs() {
	local d p
	p=$(realpath -m "$1")
	for d in "$RUNDIR"/*/; do
		[ -d "$d" ] && grep -qxF "$p" "$d/project" 2>/dev/null && echo "${d%/}"
	done
}

# no_sandy_mounts PROJECT: nothing mounted over PROJECT, and nothing
# mounted in a session directory of PROJECT's (a session whose mount
# stays keeps its directory).
no_sandy_mounts() {
	local p d
	p=$(realpath -m "$1")
	awk -v p="$p" '$5 == p || index($5, p "/") == 1 { exit 1 }' /proc/self/mountinfo || return 1
	for d in $(session_dirs "$1"); do
		awk -v d="$d" '$5 == d || index($5, d "/") == 1 { exit 1 }' /proc/self/mountinfo ||
			return 1
	done
}

# no_session_dir PROJECT: no session directory of sandy's serves PROJECT.
no_session_dir() {
	[ -z "$(session_dirs "$1")" ]
}

# no_container PROJECT: no container (running or not) labelled for it.
no_container() {
	[ -z "$(docker ps -aq --filter "label=sandy.project=$(realpath -m "$1")")" ]
}

# clean_leftovers PROJECT: at exit, the containers a failed case left
# (mounts go with the runtime directory).
clean_leftovers() {
	at_exit "docker ps -aq --filter 'label=sandy.project=$(realpath -m "$1")' |
		xargs -r docker rm -f >/dev/null 2>&1"
}
