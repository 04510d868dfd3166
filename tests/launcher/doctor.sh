#!/usr/bin/env bash
# `sandy doctor`: one line per item ("ok", "warn" or "fail", what it is,
# what was found), the commands that fix each problem, and status 0 only
# when a session with the same options would start (125 otherwise): with
# everything present; with the engine not answering or missing; with the
# agent's or the gateway's image missing; with --runtime=none and no
# bubblewrap; with a broken rule file.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project
# A Makefile makes it a C project: the rules line names base and c only, not
# the types whose protections alone are read.
printf 'all:\n' >"$proj/Makefile"

# doctor NAME ARGS...: runs `sandy doctor ARGS` (the environment as the
# caller sets it); its output in $base/NAME.out, its status in rc.
rc=0
doctor() {
	local name=$1
	shift
	"$SANDY" doctor "$@" </dev/null >"$base/$name.out" 2>"$base/$name.err"
	rc=$?
}

# has NAME DESCRIPTION REGEX: a case, passing when NAME's output has a line
# matching REGEX (grep -E).
has() {
	if grep -qE -- "$3" "$base/$1.out"; then
		ok "$1: $2"
	else
		not_ok "$1: $2"
		diag "no line matches: $3"
		sed 's/^/#   /' "$base/$1.out" "$base/$1.err"
	fi
}

# well_formed NAME: every line is an item or a fix, and nothing on stderr.
well_formed() {
	local bad
	bad=$(grep -vE '^(ok  |warn|fail)  [^ ]+ +[^ ]|^      fix: [^ ]' "$base/$1.out")
	check_eq "$1: every line is an item (ok/warn/fail) or a fix" "" "$bad"
	check_eq "$1: nothing on stderr" "" "$(cat "$base/$1.err")"
}

# Everything present: the test image, no gateway needed (SANDY_NETWORK=none,
# as in the other launcher tests).
doctor good --image "$TEST_IMAGE" "$proj"
check_eq "good: exit status 0" 0 "$rc"
well_formed good
check_eq "good: no line fails" "" "$(grep '^fail' "$base/good.out")"
has good "names the engine that answers" '^ok    engine +docker answers'
has good "finds the image" "^ok    image +'$TEST_IMAGE' is in docker"
has good "no gateway with --network=none" '^ok    gateway +not needed with --network=none'
has good "/dev/fuse opens" '^ok    /dev/fuse +opens read-write'
has good "the fuse module" '^ok    fuse +registered in /proc/filesystems'
has good "finds this build's sandyfs" "^ok    sandyfs +$SANDY_BUILD/fusefs/sandyfs\$"
has good "libfuse's version, from sandyfs --version" '^ok    libfuse +3\.[0-9]+ '
has good "the io_uring switch" '^ok    io_uring +FUSE over io_uring is (on|off|not in this kernel)'
has good "the project's store and its size, as sandyfs store says" \
	"^ok    store +$SANDY_CACHE_DIR/projects/proj-[0-9a-f]+: [0-9.]+ MiB in [0-9]+ files"
has good "the policy loads, with the detected types" '^ok    rules +the policy loads: base, c$'
has good "bubblewrap" '^ok    bwrap +/'
has good "the verdict" '^ok    session +would start: docker, --fs=fuse, --network=none$'
check "good: the project directory is the current one by default" \
	bash -c "cd '$proj' && '$SANDY' doctor --image '$TEST_IMAGE' | grep -qE '^ok    project +$proj\$'"

# The docker daemon does not answer (a dead socket); docker alone in PATH,
# so that no other engine answers instead.
mkdir -p "$base/only-docker" && ln -sf "$(command -v docker)" "$base/only-docker/docker"
DOCKER_HOST=unix:///nonexistent/docker.sock PATH=$base/only-docker doctor down "$proj"
check_eq "daemon down: exit status 125" 125 "$rc"
well_formed down
has down "says the daemon does not answer" "^fail  engine +cannot reach the docker daemon"
has down "the command that starts one" '^      fix: (sudo )?(dockerd &|systemctl start docker)$'
has down "the alternative without a container" '^      fix: or run without a container: sandy --runtime=none$'
has down "the images cannot be checked" "^warn  image +'$TEST_IMAGE': not checked"
has down "the verdict" '^fail  session +would not start'
DOCKER_HOST=unix:///nonexistent/docker.sock PATH=$base/only-docker doctor down-asked \
	--runtime=docker "$proj"
