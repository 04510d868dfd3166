#!/usr/bin/env bash
# Bad input and failed host checks, and the small
# subcommands: every failure gives a clear message and status 125, leaves
# nothing mounted, no container and no session directory. Also --help,
# --version, `sandy explain` passing through to sandyfs, `sandy
# build-image` (with a local base image: no registry is reachable here).
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project

# fails NAME MESSAGE ARGS...: sandy ARGS fails with 125, prints MESSAGE
# (a fixed string) on stderr, and leaves nothing behind.
fails() {
	local name=$1 msg=$2 rc
	shift 2
	"$SANDY" "$@" </dev/null >"$base/out" 2>"$base/err"
	rc=$?
	check_eq "$name: exit status 125" 125 "$rc"
	if grep -qF -- "$msg" "$base/err"; then
		ok "$name: says '$msg'"
	else
		not_ok "$name: says '$msg'"
		sed 's/^/#   /' "$base/err"
	fi
	check_eq "$name: the command did not run" "" "$(cat "$base/out")"
	check "$name: nothing mounted" no_sandy_mounts "$proj"
	check "$name: no container" no_container "$proj"
	check "$name: no session directory" no_session_dir "$proj"
}

out=$("$SANDY" --help)
check_eq "--help exits 0" 0 "$?"
check "--help prints the usage" grep -q '^usage: sandy \[OPTIONS\] \[PROJECT_DIR\] \[-- COMMAND' <<<"$out"
check "--help documents the exit statuses" grep -q '125 when sandy' <<<"$out"
out=$("$SANDY" --version)
check "--version prints the version" grep -Eq '^sandy [0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out"

fails "missing PROJECT_DIR" "cannot use project directory '$base/missing': No such file or directory" \
	"$base/missing" -- echo ran
fails "PROJECT_DIR a file" "cannot use project directory '$proj/README': not a directory" \
	"$proj/README" -- echo ran
fails "unknown --fs" "unknown filesystem 'nfs' for --fs (fuse, bind)" --fs=nfs "$proj" -- echo ran
fails "unknown --runtime" "unknown runtime 'lxc' for --runtime (docker, podman, none)" \
	--runtime lxc "$proj" -- echo ran
fails "unknown option" "unknown option '--frobnicate'" --frobnicate "$proj" -- echo ran
fails "option without its value" "option '--image' needs a value" "$proj" --image
fails "'--' without a command" "no COMMAND after '--'" "$proj" --
fails "two project directories" "more than one PROJECT_DIR" "$proj" "$base" -- echo ran

fails "unknown --network" "unknown network 'lan' for --network (filtered, open, none)" \
	--network=lan "$proj" -- echo ran
SANDY_NETWORK=lan fails "unknown SANDY_NETWORK" "unknown network 'lan' in SANDY_NETWORK" \
	"$proj" -- echo ran
fails "a bad --allow" "bad domain 'x.test;id' for --allow" --allow 'x.test;id' "$proj" -- echo ran
SANDY_NETWORK=filtered SANDY_ALLOW_DOMAINS='a.test $(id)' fails "a bad SANDY_ALLOW_DOMAINS" \
	"bad domain '\$(id)' in SANDY_ALLOW_DOMAINS" "$proj" -- echo ran
mkdir -p "$base/config"
printf '{"allow": ["a.test",]}' >"$base/config/config.json"
SANDY_NETWORK=filtered SANDY_CONFIG_DIR=$base/config fails "a malformed config.json" \
	"cannot use '$base/config/config.json'" "$proj" -- echo ran
printf '{"allow": ["a.test", "-rf"]}' >"$base/config/config.json"
SANDY_NETWORK=filtered SANDY_CONFIG_DIR=$base/config fails "a bad domain in config.json" \
	"bad domain '-rf' in \"allow\" of '$base/config/config.json'" "$proj" -- echo ran
SANDY_NETWORK=filtered SANDY_GATEWAY_IMAGE=sandy-test-missing:0 fails "missing gateway image" \
	"the network gateway's image 'sandy-test-missing:0' is not in docker" "$proj" -- echo ran
SANDY_NETWORK=filtered SANDY_DNS_UPSTREAM=127.0.0.53 fails "a loopback SANDY_DNS_UPSTREAM" \
	"bad address '127.0.0.53' in SANDY_DNS_UPSTREAM" "$proj" -- echo ran
SANDY_MEMORY=12x fails "a bad SANDY_MEMORY" \
	"bad SANDY_MEMORY '12x': a size in bytes, or with k, m or g, of at least 64m" \
	"$proj" -- echo ran
SANDY_MEMORY=1m fails "a SANDY_MEMORY too small" "bad SANDY_MEMORY '1m'" \
	--runtime=none "$proj" -- echo ran
SANDY_PIDS=-5 fails "a bad SANDY_PIDS" "bad SANDY_PIDS '-5': a number, at least 16" \
	--runtime=none "$proj" -- echo ran
