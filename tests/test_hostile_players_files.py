"""Hostile input to players, specs and files: search state across rule sets, re-entrant opponents, nesting
and size limits, model files, failed saves and the small ones.

Each case gets a clear exception naming the problem and leaves what was
there untouched; inputs that could kill the interpreter run in a subprocess.
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.bots import make_bot
from jiu_env.state import position_state


def _run(code, timeout=300):
    """Run ``code`` in a fresh interpreter; return (returncode, output)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _legal(s):
    buf = np.empty(K.num_actions(int(s[K.H_N])), np.int64)
    k = K.legal_actions(s, buf)
    return set(buf[:k].tolist())


# ------------------------------------------------- class 3: search state and the rules
def _same_board_two_rules():
    """One 6x6 battle position under two rule sets with disjoint legal moves for White.

    White has 5 stones: with ``fly_threshold=5, flyer_moves="fly_only"`` it may only fly, with
    ``fly_threshold=3`` it may not fly at all.  Board, side to move and decision count agree.
    """
    board = np.zeros((6, 6), int)
    for p in [(0, 0), (0, 2), (2, 0), (5, 5), (3, 3)]:
        board[p] = 1
    for p in [(1, 1), (1, 4), (4, 1), (4, 4), (2, 2), (2, 4), (4, 2), (0, 5), (5, 0)]:
        board[p] = 2
    fly = position_state(Rules.make("competitive", board_size=6, fly_threshold=5, flyer_moves="fly_only"),
                         board, "white")
    walk = position_state(Rules.make("competitive", board_size=6, fly_threshold=3), board, "white")
    assert K.same_decision_point(fly, walk)
    assert not _legal(fly) & _legal(walk)
    return fly, walk


@pytest.mark.parametrize("spec", ["mcts:sims=200", "mcts:sims=200,minimax=0", "mcts:sims=100,reuse=true",
                                  "alphabeta:depth=2", "mix:0.0:mcts:sims=100", "phases:random+mcts:sims=100"])
def test_a_bot_reused_under_other_rules_plays_a_legal_move(spec):
    fly, walk = _same_board_two_rules()
    for first, second in ((fly, walk), (walk, fly)):
        bot = make_bot(spec, seed=1)
        assert bot.step(first.copy()) in _legal(first)
        a = bot.step(second.copy())
        assert a in _legal(second), f"{spec}: {a} is illegal under the second rule set"


def test_mcts_keeps_its_tree_under_the_same_rules_only():
    fly, walk = _same_board_two_rules()
    bot = make_bot("mcts:sims=200", seed=0)
    bot.step(fly)
    bot.step(fly.copy())
    assert bot.last_info["reused_nodes"] > 0  # same rules: the tree is kept
    bot.step(walk)
    assert bot.last_info["reused_nodes"] == 0  # other rules: a fresh tree


def test_find_descendant_refuses_a_state_under_other_rules():
    from jiu_env.bots.search_tree import find_descendant, new_tree, reset_root, same_rules

    fly, walk = _same_board_two_rules()
    tree = new_tree(16)
    reset_root(tree, np.zeros(2, np.int64))
    assert same_rules(fly, fly.copy()) and not same_rules(fly, walk)
    assert find_descendant(tree, fly, fly.copy(), 0) == 0
    assert find_descendant(tree, fly, walk, 0) == -1
    for f in K.RULE_FIELDS:  # every rules slot counts, not only the board size
        other = fly.copy()
        other[f] += 1
        assert find_descendant(tree, fly, other, 0) == -1, f


def test_alphabeta_tables_are_fresh_under_other_rules():
    fly, walk = _same_board_two_rules()
    bot = make_bot("alphabeta:depth=2", seed=0)
    bot.step(fly)
    tt = bot._ctx[7]
    bot.step(fly.copy())
    assert bot._ctx[7] is tt  # same rules: the table is kept
    bot.step(walk)
    assert bot._ctx[7] is not tt and bot._ctx_rules == tuple(int(walk[f]) for f in K.RULE_FIELDS)


