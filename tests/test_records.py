"""Game records: JSON and competition-notation round trips, strict errors, lenient import."""

import json

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.records import (
    GameRecord, RecordError, from_competition, load_record, result_of, to_competition, turn_entries,
)
from jiu_env.rules import Rules

from conftest import random_actions


def random_record(rules, seed):
    return GameRecord.from_actions(rules, random_actions(rules, seed), players={"white": "w", "black": "b"}, seed=seed)


def turn_start_boards(rec):
    """Boards at the start of every battle turn and at the end (the positions a turn-level record fixes)."""
    out = []
    prev_mover = None
    for s in rec.states():
        if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE and (s[K.H_TO_MOVE], s[K.H_TURNS]) != prev_mover:
            prev_mover = (s[K.H_TO_MOVE], s[K.H_TURNS])
            out.append(s[K.HDR:K.HDR + s[K.H_P]].copy())
    out.append(s[K.HDR:K.HDR + s[K.H_P]].copy())
    return out


def comparable(result):
    r = dict(result)
    r.pop("decisions")  # a fly to a neighbouring point reads back as a step: one decision fewer
    return r


CONFIGS = [
    dict(profile="competitive", board_size=5),
    dict(profile="competitive", board_size=6),
    dict(profile="ludii8"),
    dict(profile="traditional", board_size=7),
    dict(profile="competitive", board_size=8, single_jump_ban="both"),
]


def make_rules(cfg, **extra):
    cfg = dict(cfg)
    return Rules.make(cfg.pop("profile"), max_battle_turns=200, **cfg, **extra)


# --------------------------------------------------------------------- JSON
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c['profile']}-{c.get('board_size', 8)}")
def test_json_round_trip(cfg, tmp_path):
    rules = make_rules(cfg)
    for seed in range(4):
        rec = random_record(rules, seed)
        again = GameRecord.from_json(rec.to_json())
        assert again.actions == rec.actions
        assert again.result == rec.result
        assert again.rules == rules
        assert again.players == rec.players and again.seed == seed
        path = tmp_path / f"g{seed}.json"
        rec.save(path)
        loaded = load_record(path)
        assert loaded.actions == rec.actions
        np.testing.assert_array_equal(loaded.replay(), rec.replay())


def test_json_fields_and_moves():
    rules = Rules.make("competitive", board_size=6)
    rec = random_record(rules, 3)
    d = json.loads(rec.to_json())
    assert d["format"] == "jiu-record" and d["version"] == 1
    assert set(d) >= {"rules", "seed", "players", "start", "actions", "moves", "result", "meta"}
    assert d["result"] == result_of(rec.replay())
    # a record may carry only the readable moves
    d.pop("actions")
    assert GameRecord.from_dict(d).actions == rec.actions


def test_to_dict_returns_copies():
    """Editing the dict that to_dict() returns leaves the record as it was."""
    rules = Rules.make("competitive", board_size=6)
    rec = random_record(rules, 3)
    rec.meta["event"] = {"name": "club"}
    before = rec.to_json()
    d = rec.to_dict()
    d["result"]["winner"] = "nobody"
    d["players"]["white"] = "someone else"
    d["meta"]["event"]["name"] = "changed"
    assert rec.to_json() == before


def test_json_position_start_round_trip():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=100)
    board = np.array([[1, 2] * 3, [2, 1] * 3] * 3)
    board[0, 0] = board[5, 5] = 0
    rec0 = GameRecord(rules=rules, start={"from": "position", "board": board.tolist(), "to_move": "black"})
    acts = random_actions(rules, 1, start=rec0.initial_state())
    rec = GameRecord.from_actions(rules, acts, start=rec0.start)
    again = GameRecord.from_json(rec.to_json())
    np.testing.assert_array_equal(again.replay(), rec.replay())
    with pytest.raises(ValueError, match="placement phase"):
        to_competition(rec)


