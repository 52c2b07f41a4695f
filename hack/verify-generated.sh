#!/usr/bin/env bash
# Fails when the generated files under api/ are stale: it regenerates them and
# compares checksums before and after, so uncommitted hand edits elsewhere do
# not matter.
set -euo pipefail
cd "$(dirname "$0")/.."
sums() { find api \( -name 'zz_generated*.go' -o -path 'api/crds/bases/*' \) -type f -print0 | sort -z | xargs -0 -r sha256sum; }
before=$(sums)
go generate ./api/...
after=$(sums)
if [ "$before" != "$after" ]; then
  echo "Generated files under api/ were stale; they have been regenerated. Review and commit them:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "generated files are up to date"