# ------------------------------------------------- class 4: re-entrant calls of the single-agent env
def test_an_opponent_cannot_step_or_reset_the_env_that_asks_it():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None
    seen = []

    def cheat(kind):
        def opponent(state):
            buf = np.empty(K.num_actions(int(state[K.H_N])), np.int64)
            k = K.legal_actions(state, buf)
            if kind == "step":
                try:
                    env.step(int(buf[0]))  # act for the learner
                except RuntimeError as e:
                    seen.append(str(e))
                    raise
            else:
                try:
                    env.reset(seed=5)
                except RuntimeError as e:
                    seen.append(str(e))
                    raise
            return int(buf[0])
        return opponent

    for kind in ("step", "reset"):
        env = JiuVsBotEnv(opponent=cheat(kind), learner="black", board_size=6)
        seen.clear()
        with pytest.raises(RuntimeError, match=f"{kind}\\(\\) called during the opponent's turn"):
            env.reset(seed=0)  # White (the opponent) moves first
        assert seen and "re-entrant" in seen[0]
        # the env is left without a half-made game: it asks for a reset, and a fair opponent plays again
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)
        env.set_opponent("random")
        env.reset(seed=0)
        obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert env._busy is None


def test_an_opponent_that_catches_the_refusal_leaves_a_consistent_game():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None
    refused = []

    def polite(state):
        try:
            env.step(0)
        except RuntimeError:
            refused.append(True)
        buf = np.empty(K.num_actions(int(state[K.H_N])), np.int64)
        return int(buf[:K.legal_actions(state, buf)][0])

    env = JiuVsBotEnv(opponent=polite, learner="black", board_size=6)
    env.reset(seed=0)
    before = env.state.copy()
    a = int(np.flatnonzero(env.action_masks())[0])
    env.step(a)
    assert refused and env.state[K.H_TO_MOVE] == K.BLACK and env.state[K.H_DECISIONS] == before[K.H_DECISIONS] + 2


def test_a_placement_player_cannot_reset_the_env():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None

    def placer(state):
        env.reset()
        return 0

    env = JiuVsBotEnv(opponent="random", placement=placer, start="battle", board_size=6)
    with pytest.raises(RuntimeError, match="placement player's decision"):
        env.reset(seed=0)


# ------------------------------------------------- class 10: the small ones (envs)
@pytest.mark.parametrize("value", [1e6 + 1, -2e6, 1e300, -1e308, float("inf"), float("nan")])
def test_capture_reward_that_could_overflow_is_refused(value):
    from jiu_env.envs.single_agent import JiuVsBotEnv

    with pytest.raises(ValueError, match="capture_reward"):
        JiuVsBotEnv(board_size=6, capture_reward=value)
    env = JiuVsBotEnv(board_size=6, capture_reward=0.5)
    with pytest.raises(ValueError, match="capture_reward"):
        env.capture_reward = value  # set later: checked too, the old value kept
    assert env.capture_reward == 0.5
    assert JiuVsBotEnv(board_size=6, capture_reward=-1e6).capture_reward == -1e6


def test_capture_reward_survives_pickling():
    import pickle

    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = JiuVsBotEnv(board_size=6, capture_reward=0.25)
    env.reset(seed=1)
    assert pickle.loads(pickle.dumps(env)).capture_reward == 0.25


@pytest.mark.parametrize("wrapped", [True, False])
def test_aec_last_after_every_agent_stepped_out_is_a_clear_error(wrapped):
    from jiu_env.envs.aec import env as make_env, raw_env

    e = make_env(rules={"board_size": 6}) if wrapped else raw_env(rules={"board_size": 6})
    e.reset(seed=0)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not e.agents
    with pytest.raises(RuntimeError, match="stepped out of the game.*reset"):
        e.last()
    with pytest.raises(RuntimeError, match="stepped out"):
        e.last(observe=False)
    e.reset(seed=1)
    assert e.last()[1:4] == (0.0, False, False)


# ------------------------------------------------- class 5: recursion and size limits
@pytest.mark.parametrize("spec", [
    "mix:0.1:" * 9 + "random",
    "phases:random+" * 9 + "random",
    "mix:0.1:phases:random+" * 5 + "random",
    "mix:0.1:" * 100_000 + "random",  # Python's recursion limit is far below: must not be reached
])
def test_nested_player_specs_past_the_limit_are_a_named_error(spec):
    from jiu_env.players import MAX_SPEC_DEPTH, make_player

    with pytest.raises(ValueError, match=f"nest at most {MAX_SPEC_DEPTH} deep"):
        make_player(spec)
    assert make_player("random").step(Rules.make(board_size=6).new_state()) >= 0  # the counter is reset


