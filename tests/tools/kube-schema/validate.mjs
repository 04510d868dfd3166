// Checks streams printed by `sandy kube` (JSON documents, each after a
// line "---") against the Kubernetes API's core/v1 types, offline, and
// against the rules of the API server and of sandy's design that no
// schema holds.
//
// usage: node validate.mjs FILE...
//
// Prints one line per FILE and check, "FILE<TAB>CHECK<TAB>ok", or
// "FILE<TAB>CHECK<TAB>fail<TAB>WHY" (WHY on one line); exits 0 when every
// check of every file passed, 1 when one failed, 2 when it cannot check.
// The checks:
//   parse      the stream is JSON documents of kind Secret, ConfigMap and
//              Pod (apiVersion v1), one Pod
//   schema     each document passes kubernetes-models' validator of its
//              kind (ajv, from the API's OpenAPI schema: types, required
//              fields, enums, formats such as quantity and byte); it lets
//              unknown fields through, as the API's schema does
//   strict     each document, as an object literal, has the type of its
//              kind in kubernetes-models' TypeScript declarations, which
//              tsc checks the way `kubectl apply` (strict field
//              validation) does: an unknown field anywhere fails, and so do
//              a wrong type, a missing required field, a value outside an
//              enum
//   and the rules, named in RULES below.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Pod } from "kubernetes-models/v1/Pod";
import { Secret } from "kubernetes-models/v1/Secret";

const here = fileURLToPath(new URL(".", import.meta.url));
const models = join(here, "node_modules", "kubernetes-models", "v1");
const kinds = {
	Pod: { model: Pod, decl: "Pod", type: "IPod" },
	Secret: { model: Secret, decl: "Secret", type: "ISecret" },
	ConfigMap: { model: ConfigMap, decl: "ConfigMap", type: "IConfigMap" },
};

// The stream as documents: what follows each line "---".
function parse(text) {
	const docs = [];
	const parts = text.split(/^---$/m);
	if (parts[0].trim() !== "") throw new Error("text before the first '---'");
	for (const part of parts.slice(1)) {
		const doc = JSON.parse(part);
		if (doc === null || typeof doc !== "object" || Array.isArray(doc))
			throw new Error("a document that is not an object");
		if (!kinds[doc.kind]) throw new Error(`a document of kind ${JSON.stringify(doc.kind)}`);
		if (doc.apiVersion !== "v1") throw new Error(`a ${doc.kind} of apiVersion ${JSON.stringify(doc.apiVersion)}`);
		docs.push(doc);
	}
	const pods = docs.filter((d) => d.kind === "Pod").length;
	if (pods !== 1) throw new Error(`${pods} Pods`);
	return docs;
}

function schema(docs) {
	const why = [];
	for (const doc of docs) {
		try {
			new kinds[doc.kind].model(doc).validate();
		} catch (e) {
			why.push(`${doc.kind} ${doc.metadata?.name}: ${e.message}`);
		}
	}
	return why;
}

