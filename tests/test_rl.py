"""``jiu train --stage rl``: PPO on the network's own games (jiu_env.learn.rl)."""

import csv
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from jiu_env import kernel as K  # noqa: E402
from jiu_env import vocab as V  # noqa: E402
from jiu_env.bots import make_bot  # noqa: E402
from jiu_env.bots.base import legal_actions  # noqa: E402
from jiu_env.bots.network import build_net, load_network, save_checkpoint  # noqa: E402
from jiu_env.learn.rl import FIELDS, RLConfig, gae, iteration_seeds, play_stream, read_curve, run_rl  # noqa: E402
from jiu_env.rules import Rules  # noqa: E402

R6 = Rules.make("competitive", board_size=6)
SMALL = dict(rules=R6.to_dict(), games=6, streams=2, concurrent=2, minibatch=64, value_warmup=1,
             snapshot_every=2, opponent="greedy", random_opening=2)


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    """Two small untrained 6x6 networks: the learner and a placement network."""
    d = tmp_path_factory.mktemp("rl")
    for name, seed in (("init.pt", 0), ("place.pt", 1)):
        torch.manual_seed(seed)
        save_checkpoint(d / name, build_net(channels=8, blocks=1), R6, {"kind": "policy-value", "phase": "both"})
    return d


def _rows(out):
    """The curve's rows without their times (the only values that differ between equal runs)."""
    return [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in read_curve(out / "curve.csv")]


def test_gae():
    v = np.array([0.1, -0.2, 0.5])
    np.testing.assert_allclose(gae(v, 1.0, 1.0), 1.0 - v)  # lambda 1: the result less the value
    np.testing.assert_allclose(gae(v, 1.0, 0.0), [-0.3, 0.7, 0.5])  # lambda 0: one-step differences
    d = np.array([-0.3, 0.7, 0.5])
    np.testing.assert_allclose(gae(v, 1.0, 0.5), [d[0] + 0.5 * d[1] + 0.25 * d[2], d[1] + 0.5 * d[2], d[2]])


def test_iteration_seeds_alternate_colours_and_differ_by_iteration(nets):
    cfg = RLConfig.for_nets(nets / "init.pt", **SMALL)
    a, b = iteration_seeds(cfg, 0), iteration_seeds(cfg, 1)
    assert [s % 2 for s in a] == [0, 1] * 3 and a != b and len(set(a)) == 6
    assert iteration_seeds(cfg, 0) == a


def test_stream_games_are_legal_and_record_the_learnt_decisions(nets):
    cfg = RLConfig.for_nets(nets / "init.pt", nets / "place.pt", **SMALL)
    net, _, _ = load_network(nets / "init.pt")
    from jiu_env.learn.rl import net_bytes

    seeds = iteration_seeds(cfg, 0)[:3]
    games, cpu = play_stream(cfg.to_dict(), net_bytes(net), seeds)
    assert sorted(g["seed"] for g in games) == sorted(seeds) and cpu > 0
    again, _ = play_stream(cfg.to_dict(), net_bytes(net), seeds)
    for g in games:
        h = next(x for x in again if x["seed"] == g["seed"])
        assert np.array_equal(g["actions"], h["actions"]) and np.array_equal(g["logp"], h["logp"])
        assert g["me"] == (V.WHITE if g["seed"] % 2 == 0 else V.BLACK) and g["reward"] in (-1.0, 0.0, 1.0)
        assert len(g["states"]) == len(g["actions"]) == len(g["logp"]) == len(g["values"]) > 0
        for s, a, lp in zip(g["states"], g["actions"], g["logp"]):
            # a learnt decision: the learner's battle move among more than one legal action
            assert s[V.H_PHASE] == V.PH_BATTLE and int(s[V.H_TO_MOVE]) == g["me"]
            assert K.is_legal(s, int(a)) and legal_actions(s).size > 1 and lp <= 0


