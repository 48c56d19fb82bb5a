#!/usr/bin/env bash
# browser.sh COMMAND [ARG...]
#
# Runs COMMAND with a headless Chromium at hand, for the timeline page's
# browser test (sim/timeline, TestPageRendersInChromium):
#   1. finds Chromium: WINDTUNNEL_CHROMIUM, else chromium, chromium-browser,
#      google-chrome or google-chrome-stable on PATH;
#   2. if there is none, installs Debian's chromium package (apt-get,
#      non-interactive, as root or through sudo); without either it prints
#      the command to run and exits 2;
#   3. exports WINDTUNNEL_CHROMIUM and runs COMMAND in its place (exec), so
#      the exit status and signals are COMMAND's.
#
# Example (what `make browser-test` runs):
#   sim/timeline/browser.sh go test -count=1 -run Chromium -v ./sim/timeline
#
# Environment:
#   WINDTUNNEL_CHROMIUM   the Chromium binary to use (name or path)
#   WINDTUNNEL_ARTIFACTS  where the test leaves its screenshot and page
#                         (default: out/artifacts/timeline in the repository)
set -euo pipefail

log() { printf 'browser: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[ $# -ge 1 ] || { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

find_chromium() {
	if [ -n "${WINDTUNNEL_CHROMIUM:-}" ]; then
		command -v "$WINDTUNNEL_CHROMIUM" || die "WINDTUNNEL_CHROMIUM=$WINDTUNNEL_CHROMIUM is not a program"
		return
	fi
	local name
	for name in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$name" >/dev/null; then command -v "$name"; return; fi
	done
}

# can_root reports whether commands can run as root: directly, or through
# sudo without a password prompt (this script never asks for one).
can_root() { [ "$(id -u)" -eq 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; }
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

CHROMIUM=$(find_chromium)
if [ -z "$CHROMIUM" ]; then
	command -v apt-get >/dev/null ||
		die "no Chromium and no apt-get: install Chromium yourself and set WINDTUNNEL_CHROMIUM"
	if ! can_root; then
		log "no Chromium found, and installing it needs root (or sudo without a password); run:"
		log "  sudo apt-get update && sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium"
		log "then: $*"
		exit 2
	fi
	log "installing Debian's chromium package (apt-get)"
	# --no-install-recommends keeps it small; the fonts the screenshot needs
	# come with fontconfig (fonts-dejavu-core), a dependency.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
		die "apt-get update failed"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium ||
		die "apt-get install chromium failed"
	CHROMIUM=$(find_chromium)
	[ -n "$CHROMIUM" ] || die "chromium installed but not on PATH; set WINDTUNNEL_CHROMIUM"
fi
# Debian's chromium is a shell wrapper that prints a harmless shell error on
# some machines; --version still answers.
log "Chromium: $CHROMIUM ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
export WINDTUNNEL_CHROMIUM="$CHROMIUM"
log "running: $*"
exec "$@"
