#!/usr/bin/env bash
# Editors and in-place tools through the mount with the shipped, detected
# rules, at the root and in subdirectories, on files the project's rules
# make writable (README.md, sources, a .py script, .gitignore, an
# application YAML file): sed -i (and sed -i.bak), perl -pi, vim in batch
# mode with backup files (backupcopy=no and the default) and with a swap
# file beside the file, clang-format -i, rustfmt, and a save that writes a
# temporary file and renames it over the original. Each leaves temporary or
# backup names of its own choosing beside the file. And the refusals that
# must stay: the same tools on protected and readonly files fail, change
# nothing and leave no temporary file behind.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=edit
wf_need sed perl vim clang-format rustfmt || done_testing

# A project of three types at once (make, npm, Python), as many are.
tpl=$(wf_template edit)
mkdir -p "$tpl/src/util" "$tpl/docs/guide" "$tpl/tools" "$tpl/config" "$tpl/.vscode"
printf '# hello\n\nhello world, a project.\n' >"$tpl/README.md"
printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' >"$tpl/main.c"
printf 'int x(int a){return a+1;}\n' >"$tpl/src/x.c"
printf 'pub fn add(a:i32,b:i32)->i32{a+b}\n' >"$tpl/src/lib.rs"
printf 'pub fn fmt(x:u8)->String{format!("{}",x)}\n' >"$tpl/src/util/fmt.rs"
printf '# Intro\n\nhello guide.\n' >"$tpl/docs/guide/intro.md"
printf 'print("hello")\n' >"$tpl/tools/gen.py"
printf '*.o\n/build/\n' >"$tpl/.gitignore"
printf 'server:\n  port: 80\n  host: localhost\n' >"$tpl/config/app.yaml"
printf 'all:\n\tcc -O2 -o hello main.c\n' >"$tpl/Makefile"
printf 'Copyright the authors. All rights reserved.\n' >"$tpl/LICENSE"
printf '{\n  "name": "edit",\n  "version": "1.0.0",\n  "private": true\n}\n' >"$tpl/package.json"
printf '[project]\nname = "edit"\nversion = "0.1.0"\n' >"$tpl/pyproject.toml"
printf '{\n  "editor.formatOnSave": false\n}\n' >"$tpl/.vscode/settings.json"
if ! wf_git_commit "$tpl" >"$wf_base/git.log" 2>&1; then
	not_ok "edit: build the project"
	_wf_diag_file "$wf_base/git.log"
	done_testing
fi

# vim in batch mode, no user or system configuration, no viminfo.
vim_batch=(vim -N -u NONE -i NONE -es -c 'set backupskip=')
# ... keeping a backup, made by renaming the original.
vim_backup=("${vim_batch[@]}" -c 'set backup writebackup backupcopy=no')
# ... with the swap file beside the file (and only there), which must exist
# while the file is edited.
vim_swap=(vim -N -u NONE -i NONE -es --cmd 'set directory=.'
	-c 'let s = swapname("%")'
	-c 'if s == "" || !filereadable(s) || fnamemodify(s, ":p:h") !=# expand("%:p:h") | cquit | endif')