def test_run_resumes_with_nothing_lost_or_twice(nets, tmp_path, monkeypatch):
    """Straight to 3 iterations == stopped after 1, killed in the middle of the 2nd, started again to 3."""
    cfg = RLConfig.for_nets(nets / "init.pt", nets / "place.pt", **SMALL)
    rows = run_rl(tmp_path / "a", cfg, 3, progress=False)
    assert [r["iteration"] for r in rows] == [1, 2, 3] and all(r["games"] == 6 for r in rows)
    assert rows[0]["clipped"] == 0.0 and abs(rows[0]["kl"]) < 1e-6  # the value warm-up: the policy stays
    assert sorted((tmp_path / "a").iterdir()) == [tmp_path / "a" / f for f in
                                                 ("curve.csv", "net.pt", "snap-0002.pt", "state.pt")]
    run_rl(tmp_path / "b", cfg, 1, progress=False)
    init = load_network(nets / "init.pt")[0].state_dict()
    after = {p: torch.load(p / "state.pt", weights_only=True)["net"] for p in (tmp_path / "a", tmp_path / "b")}
    for k, v in init.items():  # the warm-up iteration trains the value head's own layers alone
        if v.is_floating_point() and "running" not in k:
            assert torch.equal(v, after[tmp_path / "b"][k]) != k.startswith("value."), k
    assert not torch.equal(init["policy.weight"], after[tmp_path / "a"]["policy.weight"])  # then PPO
    import jiu_env.learn.rl as rl

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(rl, "learn", killed)  # the second iteration's games are played, then it dies
    with pytest.raises(KeyboardInterrupt):
        run_rl(tmp_path / "b", cfg, 3, progress=False)
    monkeypatch.undo()
    assert len(read_curve(tmp_path / "b" / "curve.csv")) == 1
    run_rl(tmp_path / "b", cfg, 3, progress=False)
    assert _rows(tmp_path / "a") == _rows(tmp_path / "b")
    a, b = (torch.load(p / "state.pt", weights_only=True) for p in (tmp_path / "a", tmp_path / "b"))
    assert all(torch.equal(a["net"][k], b["net"][k]) for k in a["net"])
    with open(tmp_path / "a" / "curve.csv", newline="") as f:
        assert tuple(next(csv.reader(f))) == FIELDS
    # the learner's checkpoint is a player's: it plays, and records how it was made
    net, data, rules = load_network(tmp_path / "a" / "net.pt")
    assert rules == R6 and data["meta"]["iteration"] == 3 and data["meta"]["games"] == 18
    assert data["meta"]["opponent"] == "greedy" and data["meta"]["stage"] == "rl"
    assert make_bot(f"policy:checkpoint={tmp_path / 'a' / 'net.pt'}").step(R6.new_state()) >= 0
    assert run_rl(tmp_path / "a", cfg, 3, progress=False) == read_curve(tmp_path / "a" / "curve.csv")  # done: nothing


def test_local_pool_plays_the_same_games(nets, tmp_path):
    """The games depend on the streams, not on the processes that play them."""
    cfg = RLConfig.for_nets(nets / "init.pt", **SMALL)
    run_rl(tmp_path / "one", cfg, 2, progress=False)
    run_rl(tmp_path / "two", cfg, 2, workers=2, progress=False)
    assert _rows(tmp_path / "one") == _rows(tmp_path / "two")


