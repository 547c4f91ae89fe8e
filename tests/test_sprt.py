"""SPRT on colour-swapped game pairs: the LLR against an independent computation, the sequential decision,
and ``jiu eval --sprt`` (early stop, resume, refusals)."""

import json
import math
import shutil

import numpy as np
import pytest
from scipy.optimize import minimize

from jiu_env.cli import main
from jiu_env.evaluation import TournamentConfig, run_tournament, schedule
from jiu_env.evaluation.sprt import (
    EPSILON, SequentialSPRT, bounds, constrained_mle, expected_score, llr, pair_scores_from_games, pentanomial,
    pentanomial_from_games, sequential_sprt, sprt,
)

SMALL = {"profile": "competitive", "board_size": 6}


# ------------------------------------------------------------------ the statistic
def reference_llr(counts, elo0, elo1):
    """The generalised LLR by direct numerical maximisation of the constrained likelihoods (SLSQP).

    Independent of the module's closed form: maximise sum n_i log p_i over the simplex subject to
    sum p_i a_i = s (a_i = 0, 1/4, ..., 1) for s = s0 and s = s1, zero counts replaced by 1e-3.
    """
    n = np.array([c if c > 0 else 1e-3 for c in counts], float)
    a = np.arange(5) / 4.0

    def mle(s):
        cons = [{"type": "eq", "fun": lambda p: p.sum() - 1.0}, {"type": "eq", "fun": lambda p: p @ a - s}]
        r = minimize(lambda p: -np.sum(n * np.log(p)), np.full(5, 0.2), method="SLSQP", constraints=cons,
                     bounds=[(1e-12, 1.0)] * 5, options={"ftol": 1e-15, "maxiter": 1000})
        assert r.success, r.message
        return r.x

    s0 = 1.0 / (1.0 + 10.0 ** (-elo0 / 400.0))
    s1 = 1.0 / (1.0 + 10.0 ** (-elo1 / 400.0))
    return float(np.sum(n * np.log(mle(s1) / mle(s0))))


@pytest.mark.parametrize("counts,elo0,elo1", [
    ([10, 20, 40, 25, 5], 0, 10),
    ([10, 20, 40, 25, 5], -5, 5),
    ([0, 0, 0, 0, 8], 0, 200),
    ([0, 3, 10, 4, 0], 0, 200),
    ([1, 0, 0, 0, 0], 0, 50),
    ([100, 500, 1200, 600, 150], 0, 10),
    ([3, 41, 180, 52, 4], 0, 5),
])
def test_llr_equals_an_independent_constrained_maximisation(counts, elo0, elo1):
    ref = reference_llr(counts, elo0, elo1)
    assert llr(counts, elo0, elo1) == pytest.approx(ref, rel=1e-7, abs=1e-7)


def test_constrained_mle_hand_computed():
    # only outcomes 0 and 2 observed, equally often: the only distribution on them with mean s is (1 - s, s)
    for s in (0.3, 0.5, 0.64):
        p = constrained_mle([0.5, 0, 0, 0, 0.5], s)
        assert p == pytest.approx([1 - s, 0, 0, 0, s], abs=1e-12)
    # frequencies whose mean is already s are their own maximum
    q = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    assert constrained_mle(q, 0.5) == pytest.approx(q, abs=1e-12)
    # by hand: q = (1/2, 0, 0, 0, 1/2) at s = 1/2 is its own maximum; at s1 it is (1 - s1, 0, 0, 0, s1).
    # With counts (k, 0, 0, 0, k), ignoring the 1e-3 of the empty outcomes: LLR = k log(4 s1 (1 - s1)) < 0
    s1 = expected_score(100)
    k = 10
    hand = k * math.log(2 * (1 - s1)) + k * math.log(2 * s1)
    # the 1e-3 of the three empty outcomes move the value by about 1e-3 times a small factor
    assert llr([k, 0, 0, 0, k], 0, 100) == pytest.approx(hand, abs=0.01)
    assert expected_score(0) == 0.5 and expected_score(400) == pytest.approx(10 / 11)


def test_bounds_and_decisions():
    lo, hi = bounds(0.05, 0.05)
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(math.log(0.95 / 0.05))
    lo, hi = bounds(0.1, 0.2)
    assert lo == pytest.approx(math.log(0.2 / 0.9)) and hi == pytest.approx(math.log(0.8 / 0.1))
    r = sprt([0, 0, 0, 0, 0], 0, 10)
    assert r.llr == 0.0 and r.decision == "continue" and r.pairs == 0
    # seven sweeps of pairs (2 points each) are not enough against elo0 = 0, elo1 = 200; eight are
    assert sprt([0, 0, 0, 0, 7], 0, 200).decision == "continue"
    r = sprt([0, 0, 0, 0, 8], 0, 200)
    assert r.decision == "H1 accepted" and r.llr >= r.upper and r.pairs == 8
    assert sprt([0, 0, 9, 0, 0], 0, 200).decision == "H0 accepted"
    d = r.as_dict()
    assert d["pentanomial"] == [0, 0, 0, 0, 8] and json.loads(json.dumps(d)) == d
    for bad in ((0, 10, 0.0, 0.05), (0, 10, 0.05, 1.0), (0, 10, 0.6, 0.5), (10, 0, 0.05, 0.05),
                (0, float("nan"), 0.05, 0.05)):
        with pytest.raises(ValueError):
            sprt([1, 1, 1, 1, 1], *bad)
    with pytest.raises(ValueError):
        llr([1, 2, 3], 0, 10)


