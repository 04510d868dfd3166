#!/usr/bin/env bash
# `sandy kube`'s manifests, with a range of options, checked offline against
# the Kubernetes API's types (kubernetes-models, the validators and, through
# tsc, the declarations of core/v1: unknown fields fail as under `kubectl
# apply`'s strict field validation) and against the rules that no schema
# holds, both in tests/tools/kube-schema/validate.mjs. No cluster, no
# container engine: what a cluster would refuse, or run less confined than
# sandy's design says, fails here. Every check is also shown to fail on a
# copy of the manifests made to break it, so that none passes by checking
# nothing.
source "$SANDY_SRC/tests/lib.sh"

SANDY=$SANDY_BUILD/launcher/sandy
tool=$SANDY_SRC/tests/tools/kube-schema
TAB=$'\t'

# Without the package there is nothing to check against: a failure that
# says what to run, never a skip that would pass for a check.
for pkg in kubernetes-models typescript; do
	if [ ! -f "$tool/node_modules/$pkg/package.json" ]; then
		not_ok "$pkg is installed in tests/tools/kube-schema/node_modules: run scripts/deps.sh (npm ci there, from the lock file)"
		done_testing
	fi
done
# The version checked against is the one the lock file pins (a copy
# installed from an older lock would check against other types).
version_of() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).version)' "$1"; }
locked_of() {
	node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).packages["node_modules/" + process.argv[2]].version)' \
		"$tool/package-lock.json" "$1"
}
for pkg in kubernetes-models typescript; do
	check_eq "the installed $pkg is the locked one (scripts/deps.sh)" \
		"$(locked_of "$pkg")" "$(version_of "$tool/node_modules/$pkg/package.json")"
done

d=$(scratch)
# No configuration, rule files or credentials of the caller's.
mkdir -p "$d/home" "$d/config"
export HOME=$d/home XDG_CONFIG_HOME=$d/config
unset SANDY_IMAGE SANDY_GATEWAY_IMAGE SANDY_FS_IMAGE SANDY_NETWORK SANDY_AGENT SANDY_ALLOW_DOMAINS \
	SANDY_GIT_TOKEN SANDY_GIT_USER SANDY_DNS_UPSTREAM ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY
REPO=https://example.com/team/project.git
cp "$SANDY_SRC/tests/rules/allow-all.json" "$d/extra.json"

# gen NAME [VAR=VALUE...] -- KUBE-ARGS...: the stream of `sandy kube
# --repo REPO KUBE-ARGS` in the environment given, as $d/NAME.json.
variants=()
gen() {
	local name=$1 env=()
	shift
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	env "${env[@]}" "$SANDY" kube --repo "$REPO" "$@" >"$d/$name.json" 2>"$d/$name.err"
	local rc=$?
	if [ $rc -eq 0 ] && grep -q '^---$' "$d/$name.json"; then
		ok "sandy kube ${*:-(defaults)} prints manifests"
		variants+=("$name")
	else
		not_ok "sandy kube ${*:-(defaults)} prints manifests (status $rc)"
		sed 's/^/# /' "$d/$name.err"
	fi
}
gen default --
gen branch -- --branch feature/kube-1
gen name -- --name session-7
gen plain-sidecars -- --no-native-sidecars
gen claim -- --volume-claim sandy-work
gen sized -- --memory 8Gi --cpus 4
gen open -- --network open
gen offline -- --network none
gen rules -- --no-detect --type node --rules "$d/extra.json"
gen secrets SANDY_GIT_TOKEN=t0ken SANDY_GIT_USER=bot ANTHROPIC_API_KEY=sk-test -- --allow example.org
gen codex OPENAI_API_KEY=sk-test -- --agent codex --network none -- codex exec 'fix the build'
# A rule file of the user's (rules.d, its name no ConfigMap key as it
# is), and three resolvers, which with the gateway's own are more than a
# Pod's dnsConfig takes.
mkdir -p "$d/config/sandy/rules.d"
cp "$SANDY_SRC/tests/rules/allow-all.json" "$d/config/sandy/rules.d/team rules.json"
gen rules.d -- --type python
rm -r "$d/config/sandy/rules.d"
gen resolvers SANDY_DNS_UPSTREAM=10.0.0.10,10.0.0.11,10.0.0.12 --
long=s$(printf 'x%.0s' {1..62})
gen long-name -- --name "$long"
gen everything SANDY_GIT_TOKEN=t0ken -- --no-native-sidecars --volume-claim sandy-work --network none \
	--rules "$d/extra.json" --name all-in --memory 512Mi --cpus 0.5 --branch main

# The options took effect: a variant that came out as the default would
# check nothing more. One document of the stream, by kind, with jq.
doc() { sed '/^---$/d' "$d/$1.json" | jq -c "select(.kind == \"$2\") | $3"; }
check_eq "--branch: the clone's SANDY_BRANCH" '"feature/kube-1"' \
	"$(doc branch Pod '.spec.initContainers[] | select(.name == "clone") | .env[] | select(.name == "SANDY_BRANCH") | .value')"