// The strict check of every file's documents at once: one tsc run, its
// errors handed back to the file and document each .mts file stands for.
function strict(files) {
	const dir = mkdtempSync(join(tmpdir(), "kube-schema."));
	const origin = {};
	try {
		const names = [];
		files.forEach(({ docs }, f) =>
			docs.forEach((doc, d) => {
				const k = kinds[doc.kind];
				const name = `f${f}d${d}.mts`;
				// The object literal as JSON: every nested object is
				// fresh, so tsc checks excess properties all the way down.
				writeFileSync(
					join(dir, name),
					`import type { ${k.type} } from ${JSON.stringify(join(models, k.decl + ".js"))};\n` +
						`export const doc: ${k.type} = ${JSON.stringify(doc, null, 2)};\n`,
				);
				names.push(name);
				origin[name] = { f, what: `${doc.kind} ${doc.metadata?.name}` };
			}),
		);
		writeFileSync(
			join(dir, "tsconfig.json"),
			JSON.stringify({
				compilerOptions: {
					strict: true,
					noEmit: true,
					module: "nodenext",
					moduleResolution: "nodenext",
					skipLibCheck: true,
					types: [],
				},
				files: names,
			}),
		);
		let out = "";
		try {
			execFileSync(process.execPath, [join(here, "node_modules", "typescript", "bin", "tsc"), "-p", dir, "--pretty", "false"], {
				cwd: dir,
				encoding: "utf8",
				stdio: ["ignore", "pipe", "pipe"],
			});
		} catch (e) {
			if (typeof e.stdout !== "string" || e.stdout === "") throw new Error(`tsc failed: ${e.message}`);
			out = e.stdout;
		}
		const why = files.map(() => []);
		let last = null;
		for (const line of out.split("\n").filter((l) => l)) {
			// An indented line goes on with the error before it.
			if (/^\s/.test(line) && last) {
				last.push(line.trim());
				continue;
			}
			const m = /^(f\d+d\d+\.mts)\((\d+),\d+\): (.*)$/.exec(line);
			// An error of tsc's own (or in a declaration file) says
			// nothing about one file: it fails them all.
			if (!m || !origin[m[1]]) {
				why.forEach((w) => w.push(line));
				last = null;
				continue;
			}
			last = why[origin[m[1]].f];
			const src = readFileSync(join(dir, m[1]), "utf8").split("\n")[m[2] - 1].trim();
			why[origin[m[1]].f].push(`${origin[m[1]].what}: ${m[3]} (at ${src})`);
		}
		return why;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// The Pod's containers, init containers first, each with where it is.
function containers(pod) {
	return [
		...(pod.spec?.initContainers ?? []).map((c) => ({ c, where: `initContainers ${c.name}` })),
		...(pod.spec?.containers ?? []).map((c) => ({ c, where: `containers ${c.name}` })),
	];
}

const isSysAdmin = (cap) => /^(CAP_)?SYS_ADMIN$/i.test(cap);

// Kubernetes quantities ("100m", "4Gi", "2", "1e3") as numbers, to compare
// a request with its limit.
function quantity(q) {
	const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/.exec(String(q));
	if (!m) return NaN;
	const bin = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
	const dec = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
	const s = m[2] ?? "";
	const factor = bin[s] ?? dec[s] ?? (s ? 10 ** Number(s.slice(1)) : 1);
	return Number(m[1]) * factor;
}

// The volumes of the Pod that show the Secret NAME (directly or projected).
function secretVolumes(pod, name) {
	return (pod.spec?.volumes ?? [])
		.filter((v) => v.secret?.secretName === name || (v.projected?.sources ?? []).some((s) => s.secret?.name === name))
		.map((v) => v.name);
}

// Whether container C reads Secret NAME: a mount of one of its volumes, a
// variable from it, or all its keys as variables.
function readsSecret(c, vols, name) {
	return (
		(c.volumeMounts ?? []).some((m) => vols.includes(m.name)) ||
		(c.env ?? []).some((e) => e.valueFrom?.secretKeyRef?.name === name) ||
		(c.envFrom ?? []).some((e) => e.secretRef?.name === name)
	);
}

const agentOf = (pod) => (pod.spec?.containers ?? []).find((c) => c.name === "agent");

// The rules, each a function of the documents and the Pod, returning what
// breaks it (nothing: it holds).
const RULES = {
	// The kubelet makes a Bidirectional mount only for a privileged
	// container (the API refuses the Pod otherwise).
	propagation: (docs, pod) =>
		containers(pod).flatMap(({ c, where }) =>
			(c.volumeMounts ?? [])
				.filter((m) => m.mountPropagation === "Bidirectional" && c.securityContext?.privileged !== true)
				.map((m) => `${where}: Bidirectional mount of ${m.mountPath} in a container that is not privileged`),
		),
	// The API refuses allowPrivilegeEscalation false with privileged or
	// with CAP_SYS_ADMIN, which imply it.
	escalation: (docs, pod) =>
		containers(pod).flatMap(({ c, where }) => {
			const sc = c.securityContext ?? {};
			if (sc.allowPrivilegeEscalation !== false) return [];
			const why = [];
			if (sc.privileged === true) why.push(`${where}: allowPrivilegeEscalation false with privileged`);
			if ((sc.capabilities?.add ?? []).some(isSysAdmin)) why.push(`${where}: allowPrivilegeEscalation false with SYS_ADMIN added`);
			return why;
		}),
	// The agent holds no capability and cannot gain one.
	"agent-capabilities": (docs, pod) => {
		const a = agentOf(pod);
		if (!a) return ["no container named agent"];
		const sc = a.securityContext ?? {};
		const why = [];
		if ((sc.capabilities?.add ?? []).length) why.push(`capabilities added: ${sc.capabilities.add.join(", ")}`);
		if (!(sc.capabilities?.drop ?? []).includes("ALL")) why.push("capabilities.drop lacks ALL");
		if (sc.allowPrivilegeEscalation !== false) why.push("allowPrivilegeEscalation is not false");
		if (sc.privileged === true) why.push("privileged");
		return why.map((w) => `agent: ${w}`);
	},
	// The agent runs as a user other than root (the kubelet refuses to
	// start it as root).
	"agent-non-root": (docs, pod) => {
		const a = agentOf(pod);
		if (!a) return ["no container named agent"];
		const sc = { ...(pod.spec?.securityContext ?? {}), ...(a.securityContext ?? {}) };
		const why = [];
		if (sc.runAsNonRoot !== true) why.push("runAsNonRoot is not true");
		if (sc.runAsUser === 0) why.push("runAsUser 0");
		return why.map((w) => `agent: ${w}`);
	},
	// FUSE is sandyfs's: the agent has no /dev/fuse to mount one of its own.
	"agent-no-fuse": (docs, pod) => {
		const a = agentOf(pod);
		if (!a) return ["no container named agent"];
		const fuse = (pod.spec?.volumes ?? []).filter((v) => v.hostPath?.path === "/dev/fuse").map((v) => v.name);
		const why = [];
		for (const m of a.volumeMounts ?? [])
			if (m.mountPath === "/dev/fuse" || fuse.includes(m.name)) why.push(`mounts ${m.name} at ${m.mountPath}`);
		for (const d of a.volumeDevices ?? []) why.push(`has the device ${d.devicePath}`);
		return why.map((w) => `agent: ${w}`);
	},
	// The agent sees the project only through sandyfs: of the volumes
	// sandyfs serves from (what it mounts under /srv/sandy: the clone's
	// work tree, its store), the agent is shown the clone's git directory
	// alone, read-only, and nothing else.
	"agent-behind-sandyfs": (docs, pod) => {
		const a = agentOf(pod);
		const fs = containers(pod).find(({ c }) => c.name === "sandyfs")?.c;
		if (!a || !fs) return ["no container named agent, or none named sandyfs"];
		const served = new Map(
			(fs.volumeMounts ?? []).filter((m) => m.mountPath === "/srv/sandy" || m.mountPath.startsWith("/srv/sandy/")).map((m) => [m.name, m.mountPath]),
		);
		if (served.size === 0) return ["sandyfs mounts nothing under /srv/sandy"];
		const why = [];
		for (const m of a.volumeMounts ?? []) {
			if (!served.has(m.name)) continue;
			const shown = m.subPath ? `${served.get(m.name)}/${m.subPath}` : served.get(m.name);
			if (!(shown === "/srv/sandy/git" || shown.startsWith("/srv/sandy/git/"))) why.push(`agent: mounts ${shown} (volume ${m.name}) at ${m.mountPath}`);
			else if (m.readOnly !== true) why.push(`agent: mounts the git directory ${shown} writable at ${m.mountPath}`);
		}
		return why;
	},
	// The git credential (Secret NAME-git) is read by the clone and by
	// sandyfs (which will push), by no other container.
	credential: (docs, pod) => {
		const name = `${pod.metadata?.name}-git`;
		const vols = secretVolumes(pod, name);
		const readers = containers(pod).filter(({ c }) => readsSecret(c, vols, name));
		const why = readers.filter(({ c }) => c.name !== "clone" && c.name !== "sandyfs").map(({ where }) => `${where} reads the Secret ${name}`);
		// A Pod that shows the credential to nobody is no test of who sees it.
		if (!readers.some(({ c }) => c.name === "clone")) why.push(`the clone does not read the Secret ${name}`);
		return why;
	},
	// Every object carries the labels that tell what made it and which
	// session it belongs to.
	labels: (docs, pod) =>
		docs.flatMap((doc) => {
			const l = doc.metadata?.labels ?? {};
			const what = `${doc.kind} ${doc.metadata?.name}`;
			const why = [];
			if (l["app.kubernetes.io/name"] !== "sandy") why.push(`${what}: app.kubernetes.io/name is not sandy`);
			if (l["app.kubernetes.io/managed-by"] !== "sandy") why.push(`${what}: app.kubernetes.io/managed-by is not sandy`);
			if (l["app.kubernetes.io/instance"] !== pod.metadata?.name) why.push(`${what}: app.kubernetes.io/instance is not the Pod's name`);
			if (!l["app.kubernetes.io/component"]) why.push(`${what}: no app.kubernetes.io/component`);
			return why;
		}),
	// A session runs once: its end is not followed by another.
	"restart-policy": (docs, pod) => (pod.spec?.restartPolicy === "Never" ? [] : [`restartPolicy is ${JSON.stringify(pod.spec?.restartPolicy)}`]),
	// A container's restartPolicy is the mark of a native sidecar: only
	// an init container has one, and it is Always.
	"sidecar-restart-policy": (docs, pod) => [
		...(pod.spec?.initContainers ?? [])
			.filter((c) => c.restartPolicy !== undefined && c.restartPolicy !== "Always")
			.map((c) => `initContainers ${c.name}: restartPolicy ${c.restartPolicy}`),
		...(pod.spec?.containers ?? []).filter((c) => c.restartPolicy !== undefined).map((c) => `containers ${c.name}: restartPolicy ${c.restartPolicy}`),
	],
	// An init container that is no sidecar runs to its end before the
	// others start: the API refuses probes and lifecycle hooks on it.
	"init-probes": (docs, pod) =>
		(pod.spec?.initContainers ?? [])
			.filter((c) => c.restartPolicy !== "Always")
			.flatMap((c) =>
				["startupProbe", "livenessProbe", "readinessProbe", "lifecycle"]
					.filter((k) => c[k] !== undefined)
					.map((k) => `initContainers ${c.name}: ${k} on an init container that is not a sidecar`),
			),
	// Every container asks for CPU and memory and is held to a limit of
	// both, no lower than what it asks for (the API refuses that).
	resources: (docs, pod) =>
		containers(pod).flatMap(({ c, where }) => {
			const why = [];
			for (const r of ["cpu", "memory"]) {
				const req = c.resources?.requests?.[r];
				const lim = c.resources?.limits?.[r];
				if (req === undefined) why.push(`${where}: no ${r} request`);
				if (lim === undefined) why.push(`${where}: no ${r} limit`);
				if (req !== undefined && lim !== undefined) {
					const [a, b] = [quantity(req), quantity(lim)];
					if (!(a > 0) || !(b > 0)) why.push(`${where}: ${r} ${req} / ${lim} is not a positive quantity`);
					else if (a > b) why.push(`${where}: ${r} request ${req} above its limit ${lim}`);
				}
			}
			return why;
		}),
	// The names the API checks by pattern, which the schema leaves as
	// strings: objects' (DNS-1123 subdomains), containers' and volumes'
	// (DNS-1123 labels), the keys of a Secret's or ConfigMap's data,
	// label values, variables'.
	names: (docs, pod) => {
		const why = [];
		const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
		// As the API has it: 253 characters, the parts between dots
		// not held to 63.
		const subdomain = (n) => n.length <= 253 && n.split(".").every((p) => label.test(p));
		const isLabel = (n) => n.length <= 63 && label.test(n);
		for (const doc of docs) {
			const what = `${doc.kind} ${doc.metadata?.name}`;
			if (!subdomain(String(doc.metadata?.name ?? ""))) why.push(`${what}: the name is no DNS-1123 subdomain`);
			for (const k of Object.keys({ ...(doc.data ?? {}), ...(doc.stringData ?? {}), ...(doc.binaryData ?? {}) }))
				if (!(k.length <= 253 && /^[-._a-zA-Z0-9]+$/.test(k))) why.push(`${what}: data key ${JSON.stringify(k)}`);
			for (const [k, v] of Object.entries(doc.metadata?.labels ?? {}))
				if (!(v.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v))) why.push(`${what}: label ${k} value ${JSON.stringify(v)}`);
		}
		for (const { c, where } of containers(pod)) {
			if (!isLabel(String(c.name ?? ""))) why.push(`${where}: the name is no DNS-1123 label`);
			for (const e of c.env ?? []) if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(e.name)) why.push(`${where}: variable ${JSON.stringify(e.name)}`);
		}
		for (const v of pod.spec?.volumes ?? []) if (!isLabel(String(v.name ?? ""))) why.push(`volume ${JSON.stringify(v.name)}: no DNS-1123 label`);
		return why;
	},
	// With dnsPolicy None the resolver is what dnsConfig says: one to
	// three nameservers, addresses (the API refuses more, or none).
	dns: (docs, pod) => {
		if (pod.spec?.dnsPolicy !== "None") return [];
		const ns = pod.spec?.dnsConfig?.nameservers ?? [];
		const why = [];
		if (ns.length < 1 || ns.length > 3) why.push(`dnsPolicy None with ${ns.length} nameservers`);
		for (const a of ns) if (!isIP(a)) why.push(`nameserver ${JSON.stringify(a)} is no address`);
		return why;
	},
	// What the API checks across fields: names unique, every mount of a
	// volume the Pod has, at most one mount per path, and the ConfigMap a
	// volume shows holding the keys it picks.
	references: (docs, pod) => {
		const why = [];
		const all = containers(pod);
		const vols = (pod.spec?.volumes ?? []).map((v) => v.name);
		const dup = (xs) => xs.filter((x, i) => xs.indexOf(x) !== i);
		for (const n of dup(all.map(({ c }) => c.name))) why.push(`two containers named ${n}`);
		for (const n of dup(vols)) why.push(`two volumes named ${n}`);
		for (const { c, where } of all) {
			for (const m of c.volumeMounts ?? []) if (!vols.includes(m.name)) why.push(`${where}: mounts ${m.name}, which is no volume`);
			for (const p of dup((c.volumeMounts ?? []).map((m) => m.mountPath))) why.push(`${where}: two mounts at ${p}`);
		}
		for (const v of pod.spec?.volumes ?? []) {
			if (!v.configMap) continue;
			const cm = docs.find((d) => d.kind === "ConfigMap" && d.metadata?.name === v.configMap.name);
			if (!cm) {
				if (!v.configMap.optional) why.push(`volume ${v.name}: ConfigMap ${v.configMap.name} is not in the stream`);
				continue;
			}
			for (const it of v.configMap.items ?? [])
				if (!(it.key in (cm.data ?? {}))) why.push(`volume ${v.name}: ConfigMap ${cm.metadata.name} has no key ${it.key}`);
		}
		return why;
	},
};

const args = process.argv.slice(2);
if (args.length === 0) {
	console.error("usage: node validate.mjs FILE...");
	process.exit(2);
}
const files = args.map((path) => {
	try {
		return { path, docs: parse(readFileSync(path, "utf8")) };
	} catch (e) {
		return { path, docs: [], error: e.message };
	}
});
const oneLine = (why) => why.join("; ").replace(/\s+/g, " ");
let failed = false;
const report = (path, check, why) => {
	if (why.length) failed = true;
	console.log(why.length ? `${path}\t${check}\tfail\t${oneLine(why)}` : `${path}\t${check}\tok`);
};
const strictWhy = strict(files.filter((f) => !f.error));
let s = 0;
for (const f of files) {
	if (f.error) {
		report(f.path, "parse", [f.error]);
		continue;
	}
	report(f.path, "parse", []);
	report(f.path, "schema", schema(f.docs));
	report(f.path, "strict", strictWhy[s++]);
	const pod = f.docs.find((d) => d.kind === "Pod");
	for (const [name, rule] of Object.entries(RULES)) report(f.path, name, rule(f.docs, pod));
}
process.exit(failed ? 1 : 0);
