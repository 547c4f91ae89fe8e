"""Evaluation harness: Elo fit, tournament bookkeeping, seeds, resume, players, reports."""

import json
import os
import sys

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.evaluation import (
    TournamentConfig, bootstrap_elo, elo_diff, expected_score, fit_elo, load_config, make_player, run_game,
    run_tournament, schedule,
)
from jiu_env.evaluation.elo import ELO_PER_NAT
from jiu_env.evaluation.tournament import read_games
from jiu_env.records import GameRecord
from jiu_env.rules import Rules

SMALL = Rules.make("competitive", board_size=6, max_battle_turns=150).to_dict()


# ----------------------------------------------------------------------- Elo
def test_elo_two_players_75_percent():
    assert elo_diff(0.75) == pytest.approx(190.8485, abs=1e-3)
    fit = fit_elo(["a", "b"], [[0, 75], [25, 0]], prior_draws=0, anchor="b")
    assert fit["a"] == pytest.approx(190.8485, abs=1e-3)
    assert fit["b"] == 0.0 and fit.se[1] == 0.0
    # Fisher standard error of a binomial score: 400/ln10 / sqrt(n p (1 - p))
    assert fit.se[0] == pytest.approx(ELO_PER_NAT / np.sqrt(100 * 0.75 * 0.25), rel=1e-6)
    assert fit.lower[0] == pytest.approx(fit["a"] - 1.959964 * fit.se[0], rel=1e-6)
    # draws are half points: 50 wins + 50 draws + 0 losses is also 75%
    fit2 = fit_elo(["a", "b"], [[0, 50], [0, 0]], [[0, 50], [50, 0]], prior_draws=0, anchor="b")
    assert fit2["a"] == pytest.approx(190.8485, abs=1e-3)
    # the default prior (2 virtual draws per pair) barely moves a large sample
    fit3 = fit_elo(["a", "b"], [[0, 300], [100, 0]], anchor="b")
    assert fit3["a"] == pytest.approx(elo_diff(301 / 402), abs=1e-3)
    assert abs(fit3["a"] - 190.85) < 2.0


def test_elo_symmetric_results_give_equal_ratings():
    w = np.array([[0, 6, 6, 6], [6, 0, 6, 6], [6, 6, 0, 6], [6, 6, 6, 0]])
    d = np.full((4, 4), 3) - 3 * np.eye(4, dtype=int)
    fit = fit_elo(list("abcd"), w, d, anchor="mean")
    np.testing.assert_allclose(fit.ratings, 0.0, atol=1e-9)
    assert np.ptp(fit.se) < 1e-9 and fit.se[0] > 0
    # a cycle a > b > c > a with equal margins is symmetric too
    w = np.array([[0, 7, 3], [3, 0, 7], [7, 3, 0]])
    np.testing.assert_allclose(fit_elo(list("abc"), w, prior_draws=0).ratings, 0.0, atol=1e-9)


def test_elo_likelihood_equations_and_anchors():
    rng = np.random.default_rng(0)
    k = 5
    w = rng.integers(1, 20, size=(k, k)) * (1 - np.eye(k, dtype=int))
    d = rng.integers(0, 5, size=(k, k))
    d = np.triu(d, 1) + np.triu(d, 1).T
    names = [f"p{i}" for i in range(k)]
    fit = fit_elo(names, w, d, prior_draws=0, anchor="mean")
    assert abs(fit.ratings.sum()) < 1e-8
    # at the maximum each player's expected score equals its actual score
    n = w + w.T + d
    e = expected_score(fit.ratings[:, None] - fit.ratings[None, :])
    np.testing.assert_allclose(np.sum(n * e, axis=1), np.sum(w + 0.5 * d, axis=1), atol=1e-6)
    # another anchor only shifts the ratings; the anchor's interval is zero
    fit2 = fit_elo(names, w, d, prior_draws=0, anchor="p3")
    np.testing.assert_allclose(fit2.ratings, fit.ratings - fit.ratings[3], atol=1e-6)
    assert fit2.se[3] == 0.0 and fit2.lower[3] == fit2.upper[3] == 0.0
    # stronger results give a higher rating
    order = np.argsort(np.sum(w + 0.5 * d, axis=1) / np.sum(n, axis=1))
    assert list(np.argsort(fit.ratings)) == list(order)


