"""Every record format gives back the actions it was given (or refuses to write what it cannot express).

Random seeded games under every rules profile, with flying stones, are
written and read back in each format: the JSON record (with and without the
``moves`` notation, and from ``moves`` alone), the competition notation and
the jiuchess CSV line (strict and lenient).  The read-back action list and the
final state must be identical.  A fly to a neighbouring point (or two points
over an enemy stone) is what the plain text notations could not tell from a
step (or a jump): the competition notation marks such a fly with ``^``, the
jiuchess CSV notation (an external format that has no fly marker) refuses it.
"""

import json
import math
import re

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.records import (
    GameRecord, RecordError, from_competition, from_jiuchess, load_record, to_competition, to_jiuchess, turn_entries,
)
from jiu_env.notation import str_to_point
from jiu_env.rules import PROFILES, Rules
from jiu_env.vocab import A_LIFT, A_STEP, DC, DR

from conftest import random_actions


def flights(rec):
    """``[(p, q, step_also_legal)]`` for every fly (LIFT p, then POINT q) of a record."""
    n = rec.rules.board_size
    p_ = n * n
    s = rec.initial_state()
    out = []
    lifted = None
    for a in rec.actions:
        if lifted is not None:
            p, steps = lifted
            out.append((p, a, a in steps))
            lifted = None
        elif s[K.H_PHASE] == K.PH_BATTLE and a // p_ == A_LIFT:
            p = a - A_LIFT * p_
            steps = set()
            for d in range(4):
                r, c = p // n + int(DR[d]), p % n + int(DC[d])
                if 0 <= r < n and 0 <= c < n and K.is_legal(s, (A_STEP + d) * p_ + p):
                    steps.add(r * n + c)
            lifted = (p, steps)
        K.apply_action(s, a)
    return out


