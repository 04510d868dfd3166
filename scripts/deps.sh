#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need. Idempotent:
# does nothing when everything is present already.
set -eu
pkgs=(build-essential meson ninja-build pkg-config clang
	libfuse3-dev fuse3 libgit2-dev libpcre2-dev libcjson-dev libutf8proc-dev liburing-dev libnuma-dev
	git attr acl util-linux procps psmisc bindfs ripgrep
	docker.io busybox-static bubblewrap openssh-client mmdebstrap podman catatonit uidmap
	iproute2 curl jq dnsmasq-base nftables
	cmake autoconf automake libtool clang-format vim perl python3-venv python3-pytest
	groff-base mandoc zsh
	nodejs cargo rustfmt golang-go
	php-cli composer elixir erlang-base erlang-dev erlang-eunit rebar3 ghc cabal-install
	r-base-core ocaml-nox ocaml-dune lua5.4 clojure latexmk texlive-latex-base
	dpkg-dev debhelper man-db)
# A nodejs from another source (NodeSource) ships its own npm; Debian's
# comes as a separate package.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The real agent CLIs the end-to-end tests drive against a local stand-in
# of their APIs. The npm registry is the one place they come from here.
for cli in claude=@anthropic-ai/claude-code codex=@openai/codex gemini=@google/gemini-cli; do
	if ! command -v "${cli%%=*}" >/dev/null 2>&1; then
		echo "installing: ${cli#*=} (npm)"
		npm install -g --no-fund --no-audit "${cli#*=}" >/dev/null
	fi
done
# The Kubernetes API's types that tests/cli/kube-schema.sh checks the
# manifests of `sandy kube` against, beside its checker, as the lock file
# pins them (every package's version and integrity): the test itself runs
# offline. Installed again only when the lock file changed; npm ci
# starts from an empty node_modules, so a stale copy never stays.
schema=$(cd "$(dirname "$0")/.." && pwd)/tests/tools/kube-schema
if ! cmp -s "$schema/package-lock.json" "$schema/node_modules/.sandy-lock.json"; then
	echo "installing: kubernetes-models and typescript for tests/tools/kube-schema (npm)"
	npm ci --prefix "$schema" --no-fund --no-audit --ignore-scripts --loglevel=error >/dev/null
	cp "$schema/package-lock.json" "$schema/node_modules/.sandy-lock.json"
fi
