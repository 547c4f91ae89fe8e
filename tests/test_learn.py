"""The learning pipeline: labelled data from search, augmentation, training, the policy player, `jiu train`."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jiu_env import Rules, make_bot, play_game
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.bots.base import legal_actions
from jiu_env.learn.data import (NO_VALUE, SOFT_SCALE, SOFT_TOP_K, DataConfig, generate, iter_positions, load_games,
                                play_labelled_game, read_manifest, reports_root_scores, soft_target,
                                teacher_label)
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.symmetry import (ALL_SYMMETRIES, placement_symmetries, symmetries_for, transform_action,
                              transform_state)
from processes import alive, kill_and_check_workers, live_children

torch = pytest.importorskip("torch")

from jiu_env.learn.dataset import (PLANE_SCALE, Positions, apply_symmetries, load_positions,  # noqa: E402
                                   random_symmetries, value_target)
from jiu_env.learn.train import TrainConfig, train  # noqa: E402

R6 = Rules.make("competitive", board_size=6)
CFG6 = DataConfig(teacher="alphabeta:depth=2,tt_bits=14", rules=R6.to_dict(), chunk_games=2, random_opening=3,
                  explore=0.2, seed=11)


@pytest.fixture(scope="module")
def data6(tmp_path_factory):
    out = tmp_path_factory.mktemp("data6")
    generate(out, CFG6, 6, progress=False)
    return out


def test_labels_equal_a_fresh_search(data6):
    rng = np.random.default_rng(0)
    checked = 0
    for game in load_games(data6):
        for s, label, value, _ in iter_positions(R6, game):
            if rng.random() < 0.1:
                fresh = make_bot(CFG6.teacher)  # a new bot: nothing kept from the game's earlier searches
                assert teacher_label(fresh, s.copy(), game["seed"]) == (label, value)
                checked += 1
    assert checked >= 20


def test_data_replays_to_the_recorded_results_and_labels_are_legal(data6):
    n_games = 0
    for game in load_games(data6, verify=True):
        s = R6.new_state()
        for a, lab in zip(game["actions"], game["labels"]):
            if lab >= 0:
                assert K.is_legal(s, int(lab))
            K.apply_action(s, int(a))
        assert s[K.H_PHASE] == K.PH_OVER and int(K.result_for_white(s)) == game["result"]
        n_games += 1
    assert n_games == 6
    # explore > 0: some played moves differ from their labels, and only battle moves do
    games = list(load_games(data6))
    differ = sum(int(((g["labels"] >= 0) & (g["labels"] != g["actions"])).sum()) for g in games)
    assert differ > 0


def test_generation_is_independent_of_chunking_and_workers(tmp_path):
    one = DataConfig(**{**CFG6.to_dict(), "chunk_games": 1})
    generate(tmp_path / "a", one, 4, progress=False)
    generate(tmp_path / "b", CFG6, 4, workers=2, progress=False)
    ga, gb = list(load_games(tmp_path / "a")), list(load_games(tmp_path / "b"))
    assert len(ga) == len(gb) == 4
    for x, y in zip(ga, gb):
        assert x["seed"] == y["seed"] and np.array_equal(x["actions"], y["actions"])
        assert np.array_equal(x["labels"], y["labels"]) and np.array_equal(x["values"], y["values"])


def test_resume_refuses_other_settings(tmp_path):
    generate(tmp_path, DataConfig(**{**CFG6.to_dict(), "teacher": "greedy"}), 2, progress=False)
    with pytest.raises(ValueError, match="other settings"):
        generate(tmp_path, CFG6, 2, progress=False)


def test_bad_data_settings_are_refused():
    with pytest.raises(ValueError, match="chunk_games"):
        DataConfig(chunk_games=0)
    with pytest.raises(ValueError, match="explore"):
        DataConfig(explore=1.5)
    with pytest.raises(ValueError):
        DataConfig(rules={"board_size": 3})


def test_players_play_the_games_and_the_teacher_only_labels(tmp_path):
    # DAgger: greedy (white in even games) against random; every labelled decision is the teacher's fresh search
    cfg = DataConfig(**{**CFG6.to_dict(), "explore": 0.0, "players": ("greedy", "random")})
    generate(tmp_path, cfg, 4, progress=False)
    assert read_manifest(tmp_path)["config"]["players"] == ["greedy", "random"]
    rng = np.random.default_rng(0)
    checked = differ = 0
    for index, game in enumerate(load_games(tmp_path, verify=True)):  # games come in play order
        even = index % 2 == 0
        bots = {K.WHITE: make_bot("greedy" if even else "random"), K.BLACK: make_bot("random" if even else "greedy")}
        for b in bots.values():
            b.restart(game["seed"])
        s = R6.new_state()
        for a, lab, val in zip(game["actions"], game["labels"], game["values"]):
            if lab >= 0:
                # the played move is the player's, made from the same position
                assert bots[int(s[K.H_TO_MOVE])].step(s) == a
                differ += int(a != lab)
                if rng.random() < 0.2:
                    assert teacher_label(make_bot(cfg.teacher), s.copy(), game["seed"]) == (lab, val)
                    checked += 1
            K.apply_action(s, int(a))
    assert checked >= 10 and differ > 0  # random is not the teacher: the labels differ from the moves played


def test_players_setting_is_checked_and_old_manifests_stay_resumable(tmp_path):
    with pytest.raises(ValueError, match="players"):
        DataConfig(players=("greedy",))
    with pytest.raises(ValueError, match="players"):
        DataConfig(players="greedy")
    with pytest.raises(ValueError, match="players"):
        DataConfig(players=("greedy", ""))
    assert "players" not in CFG6.to_dict()  # a run made before the field existed has the same settings
    generate(tmp_path, CFG6, 2, progress=False)
    with pytest.raises(ValueError, match="other settings"):
        generate(tmp_path, DataConfig(**{**CFG6.to_dict(), "players": ["greedy", "greedy"]}), 2, progress=False)


def test_soft_labels_are_the_teachers_root_scores(tmp_path):
    # every labelled decision also stores the best root moves of the same fresh search, weighted by score
    cfg = DataConfig(**{**CFG6.to_dict(), "teacher": "alphabeta:depth=2,tt_bits=14,root_margin=200", "soft": 50.0})
    generate(tmp_path, cfg, 2, progress=False)
    assert read_manifest(tmp_path)["config"]["soft"] == 50.0
    rng = np.random.default_rng(1)
    checked = 0
    for game in load_games(tmp_path, verify=True):
        assert len(game["pi_actions"]) == int((game["labels"] >= 0).sum())
        for (s, label, value, _), pa, pv in zip(iter_positions(R6, game), game["pi_actions"], game["pi_visits"]):
            assert pa.shape == pv.shape == (SOFT_TOP_K,) and label in pa and pv[list(pa).index(label)] >= 1
            assert abs(int(pv.sum()) - SOFT_SCALE) <= SOFT_TOP_K and np.all(np.diff(pv[pa >= 0]) <= 0)
            assert all(K.is_legal(s, int(x)) for x in pa[pa >= 0])
            if rng.random() < 0.15:
                fresh = make_bot(cfg.teacher)
                assert teacher_label(fresh, s.copy(), game["seed"]) == (label, value)
                moves, scores = fresh.last_info["root"]
                best = int(scores.max())
                for x, w in zip(pa[pa >= 0], pv[pa >= 0]):  # the weights follow the fresh search's scores
                    sc = int(scores[list(moves).index(x)])
                    want = np.exp((sc - best) / 50.0) / np.exp((np.sort(scores)[::-1][:SOFT_TOP_K] - best) / 50.0).sum()
                    assert abs(w / SOFT_SCALE - want) < 2e-3 or x == label
                checked += 1
    assert checked >= 5
    # the dataset's policy targets are those weights, normalised
    data, _ = load_positions([tmp_path])
    pa, pp = data.policy_targets()
    assert np.allclose(pp.sum(1), 1.0, atol=1e-3) and (pp > 0).sum(1).max() > 1


def test_soft_labels_need_root_scores_and_a_valid_temperature():
    with pytest.raises(ValueError, match="soft"):
        DataConfig(soft=-1.0)
    with pytest.raises(TypeError, match="soft"):
        DataConfig(soft=True)
    assert "soft" not in CFG6.to_dict()  # runs made before the field existed stay resumable
    teacher = make_bot("alphabeta:depth=1")
    teacher.step(R6.new_state())
    with pytest.raises(ValueError, match="root_margin"):
        soft_target(teacher, 0, 50.0)
    cfg = DataConfig(**{**CFG6.to_dict(), "teacher": "alphabeta:depth=1", "soft": 50.0})
    with pytest.raises(ValueError, match="root_margin"):
        play_labelled_game(cfg, make_bot(cfg.teacher), 0)


def test_soft_labels_per_phase_where_the_phase_engine_reports_root_scores(tmp_path):
    # a network places, a search with root_margin fights: soft labels in the battle, the move alone in placement
    for spec, phase, want in (("alphabeta:depth=2,root_margin=100", V.PH_BATTLE, True),
                              ("alphabeta:depth=2", V.PH_BATTLE, False),
                              ("alphabeta:time=1,root_margin=100", V.PH_BATTLE, False),  # no finished root
                              ("greedy", V.PH_BATTLE, False),
                              ("phases:greedy+alphabeta:depth=1,root_margin=100", V.PH_BATTLE, True),
                              ("phases:greedy+alphabeta:depth=1,root_margin=100", V.PH_PLACEMENT, False),
                              ("phases:alphabeta:depth=1,root_margin=100+greedy", V.PH_PLACEMENT, True)):
        assert reports_root_scores(make_bot(spec), phase) is want, (spec, phase)
    teacher = "phases:alphabeta:depth=1,tt_bits=14+alphabeta:depth=1,tt_bits=14,root_margin=160"
    cfg = DataConfig(**{**CFG6.to_dict(), "teacher": teacher, "soft": 40.0})
    generate(tmp_path, cfg, 2, progress=False)
    seen = {V.PH_PLACEMENT: 0, V.PH_BATTLE: 0}
    spread = 0
    for game in load_games(tmp_path, verify=True):
        assert len(game["pi_actions"]) == int((game["labels"] >= 0).sum())
        for (s, label, _, _), pa, pv in zip(iter_positions(R6, game), game["pi_actions"], game["pi_visits"]):
            phase = int(s[V.H_PHASE])
            seen[phase] += 1
            if phase == V.PH_PLACEMENT:  # one-hot on the placement engine's move
                assert pa[0] == label and pv[0] == SOFT_SCALE and (pa[1:] == -1).all() and (pv[1:] == 0).all()
            else:  # the battle engine's root scores, as a fresh search of the position gives them
                fresh = make_bot(teacher)
                assert teacher_label(fresh, s.copy(), game["seed"])[0] == label
                assert np.array_equal((pa, pv), soft_target(fresh, label, 40.0))
                spread += int((pv > 0).sum() > 1)
    assert seen[V.PH_PLACEMENT] > 0 and seen[V.PH_BATTLE] > 0 and spread > 0
    # a teacher reporting root scores in neither phase is refused before its first game, naming itself
    for bad in ("phases:alphabeta:depth=1+alphabeta:time=0.1,root_margin=160", "alphabeta:depth=1"):
        cfg = DataConfig(**{**CFG6.to_dict(), "teacher": bad, "soft": 40.0})
        with pytest.raises(ValueError, match="root_margin") as err:
            generate(tmp_path / "bad", cfg, 2, progress=False)
        assert bad in str(err.value)
        assert not list((tmp_path / "bad").glob("chunk-*.npz"))


def test_killed_generation_resumes_with_nothing_lost_or_duplicated(tmp_path):
    cfg = DataConfig(**{**CFG6.to_dict(), "chunk_games": 1})
    generate(tmp_path / "ref", cfg, 6, progress=False)
    ref = read_manifest(tmp_path / "ref")["chunks"]
    code = ("import sys; from jiu_env.learn.data import DataConfig, generate; "
            f"generate(sys.argv[1], DataConfig(**{cfg.to_dict()!r}), 6, progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "run")])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((tmp_path / "run").glob("chunk-00001.npz")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = sorted(p.name for p in (tmp_path / "run").glob("chunk-*.npz"))
    assert 0 < len(before) < 6, "the run should have been killed part-way"
    # what a kill between writing the manifest's temporary file and renaming it leaves (timing-dependent above)
    (tmp_path / "run" / ".manifest.json.deadbeef.tmp").write_text("{")
    generate(tmp_path / "run", cfg, 6, progress=False)
    got = read_manifest(tmp_path / "run")["chunks"]
    assert sorted(got) == sorted(ref)
    assert {k: v["sha256"] for k, v in got.items()} == {k: v["sha256"] for k, v in ref.items()}
    assert not list((tmp_path / "run").glob(".*tmp"))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
def test_killed_generation_ends_its_worker_processes(tmp_path):
    """A data run killed (a session's time limit, a scheduler) leaves no worker playing on without it."""
    cfg = DataConfig(**{**CFG6.to_dict(), "chunk_games": 1})
    code = ("import sys; from jiu_env.learn.data import DataConfig, generate; "
            f"generate(sys.argv[1], DataConfig(**{cfg.to_dict()!r}), 200, workers=2, progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "run")])
    kill_and_check_workers(proc, lambda: bool(list((tmp_path / "run").glob("chunk-00001.npz"))))
    assert len(list((tmp_path / "run").glob("chunk-*.npz"))) < 200


BROKEN_PLAYER = """
from jiu_env.bots.random_bot import RandomBot


class Broken(RandomBot):
    def restart(self, seed=None):
        super().restart(seed)
        if seed == {bad}:
            raise RuntimeError("broken on purpose")
"""


def test_a_failed_chunk_stops_the_run_keeping_the_finished_chunks(tmp_path, capsys):
    """One chunk that raises ends the run at once with one line naming it (exit 1, as jiu eval's failed game):
    the chunks finished are stored, the rest are not played on, the workers end."""
    from jiu_env.cli import main
    from jiu_env.learn.data import ChunkFailed
    from jiu_env.learn.seeds import game_seed

    cfg = DataConfig(teacher="alphabeta:depth=1,tt_bits=14", rules=R6.to_dict(), chunk_games=1, seed=5,
                     players=(f"{tmp_path / 'broken.py'}:Broken", "random"))
    (tmp_path / "broken.py").write_text(BROKEN_PLAYER.format(bad=game_seed(cfg, 4)))
    with pytest.raises(ChunkFailed, match="^chunk 4 failed: RuntimeError: broken on purpose$"):
        generate(tmp_path / "serial", cfg, 6, progress=False)
    assert sorted(read_manifest(tmp_path / "serial")["chunks"]) == [f"chunk-0000{i}.npz" for i in range(4)]
    def workers() -> set[int]:  # the pool's processes (not multiprocessing's resource tracker, which stays)
        if not os.path.isdir("/proc/self"):
            return set()
        def cmdline(pid: int) -> bytes:
            try:
                return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:  # ended meanwhile
                return b""

        return {c for c in live_children(os.getpid()) if alive(c) and b"spawn_main" in cmdline(c)}

    before = workers()
    t0 = time.monotonic()
    rc = main(["train", str(tmp_path / "run"), "--stage", "data", "--board-size", "6", "--seed", "5",
               "--teacher", cfg.teacher, "--players", *cfg.players, "--games", "40", "--chunk-games", "1",
               "--workers", "2"])
    err = capsys.readouterr().err
    last = err.splitlines()[-1]  # after the progress lines of the chunks finished
    assert rc == 1 and last.startswith("jiu train: error: chunk 4 failed: RuntimeError: broken on purpose")
    assert "Traceback" not in err
    chunks = read_manifest(tmp_path / "run" / "data")["chunks"]
    assert sorted(chunks) == sorted(p.name for p in (tmp_path / "run" / "data").glob("chunk-*.npz"))
    assert len(chunks) >= 2 and "chunk-00004.npz" not in chunks and len(chunks) < 40  # not played on
    assert time.monotonic() - t0 < 60
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and workers() - before:
        time.sleep(0.1)
    assert not workers() - before, "the pool's workers play on"


def test_a_failed_ray_task_is_named_by_its_chunk_and_the_others_are_cancelled(tmp_path, monkeypatch):
    """The ray backend's error is the chunk and its task's own error on one line (not Ray's wrapped traceback);
    the tasks still in flight are cancelled.  A stand-in for Ray: no cluster is started."""
    import contextlib

    from jiu_env.evaluation import backends
    from jiu_env.learn import data as data_mod

    class TaskError(Exception):  # as ray.exceptions.RayTaskError: a traceback as text, the task's error as cause
        def __init__(self, cause):
            super().__init__(f"ray::_chunk_job() (pid=1)\nTraceback (most recent call last):\n  ...\n{cause!r}")
            self.cause = cause

    class FakeRay:
        cancelled: list[int] = []

        def remote(self, **kw):
            return lambda fn: type("Job", (), {"remote": staticmethod(lambda cfg, i: i)})  # a ref: the chunk

        def cluster_resources(self):
            return {"CPU": 2}

        def wait(self, refs, num_returns):
            return refs[:1], refs[1:]

        def get(self, i):
            if i == 1:
                raise TaskError(RuntimeError("broken on purpose"))
            return data_mod._chunk_job(cfg.to_dict(), i)

        def cancel(self, i, force=False):
            self.cancelled.append(i)

    monkeypatch.setattr(backends, "ray_session", lambda address, workers: contextlib.nullcontext(FakeRay()))
    cfg = DataConfig(teacher="alphabeta:depth=1,tt_bits=14", rules=R6.to_dict(), chunk_games=1)
    with pytest.raises(data_mod.ChunkFailed, match="^chunk 1 failed: RuntimeError: broken on purpose$"):
        generate(tmp_path, cfg, 4, backend="ray", progress=False)
    assert sorted(read_manifest(tmp_path)["chunks"]) == ["chunk-00000.npz"]
    assert sorted(FakeRay.cancelled) == [2, 3]


def test_augmentation_maps_planes_and_targets_exactly(data6):
    rng = np.random.default_rng(1)
    obs = np.empty((6, 6, NUM_PLANES), np.float32)
    seen_place = seen_battle = 0
    for game in load_games(data6):
        for s, label, _, _ in iter_positions(R6, game):
            if rng.random() > 0.15:
                continue
            write_observation(s, int(s[K.H_TO_MOVE]), obs)
            planes = np.rint(obs * PLANE_SCALE).astype(np.uint8)[None]
            place = s[K.H_PHASE] == K.PH_PLACEMENT
            for g in symmetries_for(s):
                tp, ta = apply_symmetries(planes, np.array([label]), np.array([g]), 6)
                t = transform_state(s, g)
                want = np.empty_like(obs)
                write_observation(t, int(t[K.H_TO_MOVE]), want)
                assert np.array_equal(tp[0], np.rint(want * PLANE_SCALE).astype(np.uint8))
                assert ta[0] == transform_action(label, g, 6) and K.is_legal(t, int(ta[0]))
            seen_place += place
            seen_battle += not place
    assert seen_place and seen_battle
    # random symmetries respect the phase: placement positions only get the placement group
    placement = np.array([True, False] * 500)
    syms = random_symmetries(placement, 6, np.random.default_rng(2))
    assert set(syms[placement]) == set(placement_symmetries(6)) and len(placement_symmetries(6)) == 4
    assert set(syms[~placement]) == set(ALL_SYMMETRIES)


def test_value_target_mixes_result_and_search():
    v = value_target(np.array([0, 800, NO_VALUE], np.int32), np.array([1, -1, -1], np.int8), 0.5, 800.0)
    assert v == pytest.approx([0.5, -0.5 + 0.5 * np.tanh(1.0), -1.0])


@pytest.fixture(scope="module")
def trained6(data6, tmp_path_factory):
    out = tmp_path_factory.mktemp("net6")
    data, rules = load_positions([data6])
    cfg = TrainConfig(channels=8, blocks=1, batch=32, steps=40, eval_every=10, save_every=10)
    train(data, rules, out, cfg, progress=False)
    return out, data, rules, cfg


def test_training_resumes_to_the_same_weights(trained6, tmp_path):
    out, data, rules, cfg = trained6
    train(data, rules, tmp_path, cfg, progress=False, stop_after=23)
    train(data, rules, tmp_path, cfg, progress=False)
    a = torch.load(out / "state.pt", weights_only=False)["net"]
    b = torch.load(tmp_path / "state.pt", weights_only=False)["net"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    steps = [int(line.split(",")[0]) for line in (tmp_path / "curve.csv").read_text().splitlines()[1:]]
    assert steps == [10, 20, 23, 30, 40]


def test_training_refuses_other_settings(trained6):
    out, data, rules, cfg = trained6
    with pytest.raises(ValueError, match="other settings"):
        train(data, rules, out, TrainConfig(channels=4, blocks=1, steps=41), progress=False)
    # the error names what changed, not the whole stored table
    with pytest.raises(ValueError, match=r"other settings \(steps: stored 40, now 41\); use another directory$"):
        train(data, rules, out, dataclasses.replace(cfg, steps=41), progress=False)
    with pytest.raises(ValueError, match=r"other rules \(board_size: stored 6, now 8; fly_threshold: stored 6, now 8\)"):
        train(data, Rules.make("competitive", board_size=8), out, cfg, progress=False)


def test_a_snapshot_step_is_saved_whatever_save_every(data6, tmp_path):
    data, rules = load_positions([data6])
    cfg = TrainConfig(channels=4, blocks=1, batch=8, steps=12, save_every=3, eval_every=3)
    train(data, rules, tmp_path, cfg, progress=False, snapshot_every=10)
    assert sorted(p.name for p in (tmp_path / "snapshots").iterdir()) == ["net-0000010.pt"]


def test_a_run_stopped_between_its_two_files_resumes_to_a_current_net(data6, tmp_path, monkeypatch):
    """net.pt and state.pt are two writes: a run killed between them at its last save must not keep an old
    net.pt for good (the resumed run trains the steps again and writes both)."""
    from jiu_env.bots import network

    data, rules = load_positions([data6])
    cfg = TrainConfig(channels=4, blocks=1, batch=8, steps=4, save_every=2, eval_every=2)
    real = network.atomic_write_bytes
    writes = []

    def killed_at_the_last_save(path, payload):  # saves at steps 2 and 4, two files each: stop before the 4th write
        writes.append(path)
        if len(writes) == 4:
            raise KeyboardInterrupt
        real(path, payload)

    monkeypatch.setattr(network, "atomic_write_bytes", killed_at_the_last_save)
    with pytest.raises(KeyboardInterrupt):
        train(data, rules, tmp_path, cfg, progress=False, snapshot_every=None)
    monkeypatch.undo()
    train(data, rules, tmp_path, cfg, progress=False, snapshot_every=None)
    from jiu_env.bots.alphazero import load_checkpoint

    state = torch.load(tmp_path / "state.pt", weights_only=False)
    net, ckpt = load_checkpoint(tmp_path / "net.pt")
    assert state["step"] == ckpt["meta"]["steps"] == 4
    assert all(torch.equal(state["net"][k].cpu(), v) for k, v in ckpt["state_dict"].items())


def test_policy_target_move_ignores_soft_labels(tmp_path):
    cfg = DataConfig(**{**CFG6.to_dict(), "teacher": "alphabeta:depth=1,tt_bits=14,root_margin=200", "soft": 50.0})
    generate(tmp_path / "data", cfg, 2, progress=False)
    data, rules = load_positions([tmp_path / "data"])
    assert data.soft
    hard = Positions(data.planes, data.action, data.value, data.result, data.placement, data.game)  # one-hot
    # soft labels in battle, the move in placement, by hand
    pa, pp = (a.copy() for a in data.policy_targets())
    pa[data.placement], pp[data.placement] = -1, 0.0
    pa[data.placement, 0], pp[data.placement, 0] = data.action[data.placement], 1.0
    mixed = Positions(data.planes, data.action, data.value, data.result, data.placement, data.game, pa, pp)
    assert data.placement.any() and (~data.placement).any()
    tc = dict(channels=4, blocks=1, batch=16, steps=6, eval_every=3, save_every=3)
    weights = {}
    for name, d, target in (("move", data, "move"), ("onehot", hard, "soft"), ("soft", data, "soft"),
                            ("soft-battle", data, "soft-battle"), ("mixed", mixed, "soft")):
        train(d, rules, tmp_path / name, TrainConfig(**tc, policy_target=target), progress=False, snapshot_every=None)
        weights[name] = torch.load(tmp_path / name / "state.pt", weights_only=False)["net"]

    def same(a, b):
        return all(torch.equal(weights[a][k], weights[b][k]) for k in weights[a])

    assert same("move", "onehot") and not same("move", "soft")
    assert same("soft-battle", "mixed") and not same("soft-battle", "soft") and not same("soft-battle", "move")
    with pytest.raises(ValueError, match="policy_target"):
        TrainConfig(policy_target="visits")


def test_sharpen_retempers_soft_labels_exactly():
    from jiu_env.learn.dataset import sharpen_targets

    scores = np.array([[0.0, -20.0, -60.0, -100.0], [0.0, 0.0, -40.0, 0.0]])
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], bool)  # the last entry of row 2 is padding

    def label(t):
        w = np.where(mask, np.exp(scores / t), 0.0)
        return w / w.sum(1, keepdims=True)

    np.testing.assert_allclose(sharpen_targets(label(40.0), 40 / 15), label(15.0), rtol=1e-5)
    np.testing.assert_allclose(sharpen_targets(label(40.0), 1.0), label(40.0), rtol=1e-6)
    onehot = np.array([[1.0, 0.0, 0.0]], np.float32)
    assert np.array_equal(sharpen_targets(onehot, 3.0), onehot)
    with pytest.raises(ValueError, match="power"):
        sharpen_targets(onehot, 0.0)
    with pytest.raises(ValueError, match="sharpen"):
        TrainConfig(sharpen=0)


def test_sharpen_changes_only_soft_training(tmp_path):
    cfg = DataConfig(**{**CFG6.to_dict(), "teacher": "alphabeta:depth=1,tt_bits=14,root_margin=200", "soft": 50.0})
    generate(tmp_path / "data", cfg, 2, progress=False)
    data, rules = load_positions([tmp_path / "data"])
    hard = Positions(data.planes, data.action, data.value, data.result, data.placement, data.game)
    tc = dict(channels=4, blocks=1, batch=16, steps=4, eval_every=2, save_every=2)
    weights = {}
    for name, d, k in (("soft", data, 1.0), ("sharp", data, 3.0), ("hard", hard, 1.0), ("hard-sharp", hard, 3.0)):
        train(d, rules, tmp_path / name, TrainConfig(**tc, sharpen=k), progress=False, snapshot_every=None)
        weights[name] = torch.load(tmp_path / name / "state.pt", weights_only=False)["net"]

    def same(a, b):
        return all(torch.equal(weights[a][k], weights[b][k]) for k in weights[a])

    assert not same("soft", "sharp") and same("hard", "hard-sharp")


def test_decision_kinds_read_the_phase_and_sub_phase_planes():
    from jiu_env.learn.dataset import DECISION_KINDS, decision_kinds

    rules = Rules(board_size=6)
    rng = np.random.default_rng(3)
    states, want = [], []
    for _ in range(3):  # positions of random games, every kind of decision
        s = rules.new_state()
        buf = np.empty(K.num_actions(6), np.int64)
        while s[V.H_PHASE] != V.PH_OVER and len(states) < 2000:
            states.append(s.copy())
            want.append(0 if s[V.H_PHASE] == V.PH_PLACEMENT else 1 + int(s[V.H_SUB]))
            m = K.legal_actions(s, buf)
            K.apply_action(s, int(buf[rng.integers(m)]))
    planes = np.zeros((len(states), 6, 6, NUM_PLANES), np.float32)
    for st, out in zip(states, planes):
        write_observation(st, int(st[K.H_TO_MOVE]), out)
    kinds = decision_kinds((planes * PLANE_SCALE).astype(np.uint8))
    assert np.array_equal(kinds, np.array(want))
    assert set(kinds.tolist()) >= {0, 1, 3}  # placement, move and capture decisions at least
    assert DECISION_KINDS[0] == "placement" and DECISION_KINDS[1:] == V.SUBPHASE_NAMES


def test_decision_weight_reweighs_only_the_kinds_named(data6, tmp_path):
    from jiu_env.learn.dataset import DECISION_KINDS, decision_kinds

    data, rules = load_positions([data6])
    kinds = decision_kinds(data.planes)
    assert set(kinds.tolist()) == set(range(len(DECISION_KINDS)))  # the 6x6 games reach every kind
    moves = data.subset(np.flatnonzero(kinds == DECISION_KINDS.index("move")))
    tc = dict(channels=4, blocks=1, batch=16, steps=4, eval_every=2, save_every=2)
    weights = {}
    runs = (("plain", data, {}), ("ones", data, {"move": 1.0, "capture": 1.0}), ("move3", data, {"move": 3.0}),
            ("moves", moves, {}), ("moves-capture5", moves, {"capture": 5.0}), ("moves-move3", moves, {"move": 3.0}))
    for name, d, dw in runs:
        train(d, rules, tmp_path / name, TrainConfig(**tc, decision_weight=dw), progress=False, snapshot_every=None)
        weights[name] = torch.load(tmp_path / name / "state.pt", weights_only=False)["net"]

    def close(a, b):
        return all(torch.allclose(weights[a][k].float(), weights[b][k].float(), atol=1e-6) for k in weights[a])

    # weights of 1 train the plain mean, and so does one weight for every position of a batch (the loss is
    # divided by the batch's total weight) or a weight of a kind no position is; a weight of some kinds does not
    assert close("plain", "ones") and not close("plain", "move3")
    assert close("moves", "moves-capture5") and close("moves", "moves-move3")
    cfg = TrainConfig(decision_weight={"capture": 3, "move": 2})
    assert cfg.decision_weight == {"move": 2.0, "capture": 3.0}
    assert cfg == TrainConfig(decision_weight={"move": 2.0, "capture": 3.0}) and hash(cfg) == hash(
        TrainConfig(decision_weight={"move": 2.0, "capture": 3.0})) and cfg != TrainConfig()
    for bad, match in (({"jump": 2.0}, "unknown decision kind 'jump'"), ({"drop": 0.0}, "weight of 'drop'"),
                       ({"drop": float("nan")}, "weight of 'drop'"), ([("drop", 2.0)], "must map")):
        with pytest.raises(ValueError, match=match):
            TrainConfig(decision_weight=bad)


def test_jiu_train_decision_weight_flag(tmp_path):
    import argparse

    from jiu_env.learn import pipeline

    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    args = p.parse_args([str(tmp_path), "--decision-weight", "capture=3", "--decision-weight", "drop=2.5"])
    assert pipeline.settings(args, R6)["train"]["decision_weight"] == {"capture": 3.0, "drop": 2.5}
    assert pipeline.settings(p.parse_args([str(tmp_path)]), R6)["train"]["decision_weight"] == {}
    for bad in ("capture", "jump=2", "capture=x", "capture=0", "capture=inf"):
        with pytest.raises(SystemExit):
            p.parse_args([str(tmp_path), "--decision-weight", bad])


def test_deepen_computes_the_same_function_and_trains_from_it(trained6, tmp_path):
    from jiu_env.bots.network import build_net, deepen, load_network, save_checkpoint

    out, data, rules, cfg = trained6
    small, _, _ = load_network(out / "net.pt")
    big = deepen(small, cfg.blocks + 2)
    assert big.config["blocks"] == cfg.blocks + 2 and big.config["channels"] == cfg.channels
    x = torch.from_numpy(np.ascontiguousarray(data.planes[:64].transpose(0, 3, 1, 2)).astype(np.float32) / 240)
    for mode in ("eval", "train"):  # batch norm with running or with batch statistics
        getattr(small, mode)(), getattr(big, mode)()
        with torch.no_grad():
            (la, va), (lb, vb) = small(x), big(x)
        torch.testing.assert_close(la, lb, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(va, vb, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="deepened"):
        deepen(small, cfg.blocks - 1)
    # the run: --init with fewer blocks starts the deeper network from those weights (lr 1e-9 all but keeps
    # them); fewer blocks or another width are refused
    deeper = dataclasses.replace(cfg, blocks=cfg.blocks + 1, steps=2, eval_every=1, save_every=1, lr=1e-9)
    train(data, rules, tmp_path / "deep", deeper, progress=False, snapshot_every=None, init=out / "net.pt")
    st = torch.load(tmp_path / "deep" / "state.pt", weights_only=False)
    assert st["config"]["blocks"] == cfg.blocks + 1
    trained = build_net(cfg.channels, cfg.blocks + 1)
    trained.load_state_dict(st["net"])
    trained.train(), small.train()  # batch statistics (the running ones moved in training)
    with torch.no_grad():
        torch.testing.assert_close(trained(x)[0], small(x)[0], rtol=1e-5, atol=1e-5)
    save_checkpoint(tmp_path / "wide.pt", build_net(cfg.channels + 1, cfg.blocks), rules)
    with pytest.raises(ValueError, match="cannot start this run"):
        train(data, rules, tmp_path / "bad", dataclasses.replace(cfg, blocks=cfg.blocks - 1), progress=False,
              snapshot_every=None, init=out / "net.pt")
    with pytest.raises(ValueError, match="cannot start this run"):
        train(data, rules, tmp_path / "bad2", cfg, progress=False, snapshot_every=None, init=tmp_path / "wide.pt")


def test_bf16_precision_trains_close_to_fp32(trained6, tmp_path):
    out, data, rules, cfg = trained6
    fp32 = torch.load(out / "state.pt", weights_only=False)["net"]
    bf = dataclasses.replace(cfg, precision="bf16")
    train(data, rules, tmp_path / "a", bf, progress=False, snapshot_every=None)
    train(data, rules, tmp_path / "b", bf, progress=False, snapshot_every=None, stop_after=17)
    train(data, rules, tmp_path / "b", bf, progress=False, snapshot_every=None)
    a = torch.load(tmp_path / "a" / "state.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "state.pt", weights_only=False)["net"]
    assert a["config"]["precision"] == "bf16" and a["net"]["stem.0.weight"].dtype == torch.float32
    assert all(torch.equal(a["net"][k], b[k]) for k in b)  # deterministic and resumable in bf16 too
    # bf16 arithmetic: other weights than float32's, but the same training (40 steps from one seed)
    w, w32 = a["net"]["stem.0.weight"], fp32["stem.0.weight"]
    assert not torch.equal(w, w32)
    assert float((w - w32).norm() / w32.norm()) < 0.05
    curve = list(csv.DictReader(open(tmp_path / "a" / "curve.csv", encoding="utf-8")))
    ref = list(csv.DictReader(open(out / "curve.csv", encoding="utf-8")))
    assert abs(float(curve[-1]["val_policy_loss"]) - float(ref[-1]["val_policy_loss"])) < 0.02 * float(ref[-1]["val_policy_loss"])
    with pytest.raises(ValueError, match="other settings"):  # a run does not change its arithmetic on resume
        train(data, rules, out, bf, progress=False)
    with pytest.raises(ValueError, match="precision"):
        TrainConfig(precision="fp16")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (`--device cuda`); CI has none")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_training_on_a_gpu_matches_the_cpu_and_its_files_work_anywhere(trained6, tmp_path, precision):
    """`jiu train --device cuda`: the same training as on the CPU (other arithmetic, so close, not equal), a
    checkpoint of CPU tensors that plays on a machine without a GPU, and a state that resumes on the CPU."""
    from jiu_env.bots.network import load_checkpoint

    out, data, rules, cfg = trained6
    cfg = dataclasses.replace(cfg, precision=precision)
    cpu_run, gpu_run, moved = tmp_path / "cpu", tmp_path / "gpu", tmp_path / "moved"
    train(data, rules, cpu_run, cfg, progress=False, snapshot_every=None)
    train(data, rules, gpu_run, cfg, device="cuda", progress=False, snapshot_every=None)
    ref = torch.load(cpu_run / "state.pt", weights_only=False)["net"]
    got = torch.load(gpu_run / "state.pt", map_location="cpu", weights_only=False)["net"]
    for k in ("stem.0.weight", "policy.weight", "value.0.weight"):
        assert float((got[k] - ref[k]).norm() / ref[k].norm()) < 0.05, k
    curve = list(csv.DictReader(open(gpu_run / "curve.csv", encoding="utf-8")))
    ref_curve = list(csv.DictReader(open(cpu_run / "curve.csv", encoding="utf-8")))
    assert [r["step"] for r in curve] == [r["step"] for r in ref_curve]
    a, b = float(curve[-1]["val_policy_loss"]), float(ref_curve[-1]["val_policy_loss"])
    assert abs(a - b) < 0.02 * b
    # the checkpoint holds CPU tensors and computes on the CPU what it computes on the GPU
    ckpt = torch.load(gpu_run / "net.pt", weights_only=False)
    assert all(v.device.type == "cpu" for v in ckpt["state_dict"].values())
    net, _ = load_checkpoint(gpu_run / "net.pt")
    x = torch.rand(5, NUM_PLANES, 6, 6)
    with torch.inference_mode():
        on_cpu = net(x)
        on_gpu = net.to("cuda")(x.to("cuda"))
    for p, q in zip(on_cpu, on_gpu):
        assert torch.allclose(p, q.cpu(), rtol=1e-3, atol=1e-3)
    g = play_game(rules, make_bot(f"policy:{gpu_run / 'net.pt'}", seed=1), "random", seed=2)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    # a run stopped on the GPU finishes on the CPU (the state loads onto the device it resumes on)
    train(data, rules, moved, cfg, device="cuda", progress=False, snapshot_every=None, stop_after=17)
    last = train(data, rules, moved, cfg, device="cpu", progress=False, snapshot_every=None)
    assert last["step"] == cfg.steps
    assert abs(float(last["val_policy_loss"]) - b) < 0.02 * b


def test_checkpoint_round_trips(trained6):
    from jiu_env.bots.alphazero import load_checkpoint, save_checkpoint

    out, data, rules, _ = trained6
    net, meta = load_checkpoint(out / "net.pt")
    assert meta["rules"] == rules.to_dict() and meta["meta"]["kind"] == "policy-value"
    x = torch.rand(3, NUM_PLANES, 6, 6)
    save_checkpoint(out / "copy.pt", net, rules, meta["meta"])
    twin, _ = load_checkpoint(out / "copy.pt")
    with torch.inference_mode():
        for p, q in zip(net(x), twin(x)):
            assert torch.equal(p, q)


def test_policy_player_plays_legal_games_and_refuses_other_rules(trained6):
    out, _, rules, _ = trained6
    bot = make_bot(f"policy:{out / 'net.pt'}", seed=1)
    g = play_game(rules, bot, "random", seed=2)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    g = play_game(rules, "greedy", make_bot(f"policy:checkpoint={out / 'net.pt'},temperature=1", seed=3), seed=4)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    with pytest.raises(ValueError, match=r"board_size|H_N=8 \(network: 6\)"):
        bot.step(Rules.make("competitive", board_size=8).new_state())
    with pytest.raises(ValueError, match="H_MAXT"):
        bot.step(Rules.make("competitive", board_size=6, max_battle_turns=50).new_state())


def _battle_and_placement_states(rules, seed):
    """A placement position and a battle position of one random game."""
    rng = np.random.default_rng(seed)
    s = rules.new_state()
    out = []
    while s[V.H_PHASE] != V.PH_OVER and len(out) < 2:
        if (s[V.H_PHASE] == V.PH_PLACEMENT and not out and s[V.H_PLACED] >= 5) or (
                s[V.H_PHASE] == V.PH_BATTLE and len(out) == 1 and s[V.H_TURNS] >= 3):
            out.append(s.copy())
        acts = legal_actions(s)
        K.apply_action(s, int(acts[rng.integers(acts.size)]))
    return out


def test_policy_symmetries_average_the_network_over_the_rules_symmetries(trained6):
    """``symmetries=1``: the mean log-probability of each legal action over ``symmetries_for``, each
    symmetry's answer read at the mapped action of the mapped position; and the player is equivariant."""
    out, _, rules, _ = trained6
    plain = make_bot(f"policy:{out / 'net.pt'}")
    avg = make_bot(f"policy:checkpoint={out / 'net.pt'},symmetries=1")
    states = _battle_and_placement_states(rules, 5)
    assert [int(s[V.H_PHASE]) for s in states] == [V.PH_PLACEMENT, V.PH_BATTLE]
    for s in states:
        acts = legal_actions(s)
        syms = symmetries_for(s)
        assert len(syms) == (4 if s[V.H_PHASE] == V.PH_PLACEMENT else 8)
        want = np.zeros(acts.size)
        for g in syms:
            t = transform_state(s, g)
            logits, _ = plain.logits_and_value(t)
            mapped = np.array([transform_action(int(a), g, 6) for a in acts])
            assert set(mapped) == set(legal_actions(t).tolist())
            x = logits[mapped].astype(np.float64)
            want += x - np.log(np.exp(x - x.max()).sum()) - x.max()
        got = avg.mean_log_policy(s, acts)
        np.testing.assert_allclose(got, want / len(syms), rtol=1e-4, atol=1e-4)
        assert avg.step(s.copy()) == int(acts[np.argmax(got)])
        # exactly equivariant: the same choice, mapped, in every mapped position (ties aside)
        if np.sort(got)[-1] - np.sort(got)[-2] > 1e-3:
            for g in syms:
                assert avg.step(transform_state(s, g)) == transform_action(avg.step(s.copy()), g, 6)
    with pytest.raises(ValueError, match="symmetries must be an int >= 0 and <= 1"):
        make_bot(f"policy:checkpoint={out / 'net.pt'},symmetries=2")
    g = play_game(rules, avg, "random", seed=2)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)


def test_policy_plays_the_battle_with_its_battle_network(trained6, tmp_path):
    """The battle network plays battle positions only; the placement stays the other network's, exactly."""
    from jiu_env.bots.network import load_network, save_checkpoint
    from jiu_env.bots.policy import PolicyBot

    out, _, rules, _ = trained6
    net, data, _ = load_network(out / "net.pt")
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p))  # another network under the same rules
    save_checkpoint(tmp_path / "battle.pt", net, rules, data.get("meta"))
    main, battle = f"checkpoint={out / 'net.pt'}", f"checkpoint={tmp_path / 'battle.pt'}"
    pair = make_bot(f"policy:{main},battle_checkpoint={tmp_path / 'battle.pt'}")
    place_state, battle_state = _battle_and_placement_states(rules, 5)
    for s, want in ((place_state, main), (battle_state, battle)):
        np.testing.assert_array_equal(pair.logits_and_value(s)[0], make_bot(f"policy:{want}").logits_and_value(s)[0])
    assert not np.array_equal(make_bot(f"policy:{main}").logits_and_value(battle_state)[0],
                              pair.logits_and_value(battle_state)[0])
    one = make_bot(f"policy:{main},battle_checkpoint=none")
    np.testing.assert_array_equal(one.logits_and_value(battle_state)[0],
                                  make_bot(f"policy:{main}").logits_and_value(battle_state)[0])
    assert pair.version_key() != make_bot(f"policy:{main}").version_key()
    g = play_game(rules, pair, "random", seed=2)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    # a battle network under other rules is refused at the first battle position, not played
    save_checkpoint(tmp_path / "other.pt", net, Rules.make("competitive", board_size=6, max_battle_turns=50))
    odd = make_bot(f"policy:{main},battle_checkpoint={tmp_path / 'other.pt'}")
    odd.step(place_state.copy())
    with pytest.raises(ValueError, match="other.pt cannot play this position.*H_MAXT"):
        odd.step(battle_state.copy())
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        make_bot(f"policy:{main},battle_checkpoint={tmp_path / 'missing.pt'}")
    with pytest.raises(ValueError, match="battle_checkpoint must be a path or 'none'"):
        PolicyBot(battle_checkpoint="")


