#!/usr/bin/env bash
# Python workflows through the mount with the shipped, detected rules:
# python3 -m venv (with pip, at the root; without, in a subdirectory), the
# project run with the venv's python (which writes __pycache__ beside the
# package), pytest from a venv that sees the system's site-packages, at the
# root and in tests/. Every venv and __pycache__ is private: in the store,
# never in SOURCE; pyproject.toml and conftest.py are only read.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=python
tpl=$(wf_template python)
if ! read -r pyver tag < <("$WF_PYTHON" -c 'import sys; print("python%d.%d" % sys.version_info[:2], sys.implementation.cache_tag)'); then
	not_ok "python: $WF_PYTHON runs"
	done_testing
fi
have_venv=true have_pytest=true
"$WF_PYTHON" -c 'import venv, ensurepip' 2>/dev/null || have_venv=false
"$WF_PYTHON" -c 'import pytest' 2>/dev/null || have_pytest=false
$have_venv || not_ok "python: $WF_PYTHON -m venv works (Debian: python3-venv, from scripts/deps.sh)"
$have_pytest || not_ok "python: pytest for $WF_PYTHON is installed (Debian: python3-pytest, from scripts/deps.sh)"

mkdir -p "$tpl/src/pkg" "$tpl/tests" "$tpl/tools"
cat >"$tpl/pyproject.toml" <<'EOF_'
[project]
name = "pkg"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
EOF_
printf '"""A tiny package."""\n' >"$tpl/src/pkg/__init__.py"
printf 'def greet(name="world"):\n    return f"hello, {name}"\n' >"$tpl/src/pkg/core.py"
printf 'from pkg.core import greet\n\nprint(greet())\n' >"$tpl/src/pkg/__main__.py"
printf 'import sys\n\nfrom pkg.core import greet\n\nprint(greet(sys.argv[1] if len(sys.argv) > 1 else "cli"))\n' >"$tpl/src/pkg/cli.py"
printf 'import pytest\n\n\n@pytest.fixture\ndef name():\n    return "test"\n' >"$tpl/tests/conftest.py"
printf 'from pkg.core import greet\n\n\ndef test_greet(name):\n    assert greet(name) == "hello, test"\n' >"$tpl/tests/test_core.py"
printf 'print("tool")\n' >"$tpl/tools/tool.py"
printf '# pkg\n' >"$tpl/README.md"
printf '.venv/\nvenv/\n__pycache__/\n' >"$tpl/.gitignore"

recipe() {
	if $have_venv; then
		wf_step "python3 -m venv .venv" . "$WF_PYTHON" -m venv .venv
		wf_private .venv/bin/python .venv/bin/pip .venv/pyvenv.cfg \
			".venv/lib/$pyver/site-packages/pip/__init__.py" \
			".venv/lib/$pyver/site-packages/distutils-precedence.pth"
		wf_step_same_output ".venv/bin/python -m pkg" . env PYTHONPATH=src .venv/bin/python -m pkg
		wf_private "src/pkg/__pycache__/core.$tag.pyc"
		wf_step_same_output ".venv/bin/python -m pkg.cli" src ../.venv/bin/python -m pkg.cli sub
		wf_step_same_output ".venv/bin/pip --version" . sh -c 'v=$(.venv/bin/pip --version) && echo "${v%% from *}"'
		wf_step "python3 -m venv --without-pip .venv" tools "$WF_PYTHON" -m venv --without-pip .venv
		wf_step_same_output ".venv/bin/python tool.py" tools .venv/bin/python tool.py
		wf_private tools/.venv/bin/python tools/.venv/pyvenv.cfg
	fi
	if $have_venv && $have_pytest; then
		wf_step "python3 -m venv --system-site-packages venv" . \
			"$WF_PYTHON" -m venv --system-site-packages --without-pip venv
		wf_private venv/bin/python venv/pyvenv.cfg
		wf_step "venv/bin/python -m pytest" . venv/bin/python -m pytest -q
		wf_step "venv/bin/python -m pytest" tests ../venv/bin/python -m pytest -q
		wf_private tests/__pycache__
	fi
	if $have_pytest; then
		wf_step "python3 -m pytest (system python)" tests "$WF_PYTHON" -m pytest -q -p no:cacheprovider test_core.py
	fi
	wf_step "python3 -m compileall" . "$WF_PYTHON" -m compileall -q src tools
	wf_private tools/__pycache__
	wf_remount
	wf_step "rm -rf tools/.venv" . rm -rf tools/.venv
	wf_step_same_output "python -c 'import pkg' in the second session" . \
		env PYTHONPATH=src "$WF_PYTHON" -c 'import pkg.core; print(pkg.core.greet("again"))'
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i pyproject.toml" . pyproject.toml sed -i 's/0.1.0/0.2.0/' pyproject.toml
	wf_denied "sed -i conftest.py" tests tests/conftest.py sed -i 's/test/x/' conftest.py
}

wf_protect pyproject.toml tests/conftest.py
wf_run python "$tpl" recipe after
done_testing