def test_bad_settings_are_refused(nets, tmp_path):
    cfg = RLConfig.for_nets(nets / "init.pt", **SMALL)
    for bad, match in ((dict(games=0), "games must be an int in 1"), (dict(streams=7), r"streams \(7\) must be at most"),
                       (dict(temperature=0.0), "temperature must be a number > 0.0 and <= 100.0, not 0.0"),
                       (dict(precision="fp16"), "precision must be one of"),
                       (dict(gae_lambda=1.5), "gae_lambda must be"), (dict(opponent="nobot"), "nobot")):
        with pytest.raises(ValueError, match=match):
            RLConfig.for_nets(nets / "init.pt", **{**SMALL, **bad})
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        RLConfig.for_nets(tmp_path / "missing.pt", **SMALL)
    run_rl(tmp_path / "r", cfg, 1, progress=False)
    other = RLConfig.for_nets(nets / "init.pt", **{**SMALL, "temperature": 0.5})
    with pytest.raises(ValueError, match=r"other settings \(temperature\)"):
        run_rl(tmp_path / "r", other, 2, progress=False)
    # a network of other rules is refused before a game, naming which
    r8 = RLConfig.for_nets(nets / "init.pt", **{**SMALL, "rules": Rules.make("competitive", board_size=8).to_dict()})
    with pytest.raises(ValueError, match="init checkpoint was trained under other rules"):
        run_rl(tmp_path / "r8", r8, 1, progress=False)
    assert not (tmp_path / "r8").exists()
    # a changed network file is refused: a run never changes networks half-way
    changed = tmp_path / "changed.pt"
    changed.write_bytes((nets / "init.pt").read_bytes())
    c = RLConfig.for_nets(changed, **SMALL)
    torch.manual_seed(5)
    save_checkpoint(changed, build_net(channels=8, blocks=1), R6)
    with pytest.raises(ValueError, match="has changed since the run started"):
        run_rl(tmp_path / "c", c, 1, progress=False)
    with pytest.raises(ValueError, match="iterations must be an int"):
        run_rl(tmp_path / "r", cfg, -1, progress=False)


def test_jiu_train_stage_rl_quick(nets, tmp_path, capsys):
    """``jiu train DIR --quick --stage rl --init NET``: two small iterations on 6x6, a JSON report."""
    from jiu_env.cli import main

    rc = main(["train", str(tmp_path / "q"), "--quick", "--stage", "rl", "--init", str(nets / "init.pt"),
               "--opponent", "greedy"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rl"]["iterations"] == 2 and report["rl"]["games"] == 8
    assert (tmp_path / "q" / "rl" / "net.pt").exists()
    st = torch.load(tmp_path / "q" / "rl" / "state.pt", weights_only=True)
    assert st["config"]["concurrent"] == 4 and st["config"]["lr"] == 2e-5 and st["config"]["random_opening"] == 4
    rc = main(["train", str(tmp_path / "q"), "--quick", "--stage", "rl", "--init", str(nets / "init.pt"),
               "--opponent", "greedy", "--temperature", "0.5"])
    assert rc == 2 and "other settings (temperature)" in capsys.readouterr().err
    rc = main(["train", str(tmp_path / "none"), "--quick", "--stage", "rl"])
    assert rc == 2 and "net.pt not found" in capsys.readouterr().err


def test_ray_backend_plays_the_same_games_as_the_local_one(nets, tmp_path):
    """The streams as Ray tasks on a two-node loopback cluster: the same curve and weights as played here."""
    from conftest import loopback_ray_cluster

    pytest.importorskip("ray")
    cfg = RLConfig.for_nets(nets / "init.pt", nets / "place.pt", **SMALL)
    run_rl(tmp_path / "local", cfg, 2, progress=False)
    with loopback_ray_cluster() as c:
        run_rl(tmp_path / "ray", cfg, 2, backend="ray", address=c.address, progress=False)
    assert _rows(tmp_path / "local") == _rows(tmp_path / "ray")
    a, b = (torch.load(tmp_path / d / "state.pt", weights_only=True)["net"] for d in ("local", "ray"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_default_placement_network_is_the_initial_one_not_the_learner(tmp_path):
    import torch

    from jiu_env.learn.rl import net_bytes

    torch.manual_seed(0)
    init = tmp_path / "init.pt"
    save_checkpoint(init, build_net(channels=8, blocks=1), R6, {"kind": "policy-value", "phase": "both"})
    cfg = RLConfig.for_nets(init, None, opponent="random", rules=R6.to_dict(), games=1, streams=1, concurrent=1,
                            random_opening=0).to_dict()
    placed = []
    for s in (1, 2):  # two learners: their battle weights differ, their placements must not
        torch.manual_seed(s)
        games, _ = play_stream(cfg, net_bytes(build_net(channels=8, blocks=1).eval()), [0])
        placed.append(games[0]["states"][0])  # the first learnt decision: the battle's first position
    assert np.array_equal(*placed)