def test_sequential_stops_at_the_first_pair_that_decides():
    scores = [2, 1.5, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0.5]
    r = sequential_sprt(scores, 0, 150)
    # the first prefix whose LLR leaves the bounds, found by brute force
    lo, hi = bounds()
    first = next(k for k in range(1, len(scores) + 1) if not lo < llr(pentanomial(scores[:k]), 0, 150) < hi)
    assert r.pairs == first and r.decision == "H1 accepted"
    test = SequentialSPRT(0, 150)
    for s in scores:
        test.add(s)
    assert test.result == r  # pairs after the decision are ignored


def test_pentanomial_helpers():
    assert pentanomial([0, 0.5, (1, 0.5), 2, (1.0, 1.0), 1]) == [1, 1, 1, 1, 2]
    for bad in (2.5, -0.5, 0.25, "x", (1, 1, 0), (0.7, 0.3), (1.5, 0), (2, 0), (True, 1)):
        with pytest.raises(ValueError):
            pentanomial([bad])
    test = SequentialSPRT(0, 200)
    while not test.decided:
        test.add(2)
    with pytest.raises(ValueError, match="pair score"):  # checked even once the test has decided
        test.add(7)
    lines = [  # A-B games 0 and 1 form pair 0, games 2 and 3 pair 1; game 4 has no partner yet
        {"white": "A", "black": "B", "score_white": 1.0, "game": 0},
        {"white": "B", "black": "A", "score_white": 0.5, "game": 1},
        {"white": "A", "black": "B", "score_white": 0.0, "game": 2},
        {"white": "B", "black": "A", "score_white": 1.0, "game": 3},
        {"white": "A", "black": "B", "score_white": 1.0, "game": 4},
    ]
    assert pair_scores_from_games(lines, "A") == [1.5, 0.0]
    assert pentanomial_from_games(lines, "B") == [0, 1, 0, 0, 1]
    assert EPSILON == 1e-3