SANDY_NETWORK=filtered SANDY_DNS_UPSTREAM=127.0.0.53 fails \
	"a loopback SANDY_DNS_UPSTREAM, without a container" \
	"bad address '127.0.0.53' in SANDY_DNS_UPSTREAM" --runtime=none "$proj" -- echo ran
fails "missing image" "image 'sandy-test-missing:0' not found in docker" \
	--image sandy-test-missing:0 "$proj" -- echo ran
if ! docker image inspect sandy-agent:latest >/dev/null 2>&1; then
	fails "default image not built" "build it with 'sandy build-image'" \
		--image sandy-agent:latest "$proj" -- echo ran
fi

# An agent the image does not have: said before anything starts, with the
# image to build; an image that has it (found with its own shell) runs it.
fails "an agent the image lacks" "image '$TEST_IMAGE' has no 'claude'; build an image with it ('sandy build-image --image sandy-claude -- --build-arg AGENT_PACKAGE=@anthropic-ai/claude-code --build-arg AGENT_COMMAND=claude') and run with --image sandy-claude" \
	--image "$TEST_IMAGE" "$proj" -- claude --version
fails "an agent the image lacks, by its path" "image '$TEST_IMAGE' has no '/usr/local/bin/codex'" \
	--image "$TEST_IMAGE" "$proj" -- /usr/local/bin/codex
mkdir -p "$base/ctx-gemini"
printf 'FROM %s\nRUN mkdir -p /usr/local/bin && printf "#!/bin/sh\\necho gemini ran\\n" >/usr/local/bin/gemini && chmod 0755 /usr/local/bin/gemini\n' \
	"$TEST_IMAGE" >"$base/ctx-gemini/Dockerfile"
docker build -q -t sandy-test-gemini:1 "$base/ctx-gemini" >/dev/null 2>"$base/err"
check_eq "an image with a gemini program builds" 0 "$?"
at_exit "docker image rm -f sandy-test-gemini:1 >/dev/null 2>&1"
out=$("$SANDY" -q --network=none --image sandy-test-gemini:1 "$proj" -- gemini </dev/null 2>"$base/err")
check_eq "an image that has the agent runs it" "gemini ran" "$out"

# A broken rule file: sandyfs names file, line and reason; sandy stops.
printf '{\n  "name": "broken",\n  "write": ["src/**",\n}\n' >"$base/broken.json"
fails "broken rule file (docker)" "broken.json" --rules "$base/broken.json" "$proj" -- echo ran
fails "broken rule file, line" "broken.json:4" --rules "$base/broken.json" "$proj" -- echo ran
fails "broken rule file (none)" "broken.json" --runtime=none --rules "$base/broken.json" \
	"$proj" -- echo ran
fails "unknown project type" "nosuchtype" --type nosuchtype "$proj" -- echo ran

SANDYFS=/nonexistent/sandyfs "$SANDY" "$proj" -- echo ran </dev/null >"$base/out" 2>"$base/err"
check_eq "sandyfs missing: exit status 125" 125 "$?"
check "sandyfs missing: says so and how to fix it" \
	grep -q "cannot run sandyfs '/nonexistent/sandyfs' named by \$SANDYFS" "$base/err"
check "sandyfs missing: nothing mounted" no_sandy_mounts "$proj"

# The container engine: absent, or its daemon not answering.
PATH=/nonexistent "$SANDY" --runtime=docker "$proj" -- echo ran </dev/null >"$base/out" 2>"$base/err"
check_eq "docker missing: exit status 125" 125 "$?"
check "docker missing: says how to install it" grep -q "cannot find 'docker': install it" "$base/err"
check "docker missing: nothing mounted" no_sandy_mounts "$proj"
PATH=/nonexistent "$SANDY" "$proj" -- /bin/sh -c "echo ran >'$base/ran'" </dev/null \
	>"$base/out" 2>"$base/err"
check_eq "no engine at all: exit status 125, never a silent run without a container" 125 "$?"
check "no engine at all: says how to get one, or to ask for --runtime=none" \
	grep -q "no container engine found; install one .*--runtime=none" "$base/err"
check "no engine at all: the command did not run" test ! -e "$base/ran"
check "no engine at all: nothing mounted" no_sandy_mounts "$proj"
check "no engine at all: no session directory" no_session_dir "$proj"

DOCKER_HOST=unix:///nonexistent/docker.sock "$SANDY" --runtime=docker "$proj" -- echo ran \
	</dev/null >"$base/out" 2>"$base/err"
check_eq "daemon down: exit status 125" 125 "$?"
check "daemon down: says the daemon does not answer and what to do" \
	grep -q "cannot reach the docker daemon: .*; start it" "$base/err"
check "daemon down: nothing mounted" no_sandy_mounts "$proj"
check "daemon down: no session directory" no_session_dir "$proj"
# (docker alone in PATH: podman would answer.)
mkdir -p "$base/only-docker" && ln -sf "$(command -v docker)" "$base/only-docker/docker"
DOCKER_HOST=unix:///nonexistent/docker.sock PATH=$base/only-docker \
	"$SANDY" "$proj" -- /bin/sh -c "echo ran >'$base/ran'" \
	</dev/null >"$base/out" 2>"$base/err"