check_eq "--name: the Pod's name" '"session-7"' "$(doc name Pod .metadata.name)"
check_eq "--no-native-sidecars: the clone is the only init container, sandyfs and the gateway run beside the agent" \
	'["clone"] ["gateway","sandyfs","agent"]' \
	"$(doc plain-sidecars Pod '[.spec.initContainers[].name]') $(doc plain-sidecars Pod '[.spec.containers[].name]')"
check_eq "native sidecars (default): sandyfs and the gateway are init containers with restartPolicy Always" \
	'[["clone",null],["gateway","Always"],["sandyfs","Always"]]' \
	"$(doc default Pod '[.spec.initContainers[] | [.name, .restartPolicy]]')"
check_eq "--volume-claim: a volume of the claim" '["sandy-work"]' \
	"$(doc claim Pod '[.spec.volumes[] | .persistentVolumeClaim.claimName // empty]')"
check_eq "--memory, --cpus: the agent's requests and limits" \
	'{"requests":{"cpu":"4","memory":"8Gi"},"limits":{"cpu":"4","memory":"8Gi"}}' \
	"$(doc sized Pod '.spec.containers[] | select(.name == "agent") | .resources')"
check_eq "--network open: no gateway" '[]' \
	"$(doc open Pod '[(.spec.initContainers + .spec.containers)[] | select(.name == "gateway")]')"
check_eq "--rules: the rule file in the ConfigMap" true \
	"$(sed '/^---$/d' "$d/rules.json" | jq --rawfile t "$d/extra.json" 'select(.kind == "ConfigMap") | [.data[]] | any(. == $t)')"
check_eq "rules.d: the user's rule file in the ConfigMap" true \
	"$(sed '/^---$/d' "$d/rules.d.json" | jq --rawfile t "$SANDY_SRC/tests/rules/allow-all.json" 'select(.kind == "ConfigMap") | [.data[]] | any(. == $t)')"
check_eq "SANDY_DNS_UPSTREAM: the gateway forwards to each resolver" true \
	"$(doc resolvers ConfigMap '.data["rules.nft"] | test("10.0.0.10") and test("10.0.0.11") and test("10.0.0.12")')"
check_eq "--name of 63 characters: the Pod's name" "\"$long\"" "$(doc long-name Pod .metadata.name)"
check_eq "SANDY_GIT_TOKEN and the API key: two Secrets" '"Secret" "Secret"' \
	"$(doc secrets Secret .kind | tr '\n' ' ' | sed 's/ $//')"
check_eq "-- COMMAND: the agent's command" '["none","codex","exec","fix the build"]' \
	"$(doc codex Pod '.spec.containers[] | select(.name == "agent") | .args')"

