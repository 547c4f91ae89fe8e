"""Opening suites and the time control of ``jiu eval``: reading, checking, scheduling, resuming, reporting."""

import json
import os

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.cli import main
from jiu_env.evaluation import play as P
from jiu_env.evaluation import tournament as T
from jiu_env.evaluation.openings import SHIPPED, IllegalOpening, SuiteError, load_suite, shipped_path
from jiu_env.evaluation.tournament import (
    TournamentConfig, TournamentMismatch, read_games, run_tournament, schedule, timed_spec,
)
from jiu_env.records import GameRecord
from jiu_env.rules import Rules

# 6x6: the diagonal ends of the centre square are c2 and d3 (White chooses one, Black takes the other)
SMALL = Rules.make("competitive", board_size=6, max_battle_turns=40).to_dict()
SUITE = "# three openings\n# board_size: 6\nc2 d3 a0 f5\nd3 c2 b1\n\nc2 d3 e4 a5 b0  # a comment\n"


def suite_file(tmp_path, text=SUITE, name="suite.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def cfg(openings=None, **kw):
    base = {"players": ["random", "greedy"], "games": 6, "seed": 3, "rules": SMALL}
    base.update(kw)
    return TournamentConfig(openings=openings, **base)


# ------------------------------------------------------------------ reading
def test_text_suite_reads_one_opening_per_line(tmp_path):
    s = load_suite(suite_file(tmp_path), SMALL)
    assert s.source.endswith("suite.txt")
    assert [o.name for o in s.openings] == ["suite#1", "suite#2", "suite#3"]
    assert [len(o.actions) for o in s.openings] == [4, 3, 5]
    assert s.openings[1].where.endswith("suite.txt line 4")
    d = s.to_config(6)
    assert d["board_size"] == 6 and d["openings"][2]["moves"] == ["c2", "d3", "e4", "a5", "b0"]
    # the config form reads back to the same openings
    assert load_suite(d, SMALL).to_config(6) == d


@pytest.mark.parametrize("text, where", [
    ("c2 d3\nc2 d3 zz\n", "line 2"),           # not a move
    ("# x\nc2 d3\n\nc2 d3 a0-a9\n", "line 4"),  # a step to a point that is no neighbour
    ("c2 d3 g0\n", "line 1"),                  # row g is off a 6x6 board
    ("# board_size: six\nc2 d3\n", "line 1"),
])
def test_malformed_text_suite_names_the_line(tmp_path, text, where):
    path = suite_file(tmp_path, text)
    with pytest.raises(SuiteError, match=f"{path} {where}"):
        load_suite(path, SMALL)


def test_malformed_json_suites_name_the_entry_or_line(tmp_path):
    path = suite_file(tmp_path, json.dumps([["c2", "d3"], {"moves": ["c2"], "colour": "white"}]), "s.json")
    with pytest.raises(SuiteError, match=r"s\.json entry 2: .*'moves'"):
        load_suite(path, SMALL)
    path = suite_file(tmp_path, json.dumps(["c2 d3", 7]), "s.json")
    with pytest.raises(SuiteError, match=r"s\.json entry 2"):
        load_suite(path, SMALL)
    path = suite_file(tmp_path, '["c2 d3", ', "s.json")
    with pytest.raises(SuiteError, match=r"s\.json is not valid JSON"):
        load_suite(path, SMALL)
    path = suite_file(tmp_path, '{"moves": ["c2", "d3"]}\n{"moves": \n', "s.jsonl")
    with pytest.raises(SuiteError, match=r"s\.jsonl line 2 is not valid JSON"):
        load_suite(path, SMALL)
    for empty in ("# nothing\n\n", "[]"):
        with pytest.raises(SuiteError, match="holds no openings"):
            load_suite(suite_file(tmp_path, empty, "e.txt"), SMALL)
    with pytest.raises(SuiteError, match="No such file"):
        load_suite(str(tmp_path / "missing.txt"), SMALL)


@pytest.mark.parametrize("text, match", [
    ("c2 d3\na0 c2\n", r"opening suite#2 \(.*line 2\): move 1 'a0' is illegal"),  # White's first stone: a diagonal end
    ("c2 d3 a0 a0\n", r"opening suite#1 .*move 4 'a0' is illegal"),              # an occupied point
    ("c2 d3 a0-a1\n", r"opening suite#1 .*move 3 'a0-a1' is illegal"),           # a step in the placement phase
])
def test_illegal_opening_is_refused_naming_it(tmp_path, text, match):
    path = suite_file(tmp_path, text)
    with pytest.raises(IllegalOpening, match=match):
        load_suite(path, SMALL)
    with pytest.raises(IllegalOpening, match=match):  # and so is a tournament with it, before any game
        cfg(path)


def test_opening_for_another_board_size_is_refused(tmp_path):
    with pytest.raises(IllegalOpening, match=r"for 6x6 boards.*plays 8x8"):
        load_suite(suite_file(tmp_path), {"board_size": 8})
    with pytest.raises(IllegalOpening, match=r"opening jiu8#1 .*the suite jiu8 is for 8x8 boards.*plays 14x14"):
        load_suite("jiu8", "competitive")
    rec = GameRecord.from_actions({"board_size": 8}, [27, 36, 0])  # a record of an 8x8 game
    path = suite_file(tmp_path, rec.to_json(), "r.json")
    with pytest.raises(IllegalOpening, match=r"opening r#1 .*8x8 record.*plays 6x6"):
        load_suite(path, SMALL)


def test_a_json_suite_table_in_a_file_is_checked_as_the_same_table_in_a_config(tmp_path):
    table = load_suite("jiu8", {"board_size": 8}).to_config(8)
    path = suite_file(tmp_path, json.dumps(table), "t.json")
    assert ([(o.name, o.actions) for o in load_suite(path, {"board_size": 8}).openings]
            == [(o.name, o.actions) for o in load_suite(table, {"board_size": 8}).openings])
    for bad, error, words in (({**table, "typo_key": 1}, SuiteError, "not typo_key"),
                              ({**table, "board_size": 14}, IllegalOpening, "is for 14x14 boards; this tournament "
                                                                           "plays 8x8"),
                              ({**table, "board_size": "8"}, SuiteError, "board_size is an int")):
        path = suite_file(tmp_path, json.dumps(bad), "t.json")
        for source in (path, bad):
            with pytest.raises(error, match=words):
                load_suite(source, {"board_size": 8})


def test_random_opening_and_openings_cannot_be_combined(tmp_path):
    with pytest.raises(ValueError, match="random_opening .* and openings cannot be combined"):
        cfg(suite_file(tmp_path), random_opening=2)


# ------------------------------------------------------------------ records as openings
def test_records_and_games_jsonl_are_suites(tmp_path):
    r = Rules.make(SMALL)
    # a JSON record: its start and all its actions
    rec = GameRecord.from_actions(r, [14, 21, 0, 35])
    s = load_suite(suite_file(tmp_path, rec.to_json(), "one.json"), SMALL)
    assert [o.actions for o in s.openings] == [(14, 21, 0, 35)]
    # a record that starts from a battle position: the position itself is the opening
    st = r.new_state()
    K.random_placement(st, 5)
    n = r.board_size
    board = st[K.HDR:K.HDR + n * n].reshape(n, n).tolist()
    pos = GameRecord.from_actions(r, [], start={"from": "position", "board": board, "to_move": "black"})
    s = load_suite(suite_file(tmp_path, pos.to_json(), "pos.json"), SMALL)
    assert s.openings[0].start["board"] == board and s.openings[0].actions == ()
    res = run_tournament(cfg(str(tmp_path / "pos.json"), games=2), workers=1, write_reports=False)
    for g in res.games:
        back = GameRecord.from_dict(g["record"])
        assert back.start["board"] == board  # the game starts from the position
    # the text notations of real records: competition (one game) and jiuchess CSV (one opening per game line)
    from jiu_env.records import to_competition, to_jiuchess

    comp = suite_file(tmp_path, to_competition(rec), "comp.txt")
    assert [o.actions for o in load_suite(comp, SMALL).openings] == [(14, 21, 0, 35)]
    two = GameRecord.from_actions(r, [21, 14, 5])
    csv = suite_file(tmp_path, to_jiuchess(rec) + "\n" + to_jiuchess(two) + "\n", "games.csv")
    assert [o.actions for o in load_suite(csv, SMALL).openings] == [(14, 21, 0, 35), (21, 14, 5)]
    with pytest.raises(SuiteError, match=r"games\.csv game line 1"):
        load_suite(suite_file(tmp_path, "Stage[1]:W(A,1);B(D,4)\n", "games.csv"), SMALL)
    # a finished game is no opening
    from jiu_env import play_game

    done = play_game(SMALL, "greedy", "random", seed=1).record
    with pytest.raises(IllegalOpening, match=r"opening done#1 .*the game is over after it"):
        load_suite(suite_file(tmp_path, done.to_json(), "done.json"), SMALL)


# ------------------------------------------------------------------ schedule and play
def test_every_opening_is_played_with_both_colours(tmp_path):
    path = suite_file(tmp_path)
    c = cfg(path, players=["random", "greedy", "ab=alphabeta:depth=1"], games=8)
    suite = c.openings["openings"]
    res = run_tournament(c, out_dir=str(tmp_path / "out"), workers=1)
    lines = read_games(tmp_path / "out" / "games.jsonl")
    assert len(lines) == 3 * 8
    by_id = {ln["id"]: ln for ln in lines}
    for a, b in c.pairs():
        for g in range(0, 8, 2):
            first, second = by_id[f"{a}|{b}|{g}"], by_id[f"{a}|{b}|{g + 1}"]
            k = (g // 2) % 3  # game pairs take the openings in order, cycling
            for ln in (first, second):
                assert ln["opening"] == {"index": k, **suite[k]}
                rec = GameRecord.from_dict(ln["record"])  # replays, result checked
                assert rec.moves()[:len(suite[k]["moves"])] == suite[k]["moves"]
                assert rec.meta["opening"] == suite[k]["name"]
                assert rec.meta["opening_plies"] == len(suite[k]["moves"])
                assert ln["decisions"] == len(rec.actions)
            # the same opening with colours swapped: each player has it once as White and once as Black
            assert (first["white"], first["black"]) == (second["black"], second["white"]) == (a, b)
            assert first["seed"] == second["seed"]
    # every opening reached every pair of players, both colours
    seen = {(ln["opening"]["index"], ln["white"], ln["black"]) for ln in lines}
    for k in range(3):
        for a, b in c.pairs():
            assert (k, a, b) in seen and (k, b, a) in seen
    # the reports say which openings were played and how they went
    rows = res.summary["openings"]["per_opening"]
    assert [r["games"] for r in rows] == [12, 6, 6]  # game pairs 0..3 of 3 player pairs: openings 0, 1, 2, 0
    assert all(r["white_wins"] + r["draws"] + r["black_wins"] == r["games"] for r in rows)
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["config"]["openings"] == c.openings and saved["openings"]["source"] == path
    md = (tmp_path / "out" / "results.md").read_text()
    assert f"## Openings ({path})" in md and "c2 d3 e4 a5 b0" in md and "openings from" in md
    # a tournament's games.jsonl is itself a suite: the openings its games started from
    again = load_suite(str(tmp_path / "out" / "games.jsonl"), SMALL)
    assert [o.actions for o in again.openings[:4]] == [o.actions for o in load_suite(path, SMALL).openings[:2]
                                                       for _ in range(2)]


def test_schedule_without_openings_is_unchanged():
    # the per-game fingerprint and config of a tournament without a suite or time control keep their old form
    c = cfg()
    d = c.to_dict()
    assert "openings" not in d and "tc" not in d
    t = schedule(c)[0]
    assert t.opening is None
    import hashlib

    key = json.dumps([t.white_spec, t.black_spec, t.white_version, t.black_version, t.rules, t.seed, t.white_seed,
                      t.black_seed, t.random_opening], sort_keys=True)
    assert t.fingerprint() == hashlib.sha1(key.encode()).hexdigest()[:16]


# ------------------------------------------------------------------ resuming
def test_resume_with_another_suite_is_refused(tmp_path):
    out = str(tmp_path / "out")
    a = suite_file(tmp_path, "c2 d3 a0\nd3 c2 f5\n", "a.txt")
    b = suite_file(tmp_path, "c2 d3 b1\n", "b.txt")
    res = run_tournament(cfg(a, games=2), out_dir=out, workers=1, write_reports=False)
    assert res.new_games == 2
    with pytest.raises(TournamentMismatch, match=r"another opening suite, .*a\.txt \(2 openings\) \(this one: .*b\.txt"):
        run_tournament(cfg(b, games=2), out_dir=out, workers=1, write_reports=False)
    with pytest.raises(TournamentMismatch, match="another opening suite"):
        run_tournament(cfg(None, games=2), out_dir=out, workers=1, write_reports=False)
    # the same openings (from another file) resume: nothing new to play; more games play only the new ones
    same = suite_file(tmp_path, "# the same\nc2 d3 a0\nd3 c2 f5\n", "copy.txt")
    assert run_tournament(cfg(same, games=2), out_dir=out, workers=1, write_reports=False).new_games == 0
    assert run_tournament(cfg(a, games=4), out_dir=out, workers=1, write_reports=False).new_games == 2
    # --fresh discards them
    assert run_tournament(cfg(b, games=2), out_dir=out, workers=1, resume=False, write_reports=False).new_games == 2


def test_games_without_openings_still_resume(tmp_path):
    out = str(tmp_path / "out")
    c = cfg(None, games=2, random_opening=2)
    assert run_tournament(c, out_dir=out, workers=1, write_reports=False).new_games == 2
    stored = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert "openings" not in stored and "tc" not in stored
    assert run_tournament(cfg(None, games=2, random_opening=2), out_dir=out, workers=1,
                          write_reports=False).new_games == 0
    with pytest.raises(TournamentMismatch, match=r"tc None \(this one: 0\.5\)"):
        run_tournament(cfg(None, games=2, random_opening=2, tc=0.5), out_dir=out, workers=1, write_reports=False,
                       log=[].append)


# ------------------------------------------------------------------ shipped suites
@pytest.mark.parametrize("name, size", [("jiu14", 14), ("jiu8", 8)])
def test_shipped_suites_load_and_are_legal(name, size):
    path = shipped_path(name)
    assert os.path.isfile(path) and SHIPPED[name] == os.path.basename(path)
    s = load_suite(name, {"profile": "competitive", "board_size": size})
    assert s.source == name and len(s.openings) >= 16
    r = Rules.make("competitive", board_size=size)
    for o in s.openings:
        st = o.state(r)  # legal, and still in the placement phase
        assert st[K.H_PHASE] == K.PH_PLACEMENT and 4 <= len(o.actions) <= 8
    assert len({o.actions for o in s.openings}) == len(s.openings)
    text = open(path, encoding="utf-8").read()
    assert f"# board_size: {size}" in text and "benchmarks/make_openings.py" in text
    # package data: the wheel carries the suites
    pyproject = open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), encoding="utf-8").read()
    assert '"data/openings/*.txt"' in pyproject


