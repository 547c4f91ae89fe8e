"""Generations beyond the teacher: self-play with the network in the search, soft targets, init, the gate."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env import kernel as K

torch = pytest.importorskip("torch")

from jiu_env.learn.data import DataConfig, generate, load_games, read_manifest  # noqa: E402
from jiu_env.learn.dataset import augment, data_key, load_positions  # noqa: E402
from jiu_env.learn.selfplay import SelfPlayConfig, play_selfplay_chunk  # noqa: E402
from jiu_env.learn.train import TrainConfig, train  # noqa: E402
from jiu_env.symmetry import action_map  # noqa: E402

R6 = Rules.make("competitive", board_size=6)


@pytest.fixture(scope="module")
def base6(tmp_path_factory):
    """Engine data and a tiny network trained on it (the 'last generation')."""
    root = tmp_path_factory.mktemp("gen0")
    generate(root / "data", DataConfig(teacher="alphabeta:depth=1,tt_bits=14", rules=R6.to_dict(), chunk_games=2,
                                       random_opening=3, seed=5), 4, progress=False)
    data, rules = load_positions([root / "data"])
    train(data, rules, root / "net", TrainConfig(channels=8, blocks=1, batch=32, steps=20, eval_every=10,
                                                  save_every=10), progress=False)
    return root


@pytest.fixture(scope="module")
def selfplay6(base6, tmp_path_factory):
    out = tmp_path_factory.mktemp("sp")
    cfg = SelfPlayConfig.for_net(base6 / "net" / "net.pt", chunk_games=3, sims=6, random_opening=2, seed=3)
    generate(out, cfg, 3, progress=False)
    return out, cfg


def test_selfplay_games_are_legal_labelled_by_visits_and_reproducible(selfplay6):
    out, cfg = selfplay6
    games = list(load_games(out))
    assert len(games) == 3
    for g in games:
        s = R6.new_state()
        buf = np.empty(R6.num_actions, np.int64)
        j = 0
        for a, lab in zip(g["actions"], g["labels"]):
            legal = set(buf[:K.legal_actions(s, buf)].tolist())
            assert int(a) in legal
            if lab >= 0:
                pa, pv = g["pi_actions"][j], g["pi_visits"][j]
                j += 1
                assert pa[0] == lab and pv[0] == pv.max() > 0  # the label is the most visited action
                kept = pa[pa >= 0]
                assert set(kept.tolist()) <= legal and len(set(kept.tolist())) == kept.size
                assert pv.sum() <= cfg.sims + 1 and np.all(np.diff(pv) <= 0)
            K.apply_action(s, int(a))
        assert j == len(g["pi_actions"]) > 0
        assert s[K.H_PHASE] == K.PH_OVER and K.result_for_white(s) == g["result"]
    # a chunk is the same bytes when played again (another process would make the same)
    again, _, _ = play_selfplay_chunk(cfg, 0)
    assert hashlib.sha256(again).hexdigest() == read_manifest(out)["chunks"]["chunk-00000.npz"]["sha256"]


def test_selfplay_refuses_a_changed_network_and_other_rules(base6, tmp_path):
    net = base6 / "net" / "net.pt"
    with pytest.raises(ValueError, match="trained under"):
        SelfPlayConfig.for_net(net, rules=Rules.make("competitive", board_size=8).to_dict())
    copy = tmp_path / "net.pt"
    copy.write_bytes(net.read_bytes())
    cfg = SelfPlayConfig.for_net(copy, chunk_games=1, sims=2)
    copy.write_bytes(net.read_bytes() + b"\0")
    with pytest.raises(ValueError, match="SHA-256 changed"):
        play_selfplay_chunk(cfg, 0)
    with pytest.raises(ValueError, match="sims must be"):
        SelfPlayConfig.for_net(net, sims=0)


def test_engine_and_selfplay_positions_mix_with_soft_targets(base6, selfplay6):
    out, _ = selfplay6
    data, _ = load_positions([base6 / "data", out])
    assert data.soft and data.pi_actions.shape[1] == 8
    engine = ~np.isin(data.game, [g["seed"] for g in load_games(out)])
    assert engine.any() and (~engine).any()
    # engine positions: a one-hot target on the teacher's action; self-play ones: visit shares
    assert np.array_equal(data.pi_actions[engine, 0], data.action[engine])
    assert np.all(data.pi_actions[engine, 1:] == -1) and np.allclose(data.pi_probs[engine, 0], 1.0)
    assert np.allclose(data.pi_probs.sum(1), 1.0)
    assert np.array_equal(data.pi_actions[~engine, 0], data.action[~engine])
    # augmentation maps every target action with the position's symmetry and keeps the padding
    idx = np.arange(len(data))
    _, mapped = augment(data.planes[idx], data.pi_actions[idx], data.placement[idx], 6, np.random.default_rng(1))
    _, mapped_label = augment(data.planes[idx], data.action[idx], data.placement[idx], 6, np.random.default_rng(1))
    assert np.array_equal(mapped[:, 0], mapped_label)
    assert np.array_equal(mapped == -1, data.pi_actions == -1)


def test_next_generation_starts_from_the_last_weights_and_refuses_other_data(base6, selfplay6, tmp_path):
    from jiu_env.bots.alphazero import load_checkpoint

    out, _ = selfplay6
    dirs = [base6 / "data", out]
    data, rules = load_positions(dirs)
    last = base6 / "net" / "net.pt"
    cfg = TrainConfig(channels=8, blocks=1, batch=16, steps=1, lr=1e-9, warmup=0, eval_every=1, save_every=1)
    train(data, rules, tmp_path / "g1", cfg, progress=False, init=last, data_key=data_key(dirs))
    start, _ = load_checkpoint(last)
    new, meta = load_checkpoint(tmp_path / "g1" / "net.pt")
    # the weights are the last generation's (one step of lr 1e-9 moves each by about 1e-9; batch-norm
    # statistics do move in a training step)
    assert all(torch.allclose(a, b, rtol=0, atol=1e-6) for a, b in zip(start.parameters(), new.parameters()))
    assert meta["meta"]["init"] == str(last)
    with pytest.raises(ValueError, match="other data"):
        train(data, rules, tmp_path / "g1", cfg, progress=False, data_key=data_key([base6 / "data"]))
    with pytest.raises(ValueError, match="channels=16"):
        train(data, rules, tmp_path / "g2", TrainConfig(channels=16, blocks=1, steps=1), progress=False, init=last)
    # soft-target training moves the weights
    train(data, rules, tmp_path / "g3", TrainConfig(channels=8, blocks=1, batch=16, steps=3, eval_every=3,
                                                    save_every=3), progress=False, init=last)
    moved, _ = load_checkpoint(tmp_path / "g3" / "net.pt")
    assert not all(torch.equal(a, b) for a, b in zip(start.parameters(), moved.parameters()))


def test_a_resumed_training_keeps_its_init_and_refuses_another(base6, tmp_path):
    from jiu_env.bots.alphazero import load_checkpoint

    data, rules = load_positions(base6 / "data")  # one directory given alone
    last = base6 / "net" / "net.pt"
    other = tmp_path / "other.pt"
    other.write_bytes(last.read_bytes() + b"\0")  # another file (another SHA-256)
    cfg = TrainConfig(channels=8, blocks=1, batch=16, steps=4, eval_every=2, save_every=2)
    run = tmp_path / "run"
    train(data, rules, run, cfg, progress=False, init=last, stop_after=2)
    state = (run / "state.pt").read_bytes()
    with pytest.raises(ValueError, match="started from .*net.pt, not from --init .*other.pt"):
        train(data, rules, run, cfg, progress=False, init=other)
    assert (run / "state.pt").read_bytes() == state  # refused before any step
    train(data, rules, run, cfg, progress=False, stop_after=1)  # resumed without --init: still the same start
    assert load_checkpoint(run / "net.pt")[1]["meta"]["init"] == str(last)
    train(data, rules, run, cfg, progress=False, init=last)
    assert load_checkpoint(run / "net.pt")[1]["meta"]["steps"] == 4
    # a run started from random weights refuses an --init on resume
    plain = tmp_path / "plain"
    train(data, rules, plain, cfg, progress=False, stop_after=2)
    with pytest.raises(ValueError, match="started from random weights"):
        train(data, rules, plain, cfg, progress=False, init=last)


def test_soft_targets_map_exactly_under_each_symmetry():
    acts = np.array([[3, 10, -1], [7, -1, -1]], np.int32)
    planes = np.zeros((2, 6, 6, 21), np.uint8)
    for sym in range(8):
        from jiu_env.learn.dataset import apply_symmetries

        _, out = apply_symmetries(planes, acts, np.array([sym, sym]), 6)
        m = action_map(sym, 6)
        assert out.tolist() == [[m[3], m[10], -1], [m[7], -1, -1]]


def test_gate_stage_decides_by_sprt_and_resumes_to_the_same_decision(base6, tmp_path):
    net = base6 / "net" / "net.pt"
    common = [sys.executable, "-m", "jiu_env.cli", "train", str(tmp_path / "g"), "--stage", "gate", "--board-size", "6",
              "--net", str(net), "--games", "4", "--random-opening", "2", "--sprt", "0", "400"]
    cmd = common + ["--against", str(net)]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    rep = json.loads(first.stdout)["gate"]
    assert rep["games"] == 4 and rep["pair"]["games"] == 4 and "llr" in rep["sprt"]
    # accepted follows the SPRT decision: true for H1, false for H0, None while undecided
    decision = rep["sprt"].get("decision")
    assert rep["accepted"] is {"H1 accepted": True, "H0 accepted": False}.get(decision), (decision, rep["accepted"])
    games = tmp_path / "g" / "gate" / "games.jsonl"
    stored, stamp = games.read_bytes(), games.stat().st_mtime_ns
    assert len(stored.splitlines()) == 4
    again = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout)["gate"]
    assert again["sprt"] == rep["sprt"] and again["accepted"] == rep["accepted"]
    # resumed from the stored games: none played again (the file is not rewritten nor appended to)
    assert games.read_bytes() == stored and games.stat().st_mtime_ns == stamp
    bad = subprocess.run(common, capture_output=True, text=True, timeout=600)  # no --against at all
    assert bad.returncode == 2 and "the gate stage needs --against CHECKPOINT" in bad.stderr, bad.stderr
