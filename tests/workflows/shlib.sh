#!/usr/bin/env bash
# Shared libraries through the mount with the shipped, detected rules: each
# build makes its library's names as a chain of symlinks (libgreet.so ->
# libgreet.so.1 -> libgreet.so.1.2.3), links a program and a test against
# it and runs them. CMake (add_library SHARED with VERSION and SOVERSION,
# ctest) in build/; meson (shared_library with version and soversion,
# meson test) in builddir/; autotools with libtool (-version-info, make
# check), configured from a release's configure script out of tree in
# build/ and in _build/ (where make distcheck builds), with libtool's
# .libs/ chains. The project's build files are only read.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=shlib
wf_need make cc cmake ctest meson ninja autoreconf libtoolize || done_testing

tpl=$(wf_template shlib)
mkdir -p "$tpl/src" "$tpl/tests" "$tpl/m4"
printf 'const char *greet(void);\n' >"$tpl/src/greet.h"
printf '#include "greet.h"\n\nconst char *greet(void)\n{\n\treturn "hello";\n}\n' >"$tpl/src/greet.c"
printf '#include <stdio.h>\n#include "greet.h"\n\nint main(void)\n{\n\tputs(greet());\n\treturn 0;\n}\n' >"$tpl/src/main.c"
printf '#include <string.h>\n#include "../src/greet.h"\n\nint main(void)\n{\n\treturn strcmp(greet(), "hello") != 0;\n}\n' >"$tpl/tests/test_greet.c"
cat >"$tpl/CMakeLists.txt" <<'EOF_'
cmake_minimum_required(VERSION 3.13)
project(greet C)
enable_testing()
add_library(greet SHARED src/greet.c)
set_target_properties(greet PROPERTIES VERSION 1.2.3 SOVERSION 1)
add_executable(hello src/main.c)
target_link_libraries(hello greet)
add_executable(test_greet tests/test_greet.c)
target_link_libraries(test_greet greet)
add_test(NAME greet COMMAND test_greet)
EOF_
cat >"$tpl/meson.build" <<'EOF_'
project('greet', 'c', version : '1.2.3')
greet = shared_library('greet', 'src/greet.c', version : '1.2.3', soversion : '1')
executable('hello', 'src/main.c', link_with : greet)
test('greet', executable('test_greet', 'tests/test_greet.c', link_with : greet))
EOF_
cat >"$tpl/configure.ac" <<'EOF_'
AC_INIT([greet], [1.2.3])
AC_CONFIG_AUX_DIR([build-aux])
AC_CONFIG_MACRO_DIR([m4])
AM_INIT_AUTOMAKE([foreign subdir-objects])
AC_PROG_CC
LT_INIT
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
EOF_
cat >"$tpl/Makefile.am" <<'EOF_'
ACLOCAL_AMFLAGS = -I m4
lib_LTLIBRARIES = libgreet.la
libgreet_la_SOURCES = src/greet.c src/greet.h
libgreet_la_LDFLAGS = -version-info 3:1:2
bin_PROGRAMS = hello
hello_SOURCES = src/main.c
hello_LDADD = libgreet.la
check_PROGRAMS = test_greet
test_greet_SOURCES = tests/test_greet.c
test_greet_LDADD = libgreet.la
TESTS = test_greet
EOF_
printf '# greet\n' >"$tpl/README.md"
# A release holds the generated configure script, as its tarball does.
if ! (cd "$tpl" && autoreconf -fi) >"$wf_base/autoreconf.log" 2>&1 ||
	! wf_git_commit "$tpl" >"$wf_base/git.log" 2>&1; then
	not_ok "shlib: build the project"
	_wf_diag_file "$wf_base/autoreconf.log"
	_wf_diag_file "$wf_base/git.log"
	done_testing
fi

# Logs with times and host names; ninja's and meson's state with times.
WF_VOLATILE=('*/CMakeFiles/CMakeOutput.log' '*/CMakeFiles/CMakeError.log'
	'*/Testing/Temporary/LastTest.log' '*/.ninja_log' '*/.ninja_deps'
	'*/meson-logs/*' '*/meson-private/*.dat' '*/config.log' '*/test-suite.log'
	'*/test_greet.log' '*/Testing/Temporary/CTestCostData.txt')

recipe() {
	wf_step "cmake -B build" . cmake -G "Unix Makefiles" -B build
	wf_step "cmake --build build" . cmake --build build
	wf_step_same_output "build/hello" . build/hello
	wf_step "ctest" . ctest --test-dir build
	wf_step "rm -rf build" . rm -rf build
	wf_step "meson setup builddir" . meson setup builddir
	wf_step "ninja -C builddir" . ninja -C builddir
	wf_step_same_output "builddir/hello" . builddir/hello
	wf_step "meson test -C builddir" . meson test -C builddir
	for b in build _build; do
		wf_step "mkdir $b" . mkdir $b
		wf_step "../configure" $b ../configure --disable-static
		wf_step "make" $b make
		wf_step "make check" $b make check
		wf_step_same_output "$b/hello" $b ./hello
		wf_step "make install DESTDIR" $b make install DESTDIR="$WF_ROOT/$b/dest"
	done
}

after() {
	wf_denied "sed -i CMakeLists.txt" . CMakeLists.txt sed -i 's/1.2.3/9/' CMakeLists.txt
	wf_denied "sed -i meson.build" . meson.build sed -i 's/1.2.3/9/' meson.build
	wf_denied "sed -i Makefile.am" . Makefile.am sed -i 's/3:1:2/9:0:0/' Makefile.am
	wf_denied "sed -i configure" . configure sed -i 's/greet/x/' configure
}

wf_protect CMakeLists.txt meson.build configure.ac Makefile.am Makefile.in configure
wf_run shlib "$tpl" recipe after
done_testing