# ------------------------------------------------------------------ time control
def test_timed_spec_adds_the_budget_where_a_player_takes_one():
    assert timed_spec("alphabeta", 0.5) == "alphabeta:time=0.5"
    assert timed_spec("alphabeta:depth=3", 0.5) == "alphabeta:depth=3,time=0.5"
    assert timed_spec("mcts:sims=100", 2) == "mcts:sims=100,time=2.0"
    assert timed_spec("alphazero:net.pt", 1) == "alphazero:checkpoint=net.pt,time=1.0"
    assert timed_spec("az:net.pt", 1) == "alphazero:checkpoint=net.pt,time=1.0"  # the deprecated spelling too
    assert timed_spec("mix:0.5:alphabeta:depth=1", 0.1) == "mix:0.5:alphabeta:depth=1,time=0.1"
    assert timed_spec("phases:random+mcts", 0.1) == "phases:random+mcts:time=0.1"
    assert timed_spec("alphabeta:time=0.5", 0.5) == "alphabeta:time=0.5"
    for untimed in ("random", "greedy", "pattern", "policy", "sb3:model.zip", "mix:0.5:greedy",
                    "phases:random+greedy", "mymodule:MyBot"):
        assert timed_spec(untimed, 0.5) is None
    with pytest.raises(ValueError, match=r"'alphabeta:time=0.2' sets time=0.2.*tc\) is 0.5 s"):
        timed_spec("alphabeta:time=0.2", 0.5)
    with pytest.raises(ValueError, match="sets time"):
        cfg(None, players=["random", "alphabeta:time=0.2"], tc=0.5)
    for bad in (0, -1.0, float("nan"), 1e9):
        with pytest.raises((ValueError, TypeError), match="tc must be"):
            cfg(None, tc=bad)