# ------------------------------------------------------------------ the tournament
def test_config_checks_and_unchanged_schedule():
    cfg = TournamentConfig(players=["random", "greedy"], games=6, rules=SMALL)
    assert "sprt" not in cfg.to_dict()  # a tournament without SPRT keeps its dict
    with_test = TournamentConfig(players=["random", "greedy"], games=6, rules=SMALL, sprt={"elo0": 0, "elo1": 20})
    assert with_test.sprt == {"elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05}
    assert [t.fingerprint() for t in schedule(cfg)] == [t.fingerprint() for t in schedule(with_test)]
    assert TournamentConfig.from_dict(with_test.to_dict()).sprt == with_test.sprt
    bad = [
        (dict(players=["random", "greedy", "pattern"]), "exactly two players"),
        (dict(games=5), "even"),
        (dict(sprt={"elo0": 0, "elo1": 20, "alpha": 1.5}), "alpha"),
        (dict(sprt={"elo0": 0, "elo1": 20, "beta": 0}), "beta"),
        (dict(sprt={"elo0": 20, "elo1": 0}), "elo0 < elo1"),
        (dict(sprt={"elo0": 0}), "elo1"),
        (dict(sprt={"elo0": 0, "elo1": 5, "gamma": 1}), "elo0 and elo1"),
        (dict(sprt={"elo0": 0, "elo1": 7000}), r"elo1 must be within \+-2000 Elo"),
        (dict(sprt={"elo0": -2001, "elo1": 0}), "elo0 must be within"),
    ]
    for change, words in bad:
        kw = dict(players=["random", "greedy"], games=6, rules=SMALL, sprt={"elo0": 0, "elo1": 20})
        kw.update(change)
        with pytest.raises(ValueError, match=words):
            TournamentConfig(**kw)


def _eval(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


LOPSIDED = ["eval", "ab2=alphabeta:depth=2", "random", "--rule", "board_size=6", "--sprt", "0", "200",
            "--games", "100", "--no-progress"]


def test_lopsided_match_stops_early_with_h1_and_resumes_to_the_same_decision(tmp_path, capsys):
    out = tmp_path / "ab"
    rc, text, err = _eval(LOPSIDED + ["--workers", "2", "--out", str(out)], capsys)
    assert rc == 0, err
    assert "H1 accepted" in text and "pentanomial" in text and "LLR" in text
    res = json.loads((out / "results.json").read_text())
    t = res["sprt"]
    assert t["decision"] == "H1 accepted" and t["a"] == "ab2" and t["b"] == "random"
    assert t["pairs"] < 50 and res["games"] == 2 * t["pairs"]  # stopped long before --games
    assert sum(t["pentanomial"]) == t["pairs"] and t["llr"] >= t["upper"] == pytest.approx(math.log(19))
    assert "## SPRT" in (out / "results.md").read_text()
    stored = len((out / "games.jsonl").read_text().splitlines())
    assert stored < 100

    # run again on the same folder: nothing to play, the same decision on the same games
    rc, text, err = _eval(LOPSIDED + ["--workers", "2", "--out", str(out)], capsys)
    assert rc == 0, err
    assert "0 games played" in text and "H1 accepted" in text
    again = json.loads((out / "results.json").read_text())["sprt"]
    assert {k: again[k] for k in ("llr", "pairs", "pentanomial", "decision")} == \
        {k: t[k] for k in ("llr", "pairs", "pentanomial", "decision")}

    # an interrupted run (its first games only) resumes to the same decision, with one worker
    cut = tmp_path / "cut"
    shutil.copytree(out, cut)
    lines = (cut / "games.jsonl").read_text().splitlines()
    (cut / "games.jsonl").write_text("\n".join(lines[:5]) + "\n")
    rc, text, err = _eval(LOPSIDED + ["--workers", "1", "--out", str(cut)], capsys)
    assert rc == 0, err
    resumed = json.loads((cut / "results.json").read_text())["sprt"]
    assert {k: resumed[k] for k in ("llr", "pairs", "pentanomial", "decision")} == \
        {k: t[k] for k in ("llr", "pairs", "pentanomial", "decision")}


def test_equal_players_accept_h0_or_reach_the_limit():
    cfg = TournamentConfig(players=["random", "random2=random"], games=60, rules=SMALL, seed=3,
                           sprt={"elo0": 0, "elo1": 200})
    res = run_tournament(cfg, workers=1, warm=False)
    t = res.summary["sprt"]
    assert t["decision"] in ("H0 accepted", "continue")
    if t["decision"] == "H0 accepted":
        assert t["llr"] <= t["lower"] and res.summary["games"] == 2 * t["pairs"] < 60
    else:
        assert res.summary["games"] == 60
    # the Python function on the games' pairs gives the same test
    direct = sprt(pentanomial_from_games(res.games, "random"), 0, 200)
    assert direct.llr == pytest.approx(t["llr"]) and list(direct.pentanomial) == t["pentanomial"]


def test_limit_reached_reports_continue(tmp_path, capsys):
    rc, text, err = _eval(["eval", "random", "greedy", "--rule", "board_size=6", "--sprt", "-10", "10",
                           "--games", "4", "--workers", "1", "--no-progress", "--out", str(tmp_path / "c")], capsys)
    assert rc == 0, err
    t = json.loads((tmp_path / "c" / "results.json").read_text())["sprt"]
    assert t["decision"] == "continue" and t["pairs"] == 2 == t["max_pairs"]
    assert "continue" in text


@pytest.mark.parametrize("extra,words", [
    (["--sprt", "0", "10"], "exactly two players"),  # with a third player
    (["--sprt", "0", "10", "--alpha", "0"], "alpha"),
    (["--sprt", "0", "10", "--alpha", "1.2"], "alpha"),
    (["--sprt", "0", "10", "--beta", "-0.1"], "beta"),
    (["--sprt", "0", "10", "--alpha", "0.6", "--beta", "0.5"], "alpha + beta"),
    (["--sprt", "0", "10", "--alpha", "nan"], "alpha"),
    (["--sprt", "10", "0"], "elo0 < elo1"),
    (["--sprt", "0", "10", "--games", "7"], "even"),
    (["--alpha", "0.1"], "--sprt"),
])
def test_cli_refuses_bad_sprt_settings(extra, words, capsys, tmp_path):
    players = ["random", "greedy"] + (["pattern"] if words == "exactly two players" else [])
    rc, text, err = _eval(["eval", *players, "--rule", "board_size=6", "--no-progress",
                           "--out", str(tmp_path / "x")] + extra, capsys)
    assert rc == 2 and words in err and err.startswith("jiu eval: error:")
    assert not (tmp_path / "x" / "games.jsonl").exists()


def test_cli_sprt_with_a_config_without_games_plays_up_to_the_default(tmp_path):
    import argparse

    from jiu_env.cli.eval import SPRT_GAMES, _build_config, _eval_args, _with_sprt

    p = argparse.ArgumentParser()
    _eval_args(p)
    for body, games in (('players = ["a=random", "b=random"]\n', SPRT_GAMES),
                        ('players = ["a=random", "b=random"]\ngames = 6\n', 6)):
        (tmp_path / "two.toml").write_text(body)
        for extra, want in (([], games), (["--games", "10"], 10)):
            args = p.parse_args(["--config", str(tmp_path / "two.toml"), "--sprt", "0", "100", *extra])
            assert _with_sprt(_build_config(args), args).games == want


def test_cli_sprt_needs_two_numbers(capsys):
    with pytest.raises(SystemExit) as e:
        main(["eval", "random", "greedy", "--sprt", "0"])
    assert e.value.code == 2
    assert "--sprt" in capsys.readouterr().err
