#!/usr/bin/env bash
# Installs what the browser test needs: Debian's Chromium (never a downloaded browser) and the
# pinned playwright-core from package-lock.json. Safe to run again; CI calls it before `make test`.
set -euo pipefail
cd "$(dirname "$0")"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

packages=()
[ -x /usr/bin/chromium ] || packages+=(chromium)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [ "${#packages[@]}" -gt 0 ]; then
  echo "install.sh: apt-get install ${packages[*]}"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
fi

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "install.sh: playwright-core needs Node.js 20+, found $(node --version); the browser test will be skipped." >&2
fi

# playwright-core never downloads browsers; the variable makes sure nothing else does either.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
npm ci --no-audit --no-fund
echo "install.sh: $(/usr/bin/chromium --version 2>/dev/null), playwright-core $(node -p 'require("./node_modules/playwright-core/package.json").version')"
