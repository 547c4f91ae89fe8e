"""Smoke runs of the training examples with ``--quick`` (they need the ``train`` extra)."""

import csv
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(script, *args, stdin=None, timeout=300):
    return subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], input=stdin, text=True,
                          capture_output=True, timeout=timeout, cwd=ROOT)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def quick_ppo(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo")
    r = run("train_maskable_ppo.py", "--quick", "--threads", "1", "--out", out)
    assert r.returncode == 0, r.stdout + r.stderr
    return out, r.stdout


def test_train_maskable_ppo_quick(quick_ppo):
    out, stdout = quick_ppo
    for name in ("model.zip", "best.zip", "eval.csv", "learning_curve.png", "args.json", "curriculum.json"):
        assert (out / name).is_file(), name
    rows = read_rows(out / "eval.csv")
    assert len(rows) >= 2
    for row in rows:
        for key in ("win_random", "win_greedy"):
            assert 0.0 <= float(row[key]) <= 1.0
    assert [int(r["steps"]) for r in rows] == sorted(int(r["steps"]) for r in rows)
    assert "trained" in stdout
    stages = json.loads((out / "curriculum.json").read_text())
    assert stages[0] == [0, "random"] and [s[1] for s in stages] == ["random", "greedy", "pattern"][:len(stages)]
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bc = json.loads((out / "bc.json").read_text())  # the quick run has a tiny behaviour-cloning warm start
    assert bc["decisions"] > 0 and len(bc["epochs"]) == 1
    assert 0.0 <= bc["epochs"][0]["held_out_accuracy"] <= 1.0
    assert "behaviour cloning" in stdout


def test_teacher_games_record_legal_teacher_decisions():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_maskable_ppo", EXAMPLES / "train_maskable_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    args = mod.parse_args(["--quick"])
    rules = dict(rules=args.rules, board_size=args.board_size, max_battle_turns=args.max_battle_turns)
    obs, masks, acts, rets = mod.record_teacher_games(args, rules, 2, seed=5)
    n = len(acts)
    assert n > 0 and obs.shape[0] == masks.shape[0] == rets.shape[0] == n
    assert masks[np.arange(n), acts].all()  # every recorded action was legal where it was taken
    again = mod.record_teacher_games(args, rules, 2, seed=5)
    assert (again[2] == acts).all() and np.allclose(again[3], rets)  # seeded


def test_self_play_quick(tmp_path):
    r = run("self_play.py", "--quick", "--threads", "1", "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_rows(tmp_path / "eval.csv")
    assert rows and int(rows[-1]["snapshots"]) >= 2
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "learning_curve.png").is_file()


def test_self_play_from_trained_model(quick_ppo, tmp_path):
    out, _ = quick_ppo
    r = run("self_play.py", "--quick", "--threads", "1", "--init", out / "model.zip", "--out", tmp_path,
            "--total-steps", "128")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "model.zip").is_file()
    rows = read_rows(tmp_path / "eval.csv")
    trained = int(read_rows(out / "eval.csv")[-1]["steps"])
    assert int(rows[0]["steps"]) == trained > 0  # continues the loaded model's step count
    assert 2 <= len(rows) <= 3 and int(rows[-1]["steps"]) >= trained + 128


def test_play_against_model_terminal_and_watch(quick_ppo):
    out, _ = quick_ppo
    r = run("play_against_model.py", "--model", out / "model.zip", stdin="moves\nquit\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "legal moves" in r.stdout and "sb3:" in r.stdout
    r = run("play_against_model.py", "--model", out / "model.zip", "--watch", "random", "--games", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "model won" in r.stdout and r.stdout.count("game ") == 2
    r = run("play_against_model.py", "--model", out / "missing.zip")
    assert r.returncode == 2 and "no model" in r.stderr


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_help_gives_every_flag_a_text(script):
    r = run(script, "--help", timeout=120)
    assert r.returncode == 0, r.stderr
    import re

    options = r.stdout.split("options:", 1)[1]  # past the usage lines
    flags = set(re.findall(r"^\s+(--[a-z0-9-]+)", options, re.M)) - {"--help"}
    assert flags
    for flag in flags:  # each option line is followed by its help on the same or the next line
        block = re.split(re.escape(flag) + r"[ ,\n]", options, maxsplit=1)[1].split("\n  -", 1)[0]
        words = re.sub(r"\b[A-Z][A-Z0-9_]+\b|\{[^}]*\}|--[a-z-]+", "", block)  # metavars, choices, other flags
        assert re.search(r"[a-z]{2,}", words), f"{script} {flag} has no help text"


def test_training_example_does_not_write_into_baselines_by_default():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_maskable_ppo_defaults", EXAMPLES / "train_maskable_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert not mod.Args().out.startswith("baselines")


def test_train_maskable_ppo_starts_from_a_model_of_another_board(quick_ppo, tmp_path):
    out, _ = quick_ppo  # an 8x8 model; the board-size curriculum goes on on 6x6 from its weights
    r = run("train_maskable_ppo.py", "--quick", "--threads", "1", "--board-size", "6", "--bc-games", "0",
            "--init", out / "model.zip", "--total-steps", "128", "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"started from {out / 'model.zip'}" in r.stdout
    from jiu_env.sb3 import model_rules

    assert model_rules(str(tmp_path / "model.zip")).board_size == 6
    # seeded: the same command gives the same network and the same evaluations (the clocks aside)
    again = run("train_maskable_ppo.py", "--quick", "--threads", "1", "--board-size", "6", "--bc-games", "0",
                "--init", out / "model.zip", "--total-steps", "128", "--out", tmp_path / "again")
    assert again.returncode == 0, again.stdout + again.stderr
    import torch
    from sb3_contrib import MaskablePPO

    first, second = (MaskablePPO.load(d / "model.zip", device="cpu").policy.state_dict()
                     for d in (tmp_path, tmp_path / "again"))
    assert all(torch.equal(first[k], second[k]) for k in first)
    clocks = {"minutes", "cpu_minutes", "eval_seconds"}
    strip = [[{k: v for k, v in r.items() if k not in clocks} for r in read_rows(d / "eval.csv")]
             for d in (tmp_path, tmp_path / "again")]
    assert strip[0] == strip[1] and strip[0]
    r = run("train_maskable_ppo.py", "--quick", "--init", tmp_path / "missing.zip", "--out", tmp_path / "x")
    assert r.returncode != 0 and "missing.zip: no such model file" in r.stderr