def test_json_errors_name_the_action():
    rules = Rules.make("competitive", board_size=6)
    rec = random_record(rules, 0)
    d = rec.to_dict(moves=False)
    d["actions"][10] = d["actions"][9]  # a placement on an occupied point
    with pytest.raises(RecordError, match="action 10") as e:
        GameRecord.from_dict(d)
    assert e.value.action == 10
    d = rec.to_dict(moves=False)
    d["result"]["winner"] = "white" if rec.result["winner"] != "white" else "black"
    with pytest.raises(RecordError, match="stored result winner"):
        GameRecord.from_dict(d)
    with pytest.raises(RecordError, match="not a jiu-record"):
        GameRecord.from_dict({"format": "other"})
    with pytest.raises(RecordError, match="version"):
        GameRecord.from_dict({**rec.to_dict(), "version": 99})
    with pytest.raises(RecordError, match="moves' and 'actions' disagree"):
        GameRecord.from_dict({**rec.to_dict(), "moves": rec.moves()[::-1]})


def test_load_jsonl_by_id_and_line(tmp_path):
    rules = Rules.make("competitive", board_size=5)
    recs = [random_record(rules, s) for s in range(3)]
    path = tmp_path / "games.jsonl"
    with open(path, "w") as f:
        for i, r in enumerate(recs):
            f.write(json.dumps({"id": f"a|b|{i}", "record": r.to_dict(moves=False)}) + "\n")
        f.write('{"id": "cut short')  # an interrupted write
    assert load_record(path, game="a|b|2").actions == recs[2].actions
    assert load_record(path, game=1).actions == recs[1].actions
    with pytest.raises(RecordError, match="no game"):
        load_record(path, game="x|y|0")
    with pytest.raises(RecordError, match="choose one"):
        load_record(path)