def test_default_policy_uses_the_shipped_battle_network_on_14x14():
    """make_bot("policy") on 14x14: the shipped placement network places, the shipped battle network battles."""
    from jiu_env.bots.network import SHIPPED, SHIPPED_BATTLE

    rules = Rules.make("competitive", board_size=14)
    place_state, battle_state = _battle_and_placement_states(rules, 7)
    bot = make_bot("policy")
    for s, path in ((place_state, SHIPPED[14]), (battle_state, SHIPPED_BATTLE[14])):
        np.testing.assert_array_equal(bot.logits_and_value(s)[0],
                                      make_bot(f"policy:checkpoint={path},battle_checkpoint=none").logits_and_value(s)[0])
    assert "policy_jiu14_battle.pt" in repr(bot)


def test_policy_player_names_a_bad_checkpoint(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="bad.pt"):
        make_bot(f"policy:{bad}")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        make_bot(f"policy:{tmp_path / 'missing.pt'}")


def test_policy_without_a_shipped_network_for_the_size_says_so():
    """And says so without changing the bot: a battle position of a size with no network shipped turned
    the battle network off for good, so that the bot then battled 14x14 with its placement network."""
    bot = make_bot("policy")
    with pytest.raises(FileNotFoundError, match="no network is shipped for 5x5"):
        bot.step(Rules.make("competitive", board_size=5).new_state())
    with pytest.raises(FileNotFoundError, match="no network is shipped for 6x6"):
        bot.step(_battle_and_placement_states(R6, 3)[1])
    battle14 = _battle_and_placement_states(Rules.make("competitive", board_size=14), 7)[1]
    np.testing.assert_array_equal(bot.logits_and_value(battle14)[0], make_bot("policy").logits_and_value(battle14)[0])
    assert bot.battle_net is not None