def test_nested_player_specs_up_to_the_limit_still_work():
    from jiu_env.players import MAX_SPEC_DEPTH

    s = Rules.make(board_size=6).new_state()
    bot = make_bot("mix:0.5:" * (MAX_SPEC_DEPTH - 1) + "greedy", seed=1)
    assert bot.step(s) in _legal(s)
    bot = make_bot("phases:random+" * (MAX_SPEC_DEPTH - 2) + "mix:0.5:greedy", seed=1)
    assert bot.step(s) in _legal(s)


def test_deep_player_spec_does_not_crash_the_interpreter():
    code, out = _run("""
        from jiu_env.players import make_player
        try:
            make_player("mix:0.1:" * 200000 + "random")
        except ValueError as e:
            print("refused:", str(e)[:40])
    """)
    assert code == 0 and "refused: player specs nest at most" in out, out


def _record_dict():
    from jiu_env.records import GameRecord

    return GameRecord.from_actions({"board_size": 6}, []).to_dict()


@pytest.mark.parametrize("depth", [40, 990, 5000, 200_000])
@pytest.mark.parametrize("field", ["meta", "players", "start", "result", "actions"])
def test_deeply_nested_json_records_are_a_record_error(depth, field):
    from jiu_env.records import GameRecord, RecordError

    d = _record_dict()
    d[field] = None
    text = json.dumps(d).replace(f'"{field}": null', f'"{field}": {{"a": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(RecordError, match="nest"):
        GameRecord.from_json(text)


def test_deeply_nested_games_jsonl_lines(tmp_path):
    from jiu_env.evaluation.tournament import read_games
    from jiu_env.records import RecordError, load_record

    good = json.dumps({"id": "a|b|0", "record": _record_dict()})
    path = tmp_path / "games.jsonl"
    path.write_text(good + "\n" + "[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"games.jsonl line 2: JSON nested too deeply"):
        load_record(path, game="x")
    assert load_record(path, game="a|b|0").actions == []  # found before the deep line
    assert [g["id"] for g in read_games(path)] == ["a|b|0"]  # the deep line is an unreadable line
    nested = []
    for _ in range(40):  # readable by the parser, deeper than a record may nest
        nested = [nested]
    deep_record = json.dumps({"id": "a|b|1", "record": {**_record_dict(), "meta": {"x": nested}}})
    path.write_text(deep_record + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match="nest more than"):
        load_record(path)


def test_games_jsonl_is_written_as_strict_json(tmp_path, monkeypatch):
    """A result line holding NaN is refused by name, not written as JSON that strict readers reject."""
    import jiu_env.evaluation.backends as B
    import jiu_env.evaluation.tournament as T
    from jiu_env.fileio import dumps_json

    with pytest.raises(ValueError, match="line x: holds NaN"):
        dumps_json({"a": [1.0, float("inf")]}, "line x")
    real = B.execute

    def with_nan(todo, workers, **kw):
        for line in real(todo, workers, **kw):
            yield {**line, "time": {"white": float("nan"), "black": 0.0}}

    monkeypatch.setattr(B, "execute", with_nan)
    cfg = T.TournamentConfig(players=["random", "greedy"], games=2, rules={"board_size": 6})
    with pytest.raises(ValueError, match=r"game random\|greedy\|\d+: holds NaN or Infinity"):
        T.run_tournament(cfg, out_dir=str(tmp_path), workers=1, write_reports=False)
    assert "NaN" not in (tmp_path / "games.jsonl").read_text()


def test_deep_jsonl_line_is_named_when_a_tournament_resumes(tmp_path):
    from jiu_env.evaluation.tournament import TournamentConfig, run_tournament

    cfg = TournamentConfig(players=["random", "greedy"], games=2, rules={"board_size": 6})
    run_tournament(cfg, out_dir=str(tmp_path), workers=1, write_reports=False)
    with open(tmp_path / "games.jsonl", "a", encoding="utf-8") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
    notes = []
    res = run_tournament(cfg, out_dir=str(tmp_path), workers=1, write_reports=False, log=notes.append)
    assert res.new_games == 0 and any("line 3 is JSON nested too deeply" in n for n in notes), notes
    assert "[[[" in (tmp_path / "games.stale.jsonl").read_text()


def test_replay_of_an_endless_or_huge_file_is_refused(tmp_path, monkeypatch, capsys):
    from jiu_env import fileio
    from jiu_env.cli import main
    from jiu_env.records import RecordError, load_record

    with pytest.raises(RecordError, match="more than 67108864 bytes"):
        load_record("/dev/zero")
    big = tmp_path / "big.json"
    big.write_text(json.dumps(_record_dict()) + " " * 2000, encoding="utf-8")
    monkeypatch.setattr(fileio, "MAX_RECORD_BYTES", 1000)
    with pytest.raises(RecordError, match="larger than the 1000-byte limit"):
        load_record(big)
    assert main(["replay", str(big), "--all"]) == 2
    assert "larger than the 1000-byte limit" in capsys.readouterr().err
    monkeypatch.setattr(fileio, "MAX_RECORD_BYTES", 64 << 20)
    assert load_record(big).actions == []


def test_read_text_limited_reads_at_most_limit_plus_one_bytes(tmp_path):
    from jiu_env.fileio import FileTooLarge, read_text_limited

    with pytest.raises(FileTooLarge, match="holds more than 5000 bytes"):
        read_text_limited("/dev/zero", 5000)  # a stream that does not end
    (tmp_path / "b.txt").write_bytes(b"x" * 5001)
    with pytest.raises(FileTooLarge, match="5001 bytes: larger than the 5000-byte limit"):
        read_text_limited(tmp_path / "b.txt", 5000)
    assert read_text_limited(tmp_path / "b.txt", 5001) == "x" * 5001
    (tmp_path / "a.txt").write_bytes(b"a\r\nb\rc\n")
    assert read_text_limited(tmp_path / "a.txt", 7) == "a\nb\nc\n"  # universal newlines, as open()


@pytest.mark.parametrize("flags, message", [
    (["--games", "1000001"], "games per pair must be an int in 1..1000000, not 1000001"),
    (["--games", str(10 ** 30)], "games per pair must be an int in 1..1000000, not 1"),
    (["--games", "100000", "--players", "6"], "would schedule 1,500,000 games"),
    (["--random-opening", "100001"], "random_opening must be an int in 0..100000, not 100001"),
    (["--bootstrap", "100001"], "bootstrap_samples must be an int in 2..100000, not 100001"),
    (["--workers", "5000"], "workers must be an int in 1..4096 or None (None for all cores), not 5000"),
])
def test_eval_counts_have_an_upper_bound_checked_before_any_work(flags, message, tmp_path, capsys, monkeypatch):
    import jiu_env.evaluation.tournament as T
    from jiu_env.cli import main

    def no_schedule(*a, **k):
        raise AssertionError("the schedule was built")

    monkeypatch.setattr(T, "schedule", no_schedule)
    players = ["random", "greedy"]
    if "--players" in flags:
        k = int(flags[flags.index("--players") + 1])
        flags = flags[:flags.index("--players")]
        players = [f"p{i}=random" for i in range(k)]
    rc = main(["eval", *players, *flags, "--rule", "board_size=6", "--no-progress", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o" / "games.jsonl").exists()


def test_tournament_config_bounds():
    from jiu_env.evaluation.tournament import TournamentConfig

    with pytest.raises(ValueError, match=r"^games per pair must be an int in 1\.\.1000000, not 1000000000000$"):
        TournamentConfig(players=["random", "greedy"], games=10 ** 12)
    with pytest.raises(ValueError, match="would schedule"):
        TournamentConfig(players=[f"p{i}=random" for i in range(50)], games=1000)
    TournamentConfig(players=["random", "greedy"], games=1_000_000)  # the bound itself is allowed


# ------------------------------------------------- class 6: model files
def _bad_model_files(tmp_path, suffix):
    import zipfile

    files = {"junk": b"not a model at all" * 10, "empty": b""}
    for name, data in files.items():
        (tmp_path / f"{name}{suffix}").write_bytes(data)
    with zipfile.ZipFile(tmp_path / f"zip{suffix}", "w") as z:
        z.writestr("archive/version", "3")
    with zipfile.ZipFile(tmp_path / f"foreign{suffix}", "w") as z:
        z.writestr("data", "{}")
    return [tmp_path / f"{n}{suffix}" for n in ("junk", "empty", "zip", "foreign")]


def test_a_corrupt_or_foreign_alphazero_file_is_a_value_error_naming_it(tmp_path):
    torch = pytest.importorskip("torch")
    from jiu_env.bots.alphazero import CHECKPOINT_FORMAT, load_checkpoint

    files = _bad_model_files(tmp_path, ".pt")
    for name, data in {"foreign_dict": {"a": 1}, "no_keys": {"format": CHECKPOINT_FORMAT},
                       "bad_config": {"format": CHECKPOINT_FORMAT, "config": {"nope": 1}, "state_dict": {}},
                       "bad_rules": {"format": CHECKPOINT_FORMAT, "config": {}, "state_dict": {},
                                     "rules": {"board_size": -3}}}.items():
        torch.save(data, tmp_path / f"{name}.pt")
        files.append(tmp_path / f"{name}.pt")
    for f in files:
        with pytest.raises(ValueError, match=str(f)):
            load_checkpoint(f)
        with pytest.raises(ValueError, match=str(f)):
            make_bot(f"alphazero:{f}")
    with pytest.raises(FileNotFoundError, match="nothere"):
        load_checkpoint(tmp_path / "nothere.pt")


def test_alphazero_refuses_a_position_on_another_board_size():
    pytest.importorskip("torch")
    from jiu_env.bots.alphazero import DEFAULT_CHECKPOINT

    bot = make_bot(f"alphazero:checkpoint={DEFAULT_CHECKPOINT},sims=4", seed=0)  # the shipped 8x8 network, by name
    for n in (6, 14):
        s = Rules.make(board_size=n).new_state()
        before = s.copy()
        with pytest.raises(ValueError, match=rf"alphazero checkpoint .*H_N={n} \(network: 8\).*8x8 board"):
            bot.step(s)
        assert np.array_equal(s, before)
    s = Rules.make(board_size=8).new_state()
    assert bot.step(s) in _legal(s)  # its own board size still plays
    # without a checkpoint the network shipped for the position's size plays it; a size without one is refused
    default = make_bot("alphazero:sims=4", seed=0)
    s = Rules.make(board_size=14).new_state()
    assert default.step(s) in _legal(s) and default.checkpoint.name == "policy_jiu14.pt"
    with pytest.raises(ValueError, match=r"H_N=6 \(network: 14\)"):
        default.step(Rules.make(board_size=6).new_state())


def test_a_corrupt_or_foreign_sb3_file_is_a_value_error_naming_it(tmp_path):
    pytest.importorskip("sb3_contrib")
    from jiu_env.sb3 import load_sb3_model

    for f in _bad_model_files(tmp_path, ".zip"):
        with pytest.raises(ValueError, match=str(f)):
            load_sb3_model(f)
        with pytest.raises(ValueError, match=str(f)):
            make_bot(f"sb3:{f}")


class _Payload:
    """Unpickled, it makes the folder ``marker``: the stand-in for code a model file could run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (self.marker,)


class _OwnPolicy:
    """Stands for a policy class of a user's own (pickled by reference: module and name)."""


def _with_entries(src, dst, **entries):
    """A copy of the model file ``src`` whose pickled ``data`` entries are replaced by ``entries``."""
    import base64
    import pickle
    import zipfile

    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    for key, obj in entries.items():
        data[key] = {":type:": "x", ":serialized:": base64.b64encode(pickle.dumps(obj)).decode()}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    return dst


SHIPPED_SB3 = pathlib.Path(__file__).resolve().parents[1] / "baselines/training/sb3-8-scratch/model.zip"


def test_an_sb3_file_runs_no_code_it_holds_unless_trusted(tmp_path):
    pytest.importorskip("sb3_contrib")
    from jiu_env import sb3

    marker = tmp_path / "ran"
    needed = _with_entries(SHIPPED_SB3, tmp_path / "needed.zip", policy_class=_Payload(str(marker)))
    for load in (lambda: sb3.load_sb3_model(needed), lambda: make_bot(f"sb3:{needed}")):
        with pytest.raises(ValueError, match=r"its policy_class is pickled as posix\.mkdir, which jiu_env does not "
                                             r"unpickle .*trusted=True"):
            load()
        assert not marker.exists()
    # an entry only training reads (the episode buffer) is left out: the model plays, nothing ran
    extra = _with_entries(SHIPPED_SB3, tmp_path / "extra.zip", ep_info_buffer=_Payload(str(marker)))
    model = sb3.load_sb3_model(extra)
    assert not marker.exists() and model.ep_info_buffer is None
    s = Rules.make(board_size=8).new_state()
    assert make_bot(f"sb3:{extra}", seed=0).step(s) in _legal(s)
    # what the file holds runs once it is trusted (so the payload above is live)
    sb3.load_sb3_model(extra, trusted=True)
    assert marker.exists()
    with pytest.raises(ValueError, match="trusted"):
        sb3.load_sb3_model(extra, trusted="maybe")


def test_a_policy_class_of_ones_own_loads_once_allowed(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    from jiu_env import sb3

    own = _with_entries(SHIPPED_SB3, tmp_path / "own.zip", clip_range=_OwnPolicy())
    assert sb3.load_sb3_model(own).clip_range is not None  # a training entry naming it: left out (0.0)
    own = _with_entries(SHIPPED_SB3, tmp_path / "own2.zip", policy_class=_OwnPolicy)
    name = f"{_OwnPolicy.__module__}._OwnPolicy"
    with pytest.raises(ValueError, match=rf"pickled as {name}.*add_safe_globals"):
        sb3.load_sb3_model(own)
    monkeypatch.setattr(sb3, "_SAFE_GLOBALS", set(sb3._SAFE_GLOBALS))
    sb3.add_safe_globals(_OwnPolicy)
    with pytest.raises(ValueError, match="not a readable MaskablePPO model file"):  # allowed, then SB3 builds it
        sb3.load_sb3_model(own)
    with pytest.raises(TypeError, match="add_safe_globals takes importable classes"):
        sb3.add_safe_globals(lambda: 0)


# ------------------------------------------------- class 7: a failed save leaves the old file
def test_a_failed_record_save_leaves_the_previous_file(tmp_path, monkeypatch):
    import dataclasses

    from jiu_env.records import GameRecord, formats

    rec = GameRecord.from_actions({"board_size": 6}, [])
    # a player name that cannot be encoded (a lone surrogate, as from undecodable command-line bytes)
    bad = GameRecord.from_actions({"board_size": 6}, [], players={"white": "\udcff", "black": "b"})
    names = ("game.json", "game.txt", "game.csv")
    for name in names:
        rec.save(tmp_path / name)
    # the CSV line has no names: make save's jiuchess writer give text that cannot be encoded
    monkeypatch.setitem(formats.FORMATS, "jiuchess",
                        dataclasses.replace(formats.FORMATS["jiuchess"], write=lambda record: "Stage[1]:\udcff"))
    for name in names:
        path = tmp_path / name
        before = path.read_bytes()
        assert before
        with pytest.raises(ValueError):  # the JSON writer names the field; the others fail in encoding
            bad.save(path)
        assert path.read_bytes() == before, name  # before: truncated to 0 bytes
    assert sorted(os.listdir(tmp_path)) == ["game.csv", "game.json", "game.txt"]  # no temporary file left


def test_atomic_write_keeps_the_file_on_any_failure(tmp_path, monkeypatch):
    from jiu_env import fileio

    path = tmp_path / "results.json"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o640)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio.os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        fileio.atomic_write_text(path, "new")
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["results.json"]
    fileio.atomic_write_text(path, "new")
    assert path.read_text(encoding="utf-8") == "new" and (os.stat(path).st_mode & 0o777) == 0o640
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        fileio.atomic_write_text(tmp_path, "x")
    with pytest.raises(FileNotFoundError, match="nodir"):
        fileio.atomic_write_text(tmp_path / "nodir" / "x.json", "x")
    link = tmp_path / "link.json"
    link.symlink_to(path)
    fileio.atomic_write_text(link, "via link")
    assert link.is_symlink() and path.read_text(encoding="utf-8") == "via link"


def test_play_save_that_fails_keeps_the_file_and_says_so(tmp_path, monkeypatch, capsys):
    from jiu_env import cli
    from jiu_env.records import GameRecord

    path = tmp_path / "g.json"
    path.write_text("previous game", encoding="utf-8")

    def unencodable(self, moves=True, indent=None):
        return "\udcff"

    monkeypatch.setattr(GameRecord, "to_json", unencodable)
    answers = iter(["q"])
    args = cli.build_parser().parse_args(["play", "--bot", "random", "--rule", "board_size=6",
                                          "--save", str(path), "--seed", "1"])
    rc = cli.cmd_play(args, inp=lambda prompt: next(answers))
    assert rc == 1 and "could not save (the file that was there is unchanged)" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "previous game"


def test_reports_are_written_whole(tmp_path, monkeypatch):
    from jiu_env import fileio
    from jiu_env.evaluation.tournament import TournamentConfig, run_tournament

    cfg = TournamentConfig(players=["random", "greedy"], games=2, rules={"board_size": 6})
    run_tournament(cfg, out_dir=str(tmp_path), workers=1)
    before = {p: (tmp_path / p).read_bytes() for p in ("results.json", "ratings.csv", "pairs.csv", "results.md")}
    assert b"\r\n" in before["ratings.csv"]  # csv line ends as before
    calls = []

    def failing(path, *a, **k):
        calls.append(os.path.basename(path))
        raise OSError(28, "No space left on device")

    import jiu_env.evaluation.report as R
    monkeypatch.setattr(R, "atomic_write_text", failing)
    cfg2 = TournamentConfig(players=["random", "greedy"], games=4, rules={"board_size": 6})
    with pytest.raises(OSError):
        run_tournament(cfg2, out_dir=str(tmp_path), workers=1)
    assert calls == ["results.json"]
    assert {p: (tmp_path / p).read_bytes() for p in before} == before


# ------------------------------------------------- class 10: the small ones (specs, readers)
@pytest.mark.parametrize("spec", ["mcts:sims=10,sims=20", "alphabeta:depth=1,depth=1", "greedy:a=1, a=2",
                                  "mix:0.5:mcts:c=1,c=2"])
def test_repeated_bot_parameters_are_refused(spec):
    with pytest.raises(ValueError, match="given twice"):
        make_bot(spec)


def test_repeated_parameters_of_a_user_class_are_refused(tmp_path):
    f = tmp_path / "mybot.py"
    f.write_text("from jiu_env.bots.random_bot import RandomBot\n"
                 "class B(RandomBot):\n    def __init__(self, seed=None, x=0):\n        super().__init__(seed=seed)\n")
    make_bot(f"{f}:B:x=1")
    with pytest.raises(ValueError, match="given twice"):
        make_bot(f"{f}:B:x=1,x=2")


@pytest.mark.parametrize("strict", ["false", "", 0, 1, None, [], 1.0])
def test_strict_takes_a_bool_only(strict, tmp_path):
    from jiu_env.records import GameRecord, from_competition, from_jiuchess, load_record
    from jiu_env.records.competition import to_competition
    from jiu_env.records.jiuchess import to_jiuchess

    rec = GameRecord.from_actions({"board_size": 6}, [])
    comp, csv_line = to_competition(rec), to_jiuchess(rec)
    with pytest.raises(TypeError, match="strict must be True or False"):
        from_competition(comp, rules={"board_size": 6}, strict=strict)
    with pytest.raises(TypeError, match="strict must be True or False"):
        from_jiuchess(csv_line, rules={"board_size": 6}, strict=strict)
    rec.save(tmp_path / "g.json")
    with pytest.raises(TypeError, match="strict must be True or False"):
        load_record(tmp_path / "g.json", strict=strict)
    for ok in (True, False, np.bool_(True)):
        assert from_competition(comp, rules={"board_size": 6}, strict=ok).actions == []


@pytest.mark.parametrize("make, hint", [
    (lambda: make_bot("randm"), "did you mean 'random'"),
    (lambda: make_bot("alphabeta:dept=2"), "did you mean 'depth'"),
    (lambda: Rules.make("competitve"), "did you mean 'competitive'"),
    (lambda: Rules.make("competitive", board_sise=8), "did you mean 'board_size'"),
])
def test_misspelt_names_get_the_near_match(make, hint):
    with pytest.raises(ValueError, match=hint):
        make()


def test_two_runs_on_one_out_dir_cannot_interleave(tmp_path, capsys):
    from jiu_env.cli import main
    from jiu_env.evaluation import TournamentConfig, run_tournament
    from jiu_env.evaluation.tournament import OutDirInUse, lock_out_dir

    cfg = TournamentConfig(players=["random", "b=random"], games=2, rules={"board_size": 6})
    out = tmp_path / "out"
    out.mkdir()
    with lock_out_dir(str(out)):  # a run in progress holds the directory
        with pytest.raises(OutDirInUse, match="in use by another jiu eval run"):
            run_tournament(cfg, out_dir=str(out), workers=1)
        assert not (out / "games.jsonl").exists()
        rc = main(["eval", "random", "b=random", "--rule", "board_size=6", "--games", "2", "--workers", "1",
                   "--no-progress", "--out", str(out)])
        assert rc != 0 and "in use by another jiu eval run" in capsys.readouterr().err
    res = run_tournament(cfg, out_dir=str(out), workers=1)  # released: the next run goes ahead
    assert res.new_games == 2


def test_a_player_file_that_fails_to_import_is_not_kept_half_run(tmp_path, monkeypatch):
    from jiu_env.players import make_player

    monkeypatch.chdir(tmp_path)
    (tmp_path / "half.py").write_text("from jiu_env.bots.random_bot import RandomBot\n\n"
                                      "class Mine(RandomBot):\n    pass\n\nimport nonexistent_module_xyz\n")
    for _ in range(2):  # the second call imports it again (and fails again), not the half-run module
        with pytest.raises(ImportError, match="half.py.* cannot be loaded: ModuleNotFoundError: .*nonexistent_module_xyz"):
            make_player("half.py:Mine")


def test_deeply_nested_specs_are_a_value_error_everywhere():
    from jiu_env.evaluation import TournamentConfig
    from jiu_env.players import whole_game_spec
    from jiu_env.warmup import builtin_specs

    deep = "mix:0.5:" * 1000 + "random"
    for call in (lambda: whole_game_spec(deep), lambda: builtin_specs("phases:" + deep + "+random"),
                 lambda: TournamentConfig(players=[deep, "random"])):
        with pytest.raises(ValueError, match="nest at most"):
            call()


def test_atomic_writes_take_a_long_name_and_name_the_file_on_a_write_error(tmp_path, monkeypatch):
    import errno

    from jiu_env import fileio

    long = tmp_path / ("a" * 250 + ".json")
    fileio.atomic_write_text(long, "x")
    assert long.read_text() == "x"

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left on device") as e:
        fileio.atomic_write_text(tmp_path / "b.json", "y")
    assert e.value.filename == str(tmp_path / "b.json") and os.listdir(tmp_path) == [long.name]


@pytest.mark.parametrize("source, words", [
    ("def (\n", r"SyntaxError: invalid syntax \(line 1\)"),
    ("raise RuntimeError('at the top')\n", "RuntimeError: at the top"),
])
def test_a_player_file_that_fails_to_load_is_named_not_a_traceback(tmp_path, source, words, capsys):
    from jiu_env.cli import main
    from jiu_env.players import make_player

    bad = tmp_path / "badbot.py"
    bad.write_text(source)
    with pytest.raises(ValueError, match=f"player module file '{bad}' cannot be loaded: {words}"):
        make_player(f"{bad}:Bot")
    assert main(["eval", "random", f"b={bad}:Bot", "--board-size", "6", "--games", "2", "--workers", "1"]) == 2
    assert "cannot be loaded" in capsys.readouterr().err
    # a broken file is a mistake to fix, not a missing optional package: an optional player stops the run
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'games = 2\noptional = ["b"]\n[rules]\nboard_size = 6\n[[players]]\nspec = "random"\n'
                   f'[[players]]\nname = "b"\nspec = "{bad}:Bot"\n')
    assert main(["eval", "--config", str(cfg), "--workers", "1", "--no-progress"]) == 2
    assert "cannot be loaded" in capsys.readouterr().err


def test_player_seed_kind_prefix_and_class_parameters_are_checked():
    from jiu_env.players import make_player, register_player_kind

    assert make_player("random", seed=np.int64(3)) is not None
    with pytest.raises(ValueError, match="^seed must be an int >= 0 or None, not -1$"):
        make_player("random", seed=-1)
    for bad in (True, 1.5, "3"):
        with pytest.raises(TypeError, match=f"^seed must be an int >= 0 or None, not {type(bad).__name__} "):
            make_player("random", seed=bad)
    with pytest.raises(ValueError, match="in bot spec 'jiu_env.bots.random_bot:RandomBot:foo'"):
        make_player("jiu_env.bots.random_bot:RandomBot:foo")  # the spec as written, not a made-up one
    for prefix in (" foo", "a+b", "x,y", ""):
        with pytest.raises(ValueError, match="bad player kind prefix"):
            register_player_kind(prefix, lambda arg, seed: None)
    with pytest.raises(TypeError, match="must be callable"):
        register_player_kind("notcallable", 5)
