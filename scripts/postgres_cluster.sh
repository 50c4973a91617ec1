#!/usr/bin/env bash
# A throwaway PostgreSQL server in a directory, from the system's packages (Debian: postgresql).
#   scripts/postgres_cluster.sh start DIR   # prints its URL (also in DIR/url); as root it runs as `postgres`
#   scripts/postgres_cluster.sh stop DIR    # stops it and deletes DIR
# Only the standard library is needed: it runs before the course's venv exists (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m course_lib.postgres.cluster "$@"
