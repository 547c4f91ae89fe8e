"""benchmarks/ladder_extend.py: a gauntlet under a ladder's settings, fitted together with its published pairs."""

from __future__ import annotations

import csv
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from jiu_env.evaluation.config import load_config
from jiu_env.evaluation.tournament import run_tournament

SCRIPT = pathlib.Path(__file__).parents[1] / "benchmarks" / "ladder_extend.py"

LADDER = """
title = "tiny ladder"
games_per_pair = 4
seed = 7
random_opening = 2
mode = "round_robin"
anchor = "greedy"
unrated = ["random"]
[rules]
profile = "competitive"
board_size = 6
[[players]]
name = "random"
spec = "random"
[[players]]
name = "greedy"
spec = "greedy"
[[players]]
name = "pattern"
spec = "pattern"
"""


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _run(*args):
    done = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    root = tmp_path_factory.mktemp("ladder")
    cfg = root / "tiny.toml"
    cfg.write_text(LADDER, encoding="utf-8")
    run_tournament(load_config(cfg), out_dir=str(root / "results"), workers=1, progress=None, log=lambda m: None)
    return cfg, root / "results"


def test_refit_of_the_published_pairs_alone_gives_the_published_ratings(ladder, tmp_path):
    cfg, results = ladder
    _run("--config", cfg, "--ladder", results, "--add", "new=greedy", "--out", tmp_path, "--fit-only", "--joint")
    published = {r["player"]: r for r in _rows(results / "ratings.csv")}
    mine = {r["player"]: r for r in _rows(tmp_path / "ratings.csv")}
    assert set(mine) == {"random", "greedy", "pattern"}  # nothing played: the ladder's players only
    for name in ("greedy", "pattern"):
        assert float(mine[name]["elo"]) == pytest.approx(float(published[name]["elo"]), abs=0.1), name


def test_gauntlet_plays_every_ladder_player_under_its_settings(ladder, tmp_path):
    cfg, results = ladder
    _run("--config", cfg, "--ladder", results, "--add", "g2=greedy", "--out", tmp_path)
    pairs = _rows(tmp_path / "g2" / "pairs.csv")
    assert sorted({r["a"] for r in pairs} | {r["b"] for r in pairs}) == ["g2", "greedy", "pattern", "random"]
    assert all(int(r["games"]) == 4 for r in pairs)  # the ladder's games per pair
    rated = {r["player"]: r for r in _rows(tmp_path / "ratings.csv")}
    assert rated["g2"]["added"] == "True" and int(rated["g2"]["games"]) == 12 and rated["g2"]["elo"] != ""
    assert rated["random"]["elo"] == ""  # the ladder's unrated player stays unrated
    assert float(rated["greedy"]["elo"]) == 0.0  # the ladder's anchor
    published = {r["player"]: r for r in _rows(results / "ratings.csv")}
    assert float(rated["pattern"]["elo"]) == pytest.approx(float(published["pattern"]["elo"]), abs=0.1)  # held fixed
    text = (tmp_path / "ratings.md").read_text(encoding="utf-8")
    assert "**g2**" in text and "## g2: its games" in text
    # resumable: a second run plays nothing new and gives the same table
    _run("--config", cfg, "--ladder", results, "--add", "g2=greedy", "--out", tmp_path)
    assert _rows(tmp_path / "g2" / "pairs.csv") == pairs


def test_refuses_a_name_already_on_the_ladder(ladder, tmp_path):
    cfg, results = ladder
    done = subprocess.run([sys.executable, str(SCRIPT), "--config", str(cfg), "--ladder", str(results), "--add",
                           "greedy=greedy", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "already a ladder player" in done.stderr


def test_performance_rating_against_fixed_opponents():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from ladder_extend import performance_rating
    finally:
        sys.path.remove(str(SCRIPT.parent))
    r, lo, hi = performance_rating([(0.0, 75, 0, 25)], prior_draws=0.0, confidence=0.95)
    assert r == pytest.approx(400 * np.log10(3), abs=0.01)  # 75% against a 0-rated opponent
    assert lo < r < hi and hi - r == pytest.approx(r - lo)
    r2, *_ = performance_rating([(100.0, 50, 0, 50), (-100.0, 50, 0, 50)], prior_draws=2.0, confidence=0.95)
    assert r2 == pytest.approx(0.0, abs=0.01)  # even scores against +-100: the mean
    r3, lo3, hi3 = performance_rating([(0.0, 750, 0, 250)], prior_draws=0.0, confidence=0.95)
    assert hi3 - lo3 == pytest.approx((hi - lo) / np.sqrt(10), rel=1e-3)  # ten times the games
