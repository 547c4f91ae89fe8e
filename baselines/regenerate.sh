#!/bin/sh
# Regenerate the baseline ladder results (resumes an interrupted run).
# Extra arguments go to jiu eval, e.g. --workers 8 or --games 200.
# The ladder config ships with the package (jiu_env/data/ladders/ladder.toml); its ppo14 model is
# baselines/training/ppo14/model.zip, relative to the repository root where this runs.
set -e
cd "$(dirname "$0")/.."
exec jiu eval --config ladder --out baselines/results "$@"