check_eq "daemon down, --runtime=docker: exit status 125" 125 "$rc"
has down-asked "says the daemon does not answer" "^fail  engine +cannot reach the docker daemon"
has down-asked "the command that starts one" '^      fix: (sudo )?(dockerd &|systemctl start docker)$'

# No engine installed at all.
mkdir -p "$base/empty"
PATH=$base/empty doctor none-installed "$proj"
check_eq "no engine: exit status 125" 125 "$rc"
has none-installed "says so" '^fail  engine +no container engine found'
has none-installed "how to install one" '^      fix: (sudo )?apt-get install docker\.io$'

# A missing image: the one asked for, the default, the gateway's.
doctor no-image --image sandy-test-missing:0 "$proj"
check_eq "missing image: exit status 125" 125 "$rc"
well_formed no-image
has no-image "names it" "^fail  image +'sandy-test-missing:0' is not in docker"
has no-image "how to build it" '^      fix: sandy build-image --image sandy-test-missing:0$'
if ! docker image inspect sandy-agent:latest >/dev/null 2>&1; then
	SANDY_IMAGE= doctor no-default-image "$proj"
	check_eq "default image not built: exit status 125" 125 "$rc"
	has no-default-image "how to build it" '^      fix: sandy build-image$'
fi
SANDY_NETWORK=filtered SANDY_GATEWAY_IMAGE=sandy-test-missing:0 doctor no-gateway "$proj"
check_eq "missing gateway image: exit status 125" 125 "$rc"
has no-gateway "names it" "^fail  gateway +the network gateway's image 'sandy-test-missing:0' is not"
has no-gateway "how to build it" '^      fix: sandy build-image --gateway-only$'
has no-gateway "the allowlist is checked" '^ok    allowlist +[0-9]+ names'
SANDY_NETWORK=filtered SANDY_ALLOW_DOMAINS='a.test $(id)' doctor bad-allow "$proj"
check_eq "a bad SANDY_ALLOW_DOMAINS: exit status 125" 125 "$rc"
has bad-allow "says what a session would say" \
	"^fail  allowlist +bad domain '\\\$\(id\)' in SANDY_ALLOW_DOMAINS"

# --runtime=none without bubblewrap: PATH holds everything of the system's
# but bwrap.
# (The first directory's name wins, as in PATH: ln refuses the others.)
mkdir -p "$base/no-bwrap"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	[ -d "$d" ] && [ ! -L "$d" ] && ln -s -- "$d"/* "$base/no-bwrap/" 2>/dev/null
done
rm -f "$base/no-bwrap/bwrap"
check "the PATH without bwrap has docker and no bwrap" \
	bash -c "PATH='$base/no-bwrap'; command -v docker >/dev/null && ! command -v bwrap >/dev/null"
PATH=$base/no-bwrap doctor no-bwrap --runtime=none "$proj"
check_eq "--runtime=none without bwrap: exit status 125" 125 "$rc"
well_formed no-bwrap
has no-bwrap "says bwrap is missing" '^fail  bwrap +not found: --runtime=none runs the command in it'
has no-bwrap "how to install it" '^      fix: (sudo )?apt-get install bubblewrap$'
has no-bwrap "no engine with --runtime=none" '^ok    engine +none'
PATH=$base/no-bwrap doctor no-bwrap-docker --image "$TEST_IMAGE" "$proj"
check_eq "without bwrap, with docker: exit status 0" 0 "$rc"
has no-bwrap-docker "bwrap only warned about" '^warn  bwrap +not found \(needed only for --runtime=none\)'
doctor none --runtime=none "$proj"
check_eq "--runtime=none with bwrap: exit status 0" 0 "$rc"
has none "the verdict" '^ok    session +would start: bubblewrap, --fs=fuse, --network=none$'

# A broken rule file stops a session: doctor says so, with its line.
printf '{\n  "name": "broken",\n  "write": ["src/**",\n}\n' >"$base/broken.json"
doctor broken --image "$TEST_IMAGE" --rules "$base/broken.json" "$proj"
check_eq "broken rule file: exit status 125" 125 "$rc"
has broken "names the file and line" "^fail  rules +.*broken\.json:4"

# The options are the session's: a bad one is a usage error (125).
"$SANDY" doctor --runtime=lxc "$proj" >"$base/usage.out" 2>&1
check_eq "a bad option: exit status 125" 125 "$?"
check "a bad option: says so" grep -q "unknown runtime 'lxc' for --runtime" "$base/usage.out"
check "nothing mounted" no_sandy_mounts "$proj"
check "no session directory" no_session_dir "$proj"
check "no container" no_container "$proj"
done_testing
