#!/usr/bin/env bash
# C workflows through the mount with the shipped, detected rules: make with
# objects and the program beside the sources at the root (names no write
# glob covers) and make clean, also in a later session and in a
# subdirectory with its own Makefile; cmake -B build with the Unix
# Makefiles generator and cmake --build (Makefile, *.cmake and
# compile_commands.json generated under build/); meson setup builddir and
# ninja -C builddir; at the root and in a subproject. The build files the
# project holds (Makefile, CMakeLists.txt, meson.build) are only read, and
# sed -i on them is refused without a trace.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=c
wf_need make cc cmake meson ninja || done_testing

tpl=$(wf_template c)
mkdir -p "$tpl/tools" "$tpl/libs/calc"
cat >"$tpl/Makefile" <<'EOF_'
CFLAGS ?= -O2 -Wall
OBJS = main.o util.o

hello: $(OBJS)
	$(CC) -o $@ $(OBJS)

$(OBJS): util.h

clean:
	rm -f hello $(OBJS)

.PHONY: clean
EOF_
printf '#include <stdio.h>\n#include "util.h"\n\nint main(void)\n{\n\tprintf("%%d\\n", twice(21));\n\treturn 0;\n}\n' >"$tpl/main.c"
printf 'int twice(int x);\n' >"$tpl/util.h"
printf '#include "util.h"\n\nint twice(int x)\n{\n\treturn 2 * x;\n}\n' >"$tpl/util.c"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(hello C)\nadd_executable(hello main.c util.c)\n' >"$tpl/CMakeLists.txt"
printf "project('hello', 'c')\nexecutable('hello', 'main.c', 'util.c')\n" >"$tpl/meson.build"
printf 'gen: gen.o\n\t$(CC) -o $@ gen.o\n\nclean:\n\trm -f gen gen.o\n' >"$tpl/tools/Makefile"
printf '#include <stdio.h>\n\nint main(void)\n{\n\tputs("gen");\n\treturn 0;\n}\n' >"$tpl/tools/gen.c"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(calc C)\nadd_library(calc STATIC calc.c)\n' >"$tpl/libs/calc/CMakeLists.txt"
printf "project('calc', 'c')\nstatic_library('calc', 'calc.c')\n" >"$tpl/libs/calc/meson.build"
printf 'int calc(int x)\n{\n\treturn x + 1;\n}\n' >"$tpl/libs/calc/calc.c"
printf '# hello\n' >"$tpl/README.md"
printf '*.o\n/hello\n/build/\n/builddir/\n' >"$tpl/.gitignore"
if ! wf_git_commit "$tpl" >"$wf_base/git.log" 2>&1; then
	not_ok "c: build the project"
	_wf_diag_file "$wf_base/git.log"
	done_testing
fi

# What differs from one native run to the next: CMake's log names the
# try_compile directories it makes up at random; ninja's log and deps
# database hold mtimes; meson's log and its pickled state hold times.
WF_VOLATILE=('*/CMakeFiles/CMakeOutput.log' '*/CMakeFiles/CMakeError.log'
	'*/.ninja_log' '*/.ninja_deps' '*/meson-logs/*' '*/meson-private/*.dat')

recipe() {
	wf_step "make" . make
	wf_step_same_output "./hello" . ./hello
	wf_step "make" tools make
	wf_step "make clean" tools make clean
	wf_step "cmake -B build" . cmake -G "Unix Makefiles" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -B build
	wf_step "cmake --build build" . cmake --build build
	wf_step_same_output "build/hello" . build/hello
	wf_step "meson setup builddir" . meson setup builddir
	wf_step "ninja -C builddir" . ninja -C builddir
	wf_step_same_output "builddir/hello" . builddir/hello
	wf_step "cmake -B build" libs/calc cmake -G "Unix Makefiles" -B build
	wf_step "cmake --build build" libs/calc cmake --build build
	wf_step "meson setup builddir" libs/calc meson setup builddir
	wf_step "ninja -C builddir" libs/calc ninja -C builddir
	wf_remount
	wf_step "make clean" . make clean
	wf_step "make" . make
	wf_step "rm -rf build builddir" . rm -rf build builddir
}

after() {
	wf_denied "sed -i Makefile" . Makefile sed -i 's/O2/O3/' Makefile
	wf_denied "sed -i Makefile" tools tools/Makefile sed -i 's/gen/GEN/' Makefile
	wf_denied "sed -i CMakeLists.txt" . CMakeLists.txt sed -i 's/hello/x/' CMakeLists.txt
	wf_denied "sed -i meson.build" libs/calc libs/calc/meson.build sed -i 's/calc/x/' meson.build
}

wf_protect Makefile tools/Makefile CMakeLists.txt meson.build libs/calc/CMakeLists.txt libs/calc/meson.build
wf_run c "$tpl" recipe after
done_testing