def test_policy_checkpoint_must_be_a_path_and_a_failed_load_keeps_torchs_threads(tmp_path):
    """checkpoint= (an unset shell variable) and checkpoint=0 played the shipped network; a file that fails to
    load changed the process's torch threads all the same."""
    for spec in ("policy:checkpoint=", "policy:checkpoint=0"):
        with pytest.raises(ValueError, match="policy checkpoint must be a path to a network file"):
            make_bot(spec)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with pytest.raises(FileNotFoundError, match="network checkpoint .*missing.pt not found"):
            make_bot(f"policy:checkpoint={tmp_path / 'missing.pt'},threads=1")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_a_policy_player_pickles_with_its_networks():
    """Its network's class is made inside build_net: pickle could not name it once a network was loaded."""
    import pickle

    rules = Rules.make("competitive", board_size=14)
    place_state, battle_state = _battle_and_placement_states(rules, 7)
    bot = make_bot("policy", seed=0)
    want = [bot.step(s.copy()) for s in (place_state, battle_state)]
    again = pickle.loads(pickle.dumps(bot))
    assert again.net is not bot.net and again.battle_net is not None and not again.net.training
    assert [again.step(s.copy()) for s in (place_state, battle_state)] == want
    np.testing.assert_array_equal(again.logits_and_value(battle_state)[0], bot.logits_and_value(battle_state)[0])
    assert pickle.loads(pickle.dumps(make_bot("policy"))).net is None  # not loaded yet: loaded on first use
    weights = sum(p.numel() * 4 for net in (bot.net, bot.battle_net) for p in net.parameters())
    assert len(pickle.dumps(bot)) < 1.1 * weights  # each network's weights once (not again in bot.data)
    import copy

    assert copy.copy(bot).net is bot.net  # a shallow copy shares the networks


