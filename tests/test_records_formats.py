"""Records beyond the round trips: irregular real records, the jiuchess CSV notation, hostile input."""

import json
import os

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.records import (
    GameRecord, RecordError, detect_format, from_competition, from_jiuchess, load_record, to_competition,
    to_jiuchess, turn_entries,
)
from jiu_env.rules import Rules


def _random_game(rules, seed, irregular=None, at=None):
    """A seeded random game; ``irregular`` = "out_of_turn" or "omit_victims" makes one irregular turn.

    Returns ``(actions, passes, final_state, entry_of_irregular_turn)``: the
    action list and passes as a record stores them, the final state (the
    board and counts the record implies) and the battle entry number of the
    irregular turn in the competition notation (turn index + 3).
    """
    s = rules.new_state()
    rng = np.random.default_rng(seed)
    buf = np.empty(rules.num_actions, np.int64)
    acts, passes = [], []
    done = irregular is None
    entry = None
    while s[K.H_PHASE] != K.PH_OVER:
        turns = int(s[K.H_TURNS])
        if not done and s[K.H_PHASE] == K.PH_BATTLE and turns >= at:
            if irregular == "out_of_turn" and s[K.H_SUB] == K.SUB_MOVE:
                t = s.copy()
                K.pass_turn(t)
                if t[K.H_PHASE] != K.PH_OVER:
                    K.pass_turn(s)
                    passes.append(len(acts))
                    done = True
                    entry = turns + 3  # the next entry is played by the side that just moved
            elif irregular == "omit_victims" and s[K.H_SUB] == K.SUB_CAPTURE:
                t = s.copy()
                K.pass_turn(t)
                if t[K.H_PHASE] != K.PH_OVER:
                    K.pass_turn(s)
                    passes.append(len(acts))
                    done = True
                    entry = turns + 3  # the turn whose victims are left out
        k = K.legal_actions(s, buf)
        a = int(buf[rng.integers(k)])
        K.apply_action(s, a)
        acts.append(a)
    return acts, passes, s, entry if done else None


def _irregular(kind, n=6, writable=None):
    """A sample irregular game; ``writable``: a writer that must accept its record (it may refuse some)."""
    rules = Rules.make("competitive", board_size=n, max_battle_turns=300)
    for seed in range(200):
        acts, passes, final, entry = _random_game(rules, seed, kind, at=4)
        if entry is not None and final[K.H_TURNS] > entry:
            if writable is not None:
                try:
                    writable(GameRecord.from_actions(rules, acts, passes=passes))
                except ValueError:
                    continue
            return rules, acts, passes, final, entry
    raise AssertionError("no sample game")


def _board_counts(s):
    p = int(s[K.H_P])
    return s[K.HDR:K.HDR + p].tolist(), int(s[K.H_COUNT + 1]), int(s[K.H_COUNT + 2])


# --------------------------------------------------------- irregular records
@pytest.mark.parametrize("kind", ["out_of_turn", "omit_victims"])
@pytest.mark.parametrize("fmt", ["competition", "jiuchess"])
def test_lenient_goes_on_to_the_end_of_an_irregular_record(kind, fmt):
    write, read = (to_competition, from_competition) if fmt == "competition" else (to_jiuchess, from_jiuchess)
    rules, acts, passes, final, entry = _irregular(kind, writable=write)
    rec = GameRecord.from_actions(rules, acts, passes=passes)
    assert rec.result["over"]
    text = write(rec)
    # the entry number in this format (jiuchess numbers the battle moves from 1)
    k = entry if fmt == "competition" else entry - 2
    with pytest.raises(RecordError) as e:
        read(text, rules=rules)
    assert e.value.entry == k
    back = read(text, rules=rules, strict=False)
    word = "out of turn" if kind == "out_of_turn" else "capture(s) are due"
    assert [i.entry for i in back.issues] == [k] and word in back.issues[0].message, [str(i) for i in back.issues]
    assert not any("replay stops" in str(i) for i in back.issues)
    # the replay reaches the end of the record with the board and counts it implies
    end = back.replay()
    assert _board_counts(end) == _board_counts(final)
    assert back.result["over"] and back.result["winner"] == rec.result["winner"]
    assert back.result["battle_turns"] == int(final[K.H_TURNS])
    assert back.passes
    # the irregular record is an exact JSON record of its own and writes back to the same text
    again = GameRecord.from_json(back.to_json())
    assert again.passes == back.passes and again.result == back.result
    assert write(again).splitlines()[1:] == text.splitlines()[1:]