recipe() {
	wf_step "sed -i README.md" . sed -i 's/hello world/hello there/' README.md
	wf_step "sed -i.bak README.md" . sed -i.bak 's/a project/the project/' README.md
	wf_step "perl -pi README.md" . perl -pi -e 's/^# hello/# Hello/' README.md
	wf_step "vim (backupcopy=no, backup kept) README.md" . "${vim_backup[@]}" -c "\$put ='vim with a backup'" -c wq README.md
	wf_step "vim (default backupcopy) main.c" . "${vim_batch[@]}" -c "\$put ='// vim'" -c wq main.c
	wf_step "vim with a swap file README.md" . "${vim_swap[@]}" -c "\$put ='vim with a swap file'" -c wq README.md
	wf_step "clang-format -i main.c" . clang-format -i main.c
	wf_step "rustfmt src/util/fmt.rs" . rustfmt --edition 2021 src/util/fmt.rs
	wf_step "write README.md.tmp-PID, rename it over README.md" . \
		sh -c 'cat README.md >README.md.tmp-$$ && echo saved >>README.md.tmp-$$ && mv README.md.tmp-$$ README.md'
	wf_step "sed -i .gitignore" . sed -i 's|/build/|/build*/|' .gitignore
	wf_step "append to .gitignore" . sh -c 'echo "*.swp" >>.gitignore'
	wf_step "sed -i config/app.yaml" . sed -i 's/port: 80/port: 8080/' config/app.yaml

	wf_step "sed -i x.c" src sed -i 's/a+1/a + 2/' x.c
	wf_step "perl -pi x.c" src perl -pi -e 's/int x/int inc/' x.c
	wf_step "vim (backupcopy=no, backup kept) x.c" src "${vim_backup[@]}" -c "\$put ='/* vim */'" -c wq x.c
	wf_step "clang-format -i x.c" src clang-format -i x.c
	wf_step "rustfmt lib.rs" src rustfmt --edition 2021 lib.rs
	wf_step "write x.c.tmp-PID, rename it over x.c" src \
		sh -c 'cat x.c >x.c.tmp-$$ && echo "/* saved */" >>x.c.tmp-$$ && mv x.c.tmp-$$ x.c'
	wf_step "sed -i intro.md" docs/guide sed -i 's/hello guide/Hello, guide/' intro.md
	wf_step "vim with a swap file intro.md" docs/guide "${vim_swap[@]}" -c "\$put ='vim'" -c wq intro.md
	wf_step "perl -pi gen.py" tools perl -pi -e 's/hello/HELLO/' gen.py
	wf_step "vim (default backupcopy) gen.py" tools "${vim_batch[@]}" -c "\$put ='# vim'" -c wq gen.py
	wf_step "sed -i app.yaml" config sed -i 's/localhost/0.0.0.0/' app.yaml
	wf_step "write app.yaml.tmp-PID, rename it over app.yaml" config \
		sh -c 'cat app.yaml >app.yaml.tmp-$$ && echo "debug: true" >>app.yaml.tmp-$$ && mv app.yaml.tmp-$$ app.yaml'
	wf_step "new files and directories: notes/" . \
		sh -c 'mkdir -p notes/a && echo n >notes/a/n.txt && mv notes/a/n.txt notes/a/m.txt && ln -s a/m.txt notes/link'

	# What the first session created stays the agent's in the next one.
	wf_remount
	wf_step "vim (backupcopy=no) README.md again, over README.md~" . "${vim_backup[@]}" -c "\$put ='again'" -c wq README.md
	wf_step "sed -i.bak README.md again, over README.md.bak" . sed -i.bak 's/again/once more/' README.md
	wf_step "rm the backups" . rm README.md~ README.md.bak src/x.c~
	wf_step "edit and remove notes/" . sh -c 'echo more >>notes/a/m.txt && rm -r notes'
}

after() {
	wf_denied "sed -i Makefile" . Makefile sed -i 's/O2/O3/' Makefile
	# A file no rule names is readonly: the tools' own temporary files may
	# be created beside it, but never renamed over it.
	wf_denied "sed -i LICENSE" . LICENSE sed -i 's/authors/agent/' LICENSE
	wf_denied "write LICENSE.tmp-PID, rename it over LICENSE" . LICENSE \
		sh -c 'printf "MIT\n" >LICENSE.tmp-$$ && mv LICENSE.tmp-$$ LICENSE; rc=$?; rm -f LICENSE.tmp-$$; exit $rc'
	wf_denied "sed -i package.json" . package.json sed -i 's/1.0.0/1.0.1/' package.json
	wf_denied "sed -i pyproject.toml" . pyproject.toml sed -i 's/0.1.0/0.2.0/' pyproject.toml
	wf_denied "sed -i settings.json" .vscode .vscode/settings.json sed -i 's/false/true/' settings.json
	WF_DENIED_ANY_STATUS=1 wf_denied "perl -pi Makefile" . Makefile perl -pi -e 's/O2/O3/' Makefile
	# The temporary file is the agent's own: it may remove it after the
	# refused rename.
	wf_denied "write Makefile.tmp-PID, rename it over Makefile" . Makefile \
		sh -c 'printf "all:\n" >Makefile.tmp-$$ && mv Makefile.tmp-$$ Makefile; rc=$?; rm -f Makefile.tmp-$$; exit $rc'
	# vim copies Makefile to Makefile~ before it finds it cannot write
	# Makefile, and cannot put it back: the copy stays (on a read-only
	# mount it could not have made it).
	WF_DENIED_ANY_MESSAGE=1 WF_DENIED_LEFTOVER=Makefile~ \
		wf_denied "vim Makefile" . Makefile "${vim_batch[@]}" -c "\$put ='# vim'" -c wq Makefile
	wf_denied "create .envrc" . .envrc sh -c 'echo "echo pwned" >.envrc'
}

wf_protect Makefile package.json pyproject.toml .vscode/settings.json LICENSE
wf_run edit "$tpl" recipe after
done_testing