def test_a_policy_player_with_a_bad_seed_leaves_torchs_threads_alone():
    from jiu_env.bots.network import SHIPPED
    from jiu_env.bots.policy import PolicyBot

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with pytest.raises(ValueError, match="seed must be an int >= 0"):
            PolicyBot(seed=-1, checkpoint=SHIPPED[14], threads=1)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_shipped_networks_hold_cpu_tensors():
    """A network trained on a GPU is shipped with its weights on the CPU: plain torch.load works anywhere."""
    from jiu_env.bots.alphazero import DEFAULT_CHECKPOINT
    from jiu_env.bots.policy import SHIPPED, SHIPPED_BATTLE

    for path in [DEFAULT_CHECKPOINT, *SHIPPED.values(), *SHIPPED_BATTLE.values()]:
        data = torch.load(path, weights_only=True)  # no map_location: a CUDA tensor would fail here
        assert all(v.device.type == "cpu" for v in data["state_dict"].values()), path


def test_jiu_train_quick_runs_end_to_end_and_resumes(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "jiu_env.cli", "train", str(tmp_path / "q"), "--quick"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["data"]["games"] == 8 and pathlib.Path(report["train"]["checkpoint"]).exists()
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["data"]["cpu_seconds_now"] < report["data"]["cpu_seconds"] + 1
    assert "[1/" not in again.stderr  # no chunk made twice
    bad = subprocess.run([*cmd, "--rule", "board_size"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_ray_backend_makes_the_same_chunks_as_the_local_one(data6, tmp_path):
    from conftest import loopback_ray_cluster

    with loopback_ray_cluster() as c:
        generate(tmp_path, CFG6, 6, backend="ray", address=c.address, progress=False)
    local = read_manifest(data6)["chunks"]
    remote = read_manifest(tmp_path)["chunks"]
    assert {k: v["sha256"] for k, v in remote.items()} == {k: v["sha256"] for k, v in local.items()}


def test_bad_backend_is_refused(tmp_path):
    with pytest.raises(ValueError, match="backend"):
        generate(tmp_path, CFG6, 2, backend="slurm", progress=False)


def test_alphazero_plays_a_policy_value_checkpoint_with_sims_or_time(trained6):
    from jiu_env.bots.alphazero import AlphaZeroBot

    out, _, rules, _ = trained6
    bot = make_bot(f"alphazero:checkpoint={out / 'net.pt'},sims=8", seed=1)
    assert bot.battle == "net"  # a policy-value network plays the whole game
    g = play_game(rules, bot, "greedy", seed=5)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    timed = AlphaZeroBot(checkpoint=str(out / "net.pt"), time=0.05, seed=1)
    assert timed.sims == 4000 and timed.time == 0.05
    s = rules.new_state()
    for _ in range(2):  # the two centre ends; then a free placement, with many choices
        K.apply_action(s, int(np.flatnonzero(_mask(s))[0]))
    searcher = timed._searcher(s)
    rounds = []  # one network evaluation (a batch of leaves) per round of the search
    evaluator = searcher.searcher.evaluator
    real = evaluator.evaluate
    evaluator.evaluate = lambda states: (rounds.append(1), real(states))[1]
    assert K.is_legal(s, timed.step(s))
    assert 1 <= len(rounds) < 4000  # stopped by the deadline, not by the simulation cap
    with pytest.raises(ValueError, match="time"):
        AlphaZeroBot(checkpoint=str(out / "net.pt"), time=0)


def _mask(s):
    buf = np.empty(K.num_actions(int(s[K.H_N])), np.int64)
    k = K.legal_actions(s, buf)
    m = np.zeros(buf.size, bool)
    m[buf[:k]] = True
    return m


def test_snapshots_are_the_networks_of_their_steps_and_rate_over_training(data6, tmp_path):
    """``snapshot_every`` keeps the network of those steps; benchmarks/learning_elo.py rates each against anchors."""
    from jiu_env.bots.alphazero import load_checkpoint

    data, rules = load_positions([data6])
    cfg = TrainConfig(channels=8, blocks=1, batch=16, steps=20, eval_every=10, save_every=5)
    train(data, rules, tmp_path / "net", cfg, progress=False, snapshot_every=10, stop_after=10)
    first = (tmp_path / "net" / "snapshots" / "net-0000010.pt").read_bytes()
    assert first == (tmp_path / "net" / "net.pt").read_bytes()
    train(data, rules, tmp_path / "net", cfg, progress=False, snapshot_every=10)
    snaps = sorted(p.name for p in (tmp_path / "net" / "snapshots").iterdir())
    assert snaps == ["net-0000010.pt", "net-0000020.pt"]
    assert (tmp_path / "net" / "snapshots" / "net-0000010.pt").read_bytes() == first  # not rewritten on resume
    assert load_checkpoint(tmp_path / "net" / "snapshots" / "net-0000020.pt")[1]["meta"]["steps"] == 20

    script = pathlib.Path(__file__).parents[1] / "benchmarks" / "learning_elo.py"
    cmd = [sys.executable, str(script), str(tmp_path / "net"), "--out", str(tmp_path / "elo"), "--games", "2",
           "--anchor-games", "2", "--anchors", "random", "greedy", "--random-opening", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(tmp_path / "elo" / "elo.csv", encoding="utf-8")))
    assert [int(r["step"]) for r in rows] == [10, 20]
    assert all(int(r["games"]) == 4 for r in rows)  # 2 games against each of the 2 anchors
    assert (tmp_path / "elo" / "elo.png").stat().st_size > 0


def test_jiu_train_players_flag_reaches_the_data_run(tmp_path):
    import argparse

    from jiu_env.learn import pipeline

    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    args = p.parse_args([str(tmp_path), "--stage", "data", "--games", "2", "--chunk-games", "2", "--explore", "0",
                         "--teacher", "alphabeta:depth=1,tt_bits=14", "--players", "greedy", "random"])
    report = pipeline.run_pipeline(tmp_path, pipeline.settings(args, R6), "data", progress=False)
    assert report["data"]["games"] == 2
    assert read_manifest(tmp_path / "data")["config"]["players"] == ["greedy", "random"]
    args = p.parse_args([str(tmp_path), "--stage", "data", "--games", "2", "--chunk-games", "2", "--explore", "0",
                         "--teacher", "alphabeta:depth=1,tt_bits=14"])
    with pytest.raises(ValueError, match="other settings"):  # the same directory without --players is refused
        pipeline.run_pipeline(tmp_path, pipeline.settings(args, R6), "data", progress=False)


def test_jiu_train_soft_flag_reaches_the_data_run(tmp_path):
    import argparse

    from jiu_env.learn import pipeline

    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    args = p.parse_args([str(tmp_path), "--stage", "data", "--games", "2", "--chunk-games", "2", "--soft", "40",
                         "--teacher", "alphabeta:depth=1,tt_bits=14,root_margin=160"])
    pipeline.run_pipeline(tmp_path, pipeline.settings(args, R6), "data", progress=False)
    assert read_manifest(tmp_path / "data")["config"]["soft"] == 40.0
    assert all(len(g["pi_actions"]) == int((g["labels"] >= 0).sum()) for g in load_games(tmp_path / "data"))


def test_placement_data_trains_each_phase_on_its_own_teacher(data6, tmp_path):
    import argparse

    from jiu_env.learn import pipeline

    # a phases teacher labels each phase with its own engine (and reports its root scores: soft labels work)
    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    teacher = "phases:alphabeta:depth=1,tt_bits=14,root_margin=160+alphabeta:depth=1,tt_bits=14,root_margin=160"
    args = p.parse_args([str(tmp_path / "place"), "--stage", "data", "--games", "2", "--chunk-games", "2",
                         "--teacher", teacher, "--soft", "40"])
    pipeline.run_pipeline(tmp_path / "place", pipeline.settings(args, R6), "data", progress=False)
    games = list(load_games(tmp_path / "place" / "data"))
    assert all((g["values"][g["labels"] >= 0] != NO_VALUE).all() for g in games)
    # the phase filter keeps exactly one phase's positions of each game, in order
    both, _ = load_positions([data6])
    for phase, want in (("placement", both.placement), ("battle", ~both.placement)):
        part, _ = load_positions([data6], phase=phase, workers=2 if phase == "battle" else 1)
        assert np.array_equal(part.action, both.action[want]) and np.array_equal(part.planes, both.planes[want])
    with pytest.raises(ValueError, match="phase must be"):
        load_positions([data6], phase="opening")
    # --placement-data: battle positions from the run's data, placement positions from the other run
    place, _ = load_positions([tmp_path / "place" / "data"], phase="placement")
    args = p.parse_args([str(tmp_path / "run"), "--stage", "train", "--data", str(data6), "--placement-data",
                         str(tmp_path / "place" / "data"), "--steps", "3", "--batch", "8", "--channels", "4",
                         "--blocks", "1", "--eval-every", "3", "--save-every", "3"])
    report = pipeline.run_pipeline(tmp_path / "run", pipeline.settings(args, R6), "train", progress=False,
                                   extra_data=args.data, placement_data=args.placement_data)
    assert report["train"]["data_positions"] == int((~both.placement).sum()) + len(place)
    meta = torch.load(tmp_path / "run" / "net" / "net.pt", weights_only=False)["meta"]
    assert meta["placement_data"] == [str(tmp_path / "place" / "data")]
    # the checkpoint names the teachers of the data, not the command line's default --teacher
    assert meta["teachers"] == [CFG6.teacher] and meta["placement_teachers"] == [teacher]
    assert meta["data_games"] == 6 + 2  # the games of both runs' manifests
    # the same run directory refuses the same data without the split (other positions)
    args = p.parse_args([str(tmp_path / "run"), "--stage", "train", "--data", str(data6), "--data",
                         str(tmp_path / "place" / "data"), "--steps", "3", "--batch", "8", "--channels", "4",
                         "--blocks", "1", "--eval-every", "3", "--save-every", "3"])
    with pytest.raises(ValueError, match="other data"):
        pipeline.run_pipeline(tmp_path / "run", pipeline.settings(args, R6), "train", progress=False,
                              extra_data=args.data)