def test_elo_edge_cases():
    with pytest.raises(ValueError, match="diverge"):
        fit_elo(["a", "b"], [[0, 10], [0, 0]], prior_draws=0)
    fit = fit_elo(["a", "b"], [[0, 10], [0, 0]], anchor="b")  # 10 wins + 1 virtual point of 12
    assert fit["a"] == pytest.approx(elo_diff(11 / 12), abs=1e-6)
    with pytest.raises(ValueError, match="connected"):
        fit_elo(list("abcd"), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
    with pytest.raises(ValueError, match="anchor"):
        fit_elo(["a", "b"], [[0, 1], [1, 0]], anchor="zz")
    with pytest.raises(ValueError, match="symmetric"):
        fit_elo(["a", "b"], [[0, 1], [1, 0]], [[0, 1], [0, 0]])


@pytest.mark.parametrize("kw, words", [
    (dict(names=["a", "a"]), "unique; repeated: a"),
    (dict(wins=[[0, float("nan")], [1, 0]]), "finite"),
    (dict(confidence=0.0), "confidence"),
    (dict(confidence=1.0), "confidence"),
    (dict(prior_draws=float("nan")), "prior_draws"),
    (dict(prior_draws="2"), "prior_draws must be a number, not str"),
    (dict(confidence=True), "confidence must be a number, not bool"),
    (dict(prior_draws=-1), "negative"),
])
def test_elo_fit_refuses_bad_arguments_by_name(kw, words):
    args = {"names": ["a", "b"], "wins": [[0, 3], [1, 0]], **kw}
    with pytest.raises((ValueError, TypeError), match=words):  # TypeError for what is not a number
        fit_elo(args.pop("names"), args.pop("wins"), **args)


def test_bootstrap_refuses_what_it_cannot_resample():
    w = [[0, 9], [1, 0]]
    assert fit_elo(["a", "b"], w, prior_draws=0).ratings[0] > 0  # the point fit works without the prior
    with pytest.raises(ValueError, match="bootstrap intervals need prior_draws > 0"):
        bootstrap_elo(["a", "b"], w, prior_draws=0, samples=50)  # some resample is a sweep: refused up front
    for samples, error in ((0, ValueError), (1, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="^samples must be an int >= 2, not "):
            bootstrap_elo(["a", "b"], w, samples=samples)


def test_a_pair_listed_twice_is_never_scheduled():
    cfg = TournamentConfig(players=["a=random", "b=random"], games=2, rules=SMALL, mode="gauntlet", challengers=["a"])
    cfg.challengers = ["a", "a"]  # changed after the checks (the config refuses it): the schedule still does
    with pytest.raises(ValueError, match="holds a pair twice"):
        schedule(cfg)


def test_bootstrap_is_seeded_and_close_to_fisher():
    w = [[0, 60, 80], [40, 0, 65], [20, 35, 0]]
    a = bootstrap_elo(list("abc"), w, anchor="c", samples=300, seed=5)
    b = bootstrap_elo(list("abc"), w, anchor="c", samples=300, seed=5)
    np.testing.assert_array_equal(a.lower, b.lower)
    f = fit_elo(list("abc"), w, anchor="c")
    np.testing.assert_allclose(a.ratings, f.ratings)
    assert np.all(a.lower <= a.ratings) and np.all(a.ratings <= a.upper)
    np.testing.assert_allclose(a.se[:2], f.se[:2], rtol=0.25)


# ---------------------------------------------------------------- scheduling
def test_schedule_colours_swapped_and_seeds():
    cfg = TournamentConfig(players=["random", "b=random", "c=random"], games=4, seed=3, rules=SMALL)
    tasks = schedule(cfg)
    assert len(tasks) == 3 * 4
    for a, b in cfg.pairs():
        ts = [t for t in tasks if t.pair == (a, b)]
        assert [t.white for t in ts] == [a, b, a, b]
        assert ts[0].seed == ts[1].seed and ts[2].seed == ts[3].seed and ts[0].seed != ts[2].seed
        # a player keeps its own seed when colours swap
        assert ts[0].white_seed == ts[1].black_seed and ts[0].black_seed == ts[1].white_seed
    # adding a player leaves the other pairs' games unchanged
    cfg2 = TournamentConfig(players=["random", "b=random", "c=random", "d=random"], games=4, seed=3, rules=SMALL)
    old = {t.id: t.fingerprint() for t in tasks}
    new = {t.id: t.fingerprint() for t in schedule(cfg2)}
    assert all(new[i] == f for i, f in old.items())
    g = TournamentConfig(players=["random", "b=random", "c=random"], games=2, mode="gauntlet", challengers=["c"])
    assert g.pairs() == [("c", "random"), ("c", "b")]


def test_unrated_players_stay_out_of_the_fit():
    cfg = TournamentConfig(players=["random", "b=random", "c=random"], games=2, seed=1, rules=SMALL,
                           unrated=["random"])
    assert cfg.anchor_name() == "b" and cfg.rated_names() == ["b", "c"]  # the first rated "random" spec
    res = run_tournament(cfg, workers=1)
    assert set(res.summary["elo"]["ratings"]) == {"b", "c"}
    assert res.summary["players"]["random"]["games"] == 4  # it still plays
    with pytest.raises(ValueError, match="anchor"):
        TournamentConfig(players=["random", "b=random"], unrated=["random"], anchor="random")


def test_config_validation_and_toml(tmp_path):
    with pytest.raises(ValueError, match="unique"):
        TournamentConfig(players=["random", "random"])
    with pytest.raises(ValueError, match="unknown tournament setting"):
        TournamentConfig.from_dict({"players": ["random", "b=random"], "gamez": 3})
    with pytest.raises(ValueError, match="challengers"):
        TournamentConfig(players=["random", "greedy"], mode="gauntlet")
    path = tmp_path / "t.toml"
    path.write_text('title = "t"\ngames_per_pair = 6\nseed = 9\nrandom_opening = 2\n'
                    '[rules]\nprofile = "competitive"\nboard_size = 6\n'
                    '[[players]]\nname = "r1"\nspec = "random"\n[[players]]\nspec = "random:"\nname = "r2"\n')
    cfg = load_config(path)
    assert cfg.games == 6 and cfg.seed == 9 and cfg.random_opening == 2 and cfg.rules["board_size"] == 6
    assert cfg.names == ["r1", "r2"] and cfg.anchor_name() == "r1"



# ---------------------------------------------------------------- shipped configs
def test_shipped_ladders_load_by_name_from_any_folder(tmp_path, monkeypatch):
    """``load_config("ladder")`` reads the config shipped in the package (no checkout needed); the files its
    players name stay relative to the current folder, and an optional player without its file is left out."""
    from jiu_env.evaluation.tournament import config_file, shipped_configs

    shipped = shipped_configs()
    assert set(shipped) == {"ladder", "ladder8", "ladder_time"}
    for path in shipped.values():
        assert os.path.isfile(path) and os.sep + os.path.join("jiu_env", "data", "ladders") + os.sep in path
    monkeypatch.chdir(tmp_path)  # not a checkout: baselines/ is not here
    cfg = load_config("ladder")
    assert cfg.title.startswith("Jiu baseline ladder") and cfg.games == 200 and cfg.anchor == "greedy"
    assert cfg.names == ["random", "greedy", "pattern", "ab1", "ab2", "mcts200", "mcts800"]
    why = cfg.left_out["ppo14"]
    assert "baselines/training/ppo14/model.zip" in why and "not found" in why and "checkout" in why
    assert load_config("ladder.toml").names == cfg.names
    c8 = load_config("ladder8")
    assert c8.rules["board_size"] == 8 and "az100" not in c8.names and "baselines/alphazero/jiu8.pt" in c8.left_out["az100"]
    assert load_config("ladder_time").mode == "gauntlet" and load_config("ladder_time").left_out == {}
    # a file of that name in the current folder wins
    (tmp_path / "ladder").write_text('players = ["random", "b=random"]\n')
    assert config_file("ladder") == "ladder" and load_config("ladder").names == ["random", "b"]
    with pytest.raises(FileNotFoundError, match="ladder, ladder8, ladder_time"):
        load_config("ladders")
    with pytest.raises(FileNotFoundError, match=r"--config ladder8 reads the shipped ladder8.toml"):
        load_config("baselines/ladder8.toml")  # where the file used to be


def test_shipped_ladders_are_package_data():
    """The wheel takes the ladders: pyproject's package-data patterns match every shipped config."""
    import fnmatch
    import pathlib

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    from jiu_env.evaluation.tournament import shipped_configs

    root = pathlib.Path(__file__).resolve().parents[1]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["jiu_env"]
    pkg = root / "jiu_env"
    for path in shipped_configs().values():
        rel = pathlib.Path(path).resolve().relative_to(pkg).as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), rel
    assert not (root / "baselines" / "ladder.toml").exists()  # one copy only


def test_optional_players(tmp_path):
    base = 'players = ["random", "b=random", "m=sb3:missing.zip", "p=phases:random+sb3:gone.zip"]\n'
    path = tmp_path / "t.toml"
    path.write_text(base + 'optional = ["m", "p"]\nunrated = ["m"]\nmode = "gauntlet"\nchallengers = ["b", "p"]\n')
    cfg = load_config(path)
    assert cfg.names == ["random", "b"] and cfg.unrated == [] and cfg.challengers == ["b"]
    assert set(cfg.left_out) == {"m", "p"} and "missing.zip" in cfg.left_out["m"] and "gone.zip" in cfg.left_out["p"]
    assert "checkout" not in cfg.left_out["m"]  # that hint is for the shipped configs
    assert "optional" not in cfg.to_dict()  # the players left out are no part of the tournament
    kept = TournamentConfig.from_dict({"players": ["random", "b=random"], "optional": ["b"]})
    assert kept.names == ["random", "b"] and kept.left_out == {}
    assert TournamentConfig.from_dict({"players": ["random", "b=random"]}).left_out == {}
    with pytest.raises(ValueError, match="unknown optional player"):
        TournamentConfig.from_dict({"players": ["random", "b=random"], "optional": ["zz"]})
    with pytest.raises(ValueError, match="anchor 'b' cannot be optional"):
        TournamentConfig.from_dict({"players": ["random", "b=random"], "optional": ["b"], "anchor": "b"})
    with pytest.raises(ValueError, match="unknown player"):  # a bad spec is an error, optional or not
        TournamentConfig.from_dict({"players": ["random", "b=random", "c=nonsense"], "optional": ["c"]})
    with pytest.raises(FileNotFoundError, match="missing.zip"):  # not optional: its file must be there
        run_tournament(TournamentConfig.from_dict({"players": ["random", "m=sb3:missing.zip"]}), workers=1)

# ---------------------------------------------------------------- tournaments
def _bookkeeping(res, cfg):
    s = res.summary
    total = cfg.games * len(cfg.pairs())
    assert s["games"] == total == len(res.games)
    bc = s["by_colour"]
    assert bc["white_wins"] + bc["black_wins"] + bc["draws"] == total
    for p in s["pairs"]:
        assert p["a_wins"] + p["draws"] + p["b_wins"] == p["games"] == cfg.games
        aw, ab = p["a_as_white"], p["a_as_black"]
        assert aw["games"] == ab["games"] == cfg.games // 2
        assert aw["wins"] + ab["wins"] == p["a_wins"] and aw["losses"] + ab["losses"] == p["b_wins"]
    for name, pl in s["players"].items():
        assert pl["games"] == cfg.games * sum(name in pr for pr in cfg.pairs())
        assert pl["wins"] + pl["draws"] + pl["losses"] == pl["games"]
        assert pl["as_white"]["games"] == pl["as_black"]["games"]
    wins = sum(p["wins"] for p in s["players"].values())
    losses = sum(p["losses"] for p in s["players"].values())
    assert wins == losses == bc["white_wins"] + bc["black_wins"]
    # every stored game is an exact record whose replay gives the stored result
    for ln in res.games:
        rec = GameRecord.from_dict(ln["record"])
        assert rec.result["battle_turns"] == ln["battle_turns"]
        if ln["end_reason"] != "illegal_action":
            assert rec.result["winner"] == ln["winner"]


def test_round_robin_bookkeeping_and_reproducible(tmp_path):
    cfg = TournamentConfig(players=["random", "b=random", "c=random"], games=4, seed=11, rules=SMALL,
                           random_opening=3)
    res = run_tournament(cfg, workers=1)
    _bookkeeping(res, cfg)
    again = run_tournament(cfg, workers=1)
    key = lambda r: [(g["id"], g["record"]["actions"]) for g in r.games]  # noqa: E731
    assert key(res) == key(again)
    # colour-swapped games of a pair share their random opening
    g0, g1 = res.games[0], res.games[1]
    assert g0["record"]["actions"][:3] == g1["record"]["actions"][:3]
    other = run_tournament(TournamentConfig(**{**cfg.to_dict(), "seed": 12}), workers=1)
    assert key(other) != key(res)


def test_parallel_workers_match_serial(tmp_path):
    cfg = TournamentConfig(players=["random", "b=random"], games=4, seed=2, rules=SMALL)
    serial = run_tournament(cfg, workers=1)
    par = run_tournament(cfg, workers=2, out_dir=tmp_path / "p")
    assert [g["record"]["actions"] for g in serial.games] == [g["record"]["actions"] for g in par.games]
    assert len(read_games(tmp_path / "p" / "games.jsonl")) == 4


def test_resume_skips_finished_games(tmp_path):
    out = tmp_path / "out"
    cfg = TournamentConfig(players=["random", "b=random", "c=random"], games=2, seed=5, rules=SMALL)
    first = run_tournament(cfg, out_dir=out, workers=1)
    assert first.new_games == 6
    path = out / "games.jsonl"
    lines = path.read_text().splitlines()
    # lose two games and leave a line cut short, as an interrupted run would
    path.write_text("\n".join(lines[:4]) + "\n" + lines[4][:40])
    seen = []
    second = run_tournament(cfg, out_dir=out, workers=1, progress=lambda d, t, ln, sc: seen.append((d, t)))
    assert second.new_games == 2
    assert seen[0] == (4, 6) and seen[-1] == (6, 6)
    assert [g["record"]["actions"] for g in second.games] == [g["record"]["actions"] for g in first.games]
    assert run_tournament(cfg, out_dir=out, workers=1).new_games == 0
    # a changed player spec invalidates only that player's stored games
    cfg2 = TournamentConfig(**{**cfg.to_dict(), "players": [{"name": "random", "spec": "random"},
                                                            {"name": "b", "spec": "random"},
                                                            {"name": "c", "spec": "random:"}]})
    third = run_tournament(cfg2, out_dir=out, workers=1)
    assert third.new_games == 4 and third.summary["stale_lines_ignored"] >= 4
    # --fresh style: resume=False replays everything
    assert run_tournament(cfg, out_dir=out, workers=1, resume=False).new_games == 6
    # more games per pair later: only the new ones are played
    more = run_tournament(TournamentConfig(**{**cfg.to_dict(), "games": 4}), out_dir=out, workers=1)
    assert more.new_games == 6 and more.summary["games"] == 12


def test_reports_written(tmp_path):
    cfg = TournamentConfig(players=["random", "b=random"], games=2, seed=1, rules=SMALL, title="tiny")
    res = run_tournament(cfg, out_dir=tmp_path, workers=1, command="jiu eval random b=random")
    for f in ("games.jsonl", "tournament.json", "results.json", "ratings.csv", "pairs.csv", "results.md", "results.png"):
        assert (tmp_path / f).stat().st_size > 0, f
    md = (tmp_path / "results.md").read_text()
    assert md.startswith("# tiny") and "| player |" in md and "jiu eval random b=random" in md
    summary = json.loads((tmp_path / "results.json").read_text())
    assert summary["elo"]["anchor"] == "random" and summary["games"] == 2
    assert len((tmp_path / "ratings.csv").read_text().splitlines()) == 3
    assert (tmp_path / "results.png").read_bytes()[:4] == b"\x89PNG"
    assert res.summary["players"]["random"]["avg_decision_ms"] > 0


def test_without_matplotlib_there_is_no_png_a_note_says_so_and_the_report_does_not_link_one(tmp_path, monkeypatch):
    cfg = TournamentConfig(**BASE)
    run_tournament(cfg, out_dir=tmp_path, workers=1)
    assert (tmp_path / "results.png").exists() and "(results.png)" in (tmp_path / "results.md").read_text()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    notes = []
    run_tournament(cfg, out_dir=tmp_path, workers=1, log=notes.append)
    assert notes == [f"no results.png in {tmp_path}: drawing it needs matplotlib (pip install matplotlib, or the "
                     "eval extra)"]
    assert not (tmp_path / "results.png").exists()  # the earlier run's picture would show other results
    assert "results.png" not in (tmp_path / "results.md").read_text()


# ---------------------------------------------------------------- players
USER_BOT = '''
import numpy as np
from jiu_env.bots.base import Bot, legal_actions

class FirstLegal(Bot):
    """Always the first legal action in sorted order (a deterministic user bot)."""
    PARAMS = {"offset": "index into the sorted legal actions"}

    def __init__(self, seed=None, offset=0):
        self.offset = offset
        super().__init__(seed=seed)

    def _choose(self, state):
        acts = np.sort(legal_actions(state))
        return acts[min(self.offset, acts.size - 1)]

class Cheater(Bot):
    def _choose(self, state):
        return 10 * int(state[1])  # STOP: never legal in the placement phase

class NotABot:
    def __init__(self, seed=None):
        pass

class Boom(Bot):
    def _choose(self, state):
        raise KeyError("kaboom")
'''


@pytest.mark.parametrize("workers", [1, 2])
def test_a_player_that_raises_stops_the_tournament_naming_the_game(tmp_path, workers):
    # one worker plays in this process: its error is named as the pool's is, not passed on bare
    mod = tmp_path / "mybots.py"
    mod.write_text(USER_BOT)
    cfg = TournamentConfig(players=["random", f"boom={mod}:Boom"], games=2, seed=1, rules=SMALL)
    from jiu_env.evaluation.backends import GameFailed

    with pytest.raises(GameFailed, match=r"^game random\|boom\|\d \((random|boom) vs (random|boom)\) failed: "
                                         r"KeyError: 'kaboom'$"):
        run_tournament(cfg, workers=workers, log=lambda msg: None)


def test_user_class_players(tmp_path):
    mod = tmp_path / "mybots.py"
    mod.write_text(USER_BOT)
    p = make_player(f"{mod}:FirstLegal:offset=1", seed=3)
    assert p.offset == 1 and p.seed == 3
    with pytest.raises(TypeError, match="bot protocol"):
        make_player(f"{mod}:NotABot")
    with pytest.raises(ValueError, match="no class"):
        make_player(f"{mod}:Missing")
    with pytest.raises(ValueError, match="cannot be imported"):
        make_player("no_such_module_xyz:Bot")
    with pytest.raises(ValueError, match="unknown player"):
        make_player("nonsense")
    cfg = TournamentConfig(players=[f"first={mod}:FirstLegal", "random"], games=2, seed=0, rules=SMALL)
    res = run_tournament(cfg, workers=1)
    _bookkeeping(res, cfg)
    # an illegal action forfeits the game
    cfg = TournamentConfig(players=[f"cheat={mod}:Cheater", "random"], games=2, seed=0, rules=SMALL)
    res = run_tournament(cfg, workers=1)
    assert [g["end_reason"] for g in res.games] == ["illegal_action"] * 2
    assert res.summary["players"]["cheat"]["losses"] == 2
    assert res.summary["pairs"][0]["forfeits"] == 2
    _bookkeeping(res, cfg)


def test_changed_player_code_invalidates_stored_games(tmp_path):
    mod = tmp_path / "mybots.py"
    mod.write_text(USER_BOT)
    cfg = TournamentConfig(players=[f"first={mod}:FirstLegal", "random"], games=2, seed=0, rules=SMALL)
    out = tmp_path / "out"
    assert run_tournament(cfg, out_dir=out, workers=1).new_games == 2
    assert run_tournament(cfg, out_dir=out, workers=1).new_games == 0
    mod.write_text(USER_BOT + "\n# a new version\n")
    again = run_tournament(cfg, out_dir=out, workers=1)
    assert again.new_games == 2 and again.summary["stale_lines_ignored"] == 2


def test_mix_player():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=60)
    with pytest.raises(ValueError, match="mix:P:SPEC"):
        make_player("mix:0.5")
    with pytest.raises(ValueError, match="mix p must be a number >= 0 and <= 1, not 1.5"):
        make_player("mix:1.5:random")
    from jiu_env.bots.composite import MixPlayer

    for p in (True, " 1 ", float("nan"), None):  # float() took the first two as 1.0
        with pytest.raises(ValueError, match="mix p must be a number >= 0 and <= 1"):
            MixPlayer(p, "random")
    assert MixPlayer(np.float32(0.25), "random").p == 0.25
    games = [run_game(rules, make_player("mix:0.5:greedy", seed=s), make_player("random", seed=9), seed=s)
             for s in (1, 1, 2)]
    acts = [g["record"].actions for g in games]
    assert acts[0] == acts[1] and acts[0] != acts[2]  # seeded
    # with p = 1 every decision is random: it plays like a random bot, not like greedy
    pure = run_game(rules, make_player("mix:1:greedy", seed=3), make_player("random", seed=9), seed=3)
    ref = run_game(rules, make_player("greedy", seed=3), make_player("random", seed=9), seed=3)
    assert pure["record"].actions != ref["record"].actions


