#!/usr/bin/env bash
# Lua workflows through the mount with the shipped, detected rules (the
# rockspec is the marker): a module in src/, a test script of plain
# asserts in test/ run with lua5.4 and a LUA_PATH that finds src/?.lua,
# at the root and from test/; a script run through require; a module
# edited with sed -i; luac5.4 -p on every file, and luac5.4 -o into
# build/, a directory it makes (a name no write glob of the type covers);
# in a later session, the bytecode run, build/ removed and made again, the
# tests again. The rockspec is only read, and the files lua-language-server
# and luacheck read from the project (.luarc.json, .luacheckrc) cannot be
# made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=lua
wf_need lua5.4 luac5.4 || done_testing

tpl=$(wf_template lua)
mkdir -p "$tpl/src" "$tpl/test" "$tpl/bin"
cat >"$tpl/app-1.0-1.rockspec" <<'EOF_'
package = "app"
version = "1.0-1"
source = { url = "file:///dev/null" }
description = { summary = "greets", license = "MIT" }
dependencies = { "lua >= 5.1" }
build = {
   type = "builtin",
   modules = { greet = "src/greet.lua" },
}
EOF_
cat >"$tpl/src/greet.lua" <<'EOF_'
local M = {}

function M.greet(name)
  return "hello, " .. (name or "world")
end

return M
EOF_
cat >"$tpl/test/test_greet.lua" <<'EOF_'
local greet = require("greet")

local n = 0
local function check(got, want)
  n = n + 1
  assert(got == want, ("test %d: got %q, want %q"):format(n, got, want))
end

check(greet.greet("x"), "hello, x")
check(greet.greet(), "hello, world")
print(("%d tests passed"):format(n))
EOF_
printf 'local greet = require("greet")\n\nprint(greet.greet(arg[1]))\n' >"$tpl/bin/app.lua"
printf '# app\n' >"$tpl/README.md"
printf '/build/\n' >"$tpl/.gitignore"

recipe() {
	# The project's modules before the system's, as luarocks' test
	# commands and busted set them up.
	local lua=(env "LUA_PATH=src/?.lua;;" lua5.4)
	wf_step_same_output "lua5.4 test/test_greet.lua" . "${lua[@]}" test/test_greet.lua
	wf_step_same_output "lua5.4 test_greet.lua" test env "LUA_PATH=../src/?.lua;;" lua5.4 test_greet.lua
	wf_step_same_output "lua5.4 bin/app.lua" . "${lua[@]}" bin/app.lua you
	wf_step_same_output "lua5.4 -e" . "${lua[@]}" -e 'print(require("greet").greet("e"))'
	wf_step "sed -i greet.lua" src sed -i 's/hello, /hi, /' greet.lua
	wf_step "sed -i test_greet.lua" test sed -i 's/"hello, /"hi, /' test_greet.lua
	wf_step_same_output "lua5.4 test/test_greet.lua" . "${lua[@]}" test/test_greet.lua
	# One file at a time: Debian 12's luac5.4 (Lua 5.4.4) aborts with a
	# double free when it combines several files.
	wf_step "luac5.4 -p" . sh -c 'for f in src/*.lua test/*.lua bin/*.lua; do luac5.4 -p "$f" || exit; done'
	wf_step "luac5.4 -o build/greet.luac" . sh -c 'mkdir -p build && luac5.4 -o build/greet.luac src/greet.lua'
	wf_step "luac5.4 -s -o build/app.luac" . luac5.4 -s -o build/app.luac bin/app.lua
	wf_remount
	wf_step_same_output "lua5.4 build/app.luac" . env "LUA_PATH=build/?.luac;;" lua5.4 build/app.luac bytecode
	wf_step "rm -rf build" . rm -rf build
	wf_step "luac5.4 -o build/greet.luac" . sh -c 'mkdir -p build && luac5.4 -o build/greet.luac src/greet.lua'
	wf_step "sed -i greet.lua" src sed -i 's/"world"/"lua"/' greet.lua
	wf_step "sed -i test_greet.lua" test sed -i 's/hi, world/hi, lua/' test_greet.lua
	wf_step_same_output "lua5.4 test/test_greet.lua" . "${lua[@]}" test/test_greet.lua
}

after() {
	wf_denied "sed -i app-1.0-1.rockspec" . app-1.0-1.rockspec sed -i 's/1.0-1/1.0-2/' app-1.0-1.rockspec
	wf_denied "create .luarc.json" . .luarc.json sh -c 'echo "{}" > .luarc.json'
	wf_denied "create .luacheckrc" . .luacheckrc sh -c 'echo "std = \"max\"" > .luacheckrc'
}

wf_protect app-1.0-1.rockspec
wf_run lua "$tpl" recipe after
done_testing
