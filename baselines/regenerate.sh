#!/bin/sh
# Regenerate the baseline ladder results (resumes an interrupted run).
# Extra arguments go to jiu eval, e.g. --workers 8 or --games 200.
set -e
cd "$(dirname "$0")/.."
exec jiu eval --config baselines/ladder.toml --out baselines/results "$@"