# The broken copies, each of the secrets variant (which has every kind of
# document and every container) with one change that a check must catch:
# break_copy NAME CHECK JQ-FILTER (applied to the Pod; to any document when the
# filter starts with "doc:").
base=secrets
breaks=()
break_copy() {
	local name=$1 want=$2 filter=$3
	if [[ $filter == doc:* ]]; then
		filter=${filter#doc:}
	else
		filter="if .kind == \"Pod\" then $filter else . end"
	fi
	if jq -c "$filter" <(sed '/^---$/d' "$d/$base.json") >"$d/broken-$name.jsonl"; then
		awk '{ print "---"; print }' "$d/broken-$name.jsonl" >"$d/broken-$name.json"
	else
		not_ok "jq made the broken copy $name"
	fi
	breaks+=("$name $want")
}
agent='.spec.containers[] | select(.name == "agent")'
gw='.spec.initContainers[] | select(.name == "gateway")'
fs='.spec.initContainers[] | select(.name == "sandyfs")'
break_copy two-pods parse 'doc:if .kind == "Pod" then ., . else . end'
break_copy wrong-type schema "($agent).stdin = \"yes\""
break_copy no-name schema "del(($agent).name)"
break_copy bad-quantity schema "($agent).resources.limits.memory = \"4 GiB\""
break_copy bad-base64 schema 'doc:if .kind == "Secret" then .data.password = "not base64!" else . end'
break_copy unknown-field strict "($fs).securityContext.privilegd = true"
break_copy unknown-top strict '.spec.hostNetworking = true'
break_copy bad-enum strict "($agent).volumeMounts[0].mountPropagation = \"Sideways\""
break_copy no-name-strict strict "del(($agent).name)"
break_copy bidirectional propagation "($agent).volumeMounts[0].mountPropagation = \"Bidirectional\""
break_copy sysadmin escalation "($gw).securityContext.capabilities.add += [\"SYS_ADMIN\"]"
break_copy privileged-no-escalation escalation "($fs).securityContext.allowPrivilegeEscalation = false"
break_copy agent-cap agent-capabilities "($agent).securityContext.capabilities.add = [\"NET_RAW\"]"
break_copy agent-drop agent-capabilities "del(($agent).securityContext.capabilities.drop)"
break_copy agent-escalation agent-capabilities "($agent).securityContext.allowPrivilegeEscalation = true"
break_copy agent-root agent-non-root "($agent).securityContext.runAsNonRoot = false"
break_copy agent-uid0 agent-non-root "($agent).securityContext.runAsUser = 0"
break_copy agent-fuse agent-no-fuse ".spec.volumes += [{\"name\": \"fuse\", \"hostPath\": {\"path\": \"/dev/fuse\"}}]
	| ($agent).volumeMounts += [{\"name\": \"fuse\", \"mountPath\": \"/dev/fuse\"}]"
break_copy agent-source agent-behind-sandyfs "($agent).volumeMounts += [{\"name\": \"source\", \"mountPath\": \"/src\", \"readOnly\": true}]"
break_copy agent-git-writable agent-behind-sandyfs "($agent).volumeMounts |= map(if .name == \"git\" then del(.readOnly) else . end)"
break_copy agent-credential credential "($agent).volumeMounts += [{\"name\": \"git-credential\", \"mountPath\": \"/run/secrets/sandy-git\", \"readOnly\": true}]"
break_copy gateway-credential credential "($gw).env = [{\"name\": \"TOKEN\", \"valueFrom\": {\"secretKeyRef\": {\"name\": (.metadata.name + \"-git\"), \"key\": \"password\"}}}]"
break_copy no-label labels 'doc:if .kind == "ConfigMap" then del(.metadata.labels["app.kubernetes.io/managed-by"]) else . end'
break_copy other-instance labels 'doc:if .kind == "Secret" then .metadata.labels["app.kubernetes.io/instance"] = "another" else . end'
break_copy restart-always restart-policy '.spec.restartPolicy = "Always"'
break_copy container-restart sidecar-restart-policy "($agent).restartPolicy = \"Always\""
break_copy clone-probe init-probes ".spec.initContainers[0].startupProbe = {\"exec\": {\"command\": [\"true\"]}}"
break_copy data-key names 'doc:if .kind == "ConfigMap" then .data["team rules.json"] = "{}" else . end'
break_copy label-value names 'doc:.metadata.labels["app.kubernetes.io/component"] = "a component"'
break_copy volume-name names '.spec.volumes[0].name |= ascii_upcase | .spec.initContainers[0].volumeMounts[0].name |= ascii_upcase'
break_copy four-resolvers dns '.spec.dnsConfig.nameservers += ["10.0.0.11", "10.0.0.12"]'
break_copy resolver-name dns '.spec.dnsConfig.nameservers[1] = "dns.example.com"'
break_copy no-limit resources "del(($agent).resources.limits.memory)"
break_copy no-requests resources "del(($gw).resources.requests)"
break_copy over-limit resources "($fs).resources.requests.cpu = \"3\""
break_copy no-volume references "($agent).volumeMounts += [{\"name\": \"nowhere\", \"mountPath\": \"/nowhere\"}]"
break_copy two-agents references '.spec.containers += [.spec.containers[0]]'
break_copy no-key references '.spec.volumes |= map(if .configMap then .configMap.items += [{"key": "missing", "path": "missing"}] else . end)'

# One run of the checker over every stream (one tsc run for them all).
files=()
for v in "${variants[@]}"; do files+=("$d/$v.json"); done
for b in "${breaks[@]}"; do files+=("$d/broken-${b%% *}.json"); done
node "$tool/validate.mjs" "${files[@]}" >"$d/results" 2>"$d/results.err"
rc=$?
check "the checker ran (status $rc: 0 all passed, 1 one failed)" test $rc -le 1
sed 's/^/# /' "$d/results.err"

# The results by file and check: ok, or fail and why.
declare -A results
while IFS=$TAB read -r file c status why; do
	results["$file$TAB$c"]=$status${why:+$TAB$why}
done <"$d/results"
result() { echo "${results["$1$TAB$2"]:-}"; }

checks=(parse schema strict propagation escalation agent-capabilities agent-non-root agent-no-fuse
	agent-behind-sandyfs credential labels restart-policy sidecar-restart-policy init-probes resources names dns references)
# Every check the checker makes is asserted here, and shown to catch a
# break: a rule added there and not here would check nothing.
check_eq "the checks made are the ones asserted" "${checks[*]}" \
	"$(grep -F "$d/default.json$TAB" "$d/results" | cut -f2 | tr '\n' ' ' | sed 's/ $//')"
check_eq "every check has a broken copy" "$(printf '%s\n' "${checks[@]}" | sort)" \
	"$(printf '%s\n' "${breaks[@]}" | cut -d' ' -f2 | sort -u)"
for c in "${checks[@]}"; do
	bad=0
	for v in "${variants[@]}"; do
		r=$(result "$d/$v.json" "$c")
		if [ "$r" != ok ]; then
			diag "$v: ${r:-not checked}"
			bad=1
		fi
	done
	check "$c holds for every variant (${#variants[@]})" test $bad -eq 0
done

for b in "${breaks[@]}"; do
	name=${b%% *} want=${b#* }
	r=$(result "$d/broken-$name.json" "$want")
	if [[ $r == fail$TAB* ]]; then
		ok "$want fails on the broken copy $name"
		diag "${r#fail"$TAB"}"
	else
		not_ok "$want fails on the broken copy $name"
		diag "got: ${r:-not checked}"
	fi
done

done_testing
