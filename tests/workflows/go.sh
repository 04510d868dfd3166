#!/usr/bin/env bash
# Go workflows through the mount with the shipped, detected rules: go build
# (the binary lands at the project root, a name no write glob covers), go
# build -o bin/, go test ./..., gofmt -w (which writes a backup beside the
# file and removes it), at the root and in subpackages; then, in a later
# session, the binaries of the first removed and built again. go.mod is
# only read, and go mod edit is refused.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=go
wf_need go gofmt || done_testing

tpl=$(wf_template go)
mkdir -p "$tpl/internal/greet" "$tpl/cmd/tool"
# The go line of Debian 12's go, so that no newer toolchain is ever wanted.
printf 'module example.com/hello\n\ngo 1.19\n' >"$tpl/go.mod"
# Unformatted on purpose, so that gofmt -w rewrites it.
printf 'package main\n\nimport (\n"fmt"\n"example.com/hello/internal/greet"\n)\n\nfunc main() {\n  fmt.Println(greet.Hello("world"))\n}\n' >"$tpl/main.go"
printf 'package greet\n\nfunc Hello(name string) string {\nreturn "hello, " + name\n}\n' >"$tpl/internal/greet/greet.go"
printf 'package greet\n\nimport "testing"\n\nfunc TestHello(t *testing.T) {\n\tif Hello("x") != "hello, x" {\n\t\tt.Fatal(Hello("x"))\n\t}\n}\n' >"$tpl/internal/greet/greet_test.go"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("tool") }\n' >"$tpl/cmd/tool/main.go"
printf '# hello\n' >"$tpl/README.md"

recipe() {
	wf_step "go build" . go build
	wf_step_same_output "./hello" . ./hello
	wf_step "go build -o bin/hello" . go build -o bin/hello .
	wf_step "go test ./..." . go test ./...
	wf_step "go test" internal/greet go test .
	wf_step "go build" cmd/tool go build
	wf_step_same_output "./tool" cmd/tool ./tool
	wf_step "gofmt -w main.go" . gofmt -w main.go
	wf_step "gofmt -w greet.go" internal/greet gofmt -w greet.go
	wf_step "go build" . go build
	wf_remount
	wf_step "rm hello bin/hello" . rm -r hello bin
	wf_step "go build" . go build
}

after() {
	wf_denied "sed -i go.mod" . go.mod sed -i 's/1.19/1.99/' go.mod
	wf_denied "go mod edit" . go.mod go mod edit -go=1.18
}

wf_protect go.mod
wf_run go "$tpl" recipe after
done_testing