def test_omitted_victims_keep_the_pending_capture_visible():
    rules, acts, passes, final, entry = _irregular("omit_victims")
    rec = GameRecord.from_actions(rules, acts, passes=passes)
    back = from_competition(to_competition(rec), rules=rules, strict=False)
    # the state after the irregular entry still shows the captures due
    pending = [p for p in back.positions() if p[K.H_SUB] == K.SUB_CAPTURE and p[K.H_PHASE] == K.PH_BATTLE]
    assert any(int(p[K.H_TURNS]) == entry - 3 for p in pending)


def test_passes_are_checked():
    rules = Rules.make("competitive", board_size=6)
    acts, _, _, _ = _random_game(rules, 1)
    d = GameRecord.from_actions(rules, acts).to_dict()
    with pytest.raises(RecordError, match="handed over"):
        GameRecord.from_dict({**d, "passes": [3]})  # placement phase
    with pytest.raises(RecordError, match="passes"):
        GameRecord.from_dict({**d, "passes": [len(acts) + 5]})
    with pytest.raises(RecordError, match="passes"):
        GameRecord.from_dict({**d, "passes": "x"})


# ------------------------------------------------------------------ jiuchess
HAND = ("Stage[1]:W(B,2);B(C,3);W(A,1);B(B,1);W(C,1);B(D,1);W(D,2);B(A,2);W(A,3);B(C,2);W(D,3);B(B,3);"
        "W(B,4);B(A,4);W(C,4);B(D,4);Stage[2]:B(B,3)-O(B,2);W(C,1)-O(C,3),TC:B(C,2);B(D,1)-O(C,1);W(D,2)-O(D,1)")
HAND_BOARD = [[1, 2, 2, 1],
              [2, 2, 0, 0],
              [1, 0, 1, 1],
              [2, 1, 1, 2]]


def test_hand_written_jiuchess_record():
    rules = Rules.make("competitive", board_size=4)
    rec = from_jiuchess(HAND, rules=rules)
    s = rec.replay()
    assert s[K.HDR:K.HDR + 16].reshape(4, 4).tolist() == HAND_BOARD
    assert rec.result["battle_turns"] == 4 and not rec.result["over"]
    assert rec.moves()[:2] == ["b1", "c2"]  # W(B,2) is row 1, column 1: the diagonal ends come first
    assert to_jiuchess(rec) == HAND
    # an out-of-turn fifth move: strict names it, lenient hands the turn over and plays it
    text = HAND + ";W(D,3)-O(D,2)"
    with pytest.raises(RecordError, match="to move") as e:
        from_jiuchess(text, rules=rules)
    assert e.value.entry == 5
    back = from_jiuchess(text, rules=rules, strict=False)
    assert [i.entry for i in back.issues] == [5]
    board = back.replay()[K.HDR:K.HDR + 16].reshape(4, 4).tolist()
    assert board[1] == [2, 2, 0, 1] and board[2] == [1, 0, 1, 0]
    # a bad token and a wrong jump capture
    with pytest.raises(RecordError, match="not a move") as e:
        from_jiuchess(HAND.replace("B(D,1)-O(C,1)", "B(D,1)O(C,1)"), rules=rules)
    assert e.value.entry == 3
    with pytest.raises(RecordError, match="jump captures") as e:
        from_jiuchess(HAND.replace("TC:B(C,2)", "TC:B(A,2)"), rules=rules)
    assert e.value.entry == 2
    lenient = from_jiuchess(HAND.replace("TC:B(C,2)", "TC:B(A,2)"), rules=rules, strict=False)
    assert lenient.actions == rec.actions and [i.entry for i in lenient.issues] == [2]
    # quoted CSV cell with text before it, whitespace, and row n+1 in a capture list (off the board)
    quoted = 'g1,"' + HAND.replace(";", "; ") + '"'
    assert from_jiuchess(quoted, rules=rules).actions == rec.actions
    off = HAND.replace("TC:B(C,2)", "TC:B(C,2),FC:B(A,5)")
    with pytest.raises(RecordError, match="row 5"):
        from_jiuchess(off, rules=rules)
    assert from_jiuchess(off, rules=rules, strict=False).actions == rec.actions