def test_phases_player_hands_each_phase_to_its_player():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=60)
    for bad in ("phases:random", "phases:random+", "phases:+greedy"):
        with pytest.raises(ValueError, match="PLACEMENT_SPEC"):
            make_player(bad)
    with pytest.raises(ValueError, match="unknown player"):
        make_player("phases:random+nosuchbot")
    p = make_player("phases:random+greedy", seed=4)
    seen = {"placement": [], "battle": []}
    for part in seen:
        inner = getattr(p, part)
        inner.step = (lambda f, part: lambda s: seen[part].append(int(s[K.H_PHASE])) or f(s))(inner.step, part)
    g = run_game(rules, p, make_player("random", seed=9), seed=4)
    assert seen["placement"] and set(seen["placement"]) == {K.PH_PLACEMENT}
    assert seen["battle"] and K.PH_PLACEMENT not in seen["battle"]
    again = run_game(rules, make_player("phases:random+greedy", seed=4), make_player("random", seed=9), seed=4)
    assert again["record"].actions == g["record"].actions  # seeded
    # it reports what the player of the last decision reported (a teacher for jiu train)
    ph = make_player("phases:alphabeta:depth=1+alphabeta:depth=2", seed=1)
    assert ph.last_info == {}
    st = rules.new_state()
    ph.step(st)
    assert ph.last_info == ph.placement.last_info and ph.last_info["depth"] == 1
    while st[K.H_PHASE] == K.PH_PLACEMENT:
        K.apply_action(st, int(make_player("random", seed=2).step(st)))
    ph.step(st)
    assert ph.last_info == ph.battle.last_info and ph.last_info["depth"] == 2