# ---------------------------------------------------- competition notation
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c['profile']}-{c.get('board_size', 8)}")
def test_competition_round_trip_random_games(cfg):
    rules = make_rules(cfg)
    seen = {"chain": 0, "fly": 0, "square": 0, "jump": 0}
    for seed in range(12):
        rec = random_record(rules, seed)
        text = to_competition(rec)
        back = from_competition(text, rules=rules)
        assert back.issues == []
        assert comparable(back.result) == comparable(rec.result)
        a, b = turn_start_boards(rec), turn_start_boards(back)
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        assert to_competition(back) == text
        n = rules.board_size
        for t in turn_entries(rec)[1]:
            seen["jump"] += bool(t["jumped"])
            seen["chain"] += len(t["path"]) > 2
            seen["square"] += bool(t["victims"])
            p, q = t["path"][0], t["path"][-1]
            seen["fly"] += len(t["path"]) == 2 and not t["jumped"] and abs(p // n - q // n) + abs(p % n - q % n) > 1
    # the sample really exercises every kind of entry
    assert all(v > 0 for v in seen.values()), seen


def test_competition_round_trip_14x14_and_header():
    rules = Rules.make("competitive", max_battle_turns=60)
    rec = random_record(rules, 7)
    rec.players = {"white": "alpha [x]", "black": "beta"}
    rec.meta = {"date": "2025-05-01", "event": "club"}
    text = to_competition(rec)
    head = text.splitlines()[0]
    assert head == "[JIU][alpha (x)][beta][undecided][2025-05-01][club]"
    assert text.splitlines()[1].startswith("0,g6,H7,") or text.splitlines()[1].startswith("0,h7,G6,")
    assert text.splitlines()[2] in ("1,g6;", "1,h7;")
    back = from_competition(text, rules=rules)
    assert back.players == {"white": "alpha (x)", "black": "beta"}
    assert back.meta["event"] == "club" and back.meta["date"] == "2025-05-01"
    assert to_competition(back).splitlines()[1:] == text.splitlines()[1:]


def test_competition_whitespace_free_and_save_txt(tmp_path):
    rules = Rules.make("competitive", board_size=6, max_battle_turns=100)
    rec = random_record(rules, 2)
    text = to_competition(rec)
    head, body = text.split("\n", 1)
    one_line = head + "\n" + body.replace("\n", " ")
    assert from_competition(one_line, rules=rules).replay().tolist() == from_competition(text, rules=rules).replay().tolist()
    path = tmp_path / "g.txt"
    rec.save(path)
    assert path.read_text().startswith("[JIU]")
    assert comparable(load_record(path, rules=rules).result) == comparable(rec.result)


# ---------------------------------------------------------- strict errors
def _game_text(seed=4, n=6):
    rules = Rules.make("competitive", board_size=n, max_battle_turns=200)
    rec = random_record(rules, seed)
    return rules, rec, to_competition(rec).splitlines()


def _entries(lines):
    return {int(ln.split(",")[0]): ln for ln in lines[1:]}


def _with(lines, k, new_line):
    out = list(lines)
    out[k + 1] = new_line
    return "\n".join(out)


def test_strict_placement_errors_name_the_placement():
    rules, rec, lines = _game_text()
    toks = lines[1][2:-1].split(",")
    swapped = list(toks)
    swapped[5], swapped[6] = swapped[6], swapped[5]
    with pytest.raises(RecordError) as e:
        from_competition(_with(lines, 0, "0," + ",".join(swapped) + ";"), rules=rules)
    assert (e.value.entry, e.value.item) == (0, 6) and "twice in a row" in str(e.value)
    # the first stone off the diagonal ends
    first = toks[2]
    bad = [first] + toks[1:2] + [toks[0]] + toks[3:]
    with pytest.raises(RecordError, match="diagonal ends") as e:
        from_competition(_with(lines, 0, "0," + ",".join(bad) + ";"), rules=rules)
    assert (e.value.entry, e.value.item) == (0, 1)
    # a point placed twice
    dup = list(toks)
    dup[9] = dup[7]
    with pytest.raises(RecordError, match="occupied") as e:
        from_competition(_with(lines, 0, "0," + ",".join(dup) + ";"), rules=rules)
    assert (e.value.entry, e.value.item) == (0, 10)
    # a bad token
    with pytest.raises(RecordError, match="column") as e:
        from_competition(_with(lines, 0, "0," + ",".join(toks[:3] + ["cz"] + toks[4:]) + ";"), rules=rules)
    assert (e.value.entry, e.value.item) == (0, 4)


def test_strict_battle_errors_name_the_entry():
    rules, rec, lines = _game_text()
    ent = _entries(lines)
    n = rules.board_size
    _, turns = turn_entries(rec)
    # a wrong entry number
    k = 5
    with pytest.raises(RecordError, match="entry number") as e:
        from_competition(_with(lines, k, ent[k].replace(f"{k},", "99,", 1)), rules=rules)
    assert e.value.entry == 99
    # a plain step turned into a step onto one of the mover's own stones
    i, t = next((i, t) for i, t in enumerate(turns) if len(t["path"]) == 2 and not t["jumped"] and not t["victims"])
    k = i + 3
    before = _state_before_turn(rec, i)
    p = t["path"][0]
    tgt = next(q for q in range(n * n) if before[K.HDR + q] == t["colour"] and q != p)
    bad = f"{k},{_pt(p, n, t['colour'])}-{_pt(tgt, n, t['colour'])};"
    with pytest.raises(RecordError, match="illegal") as e:
        from_competition(_with(lines, k, bad), rules=rules)
    assert e.value.entry == k
    # the other colour moves
    with pytest.raises(RecordError, match="to move") as e:
        from_competition(_with(lines, k, f"{k},{ent[k].split(',', 1)[1].swapcase()}"), rules=rules)
    assert e.value.entry == k
    # a path of three points that are not jumps
    with pytest.raises(RecordError, match="not a jump") as e:
        from_competition(_with(lines, k, f"{k},{_pt(p, n, t['colour'])}-{_pt(tgt, n, t['colour'])}-{_pt(p, n, t['colour'])};"),
                         rules=rules)
    assert e.value.entry == k


def _pt(p, n, colour):
    from jiu_env.notation import COLS, ROWS

    t = ROWS[p // n] + COLS[p % n]
    return t.lower() if colour == K.WHITE else t.upper()


def _state_before_turn(rec, turn_index):
    for s in rec.states():
        if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE and int(s[K.H_TURNS]) == turn_index:
            return s
    raise AssertionError(f"turn {turn_index} not found")


def test_strict_capture_errors():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=200)
    for seed in range(40):
        rec = random_record(rules, seed)
        _, turns = turn_entries(rec)
        hits = [i for i, t in enumerate(turns) if t["victims"] and rec.result["over"]]
        if hits:
            break
    lines = to_competition(rec).splitlines()
    i = hits[0]
    k = i + 3
    entry = _entries(lines)[k]
    # drop the square capture: the move forms a square, so a capture is due
    t = turns[i]
    cut = entry.rsplit(",", len(t["victims"]))[0] + ";"
    with pytest.raises(RecordError, match="capture") as e:
        from_competition(_with(lines, k, cut), rules=rules)
    assert e.value.entry == k
    # one capture too many
    extra = entry[:-1] + "," + entry[:-1].split(",")[-1] + ";"
    with pytest.raises(RecordError) as e:
        from_competition(_with(lines, k, extra), rules=rules)
    assert e.value.entry == k


def test_strict_header_and_structure_errors():
    rules, rec, lines = _game_text()
    word = {"white": "black wins", "black": "white wins"}.get(rec.result["winner"], "white wins")
    head = lines[0].split("]")
    head[3] = "[" + word
    bad = "]".join(head)
    with pytest.raises(RecordError, match="header says"):
        from_competition("\n".join([bad] + lines[1:]), rules=rules)
    renumbered = [f"{int(ln.split(',')[0]) - 2},{ln.split(',', 1)[1]}" for ln in lines[4:]]
    with pytest.raises(RecordError, match="entries 1 and 2") as e:
        from_competition("\n".join(lines[:2] + renumbered), rules=rules)
    assert e.value.entry == 1
    with pytest.raises(RecordError, match="no entries"):
        from_competition("[JIU][a][b][*][][]\n", rules=rules)


# ---------------------------------------------------------- lenient import
def test_lenient_import_of_irregular_record():
    rules, rec, lines = _game_text(seed=9)
    toks = lines[1][2:-1].split(",")
    irregular = list(toks)
    irregular[7], irregular[8] = irregular[8], irregular[7]  # the same colour places twice in a row
    text = _with(lines, 0, "0," + ",".join(irregular) + ";")
    with pytest.raises(RecordError):
        from_competition(text, rules=rules)
    back = from_competition(text, rules=rules, strict=False)
    msgs = [str(i) for i in back.issues]
    assert any(i.entry == 0 and i.item == 8 for i in back.issues), msgs
    assert any("twice in a row" in m for m in msgs)
    assert any("rebuilt" in m for m in msgs)
    assert back.start["from"] == "position"
    # the placements only changed order: the battle replays to the same end
    assert comparable(back.result) == comparable(rec.result)
    np.testing.assert_array_equal(turn_start_boards(back)[-1], turn_start_boards(rec)[-1])
    # and the rebuilt record is an exact JSON record of its own
    again = GameRecord.from_json(back.to_json())
    assert again.result == back.result
    assert again.meta["irregularities"] == msgs


def test_lenient_stops_at_an_unplayable_entry():
    rules, rec, lines = _game_text(seed=9)
    ent = _entries(lines)
    last = max(ent)
    k = 6
    text = _with(lines, k, f"{k},{ent[k].split(',', 1)[1].swapcase()}")
    back = from_competition(text, rules=rules, strict=False)
    assert [i.entry for i in back.issues] == [k]
    assert "replay stops" in str(back.issues[0]) and f"{last - k + 1} entries not played" in str(back.issues[0])
    assert back.result["battle_turns"] == k - 3


def test_lenient_tolerates_case_and_missing_jumped_stones():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=200)
    for seed in range(40):
        rec = random_record(rules, seed)
        turns = turn_entries(rec)[1]
        hits = [i for i, t in enumerate(turns) if t["jumped"] and t["victims"]]
        if hits:
            break
    lines = to_competition(rec).splitlines()
    k = hits[0] + 3
    ent = _entries(lines)[k]
    idx, path, *caps = ent[:-1].split(",")
    t = turns[hits[0]]
    rest = caps[len(t["jumped"]):]
    # the jumped stones left out, the square victims in the mover's case
    text = _with(lines, k, ",".join([idx, path] + [c.swapcase() for c in rest]) + ";")
    with pytest.raises(RecordError) as e:
        from_competition(text, rules=rules)
    assert e.value.entry == k
    back = from_competition(text, rules=rules, strict=False)
    assert back.issues and all(i.entry == k for i in back.issues)
    assert comparable(back.result) == comparable(rec.result)