check_eq "daemon down, no --runtime: exit status 125, no fallback" 125 "$?"
check "daemon down, no --runtime: says how to start it, or to ask for --runtime=none" \
	grep -q "docker is installed but its daemon does not answer; start it .*--runtime=none" \
	"$base/err"
check "daemon down, no --runtime: the command did not run" test ! -e "$base/ran"
check "daemon down, no --runtime: no session directory" no_session_dir "$proj"

# FUSE: a user's mount that other uids must enter needs user_allow_other.
ensure_test_user
uproj=$base/uproj
make_repo "$uproj" && chown -R "$TEST_USER:" "$uproj"
runuser -u "$TEST_USER" -- env SANDYFS="$SANDYFS" "$SANDY" --runtime=docker "$uproj" -- echo ran \
	</dev/null >"$base/out" 2>"$base/err"
rc=$?
if grep -qx '[[:space:]]*user_allow_other[[:space:]]*' /etc/fuse.conf 2>/dev/null; then
	diag "user_allow_other is set in /etc/fuse.conf here: checking that sandy does not ask for it"
	check_fails "user_allow_other set: not asked for" grep -q user_allow_other "$base/err"
else
	check_eq "no user_allow_other: exit status 125" 125 "$rc"
	check "no user_allow_other: says how to enable it" \
		grep -q "add a line 'user_allow_other' to /etc/fuse.conf" "$base/err"
fi
check "no user_allow_other: nothing mounted" \
	eval "! grep -q ' $uproj \| /tmp/sandy-$(id -u "$TEST_USER")/' /proc/self/mountinfo"

# --- sandy explain: passes the rule options through to sandyfs explain
fake=$base/fake-sandyfs
cat >"$fake" <<'SH'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_ARGS"
exit 3
SH
chmod +x "$fake"
(cd "$base" && FAKE_ARGS=$base/args SANDYFS=$fake "$SANDY" explain -t node -r rules.json \
	--no-detect --json -C "$proj" .envrc src/a.c)
check_eq "explain: sandyfs explain's status is sandy's" 3 "$?"
# The project is the top of a work tree: asked as a session mounts it,
# with the agent's own .git (--private-git).
check_eq "explain: the arguments reach sandyfs explain, as a session would mount" \
	"explain --json --type node --rules $base/rules.json --no-detect --private-git -- $proj .envrc src/a.c" \
	"$(paste -sd' ' "$base/args")"
"$SANDY" explain -C "$proj" </dev/null >/dev/null 2>"$base/err"
check_eq "explain without PATH: exit status 125" 125 "$?"
check "explain without PATH: says so" grep -q "explain needs at least one PATH" "$base/err"
out=$("$SANDY" explain -C "$proj" .envrc src/main.c 2>&1)
check_eq "explain with the real sandyfs: exit status 0" 0 "$?"
check "explain with the real sandyfs: .envrc is protected" grep -q 'protected' <<<"$out"

# --- sandy build-image --from (a local base image; building the real image
# from Debian packages is image.sh's). sandyfs's own image follows on the
# same base, which must be Debian 12: busybox is not, and the build says so.
ctx=$base/ctx
mkdir -p "$ctx"
printf 'ARG BASE\nFROM ${BASE}\nRUN echo built >/built\n' >"$ctx/Dockerfile"
SANDY_CONTAINER_DIR=$ctx "$SANDY" build-image --from "$TEST_IMAGE" --image sandy-test-built:1 \
	>/dev/null 2>"$base/err"
check_eq "build-image --from a base that is not Debian 12: exit status 125" 125 "$?"
check_eq "build-image --from: the image is built from the Dockerfile on that base" built \
	"$(docker run --rm sandy-test-built:1 cat /built 2>&1)"
check "build-image --from: sandyfs's image on that base fails, and says so" \
	grep -qF "cannot build image 'sandy-fs:latest' (sandyfs's own, with '$SANDYFS') on '$TEST_IMAGE': docker build failed" \
	"$base/err"
check "... and that its base must be Debian 12" grep -qF "; its base must be Debian 12" "$base/err"
docker rmi sandy-test-built:1 >/dev/null 2>&1
SANDY_CONTAINER_DIR=$ctx "$SANDY" build-image --image sandy-test-built:1 >/dev/null 2>"$base/err"
check_eq "build-image without base-image.sh beside the Dockerfile: exit status 125" 125 "$?"
check "build-image without base-image.sh: names the script" \
	grep -q "cannot run '$ctx/base-image.sh'" "$base/err"
check "the shipped Dockerfile is found by default" \
	test -f "$SANDY_SRC/launcher/container/Dockerfile"
"$SANDY" build-image --runtime=none >/dev/null 2>"$base/err"
check_eq "build-image --runtime=none: exit status 125" 125 "$?"
check "build-image --runtime=none: says it needs docker or podman" \
	grep -q "build-image needs --runtime=docker or podman" "$base/err"
done_testing