def test_sb3_player_errors(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="not found"):
        make_player(f"sb3:{tmp_path / 'missing.zip'}")
    model = tmp_path / "model.zip"
    model.write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # as if sb3-contrib were not installed
    with pytest.raises(ImportError, match="train"):
        make_player(f"sb3:{model}")
    with pytest.raises(ValueError, match="needs an argument"):
        make_player("sb3:")


def test_run_game_result_fields():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=100)
    r = run_game(rules, make_player("random", seed=1), make_player("random", seed=2), seed=4, random_opening=5)
    assert r["decisions"] == len(r["record"].actions)
    assert r["moves_by"]["white"] + r["moves_by"]["black"] == r["decisions"] - 5
    assert r["score_white"] in (0.0, 0.5, 1.0)
    final = r["record"].replay()
    assert final[K.H_PHASE] == K.PH_OVER


# ---------------------------------------------------------------- hostile input
BASE = {"players": ["random", "b=random"], "games": 2, "seed": 1, "rules": SMALL}


@pytest.mark.parametrize("bad,exc,name", [
    (dict(players="random"), TypeError, "players must be a list"),
    (dict(players={"name": "a", "spec": "random"}), TypeError, "players must be a list"),
    (dict(players=[]), ValueError, "at least two players"),
    (dict(players=[{"name": "a", "spec": ["random"]}, "random"]), TypeError, "spec"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(seed="1"), TypeError, "seed"),
    (dict(games=0), ValueError, "games"),
    (dict(games=True), TypeError, "games per pair must be an int in 1..1000000, not bool True"),
    (dict(games=2.5), TypeError, "games per pair must be an int"),
    (dict(prior_draws=-3), ValueError, "prior_draws"),
    (dict(prior_draws=float("nan")), ValueError, "prior_draws"),
    (dict(prior_draws="2"), TypeError, "prior_draws"),
    (dict(bootstrap_samples=-4), ValueError, "bootstrap_samples"),
    (dict(bootstrap_samples=1), ValueError, "bootstrap_samples"),
    (dict(bootstrap_samples=2.5), TypeError, "bootstrap_samples"),
    (dict(confidence=1.0), ValueError, "confidence"),
    (dict(confidence=float("nan")), ValueError, "confidence"),
    (dict(confidence="0.9"), TypeError, "confidence"),
    (dict(random_opening=True), TypeError, "random_opening"),
    (dict(random_opening=-1), ValueError, "random_opening"),
    (dict(title=3), TypeError, "title"),
    (dict(anchor=3), TypeError, "anchor"),
    (dict(anchor="nobody"), ValueError, "anchor"),
    (dict(mode=["gauntlet"]), ValueError, "mode"),
    (dict(mode="gauntlet"), ValueError, "challengers"),
    (dict(mode="gauntlet", challengers=[1]), TypeError, "challengers"),
    (dict(mode="gauntlet", challengers=["nobody"]), ValueError, "challenger"),
    (dict(unrated=[None]), TypeError, "unrated"),
    (dict(unrated=["random", "b"]), ValueError, "rated"),
    (dict(unrated=["random", "random"]), ValueError, "unrated must name each player once; repeated: random"),
    (dict(mode="gauntlet", challengers=["random", "random"]), ValueError, "challengers must name each player once"),
    (dict(challengers=["random"]), ValueError, "challengers .* are for mode 'gauntlet'"),
    (dict(intervals="bootstrap", prior_draws=0), ValueError, "bootstrap intervals need prior_draws > 0"),
    (dict(intervals=["bootstrap"]), ValueError, "intervals"),
    (dict(rules=5), TypeError, "rules"),
    (dict(rules={"board_size": 6, "min_stones": 18}), ValueError, "min_stones"),
])
def test_config_rejects_bad_settings_up_front(bad, exc, name):
    with pytest.raises(exc, match=name):
        TournamentConfig(**{**BASE, **bad})


