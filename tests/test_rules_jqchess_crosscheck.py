"""benchmarks/jqchess_crosscheck.py without Java: our side's turn enumerator and the harness's refusals.

The cross-check is only as good as its enumeration of our turns, so that is checked here against the plain
definition (play the decisions one by one with the checked kernel API, no memo) on seeded jqchess8
positions, including flying, the single-jump ban and square captures.  The JQ side needs a JDK and JQ's
sources and is exercised by running the harness (baselines/jqchess_crosscheck/).
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from jiu_env import Rules, kernel as K
from jiu_env.state import position_state

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "jqchess_crosscheck.py"
RULES = Rules.make("jqchess8")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jqchess_crosscheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


cc = _load()


def _one_by_one(s: np.ndarray) -> dict[str, str]:
    """The turns of ``s`` by definition: every sequence of legal decisions (checked API, no memo) until the
    turn passes or the game ends; board -> result."""
    mover = int(s[K.H_TO_MOVE])
    placement = s[K.H_PHASE] == K.PH_PLACEMENT
    buf = np.empty(RULES.num_actions, np.int64)
    found: dict[str, str] = {}

    def walk(state: np.ndarray) -> None:
        for a in buf[:K.legal_actions(state, buf)].tolist():
            t = state.copy()
            K.apply_action(t, a)
            if placement or K.is_over(t) or t[K.H_TO_MOVE] != mover:
                found.setdefault(cc.board_string(t), cc.result_string(t))
            else:
                walk(t)

    walk(s)
    return found


def _positions(seed: int, turns: int) -> list[np.ndarray]:
    """Turn starts of a seeded random jqchess8 game (random placement, then random whole turns)."""
    s = RULES.new_state()
    K.random_placement(s, seed)
    rng = random.Random(seed)
    out = []
    for _ in range(turns):
        if K.is_over(s):
            break
        out.append(s.copy())
        ours = cc.enumerate_turns(s)
        for a in ours[rng.choice(sorted(ours))].actions:
            K.apply_action(s, a)
    return out


POSITIONS = _positions(0, 72) + _positions(1, 100)


def test_positions_cover_the_profile():
    """The seeded positions meet the rules the profile is about, so the checks below test them."""
    seen = set()
    for s in POSITIONS:
        seen.update(cc.coverage(s, cc.enumerate_turns(s)))
    assert {"mover flying (fly_only: flights only)", "a first jump refused by the turn-start ban",
            "a lone first jump refused by ban_after_capture only"} <= seen
    assert any(f.startswith("a turn ending the game") for f in seen)


def test_enumeration_agrees_with_playing_decisions_one_by_one():
    for s in POSITIONS + [RULES.new_state()]:
        before = s.copy()
        turns = cc.enumerate_turns(s)
        assert np.array_equal(s, before), "enumerate_turns changed its state"
        assert {b: t.result for b, t in turns.items()} == _one_by_one(s)


def test_every_turn_replays_to_its_board_and_passes_the_turn():
    for s in POSITIONS[::7]:
        mover = s[K.H_TO_MOVE]
        for board, turn in cc.enumerate_turns(s).items():
            assert turn.board == board
            t = s.copy()
            for a in turn.actions:
                assert not K.is_over(t) and t[K.H_TO_MOVE] == mover, "the turn went on after it ended"
                K.apply_action(t, a)  # checked: raises on an illegal decision
            assert K.is_over(t) or t[K.H_TO_MOVE] != mover
            assert (cc.board_string(t), cc.result_string(t)) == (board, turn.result)


def test_boards_are_distinct_and_the_placement_start_has_two_turns():
    turns = cc.enumerate_turns(RULES.new_state())
    assert sorted(t.actions for t in turns.values()) == [(27,), (36,)]  # the diagonal ends (3, 3) and (4, 4)
    for s in POSITIONS[::10]:
        turns = cc.enumerate_turns(s)
        assert len({t.board for t in turns.values()}) == len(turns)


def test_capture_cap_flags():
    """A step that closes two squares, with 20 enemy stones: C(20, 2) = 190 capture sets, over JQ's 64."""
    board = np.zeros((8, 8), np.int64)
    for r, c in [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 1), (3, 0), (3, 1), (3, 2), (3, 3)]:
        board[r, c] = K.BLACK
    white = [(r, c) for r in range(5, 8) for c in range(8)][:20]
    for r, c in white:
        board[r, c] = K.WHITE
    s = position_state(RULES, board, "black")
    turns = cc.enumerate_turns(s)
    two_squares = [t for t in turns.values() if t.actions[0] == K.encode_step(2 * 8 + 1, 0, 64)]
    assert len(two_squares) == 190 and all(t.capped and not t.short for t in two_squares)
    assert not any(t.capped for t in turns.values() if t not in two_squares)


def test_missing_jq_path_is_refused(tmp_path, capsys):
    code = cc.main(["--jq", str(tmp_path / "nowhere"), "--games", "1", "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--jq" in err and "no such file or folder" in err
    assert not (tmp_path / "out").exists()


def test_jq_path_without_sources_is_refused(tmp_path):
    with pytest.raises(cc.CrossCheckError, match="no JQ_Chess sources"):
        cc.jq_source_root(tmp_path)


def test_jq_source_root_accepts_the_jqjava_folder(tmp_path):
    root = tmp_path / "JQJava" / "src" / "main" / "java"
    for rel in (cc.JQ_MARKER, cc.JQ_GENERATOR):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    assert cc.jq_source_root(tmp_path / "JQJava") == root
    assert cc.jq_source_root(tmp_path) == root
    assert cc.jq_source_root(root) == root


def test_missing_javac_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(cc.shutil, "which", lambda tool: None)
    with pytest.raises(cc.CrossCheckError, match="javac not found"):
        cc.compile_oracle(tmp_path, tmp_path / "build")


def test_jq_names_and_results_in_ours():
    assert cc.jq_to_ours("D4,D6,F6 TC-D5,E6 FC-A1") == "d3,d5,f5 TC-d4,e5 FC-a0"
    assert cc.jq_result("ongoing") == "ongoing"
    assert cc.jq_result("white|黑方棋子少于4枚") == "white/too_few_stones"
    assert cc.jq_result("draw|重复局面和棋") == "draw/repetition"
    assert cc.jq_result("black|白方无合法着法") == "black/no_move"