def near(p, q, n):
    """Two points one or two apart in a row or a column."""
    dr, dc = abs(p // n - q // n), abs(p % n - q % n)
    return sorted((dr, dc)) in ([0, 1], [0, 2])


# profile, board size, extra options, games: 14x14 games are long, so only a few
CASES = [(prof, n, {}, 16 if n == 6 else 8) for prof in PROFILES for n in (6, 8)]
CASES += [(prof, 6, {"fly_threshold": 36}, 6) for prof in PROFILES]  # flying from the first battle turn
CASES += [(prof, 14, {"fly_threshold": 196, "max_battle_turns": 100}, 1) for prof in ("competitive", "jqchess8")]


def _ids(case):
    prof, n, extra, _ = case
    return f"{prof}-{n}" + ("-fly" if extra else "")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_every_format_round_trips(case):
    prof, n, extra, games = case
    rules = Rules.make(prof, board_size=n, **extra)
    seen = {"fly": 0, "near_fly": 0, "jiuchess_written": 0}
    for seed in range(games):
        rec = GameRecord.from_actions(rules, random_actions(rules, 1000 * n + seed), seed=seed)
        final = rec.replay()
        fl = flights(rec)
        seen["fly"] += len(fl)
        seen["near_fly"] += sum(near(p, q, n) for p, q, _ in fl)

        def same(back, how):
            assert back.actions == rec.actions, f"{how}: seed {seed}"
            assert back.passes == []
            np.testing.assert_array_equal(back.replay(), final, err_msg=f"{how}: seed {seed}")

        # the JSON record: with moves, without them, and read from the moves alone
        same(GameRecord.from_json(rec.to_json()), "json")
        same(GameRecord.from_json(rec.to_json(moves=False)), "json without moves")
        d = rec.to_dict()
        d.pop("actions")
        same(GameRecord.from_dict(d), "json moves only")

        # the competition notation, strict and lenient
        text = to_competition(rec)
        for strict in (True, False):
            back = from_competition(text, rules=rules, strict=strict)
            assert back.issues == []
            same(back, f"competition strict={strict}")
        assert to_competition(from_competition(text, rules=rules)) == text

        # the jiuchess CSV line: written unless a fly could also have been a step, then refused
        ambiguous = [(p, q) for p, q, step in fl if step]
        if ambiguous:
            with pytest.raises(ValueError, match="jiuchess") as e:
                to_jiuchess(rec)
            assert "fly" in str(e.value)
        else:
            line = to_jiuchess(rec)
            seen["jiuchess_written"] += 1
            for strict in (True, False):
                back = from_jiuchess(line, rules=rules, strict=strict)
                assert back.issues == []
                same(back, f"jiuchess strict={strict}")
    # the sample really holds flights, and flights to near points
    assert seen["fly"] > 0 and seen["near_fly"] > 0, seen
    if n < 14 and not extra:
        assert seen["jiuchess_written"] > 0, seen


def _neighbour_fly_game():
    """A 6x6 game cut just after a fly to a neighbouring point where the step was also legal."""
    rules = Rules.make("competitive", board_size=6)
    for seed in range(100):
        rec = GameRecord.from_actions(rules, random_actions(rules, seed))
        for i, a in enumerate(rec.actions):
            if a // 36 == A_LIFT and rec.actions[i + 1] in [q for p, q, step in flights(rec) if step and p == a % 36]:
                cut = GameRecord.from_actions(rules, rec.actions[:i + 2])
                if any(step for _, _, step in flights(cut)[-1:]):
                    return rules, cut, i
    raise AssertionError("no sample game")


def test_neighbour_fly_is_marked_in_competition_notation_and_old_records_keep_their_meaning():
    rules, rec, i = _neighbour_fly_game()
    n = 6
    p, q = rec.actions[i] - A_LIFT * 36, rec.actions[i + 1]
    text = to_competition(rec)
    last = text.splitlines()[-1]
    assert last.split(",")[1].startswith("^"), last
    back = from_competition(text, rules=rules)
    assert back.actions == rec.actions
    # the same entry without the mark (as written before it existed) reads as the step it looks like
    d = [d for d in range(4) if q == p + int(DR[d]) * n + int(DC[d])][0]
    old = from_competition(text.replace("^", ""), rules=rules)
    assert old.actions == rec.actions[:i] + [(A_STEP + d) * 36 + p]
    np.testing.assert_array_equal(old.replay()[K.HDR:K.HDR + 36], rec.replay()[K.HDR:K.HDR + 36])
    # a marked path is a fly only: two points, no step or jump reading
    head, tail = text.rsplit("\n", 1)
    path = tail.rstrip(";").split(",")[1]
    chain = path + "-" + path.split("-")[0][1:]
    with pytest.raises(RecordError, match=rf"entry \d+: path '\{chain}': a fly has two points"):
        from_competition(head + "\n" + tail.replace(path, chain), rules=rules)


def test_jiuchess_refuses_a_fly_it_would_read_as_a_step():
    rules, rec, i = _neighbour_fly_game()
    with pytest.raises(ValueError, match=rf"jiuchess notation cannot write action {i} \(\^[a-f][0-5] [a-f][0-5]\)"
                                         r".*reads back as a step") as e:
        to_jiuchess(rec)
    assert "flies" in str(e.value) and "competition notation" in str(e.value)
    # the game before the fly is written and reads back exactly
    before = GameRecord.from_actions(rules, rec.actions[:i])
    assert from_jiuchess(to_jiuchess(before), rules=rules).actions == before.actions


def test_jiuchess_save_refuses_and_keeps_the_old_file(tmp_path):
    rules, rec, _ = _neighbour_fly_game()
    path = tmp_path / "g.csv"
    path.write_text("old\n")
    with pytest.raises(ValueError, match="jiuchess notation cannot write"):
        rec.save(path)
    assert path.read_text() == "old\n"
    rec.save(tmp_path / "g.txt")
    assert load_record(tmp_path / "g.txt", rules=rules).actions == rec.actions


def test_neighbour_fly_under_fly_only_is_written_by_jiuchess():
    """Where the step is not legal (a flyer may only fly) the two-point move can only be the fly."""
    rules = Rules.make("jqchess8", board_size=6)
    for seed in range(50):
        rec = GameRecord.from_actions(rules, random_actions(rules, seed))
        if any(sorted((abs(p // 6 - q // 6), abs(p % 6 - q % 6))) == [0, 1] for p, q, _ in flights(rec)):
            break
    else:
        raise AssertionError("no sample game")
    assert from_jiuchess(to_jiuchess(rec), rules=rules).actions == rec.actions


# ------------------------------------------------- NaN, Infinity and booleans
@pytest.fixture(scope="module")
def small():
    rules = Rules.make("competitive", board_size=5, max_battle_turns=60)
    return GameRecord.from_actions(rules, random_actions(rules, 3), seed=3)


def _dict(rec, moves=True):
    """A fresh copy of the record's dict (to_dict shares the stored result)."""
    return json.loads(rec.to_json(moves=moves))


@pytest.mark.parametrize("field, value, where", [
    ("meta", {"score": math.nan}, "meta.score"),
    ("meta", {"elo": [1.0, math.inf]}, r"meta.elo\[1\]"),
    ("meta", {"time": np.float32("nan")}, "meta.time"),  # a numpy float (not a Python float) too
    ("seed", -math.inf, "seed"),
    ("players", {"white": {"temperature": math.nan}, "black": None}, "players.white.temperature"),
    ("result", "returns", r"result.returns\[0\]"),
])
def test_writers_never_emit_nan_or_infinity(small, field, value, where, tmp_path):
    rec = GameRecord.from_dict(_dict(small))
    if field == "result":
        rec.result = dict(rec.result, returns=[math.nan, 0.0])
    else:
        setattr(rec, field, value)
    with pytest.raises(ValueError, match=rf"cannot write the record as JSON: {where} is (np\.float32\()?-?(nan|inf)"):
        rec.to_json()
    path = tmp_path / "g.json"
    path.write_text("old\n")
    with pytest.raises(ValueError, match=where):
        rec.save(path)
    assert path.read_text() == "old\n"  # a refused save leaves the file that was there


def test_written_json_is_strict_json(small):
    """Every number of the text is one a reader that knows no NaN/Infinity accepts, numpy floats included."""
    rec = GameRecord.from_dict(_dict(small))
    rec.meta = {"t": 1e308, "small": 5e-324, "f32": np.float32(0.1), "f64": np.float64(-2.5), "i": np.int64(-7)}
    back = json.loads(rec.to_json(), parse_constant=lambda c: pytest.fail(f"{c} in the JSON text"))["meta"]
    assert back == {"t": 1e308, "small": 5e-324, "f32": float(np.float32(0.1)), "f64": -2.5, "i": -7}


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["result"].update(returns=[math.nan, 0.0]), r"result.returns\[0\]"),
    (lambda d: d["result"].update(battle_turns=math.inf), "result.battle_turns"),
    (lambda d: d["meta"].update(t=-math.inf), "meta.t"),
    (lambda d: d.update(seed=math.nan), "seed"),
    (lambda d: d["rules"].update(fly_threshold=math.inf), "rules.fly_threshold"),
    (lambda d: d.update(version=math.nan), "version"),
])
def test_readers_refuse_nan_and_infinity_naming_the_field(small, edit, where, tmp_path):
    d = _dict(small)
    edit(d)
    text = json.dumps(d)  # Python writes NaN / Infinity / -Infinity
    assert "NaN" in text or "Infinity" in text
    with pytest.raises(RecordError, match=rf"^{where} is -?(nan|inf): a record holds no NaN or Infinity"):
        GameRecord.from_json(text)
    # also read from a file (JSON and JSON lines) and from a dict
    (tmp_path / "g.json").write_text(text)
    with pytest.raises(RecordError, match=where):
        load_record(tmp_path / "g.json")
    (tmp_path / "games.jsonl").write_text(json.dumps({"id": 7, "record": d}) + "\n")
    with pytest.raises(RecordError, match=where):
        load_record(tmp_path / "games.jsonl", game=7)
    with pytest.raises(RecordError, match=where):
        GameRecord.from_dict(d, check=False)


def test_an_overflowing_number_is_infinity_and_refused(small):
    d = _dict(small)
    d["result"]["returns"] = ["HUGE", 0.0]
    text = json.dumps(d).replace('"HUGE"', "-1e999")
    with pytest.raises(RecordError, match=r"^result.returns\[0\] is -inf"):
        GameRecord.from_json(text)


def _position_record(small, board):
    d = _dict(small)
    d.update(start={"from": "position", "board": board, "to_move": "black"}, actions=[], result=None)
    d.pop("moves")
    return d


BOARD = [[1, 2, 1, 2, 1], [2, 1, 2, 1, 2], [1, 2, 0, 2, 1], [2, 1, 2, 1, 2], [1, 2, 1, 2, 0]]


@pytest.mark.parametrize("r, c, value", [(0, 0, True), (1, 3, True), (2, 2, False), (4, 4, False)])
def test_readers_refuse_booleans_as_board_values(small, r, c, value):
    board = [row[:] for row in BOARD]
    board[r][c] = value
    d = _position_record(small, board)
    # numpy would read a lone true among integers as 1 and false as 0: refused, naming the point
    assert np.asarray(board).dtype != bool
    with pytest.raises(RecordError, match=rf"start board row {r}, column {c} is the boolean {value}"):
        GameRecord.from_json(json.dumps(d))
    with pytest.raises(RecordError, match="boolean"):
        GameRecord.from_actions(small.rules, [], start=d["start"])
    # the same board with integers is read
    assert GameRecord.from_json(json.dumps(_position_record(small, BOARD))).start["board"] == BOARD


def test_readers_refuse_an_all_boolean_board_and_other_booleans(small):
    board = [[bool(v % 2) for v in row] for row in BOARD]
    with pytest.raises(RecordError, match="integers 0"):
        GameRecord.from_json(json.dumps(_position_record(small, board)))
    with pytest.raises(RecordError, match="integers 0"):
        GameRecord.from_actions(small.rules, [], start={"from": "position", "board": np.asarray(board)})
    for key, value, match in (("seed", True, "'seed' must be an integer or null, not the boolean True"),
                              ("version", True, "version True"), ("passes", [True], "'passes'")):
        d = _dict(small)
        d[key] = value
        with pytest.raises(RecordError, match=match):
            GameRecord.from_json(json.dumps(d))
    d = _dict(small, moves=False)
    d["actions"][0] = True
    with pytest.raises(RecordError, match="'actions' must be a list of integers"):
        GameRecord.from_json(json.dumps(d))
    d = _dict(small)
    d["result"] = dict(d["result"], battle_turns=True)
    with pytest.raises(RecordError, match="stored result battle_turns=True"):
        GameRecord.from_json(json.dumps(d))


# ------------------------------------------------------ records cut anywhere
@pytest.mark.parametrize("prof", ["competitive", "jqchess8"])
def test_a_record_cut_anywhere_round_trips_or_is_refused(prof):
    """The text notations write whole battle turns: a record that ends inside a turn (a fly not
    landed, a jump chain that may go on, square captures still to choose) is refused; every other
    prefix of a game reads back to the identical actions."""
    rules = Rules.make(prof, board_size=6, fly_threshold=36, max_battle_turns=30)
    seen = {"refused_inside": 0, "written": 0}
    for seed in range(2):
        acts = random_actions(rules, seed)
        for cut in range(34, len(acts) + 1):
            rec = GameRecord.from_actions(rules, acts[:cut])
            s = rec.replay()
            inside = s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] != K.SUB_MOVE
            for write, read, name in ((to_competition, from_competition, "competition"),
                                      (to_jiuchess, from_jiuchess, "jiuchess")):
                if inside:
                    with pytest.raises(ValueError, match=rf"the {name} notation writes whole battle turns, but this"
                                                         r" record ends inside one \((a stone is lifted|a jump chain"
                                                         r"|\d square capture)"):
                        write(rec)
                    seen["refused_inside"] += 1
                    continue
                try:
                    text = write(rec)
                except ValueError as e:
                    assert name == "jiuchess" and "reads back as a step" in str(e)
                    continue
                seen["written"] += 1
                for strict in (True, False):
                    back = read(text, rules=rules, strict=strict)
                    assert back.actions == rec.actions and back.issues == [], (name, seed, cut, strict)
    assert seen["refused_inside"] > 0 and seen["written"] > 0, seen


# ------------------------------------------------- digits and letters are ASCII
def test_text_readers_take_ascii_digits_and_letters_only(small):
    """int() and str.lower() read other scripts' digits and look-alike letters; the readers do not."""
    rules = small.rules
    line = to_jiuchess(GameRecord.from_actions(rules, small.actions[:25]))
    first = line.split(":")[1].split(";")[0]  # W(C,3) or the like
    arabic = first[:-2] + chr(0x0660 + int(first[-2])) + ")"  # the same row in Arabic-Indic digits
    with pytest.raises(RecordError, match=r"entry 0, placement 1: .* is not a placement like W\(G,7\)"):
        from_jiuchess(line.replace(first, arabic, 1), rules=rules)
    assert from_jiuchess(line, rules=rules).actions == small.actions[:25]

    text = to_competition(GameRecord.from_actions(rules, small.actions[:25]))
    for bad in ("\u0661", "+1", "0_1"):  # an Arabic-Indic 1, a sign, an underscore: all int("...") == 1
        with pytest.raises(RecordError, match=rf"entry number '{re.escape(bad)}' where 1 was expected"):
            from_competition(text.replace("\n1,", f"\n{bad},", 1), rules=rules)
    kelvin = "\u212a"  # KELVIN SIGN: lower() gives the row letter k
    with pytest.raises(ValueError, match="is not a point"):
        str_to_point(kelvin + "0", 14)
    with pytest.raises(RecordError, match="is not a point"):
        from_competition("0," + kelvin + "0;", rules=Rules.make("competitive"))


def test_numpy_numbers_are_written_as_numbers_and_other_objects_named(small, tmp_path):
    rec = GameRecord.from_dict(_dict(small))
    rec.meta = {"x": np.float32(0.5), "n": np.int64(3), "ok": np.bool_(True), "list": [np.int32(1)]}
    back = json.loads(rec.to_json())["meta"]
    assert (back["x"], back["n"], back["ok"], back["list"]) == (0.5, 3, True, [1])
    assert all(type(back[k]) is t for k, t in (("x", float), ("n", int), ("ok", bool)))
    for meta, where in (({"a": {"b": np.zeros(2)}}, r"meta\.a\.b is ndarray"), ({"s": {1, 2}}, r"meta\.s is set"),
                        ({np.int64(1): 2}, r"meta\.np\.int64\(1\) \(a key\) is int64"),
                        ({"o": object()}, r"meta\.o is object")):
        rec.meta = meta
        with pytest.raises(TypeError, match=rf"cannot write the record as JSON: {where}"):
            rec.to_json()
        path = tmp_path / "g.json"
        path.write_text("old\n")
        with pytest.raises(TypeError, match=where):
            rec.save(path)
        assert path.read_text() == "old\n"