def test_config_from_dict_rejects_non_tables_and_double_games():
    with pytest.raises(TypeError, match="table of settings"):
        TournamentConfig.from_dict([1, 2])
    with pytest.raises(ValueError, match="games_per_pair"):
        TournamentConfig.from_dict({**BASE, "games_per_pair": 4})
    cfg = TournamentConfig(**{**BASE, "seed": np.int64(3), "prior_draws": np.float32(1.0)})
    json.dumps(cfg.to_dict())  # numpy numbers are stored as plain Python numbers


def test_bad_workers_are_rejected_before_any_game():
    cfg = TournamentConfig(**BASE)
    for bad, error in ((0, ValueError), (-1, ValueError), (True, TypeError), (1.5, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="^workers must be an int in 1..4096 or None"):
            run_tournament(cfg, workers=bad)
    notes = []
    res = run_tournament(cfg, workers=1, log=notes.append)
    assert res.new_games == 2 and notes == []


@pytest.mark.parametrize("kwargs, error", [
    (dict(workers=0), ValueError), (dict(backend="dask"), ValueError), (dict(address="127.0.0.1:1"), ValueError),
    (dict(players=["random", "b=nosuchbot"]), ValueError),
])
def test_a_refused_run_leaves_no_out_dir_behind(tmp_path, kwargs, error):
    # settings and players are checked before out_dir is made and locked
    cfg = TournamentConfig(**{**BASE, "players": kwargs.pop("players", BASE["players"])})
    with pytest.raises(error):
        run_tournament(cfg, out_dir=tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("setting, words", [
    ({"workers": 0}, "workers must be an int in 1..4096 or None"), ({"workers": True}, "workers must be an int"),
    ({"backend": "cluster"}, "backend must be one of local, ray, not 'cluster'"),
    ({"address": 6379}, "address must be a Ray cluster's address"), ({"address": " "}, "address must be"),
])
def test_a_config_files_execution_settings_are_checked_when_it_is_read(setting, words):
    with pytest.raises((TypeError, ValueError), match=words):
        TournamentConfig.from_dict({**BASE, **setting})


def test_workers_are_capped_at_the_games_left_with_a_note(tmp_path):
    cfg = TournamentConfig(**BASE)
    out = tmp_path / "out"
    run_tournament(cfg, out_dir=out, workers=1, write_reports=False)
    path = out / "games.jsonl"
    path.write_text(path.read_text().splitlines()[0] + "\n")  # one game left to play
    notes = []
    res = run_tournament(cfg, out_dir=out, workers=8, write_reports=False, log=notes.append)
    assert res.new_games == 1
    assert notes == ["8 workers asked for 1 games to play: using 1"]


def test_non_object_and_damaged_lines_are_skipped_with_a_note(tmp_path):
    cfg = TournamentConfig(**BASE)
    out = tmp_path / "out"
    first = run_tournament(cfg, out_dir=out, workers=1, write_reports=False)
    path = out / "games.jsonl"
    good = path.read_text().splitlines()
    # valid JSON but not an object, an object without an id, a damaged line, a result line with missing fields
    broken = dict(json.loads(good[1]))
    del broken["score_white"]
    path.write_text("\n".join(["[1,2]", good[0], '{"no": "id"}', "{not json", json.dumps(broken), "7"]) + "\n")
    assert [g["id"] for g in read_games(path)] == [json.loads(good[0])["id"], broken["id"]]
    notes = []
    res = run_tournament(cfg, out_dir=out, workers=1, write_reports=False, log=notes.append)
    assert res.new_games == 1  # the game whose stored line lacked fields is played again
    assert [g["record"]["actions"] for g in res.games] == [g["record"]["actions"] for g in first.games]
    assert len(notes) == 4 and "line 1 is a JSON list, not an object" in notes[0]
    assert all(str(path) in n for n in notes)
    # games.jsonl now holds one line per game; the rest was moved aside, not lost
    ids = [json.loads(ln)["id"] for ln in path.read_text().splitlines()]
    assert sorted(ids) == sorted(t.id for t in schedule(cfg)) and len(set(ids)) == len(ids)
    assert len((out / "games.stale.jsonl").read_text().splitlines()) == 5
    notes.clear()
    assert run_tournament(cfg, out_dir=out, workers=1, write_reports=False, log=notes.append).new_games == 0
    assert notes == []
    # without log the notes are warnings
    with open(path, "a") as f:
        f.write("[3]\n")
    with pytest.warns(UserWarning, match="not an object"):
        run_tournament(cfg, out_dir=out, workers=1, write_reports=False)


@pytest.mark.parametrize("field, value", [
    ("pair", ["zz", "yy"]), ("time", None), ("time", {"white": "1", "black": 0.5}), ("moves_by", {"white": 3}),
    ("battle_turns", -1), ("decisions", 2.5), ("score_white", True), ("truncated", "no"),
])
def test_a_result_line_with_a_damaged_field_is_played_again_not_summed(tmp_path, field, value):
    cfg = TournamentConfig(**BASE)
    out = tmp_path / "out"
    first = run_tournament(cfg, out_dir=out, workers=1, write_reports=False)
    path = out / "games.jsonl"
    lines = path.read_text().splitlines()
    damaged = {**json.loads(lines[0]), field: value}
    path.write_text("\n".join([json.dumps(damaged), *lines[1:]]) + "\n")
    actions = sorted(g["record"]["actions"] for g in first.games)
    res = run_tournament(cfg, out_dir=out, workers=1, write_reports=False, log=lambda msg: None)
    assert res.new_games == 1 and sorted(g["record"]["actions"] for g in res.games) == actions
    assert json.loads((out / "games.stale.jsonl").read_text())[field] == value
    res = run_tournament(cfg, out_dir=out, report_only=True, log=lambda msg: None)  # and reads back as played
    assert res.new_games == 0 and sorted(g["record"]["actions"] for g in res.games) == actions


def test_out_dir_of_another_tournament_is_refused(tmp_path):
    from jiu_env.evaluation.tournament import TournamentMismatch

    cfg = TournamentConfig(**BASE)
    out = tmp_path / "out"
    run_tournament(cfg, out_dir=out, workers=1, write_reports=False)
    before = (out / "games.jsonl").read_text()
    for change, words in ((dict(seed=2), "seed 1 (this one: 2)"),
                          (dict(random_opening=3), "random_opening 0 (this one: 3)"),
                          (dict(rules={**SMALL, "min_stones": 3}), "rules option min_stones 4 (this one: 3)")):
        with pytest.raises(TournamentMismatch, match=r"--fresh") as ei:
            run_tournament(TournamentConfig(**{**BASE, **change}), out_dir=out, workers=1)
        assert words in str(ei.value) and str(out) in str(ei.value)
        assert (out / "games.jsonl").read_text() == before  # nothing played, nothing written
    # starting fresh discards the old games: one line per id, all of the new seed
    res = run_tournament(TournamentConfig(**{**BASE, "seed": 2}), out_dir=out, workers=1, resume=False,
                         write_reports=False)
    lines = read_games(out / "games.jsonl")
    assert len(lines) == 2 and {ln["seed"] for ln in lines} == {g["seed"] for g in res.games}
    # settings that do not decide the games may change: more games, another title or anchor
    more = run_tournament(TournamentConfig(**{**BASE, "seed": 2, "games": 4, "title": "t", "anchor": "b"}),
                          out_dir=out, workers=1, write_reports=False)
    assert more.new_games == 2
    # a changed spec replays that player's games; the old lines move to games.stale.jsonl
    cfg3 = TournamentConfig(**{**BASE, "seed": 2, "games": 4, "players": ["random", "b=random:"]})
    assert run_tournament(cfg3, out_dir=out, workers=1, write_reports=False).new_games == 4
    ids = [json.loads(ln)["id"] for ln in (out / "games.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 4
    assert len((out / "games.stale.jsonl").read_text().splitlines()) == 4
    # an unreadable tournament.json is not fatal: the stored games are still checked one by one
    (out / "tournament.json").write_text("[")
    notes = []
    assert run_tournament(cfg3, out_dir=out, workers=1, write_reports=False, log=notes.append).new_games == 0
    assert "cannot be read" in notes[0]
    assert json.loads((out / "tournament.json").read_text())["seed"] == 2  # rewritten


def test_a_report_before_any_game_says_there_is_no_anchor_yet():
    from jiu_env.evaluation.report import settings_text

    config = {"rules": {"profile": "competitive", "board_size": 6}, "mode": "round_robin", "games": 2, "seed": 0,
              "random_opening": 0, "prior_draws": 2.0, "intervals": "fisher"}
    assert "anchor none yet (no games to rate)" in settings_text({"config": config, "games": 0, "scheduled": 2,
                                                                   "elo": {}})
    rated = {"config": config, "games": 2, "scheduled": 2, "elo": {"anchor": "greedy", "method": "fisher"}}
    assert "anchor greedy = 0" in settings_text(rated)
    assert "anchor mean rating = 0" in settings_text({**rated, "elo": {"anchor": "mean"}})
    failed = {**rated, "elo": {"error": "Singular matrix"}}  # games played, and the fit failed
    assert "anchor none (the Elo fit was not possible)" in settings_text(failed)