def _has_neighbour_fly(rec):
    """A fly to a neighbouring point: the notation writes it as it writes a step."""
    n = rec.rules.board_size
    for t in turn_entries(rec)[1]:
        p, q = t["path"][0], t["path"][-1]
        dr, dc = abs(p // n - q // n), abs(p % n - q % n)
        if t["fly"] and sorted((dr, dc)) == [0, 1]:
            return True
    return False


@pytest.mark.parametrize("n, fly", [(6, 0), (8, 0), (14, 0), (6, None), (14, None)])
def test_jiuchess_round_trip_gives_identical_actions(n, fly):
    """Every game the notation writes reads back to the identical actions.  It has no mark for a
    fly, so a game with a fly to a neighbouring point where the step was also legal is refused
    (it would read back as the step); a fly over an enemy stone reads back as a fly (no TC: list)."""
    extra = {} if fly is None else {"fly_threshold": fly}
    rules = Rules.make("competitive", board_size=n, max_battle_turns=150, **extra)
    for seed in range(6):
        acts, _, _, _ = _random_game(rules, seed)
        rec = GameRecord.from_actions(rules, acts)
        try:
            text = to_jiuchess(rec)
        except ValueError as e:
            assert fly is None and _has_neighbour_fly(rec) and "reads back as a step" in str(e)
            continue
        back = from_jiuchess(text, rules=rules)
        assert back.issues == []
        np.testing.assert_array_equal(back.replay()[K.HDR:K.HDR + n * n], rec.replay()[K.HDR:K.HDR + n * n])
        assert back.result["battle_turns"] == rec.result["battle_turns"]
        assert back.actions == rec.actions
        assert to_jiuchess(back) == text
        assert from_jiuchess(to_jiuchess(back), rules=rules).actions == back.actions


def test_jiuchess_file_detection_and_games(tmp_path):
    # no flying: a fly to a neighbouring point would be refused by the notation
    rules = Rules.make("competitive", board_size=6, max_battle_turns=100, fly_threshold=0)
    recs = [GameRecord.from_actions(rules, _random_game(rules, s)[0]) for s in range(2)]
    path = tmp_path / "games.csv"
    path.write_text("\n".join(to_jiuchess(r) for r in recs) + "\n")
    assert detect_format(path.read_text()) == "jiuchess"
    assert load_record(path, game=1, rules=rules).replay()[K.H_TURNS] == recs[1].replay()[K.H_TURNS]
    with pytest.raises(RecordError, match="choose one"):
        load_record(path, rules=rules)
    one = tmp_path / "one.csv"
    recs[0].save(one)
    head, line = one.read_text().splitlines()  # saved with the headers jiu export writes, the rules among them
    assert head == "event,date,white,black,result,end_reason,rules,moves" and '"Stage[1]:' in line
    assert load_record(one, rules=rules).result == from_jiuchess(to_jiuchess(recs[0]), rules=rules).result


# ----------------------------------------------------------- hostile input
@pytest.fixture(scope="module")
def small():
    rules = Rules.make("competitive", board_size=5, max_battle_turns=100)
    return GameRecord.from_actions(rules, _random_game(rules, 2)[0])


@pytest.mark.parametrize("change, match", [
    ({"actions": "huge"}, "out of range"),
    ({"result": 5}, "'result' must be an object"),
    ({"result": "returns"}, "stored result returns"),
    ({"result": "decisions"}, "stored result decisions"),
    ({"version": 0}, "version"),
    ({"version": -7}, "version"),
    ({"version": True}, "version"),
    ({"rules": None}, "no 'rules' field"),
    ({"start": 1.7}, "integers 0"),
    ({"start": 2.9}, "integers 0"),
    ({"start": -0.5}, "integers 0"),
])
def test_hostile_json_records_raise_record_error(small, change, match):
    d = small.to_dict()
    key, val = next(iter(change.items()))
    if key == "actions":
        d["actions"] = list(d["actions"])
        d["actions"][3] = 10 ** 30
        d.pop("moves")
    elif key == "result" and isinstance(val, str):
        d["result"] = dict(d["result"])
        d["result"][val] = [0.5, 0.5] if val == "returns" else d["result"][val] + 1
    elif key == "rules":
        d.pop("rules")
    elif key == "start":
        board = [[1, 2, 1, 2, 1], [2, 1, 2, 1, 2], [1, 2, 0, 2, 1], [2, 1, 2, 1, 2], [1, 2, 1, 2, 0]]
        board[0][0] = val
        d = {**d, "start": {"from": "position", "board": board, "to_move": "black"}, "actions": [], "result": None}
        d.pop("moves")
    else:
        d[key] = val
    with pytest.raises(RecordError, match=match):
        GameRecord.from_json(json.dumps(d))


def test_cli_replay_of_hostile_json_is_a_clean_error(small, tmp_path, capsys):
    from jiu_env.cli import main

    d = small.to_dict(moves=False)
    d["actions"][2] = 10 ** 30
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    assert main(["replay", str(path), "--all"]) == 2
    assert "out of range" in capsys.readouterr().err
    d = small.to_dict(moves=False)
    d["result"] = 5
    path.write_text(json.dumps(d))
    assert main(["replay", str(path), "--all"]) == 2
    assert "'result' must be an object" in capsys.readouterr().err


def test_json_with_bom_is_json(small, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + small.to_json().encode("utf-8"))
    assert detect_format(path.read_text(encoding="utf-8")) == "json"
    assert load_record(path).actions == small.actions
    assert GameRecord.from_json("\ufeff" + small.to_json()).actions == small.actions


def test_empty_game_round_trips(tmp_path):
    rules = Rules.make("competitive", board_size=6)
    rec = GameRecord.from_actions(rules, [], players={"white": "human", "black": "greedy"})
    text = to_competition(rec)
    assert "0,;" in text
    back = from_competition(text, rules=rules)
    assert back.actions == [] and back.issues == [] and not back.result["over"]
    path = tmp_path / "empty.txt"
    rec.save(path)
    assert load_record(path, rules=rules).actions == []
    assert from_jiuchess(to_jiuchess(rec), rules=rules).actions == []


def test_truncated_competition_record_is_refused_when_strict():
    rules = Rules.make("competitive", board_size=6, max_battle_turns=200)
    for seed in range(20):
        rec = GameRecord.from_actions(rules, _random_game(rules, seed)[0])
        if rec.result["winner"] in ("white", "black"):
            break
    lines = to_competition(rec).splitlines()
    assert lines[0].split("][")[3] in ("white wins", "black wins")
    cut_after_entry = "\n".join(lines[:-3])
    placements = lines[1][:-1].split(",")
    cut_in_placements = "\n".join([lines[0], ",".join(placements[:10]) + ";"])
    for text in (cut_after_entry, cut_in_placements):
        with pytest.raises(RecordError, match="does not reach the end"):
            from_competition(text, rules=rules)
        back = from_competition(text, rules=rules, strict=False)
        assert not back.result["over"] and any("incomplete" in str(i) for i in back.issues)


def test_replay_memory_does_not_grow_with_the_turn_limit(tmp_path, capsys):
    from jiu_env.cli import main

    rules = Rules.make("competitive", board_size=6, max_battle_turns=1_000_000)
    acts, _, _, _ = _random_game(Rules.make("competitive", board_size=6, max_battle_turns=60), 3)
    rec = GameRecord.from_actions(rules, acts[:80])
    pos = rec.positions()
    assert len(pos) == 81 and all(p.nbytes <= (K.HDR + 36) * 8 for p in pos)
    path = tmp_path / "long.json"
    rec.save(path)
    assert main(["replay", str(path), "--all"]) == 0
    assert "after 80/80" in capsys.readouterr().out


@pytest.fixture
def moves_format():
    """A toy format registered for one test: ``MOVES`` then one kernel action a line (6x6 competitive)."""
    from jiu_env.records import formats

    def read(text, game, rules, strict, path):
        formats.one_game(game, path)
        return GameRecord(rules=Rules.make(rules), actions=[int(t) for t in text.split()[1:]])

    row = formats.register(formats.RecordFormat(
        "moves", priority=5, detect=lambda text, path: text.startswith("MOVES"), games=lambda text: 1, read=read,
        write=lambda record: "\n".join(["MOVES", *map(str, record.actions)]), extension=".moves",
        save_suffixes=(".moves",)))
    yield row
    del formats.FORMATS["moves"]


def test_a_registered_format_is_read_saved_and_exported_everywhere(moves_format, tmp_path):
    """One register() call: load_record, detect_format, GameRecord.save, jiu export and its --format choices."""
    from jiu_env.cli import build_parser
    from jiu_env.records import formats
    from jiu_env.records.export import export_games

    rules = Rules.make(board_size=6)
    rec = GameRecord(rules=rules, actions=[14, 21, 0, 1])
    path = tmp_path / "g.MOVES"
    rec.save(path)
    assert path.read_text() == "MOVES\n14\n21\n0\n1\n"
    assert detect_format(path.read_text()) == "moves"
    assert load_record(path, rules=rules).actions == [14, 21, 0, 1]
    with pytest.raises(RecordError, match="no game 3: it holds 1 game"):
        load_record(path, game=3, rules=rules)
    report = export_games([path], "moves", tmp_path / "out", rules=rules)
    assert report.ok and [p.rsplit(".", 1)[1] for p in report.written] == ["moves"]
    assert load_record(report.written[0], rules=rules).actions == rec.actions
    export = next(a for a in build_parser()._subparsers._group_actions[0].choices["export"]._actions
                  if a.dest == "format")
    assert "moves" in export.choices and formats.for_path("x.csv").name == "jiuchess"


def test_format_names_are_registered_once():
    from jiu_env.records import formats

    with pytest.raises(ValueError, match="'json' is registered already"):
        formats.register(formats.FORMATS["json"])


# ------------------------------------------------------------ bad input of every reader and writer
def _two_game_files(tmp_path):
    import json as _json

    from jiu_env import Rules, play_game

    rules = Rules.make("competitive", board_size=4)
    recs = [play_game(rules, "random", "random", seed=s).record for s in (1, 2)]
    path = tmp_path / "g.jsonl"
    path.write_text("".join(_json.dumps(r.to_dict()) + "\n" for r in recs))
    return rules, recs, path


def test_game_numbers_are_ascii_digits_from_0(tmp_path):
    from jiu_env.records import RecordError, load_record

    rules, recs, path = _two_game_files(tmp_path)
    assert load_record(path, game=1).actions == recs[1].actions
    assert load_record(path, game="1").actions == recs[1].actions
    for bad in (-1, "-1", "\u0661", "\u00b2", True, 1.0):
        with pytest.raises(RecordError):
            load_record(path, game=bad)
    line = ("Stage[1]:W(B,2);B(C,3);W(A,1);B(B,1);W(C,1);B(D,1);W(D,2);B(A,2);W(A,3);B(C,2);W(D,3);B(B,3);"
            "W(B,4);B(A,4);W(C,4);B(D,4);Stage[2]:B(B,3)-O(B,2);W(C,1)-O(C,3),TC:B(C,2);B(D,1)-O(C,1)")
    csv = tmp_path / "g.csv"
    csv.write_text(line + "\n" + line.rsplit(";", 1)[0] + "\n")
    assert len(load_record(csv, game=1, rules=rules).actions) < len(load_record(csv, game=0, rules=rules).actions)
    for bad in (-1, "-1", "\u0661", True):
        with pytest.raises(RecordError, match="game"):
            load_record(csv, game=bad, rules=rules)


def test_json_lines_split_at_newlines_only_and_save_writes_one_line(tmp_path):
    from jiu_env.records import load_record

    rules, recs, path = _two_game_files(tmp_path)
    recs[0].players = {"white": "A\u2028B", "black": "C\u0085D"}
    path.write_text(recs[0].to_json() + "\n" + recs[1].to_json() + "\r\n")
    assert load_record(path, game=0).players == {"white": "A\u2028B", "black": "C\u0085D"}
    assert load_record(path, game=1).actions == recs[1].actions
    one = tmp_path / "one.jsonl"
    recs[1].save(one)
    assert one.read_text().count("\n") == 1 and load_record(one).actions == recs[1].actions


def test_record_fields_are_checked_by_name(tmp_path):
    import numpy as _np

    from jiu_env.records import GameRecord, RecordError

    rules, recs, _ = _two_game_files(tmp_path)
    for seed in ("x", 2.5, [1]):
        d = recs[0].to_dict()
        d["seed"] = seed
        with pytest.raises(RecordError, match="'seed' must be an integer or null"):
            GameRecord.from_dict(d)
    recs[0].seed = _np.int64(7)
    assert '"seed": 7' in recs[0].to_json()  # a numpy integer is written as the int it is
    d = recs[0].to_dict()
    d["moves"][3] = "a1" if d["moves"][3] != "a1" else "a2"
    with pytest.raises(RecordError, match="action 3: 'moves' and 'actions' disagree: move '.*' is not action"):
        GameRecord.from_dict(d)
    d = recs[0].to_dict()
    d["players"]["white"] = "\ud800"
    with pytest.raises(RecordError, match="players.white holds .* lone surrogate"):
        GameRecord.from_dict(d)
    with pytest.raises(RecordError, match="an action is an integer, not float"):
        GameRecord.from_actions(rules, [a + 0.9 for a in recs[0].actions])
    with pytest.raises(RecordError, match="an action is an integer, not bool"):
        GameRecord.from_actions(rules, [True])


def test_text_headers_stay_on_one_line_and_a_colonless_stage_is_not_jiuchess(tmp_path):
    from jiu_env.records import RecordError, detect_format, from_jiuchess, load_record

    rules, recs, _ = _two_game_files(tmp_path)
    recs[0].players = {"white": "Ann\rLee", "black": "Bo\u2028Li"}
    recs[0].save(tmp_path / "cr.txt")
    assert load_record(tmp_path / "cr.txt", rules=rules).actions == recs[0].actions
    assert detect_format("Stage[1]W(G,7);B(H,8)") != "jiuchess"
    with pytest.raises(RecordError, match="no 'Stage.1.:' found"):
        from_jiuchess("Stage[1]W(G,7);B(H,8)")


def test_export_refuses_a_game_it_cannot_encode_and_a_directory_in_the_way(tmp_path):
    import json as _json

    from jiu_env.records.export import ExportError, export_games

    rules, recs, path = _two_game_files(tmp_path)
    report = export_games([path], "json", tmp_path / "out")
    assert len(report.written) == 2
    target = report.written[1]
    os.remove(target)
    os.mkdir(target)  # a directory where game 1's file goes
    before = sorted(os.listdir(tmp_path / "out"))
    with pytest.raises(ExportError, match="is a directory where a game's file would go: nothing written"):
        export_games([path], "json", tmp_path / "out", force=True)
    assert sorted(os.listdir(tmp_path / "out")) == before
    # a tournament line whose player name cannot be encoded (JSON spells a lone surrogate): that game is
    # refused while planning, the other written
    lines = [_json.dumps({"id": f"a|b|{i}", "pair": ["a", "b"], "white": name, "black": "b", "record": r.to_dict()})
             for i, (name, r) in enumerate((("\ud800", recs[0]), ("a", recs[1])))]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    rep = export_games([bad], "competition", tmp_path / "out2")
    assert len(rep.written) == 1 and len(rep.refused) == 1 and "surrogate" in rep.refused[0][1]


def test_an_exported_competition_record_names_the_rules_it_needs(tmp_path):
    import json as _json

    from jiu_env import Rules
    from jiu_env.evaluation import make_player, run_game
    from jiu_env.records import RecordError, load_record
    from jiu_env.records.competition import from_competition
    from jiu_env.records.export import export_games

    r6 = Rules.make("competitive", board_size=6)
    g = run_game(r6, make_player("random", seed=1), make_player("random", seed=2), seed=3)["record"]
    (tmp_path / "g.jsonl").write_text(_json.dumps(g.to_dict()) + "\n")
    (path,) = export_games([tmp_path / "g.jsonl"], "competition", tmp_path / "out").written
    with pytest.raises(RecordError, match=r"header says the game was played under \[competitive board_size=6\]: "
                                          r"board_size=6 \(read under 14\)"):
        load_record(path)
    assert load_record(path, rules=r6).actions == g.actions
    text = open(path).read().replace("[competitive board_size=6]", "[made by another program]")
    assert from_competition(text, rules=r6).actions == g.actions  # a field that is not rules is left alone


def test_a_game_saved_as_text_keeps_its_headers_and_is_read_under_the_rules_it_names(tmp_path):
    """``save`` writes the text notations with the headers of ``jiu export``: read without the rules of a 6x6
    game, the record is refused naming them (a RulesMismatch, not "not a game record" nor an illegal
    placement), and read under them it gives back the game, its players, event and date."""
    from jiu_env import play_game
    from jiu_env.records import NotARecord, RulesMismatch

    r6 = Rules.make("competitive", board_size=6)
    for seed in range(50):
        rec = play_game(r6, "random", "random", seed=seed).record
        try:
            to_jiuchess(rec)  # no fly to a neighbouring point: the jiuchess notation writes it
            break
        except ValueError:
            continue
    rec.players = {"white": "human", "black": "random"}
    rec.meta = {"source": "jiu play", "event": "jiu play", "date": "2025-01-02"}
    for name in ("g.txt", "g.csv"):
        path = tmp_path / name
        rec.save(path)
        assert "competitive board_size=6" in path.read_text()
        back = load_record(path, rules=r6)
        assert back.actions == rec.actions and back.players == rec.players and back.result == rec.result
        assert back.meta["event"] == "jiu play" and back.meta["date"] == "2025-01-02"
        with pytest.raises(RulesMismatch, match=r"played under \[competitive board_size=6\]: board_size=6 "
                                                 r"\(read under 14\)") as e:
            load_record(path)
        assert not isinstance(e.value, NotARecord) and e.value.declared == "competitive board_size=6"
    head = (tmp_path / "g.txt").read_text().splitlines()[0]
    word = {"white": "white wins", "black": "black wins", "draw": "draw"}[rec.result["winner"]]
    assert head == (f"[JIU][human][random][{word}][2025-01-02][jiu play]"
                    f"[{rec.result['end_reason']}][competitive board_size=6]")


# ------------------------------------------------------------------ short headers and non-text input
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("header", ["[JIU]", "[JIU][a]", "[JIU][a][b]", "[JIU][a][b][*][2026-01-01][event]"])
def test_a_competition_header_may_leave_out_any_tail_of_its_fields(header, strict):
    short = from_competition(f"{header}\n0,;", rules={"board_size": 4}, strict=strict)
    plain = from_competition("0,;", rules={"board_size": 4}, strict=strict)
    assert short.actions == plain.actions
    assert short.players["white"] == ("a" if "[a]" in header else None)


@pytest.mark.parametrize("read", [from_competition, from_jiuchess, GameRecord.from_json])
@pytest.mark.parametrize("bad", [None, 5, ["0,;"]])
def test_the_readers_refuse_what_is_not_text_with_a_type_error(read, bad):
    with pytest.raises(TypeError, match=f"a record's text must be a str \\(or UTF-8 bytes\\), not {type(bad).__name__}"):
        read(bad)


def test_the_text_readers_take_utf8_bytes_as_from_json_does():
    rec = from_competition("[JIU][a][b]\n0,;", rules={"board_size": 4})
    assert from_competition(b"[JIU][a][b]\n0,;", rules={"board_size": 4}).to_dict() == rec.to_dict()
    with pytest.raises(RecordError, match="not readable as UTF-8"):
        from_competition(b"\xff\xfe0,;", rules={"board_size": 4})


# ------------------------------------------------------------------ detection, export cells, start, players
def test_a_json_record_written_with_indent_0_is_json_not_json_lines(tmp_path):
    rules, recs, _ = _two_game_files(tmp_path)
    rec = recs[0]
    rec.meta = {"notes": [{"who": "a"}, {"who": "b"}]}  # objects of a list: lines that start with "{" at indent=0
    for name in ("g.json", "g.record"):
        path = tmp_path / name
        with open(path, "w") as f:
            json.dump(rec.to_dict(), f, indent=0)
        text = path.read_text()
        assert "\n{" in text and detect_format(text, path) == detect_format(text) == "json"
        assert load_record(path).to_dict() == rec.to_dict()
    # JSON lines are told by their first line, whatever the file is called
    lines = "".join(r.to_json() + "\n" for r in recs)
    assert detect_format(lines) == detect_format(lines, "games.txt") == "jsonl"
    (tmp_path / "two.txt").write_text(lines)
    assert load_record(tmp_path / "two.txt", game=1).actions == recs[1].actions


def test_an_exported_jiuchess_cell_never_looks_like_a_stage(tmp_path):
    from jiu_env.records.export import export_games

    rules, recs, _ = _two_game_files(tmp_path)
    events = ["Stage [1]: final", "S t a g e\t[1] :x", "Stage[2]: semi", "Stage(1) stays"]
    for i, event in enumerate(events):
        rec = recs[0]
        rec.meta = {"event": event}
        src = tmp_path / f"g{i}.jsonl"
        src.write_text(rec.to_json() + "\n")
        (path,) = export_games([src], "jiuchess", tmp_path / f"out{i}").written
        back = load_record(path, rules=rules)
        assert back.actions == rec.actions
        assert "Stage[" not in "".join(back.meta["head"].split())  # the cells before the game line
        (again,) = export_games([path], "json", tmp_path / f"json{i}", rules=rules).written
        assert load_record(again).meta["event"] == (event if i == 3 else " ".join(event.split()).replace("[", "(", 1))


def test_a_placement_start_with_a_board_or_side_to_move_is_refused(tmp_path):
    from jiu_env.records.game_record import norm_start

    board = [[0] * 4 for _ in range(4)]
    for start, words in (({"from": "placement", "board": board, "to_move": "white"}, "takes no board or to_move"),
                         ({"from": "placement", "board": board}, "takes no board"),
                         ({"to_move": "white"}, "takes no to_move")):
        with pytest.raises(RecordError, match=f"is a new game and {words}:"):
            norm_start(start)
    assert norm_start({"from": "placement", "board": None}) == {"from": "placement"}  # null: no board
    rules, recs, _ = _two_game_files(tmp_path)
    d = recs[0].to_dict()
    d["start"] = {"from": "placement", "to_move": "black"}
    with pytest.raises(RecordError, match="takes no to_move"):
        GameRecord.from_dict(d)


@pytest.mark.parametrize("players", [{}, {"white": "a"}, {"white": None, "black": None}, {"x": 1}])
def test_players_round_trip_exactly(tmp_path, players):
    rules, recs, _ = _two_game_files(tmp_path)
    rec = GameRecord.from_actions(rules, recs[0].actions, players=players)
    assert rec.players == players
    assert GameRecord.from_dict(rec.to_dict()).players == players
    rec.save(tmp_path / "p.json")
    assert load_record(tmp_path / "p.json").players == players
    # files without players (or with null) read as before
    d = rec.to_dict()
    for value in (None, "missing"):
        if value is None:
            d["players"] = None
        else:
            del d["players"]
        assert GameRecord.from_dict(d).players == {"white": None, "black": None}
