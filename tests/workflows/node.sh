#!/usr/bin/env bash
# Node workflows through the mount with the shipped, detected rules: npm
# install of a dependency that has a bin (a local tarball outside the
# project, nothing from a registry), npm test, npx, npm ci, a build script
# writing dist/; at the root and in a package of a monorepo. node_modules/
# is private (in the store, never in SOURCE, and a node_modules the host
# has is neither shown nor changed), package.json is never written, and
# sed -i on it is refused without a trace.
source "$SANDY_SRC/tests/workflows/lib.bash"

tpl=$(wf_template node)
pkgs=$wf_base/templates/pkgs
_wf_env "$wf_base/pack-home"
mkdir -p "$wf_base/pack-home/tmp"
WF_WORLD=node
wf_need node npm npx || done_testing

# make_tool NAME: a package with a bin, packed into pkgs/ with npm pack.
make_tool() {
	local d=$wf_base/templates/$1
	mkdir -p "$d/bin" "$pkgs" &&
		printf '{\n  "name": "%s",\n  "version": "1.0.0",\n  "main": "index.js",\n  "bin": { "%s": "bin/cli.js" }\n}\n' "$1" "$1" >"$d/package.json" &&
		printf 'exports.version = () => "1.0.0";\n' >"$d/index.js" &&
		printf '#!/usr/bin/env node\nconsole.log("%s " + require("../index.js").version());\n' "$1" >"$d/bin/cli.js" &&
		chmod 755 "$d/bin/cli.js" &&
		(cd "$d" && "${WF_ENV[@]}" npm pack --pack-destination "$pkgs") &&
		[ -f "$pkgs/$1-1.0.0.tgz" ]
}

# The project sits at WORLD/at (wf_run): the tarballs, outside it, are
# reached with relative file: paths, the way a monorepo refers to packages
# it builds itself.
rel=../../../templates/pkgs
if ! {
	make_tool mytool && make_tool apptool &&
		mkdir -p "$tpl/test" "$tpl/src" "$tpl/scripts" "$tpl/packages/app/test" &&
		cat >"$tpl/package.json" <<-JSON &&
		{
		  "name": "proj",
		  "version": "1.0.0",
		  "private": true,
		  "scripts": { "test": "node test/test.js", "build": "node scripts/build.js" },
		  "dependencies": { "mytool": "file:$rel/mytool-1.0.0.tgz" }
		}
		JSON
		printf 'const t = require("mytool");\nif (t.version() !== "1.0.0") process.exit(1);\nconsole.log("root tests passed");\n' >"$tpl/test/test.js" &&
		printf 'module.exports = (a, b) => a + b;\n' >"$tpl/src/add.js" &&
		printf 'const fs = require("fs");\nfs.mkdirSync("dist", { recursive: true });\nfs.writeFileSync("dist/bundle.js", fs.readFileSync("src/add.js"));\n' >"$tpl/scripts/build.js" &&
		cat >"$tpl/packages/app/package.json" <<-JSON &&
		{
		  "name": "app",
		  "version": "1.0.0",
		  "private": true,
		  "scripts": { "test": "node test/app.test.js" },
		  "dependencies": { "apptool": "file:../../$rel/apptool-1.0.0.tgz" }
		}
		JSON
		printf 'require("apptool");\nconsole.log("app tests passed");\n' >"$tpl/packages/app/test/app.test.js" &&
		printf 'node_modules/\ndist/\n' >"$tpl/.gitignore" &&
		printf '# proj\n' >"$tpl/README.md" &&
		wf_git_commit "$tpl"
} >"$wf_base/make.log" 2>&1; then
	not_ok "node: build the project"
	_wf_diag_file "$wf_base/make.log"
	done_testing
fi

npm_install=(npm install --offline --no-audit --no-fund)

recipe() {
	wf_step "npm install" . "${npm_install[@]}"
	wf_private node_modules/mytool/package.json node_modules/.bin/mytool node_modules/.package-lock.json
	wf_step_same_output "npm test" . npm test
	wf_step_same_output "npm test" test npm test
	wf_step_same_output "npx mytool" . npx --offline mytool
	wf_step "npm run build" . npm run build
	wf_step "npm install" packages/app "${npm_install[@]}"
	wf_private packages/app/node_modules/apptool/package.json packages/app/node_modules/.bin/apptool
	wf_step_same_output "npm test" packages/app npm test
	wf_step_same_output "npx apptool" packages/app npx --offline apptool
	wf_remount
	wf_step_same_output "npm test" . npm test
	wf_step "npm ci" . npm ci --offline --no-audit --no-fund
	wf_private node_modules/mytool/bin/cli.js
	wf_step_same_output "npx mytool" . npx --offline mytool
	wf_step "rm -rf node_modules" packages/app rm -rf node_modules
	wf_source_private_unchanged
}

# A node_modules the user installed on the host before the session: the
# mount serves the store's instead, and leaves this one as it is
# (wf_source_private_unchanged).
host_modules() {
	mkdir -p "$1/node_modules/hostonly" &&
		printf 'module.exports = "host";\n' >"$1/node_modules/hostonly/index.js"
}
WF_SOURCE_HOOK=host_modules

after() {
	[ "$WF_NATIVE_ONLY" = 1 ] ||
		check_fails "node: the host's own node_modules/hostonly is not shown through the mount" \
			test -e "$WF_ROOT/node_modules/hostonly"
	wf_denied "sed -i package.json" . package.json sed -i 's/1.0.0/1.0.1/' package.json
	wf_denied "sed -i package.json" packages/app packages/app/package.json sed -i 's/1.0.0/1.0.1/' package.json
}

wf_protect package.json packages/app/package.json
wf_run node "$tpl" recipe after
done_testing
