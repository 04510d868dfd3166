#!/usr/bin/env bash
# Rust workflows through the mount with the shipped, detected rules: cargo
# build, test, run, fmt and clean on a crate at the root, and on a crate in
# a subfolder of a Python project (where Rust is detected in the subfolder
# only). target/ is private (in the store, never in SOURCE); Cargo.toml,
# build.rs and .cargo/config.toml are only read, and stay protected in the
# Python project as in a Rust one.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=rust
wf_need "$WF_CARGO" rustc rustfmt cargo-fmt || done_testing

# --- a crate at the root ---------------------------------------------------
tpl=$(wf_template rust)
mkdir -p "$tpl/src" "$tpl/tests"
printf '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' >"$tpl/Cargo.toml"
# Unformatted on purpose, so that cargo fmt rewrites it.
printf 'fn main(){println!("{}",hello::greet( "world"));}\n' >"$tpl/src/main.rs"
cat >"$tpl/src/lib.rs" <<'EOF_'
pub fn greet(name: &str) -> String {
    format!("hello, {}", name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn greets() {
        assert_eq!(super::greet("x"), "hello, x");
    }
}
EOF_
printf '#[test]\nfn integration() {\n    assert_eq!(hello::greet("it"), "hello, it");\n}\n' >"$tpl/tests/it.rs"
printf '# hello\n' >"$tpl/README.md"
printf '/target\n' >"$tpl/.gitignore"

cargo=("$WF_CARGO")
root_recipe() {
	wf_step "cargo build" . "${cargo[@]}" build --offline
	wf_private target/debug/hello target/debug/libhello.rlib target/CACHEDIR.TAG
	wf_step "cargo test" . "${cargo[@]}" test --offline
	wf_step_same_output "cargo run" . "${cargo[@]}" run --offline -q
	wf_step "cargo fmt" . "${cargo[@]}" fmt
	wf_step "cargo build" src "${cargo[@]}" build --offline
	wf_remount
	wf_step "cargo clean" . "${cargo[@]}" clean
	wf_step "cargo build --release" src "${cargo[@]}" build --offline --release
	wf_private target/release/hello
	wf_source_private_unchanged
}

root_after() {
	wf_denied "sed -i Cargo.toml" . Cargo.toml sed -i 's/0.1.0/0.2.0/' Cargo.toml
	wf_denied "create build.rs" . build.rs sh -c 'printf "fn main() {}\n" >build.rs'
}

wf_protect Cargo.toml
wf_run rust "$tpl" root_recipe root_after

# --- a crate in a subfolder of a Python project ----------------------------
wf_reset
tpl=$(wf_template rust-in-python)
crate=$tpl/crates/foo
mkdir -p "$crate/src" "$crate/.cargo" "$tpl/src/app"
printf '[project]\nname = "app"\nversion = "0.1.0"\n' >"$tpl/pyproject.toml"
printf 'print("app")\n' >"$tpl/src/app/__init__.py"
printf '[package]\nname = "foo"\nversion = "0.1.0"\nedition = "2021"\n' >"$crate/Cargo.toml"
printf 'fn main() {\n    println!("cargo:rustc-env=FOO_BUILT=yes");\n}\n' >"$crate/build.rs"
printf '[term]\nverbose = false\n' >"$crate/.cargo/config.toml"
printf 'pub fn built() -> &'"'"'static str { env!("FOO_BUILT") }\n\n#[test]\nfn t() { assert_eq!(built(), "yes"); }\n' >"$crate/src/lib.rs"

sub_recipe() {
	wf_step "cargo build" crates/foo "${cargo[@]}" build --offline
	wf_private crates/foo/target/debug/libfoo.rlib
	wf_step "cargo test" crates/foo "${cargo[@]}" test --offline
	wf_step "cargo fmt" crates/foo "${cargo[@]}" fmt
	wf_step "cargo build" crates/foo/src "${cargo[@]}" build --offline
	wf_source_private_unchanged
}

sub_after() {
	wf_denied "sed -i build.rs" crates/foo crates/foo/build.rs sed -i 's/yes/no/' build.rs
	wf_denied "append to .cargo/config.toml" crates/foo crates/foo/.cargo/config.toml \
		sh -c 'printf "[build]\nrustc-wrapper = \"/tmp/x\"\n" >>.cargo/config.toml'
	wf_denied "sed -i Cargo.toml" crates/foo crates/foo/Cargo.toml sed -i 's/0.1.0/0.2.0/' Cargo.toml
	# The directory is the agent's own: it may remove it after the refusal.
	wf_denied "create .cargo/config.toml" . .cargo/config.toml \
		sh -c 'mkdir .cargo && printf "[build]\n" >.cargo/config.toml; rc=$?; rmdir .cargo; exit $rc'
}

WF_WORLD=rust-in-python
wf_protect crates/foo/Cargo.toml crates/foo/build.rs crates/foo/.cargo/config.toml pyproject.toml
wf_run rust-in-python "$tpl" sub_recipe sub_after
done_testing