def test_tc_reaches_every_time_taking_player(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    players = ["random", "greedy", "ab=alphabeta:depth=1", "mc=mcts:sims=8", "az=alphazero:sims=4",
               "mx=mix:0.5:alphabeta:depth=1", "ph=phases:random+mcts:sims=8"]
    rules8 = Rules.make("competitive", board_size=8, max_battle_turns=10).to_dict()
    c = TournamentConfig(players=players, games=1, seed=1, rules=rules8, tc=0.25, mode="gauntlet",
                         challengers=["ab", "mc", "az", "mx", "ph"])
    assert c.untimed() == ["random", "greedy"]
    assert c.to_dict()["tc"] == 0.25 and c.to_dict()["players"][2]["spec"] == "alphabeta:depth=1"  # as given
    built = []
    real = T.make_player

    def spy(spec, seed=None, **kw):
        p = real(spec, seed=seed, **kw)
        built.append((spec, p))
        return p

    # the players built to check their versions (tournament) and those that play (play, one game)
    monkeypatch.setattr(T, "make_player", spy)
    monkeypatch.setattr(P, "make_player", spy)
    notes = []
    res = run_tournament(c, out_dir=str(tmp_path), workers=1, log=notes.append, warm=False)

    def budgets(p):
        """The time budgets of a player and of the players inside it."""
        if type(p).__name__ == "MixPlayer":
            return budgets(p.inner)
        if type(p).__name__ == "PhasePlayer":
            return budgets(p.placement) + budgets(p.battle)
        return [p.time] if hasattr(p, "time") else []

    playing = [(spec, p) for spec, p in built if spec in {ln["white_spec"] for ln in res.games}
               | {ln["black_spec"] for ln in res.games}]
    assert playing
    for spec, p in playing:
        name = type(p).__name__
        if name in ("RandomBot", "GreedyBot"):
            assert not budgets(p)
        elif name == "PhasePlayer":
            assert p.battle.time == 0.25 and not hasattr(p.placement, "time")
        else:
            assert budgets(p) == [0.25], (spec, name)
    kinds = {type(p).__name__ for _, p in playing}
    assert {"AlphaBetaBot", "MCTSBot", "AlphaZeroBot", "MixPlayer", "PhasePlayer"} <= kinds
    assert any("does not reach random, greedy" in n for n in notes)
    assert res.summary["tc"] == {"seconds": 0.25, "per": "turn", "untimed": ["random", "greedy"]}
    assert res.summary["players"]["az"]["spec"] == "alphazero:sims=4,time=0.25"
    md = (tmp_path / "results.md").read_text()
    assert "time control 0.25 s per turn (not reaching random, greedy" in md


# ------------------------------------------------------------------ command line
def test_cli_openings_and_tc(tmp_path, capsys):
    out = str(tmp_path / "out")
    small = ["--rule", "board_size=6", "--rule", "max_battle_turns=40"]
    path = suite_file(tmp_path)
    rc = main(["eval", "random", "ab=alphabeta:depth=1", *small, "--games", "2", "--openings", path, "--tc", "0.5",
               "--workers", "1", "--no-progress", "--out", out])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "does not reach random" in cap.err
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["config"]["tc"] == 0.5 and saved["config"]["openings"]["source"] == path
    assert saved["players"]["ab"]["spec"] == "alphabeta:depth=1,time=0.5"
    assert "openings from" in cap.out and "time control 0.5 s per turn" in cap.out
    # both opening settings at once: refused
    rc = main(["eval", "random", "greedy", *small, "--openings", path, "--random-opening", "2", "--no-progress"])
    assert rc == 2 and "--openings and --random-opening cannot be combined" in capsys.readouterr().err
    # resuming with another suite: refused, naming it
    other = suite_file(tmp_path, "d3 c2\n", "other.txt")
    rc = main(["eval", "random", "ab=alphabeta:depth=1", *small, "--games", "2", "--openings", other, "--tc", "0.5",
               "--workers", "1", "--no-progress", "--out", out])
    assert rc == 2 and "another opening suite" in capsys.readouterr().err
    # an illegal opening: the error names it
    bad = suite_file(tmp_path, "c2 d3\nc2 c2\n", "bad.txt")
    rc = main(["eval", "random", "greedy", *small, "--openings", bad, "--no-progress"])
    assert rc == 2 and "opening bad#2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval", "random", "greedy", "--tc", "0"])
    assert "--tc" in capsys.readouterr().err


