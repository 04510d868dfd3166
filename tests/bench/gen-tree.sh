#!/usr/bin/env bash
# Generates the benchmark's source tree: a git repository with history that
# looks like a large C project (>= 15,000 files in >= 1,500 directories),
# made from nothing but this machine: C headers and sources are synthesised,
# so every run is the same.
#   gen-tree.sh DIR [NDIRS] [FILES_PER_DIR]
set -eu
dir=$1 ndirs=${2:-1600} per=${3:-10}
mkdir -p "$dir"
cd "$dir"
git init -q -b main .
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=bench -c user.email=bench@example.invalid "$@"; }

# One awk pass writes every file: far faster than a shell loop.
awk -v ndirs="$ndirs" -v per="$per" 'BEGIN {
	for (d = 0; d < ndirs; d++) {
		top = sprintf("lib%02d", d % 40)
		sub1 = sprintf("%s/mod%03d", top, d)
		path = (d % 3 == 0) ? sub1 "/impl" : sub1
		dirs[d] = path
		system("mkdir -p " path)
		for (f = 0; f < per; f++) {
			ext = (f % 3 == 0) ? "h" : "c"
			name = sprintf("%s/unit_%d_%d.%s", path, d, f, ext)
			printf("/* generated unit %d.%d */\n#include <stdio.h>\n", d, f) > name
			for (k = 0; k < 40; k++)
				printf("static int fn_%d_%d_%d(int x)\n{\n\treturn x * %d + %d; /* %s */\n}\n",
				       d, f, k, k + 1, f, (k % 7 == 0) ? "needle_marker" : "plain") > name
			close(name)
		}
	}
}'
printf 'CFLAGS ?= -O2\nall:\n\t@echo bench tree\n' >Makefile
printf '# bench tree\n' >README.md
g add -A && g commit -qm "initial tree"
# A little history: two more commits touching a slice of the tree.
find lib0* -name '*.c' | head -300 | xargs sed -i 's/plain/plain2/'
g commit -qam "second"
find lib1* -name '*.h' | head -200 | xargs sed -i 's/generated/generated again/'
g commit -qam "third"