def test_config_file_names_a_suite_beside_it(tmp_path, capsys):
    folder = tmp_path / "conf"
    folder.mkdir()
    suite_file(folder, "c2 d3 a0\n", "mine.txt")
    (folder / "t.toml").write_text('games = 2\nopenings = "mine.txt"\ntc = 0.5\nrules = {board_size = 6, '
                                   'max_battle_turns = 40}\nplayers = ["random", "greedy"]\n', encoding="utf-8")
    c = T.load_config(folder / "t.toml")
    assert c.openings["openings"] == [{"name": "mine#1", "moves": ["c2", "d3", "a0"]}] and c.tc == 0.5
    # the command line's --random-opening replaces the file's suite
    rc = main(["eval", "--config", str(folder / "t.toml"), "--random-opening", "2", "--workers", "1",
               "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "2 random opening placements" in cap.out and "openings from" not in cap.out


def test_a_random_opening_longer_than_the_placement_reads_back_as_the_whole_placement(tmp_path):
    import json

    from jiu_env.evaluation.openings import load_suite
    from jiu_env.evaluation.play import run_game
    from jiu_env.players import make_player

    rules = {"board_size": 6, "max_battle_turns": 40}
    r = run_game(rules, make_player("random", seed=1), make_player("random", seed=2), seed=3, random_opening=5000)
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(r["record"].to_dict()))
    (opening,) = load_suite(str(path), rules).openings
    assert opening.actions == tuple(r["record"].actions[:36])  # the 36 placements, not the whole game
