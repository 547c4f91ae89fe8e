"""``jiu export`` and :mod:`jiu_env.records.export`: every game of a tournament in every format, read back."""

import io
import json
import os
import subprocess
import sys
import time

import pytest

from jiu_env.cli import main
from jiu_env.evaluation.tournament import TournamentConfig, read_games, run_tournament
from jiu_env.records import GameRecord, load_record
from jiu_env.records.export import (
    ExportError, export_games, player_text, read_games as export_read_games, split_player, utc_date,
)
from jiu_env.records.replay import inside_turn
from jiu_env.rules import Rules

RULES = Rules.make("competitive", board_size=6)
RULE_ARGS = ["--rule", "board_size=6"]
TITLE = "Export test [6x6]"
EXT = {"json": ".json", "competition": ".txt", "jiuchess": ".csv"}


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    """A tiny tournament: random vs greedy on 6x6, 4 games, with an --out folder."""
    out = tmp_path_factory.mktemp("tour")
    cfg = TournamentConfig.from_dict({"players": ["random", "greedy"], "games": 4, "seed": 1,
                                      "rules": RULES.to_dict(), "title": TITLE})
    run_tournament(cfg, out_dir=str(out), workers=1)
    games = out / "games.jsonl"
    os.utime(games, (1_700_000_000, 1_700_000_000))  # 2023-11-14 UTC: the date a game without one gets
    lines = read_games(games)
    assert len(lines) == 4
    return games, lines


def _by_number(report):
    return {os.path.basename(p)[:4]: p for p in report.written}


@pytest.mark.parametrize("fmt", ["json", "competition", "jiuchess"])
def test_export_round_trips_every_game(tournament, tmp_path, fmt):
    games, lines = tournament
    out = tmp_path / fmt
    report = export_games([games], fmt, out, rules=RULES)
    assert report.games == 4
    assert len(report.written) + len(report.refused) == 4
    if fmt != "jiuchess":  # the JSON record and the competition notation write every game of this tournament
        assert report.ok and len(report.written) == 4
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in report.written)
    written = _by_number(report)
    refused = {label for label, _ in report.refused}
    for i, line in enumerate(lines):
        key = f"{i:04d}"
        if key not in written:
            assert any(f"game {i} (id {line['id']!r})" in label for label in refused)
            continue
        path = written[key]
        assert os.path.basename(path) == f"{key}-{line['white']}-vs-{line['black']}{EXT[fmt]}"
        back = load_record(path, rules=RULES)
        assert back.actions == line["record"]["actions"]
        assert back.result["winner"] == line["winner"]
        assert back.result["end_reason"] == line["end_reason"]
        assert back.result["battle_turns"] == line["battle_turns"]
        text = open(path, encoding="utf-8").read()
        if fmt == "json":
            meta = json.loads(text)["meta"]
            assert meta["event"] == TITLE and meta["date"] == "2023-11-14"
            assert meta["date_source"].startswith("file modification time")
            assert meta["export_players"]["white"] == {"name": line["white"], "spec": line["white_spec"]}
            assert back.rules == RULES
        elif fmt == "competition":
            head = text.splitlines()[0]
            winner = {"white": "white wins", "black": "black wins", "draw": "draw"}.get(line["winner"], "undecided")
            assert head == (f"[JIU][{line['white']}][{line['black']}][{winner}][2023-11-14][Export test (6x6)]"
                            f"[{line['end_reason']}][competitive board_size=6]")
            assert back.meta["event"] == "Export test (6x6)" and back.meta["date"] == "2023-11-14"
        else:
            first, second = text.splitlines()
            assert first == "event,date,white,black,result,end_reason,rules,moves"
            assert second.startswith(f"Export test [6x6],2023-11-14,{line['white']},{line['black']},")
            assert f",{line['end_reason']},competitive board_size=6,\"Stage[1]:" in second


def test_jiuchess_refusals_are_named_and_the_cli_exits_1(tournament, tmp_path, capsys):
    games, lines = tournament
    # a game that ends inside a turn: a stone lifted to fly and not landed, or a jump chain that may go on
    rec = GameRecord.from_dict(lines[0]["record"])
    cut = None
    for k, s in enumerate(rec.states()):
        if k and inside_turn(s) is not None:
            cut = k
            break
    assert cut is not None
    partial = GameRecord.from_actions(RULES, rec.actions[:cut], players=rec.players)
    one = tmp_path / "partial.json"
    partial.save(one)
    for fmt in ("competition", "jiuchess"):
        report = export_games([one], fmt, tmp_path / fmt)
        assert report.written == [] and len(report.refused) == 1
        label, reason = report.refused[0]
        assert label == str(one) and "ends inside one" in reason
        assert not (tmp_path / fmt).exists()  # nothing to write: no folder made
    # the JSON record writes it, and the CLI goes on past the refused game with exit status 1
    rc = main(["export", str(games), str(one), "--format", "jiuchess", "--out", str(tmp_path / "both"), *RULE_ARGS])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"refused {one}: the jiuchess notation writes whole battle turns" in err
    names = sorted(os.listdir(tmp_path / "both"))
    assert names and all(n.startswith("games-") for n in names)  # several inputs: the input's name first
    assert "not written (named above)" in err
    assert export_games([one], "json", tmp_path / "json").ok


def test_overwrite_refused_unless_force(tournament, tmp_path, capsys):
    games, _ = tournament
    out = tmp_path / "o"
    assert export_games([games], "json", out).ok
    first = sorted(os.listdir(out))
    victim = out / first[0]
    victim.write_text("mine", encoding="utf-8")
    with pytest.raises(ExportError, match=rf"{first[0]} and 3 more exist already: nothing written"):
        export_games([games], "json", out)
    for name in first[1:]:
        os.remove(out / name)
    with pytest.raises(ExportError, match=rf"{first[0]} exists already: nothing written"):
        export_games([games], "json", out)
    assert sorted(os.listdir(out)) == first[:1]  # the others not written either
    assert victim.read_text(encoding="utf-8") == "mine"
    rc = main(["export", str(games), "--format", "json", "--out", str(out)])
    assert rc == 2 and "--force" in capsys.readouterr().err
    assert victim.read_text(encoding="utf-8") == "mine"
    rc = main(["export", str(games), "--format", "json", "--out", str(out), "--force"])
    assert rc == 0 and "wrote 4 of 4 games" in capsys.readouterr().out
    assert load_record(victim).actions == GameRecord.from_dict(read_games(games)[0]["record"]).actions
    assert sorted(os.listdir(out)) == first  # no temporary files left


def test_one_game_and_bad_inputs_named(tournament, tmp_path, capsys):
    games, lines = tournament
    report = export_games([games], "competition", tmp_path / "one", game=lines[2]["id"], rules=RULES)
    assert [os.path.basename(p)[:4] for p in report.written] == ["0002"]
    assert len(export_games([games], "json", tmp_path / "n", game="3").written) == 1
    with pytest.raises(ExportError, match="no game '7'"):
        export_games([games], "json", tmp_path / "x", game="7")
    with pytest.raises(ExportError, match="unknown export format 'pgn'"):
        export_games([games], "pgn", tmp_path / "x")
    with pytest.raises(ExportError, match="no such file"):
        export_games([tmp_path / "missing.jsonl"], "json", tmp_path / "x")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n", encoding="utf-8")
    with pytest.raises(ExportError, match=r"junk\.txt is not a game record"):
        export_games([junk], "json", tmp_path / "x")
    not_record = tmp_path / "config.json"
    not_record.write_text('{"players": []}', encoding="utf-8")
    with pytest.raises(ExportError, match="without the record's format field"):
        export_games([not_record], "json", tmp_path / "x")
    assert not (tmp_path / "x").exists()
    # a damaged line of a games.jsonl is named, the other games written
    damaged = tmp_path / "games.jsonl"
    raw = games.read_text(encoding="utf-8").splitlines()
    damaged.write_text("\n".join([raw[0], "{not json", raw[1]]) + "\n", encoding="utf-8")
    report = export_games([damaged], "json", tmp_path / "d")
    assert len(report.written) == 2
    assert report.refused and "game 1 (line 2)" in report.refused[0][0] and "not valid JSON" in report.refused[0][1]
    # the CLI: argparse names a bad format; a missing input is named
    with pytest.raises(SystemExit) as e:
        main(["export", str(games), "--format", "pgn", "--out", str(tmp_path / "x")])
    assert e.value.code == 2 and "invalid choice: 'pgn'" in capsys.readouterr().err
    rc = main(["export", str(tmp_path / "nope.json"), "--format", "json", "--out", str(tmp_path / "x")])
    assert rc == 2 and "nope.json: no such file" in capsys.readouterr().err


def test_play_saves_date_and_event_and_export_keeps_them(tmp_path, capsys, monkeypatch):
    saved = tmp_path / "g.txt"
    monkeypatch.setattr(sys, "stdin", io.StringIO("c2\nquit\n"))
    assert main(["play", "--bot", "random", "--seed", "1", "--save", str(saved), *RULE_ARGS]) == 0
    capsys.readouterr()
    head = saved.read_text(encoding="utf-8").splitlines()[0]
    day = time.strftime("%Y-%m-%d", time.gmtime())
    assert head.endswith(f"[{day}][jiu play][][competitive board_size=6]")  # end reason (none yet), rules
    os.utime(saved, (1_700_000_000, 1_700_000_000))
    report = export_games([saved], "json", tmp_path / "e", rules=RULES)
    meta = json.loads(open(report.written[0], encoding="utf-8").read())["meta"]
    assert meta["date"] == day and meta["date_source"] == "record" and meta["event"] == "jiu play"
    assert os.path.basename(report.written[0]) == "0000-human-vs-random.json"
    # a JSON record without a date: the file's modification day
    plain = GameRecord.from_actions(RULES, load_record(saved, rules=RULES).actions)
    plain.save(tmp_path / "plain.json")
    os.utime(tmp_path / "plain.json", (1_700_000_000, 1_700_000_000))
    games = export_read_games(tmp_path / "plain.json")
    assert games[0].headers["date"] == utc_date(1_700_000_000) == "2023-11-14"
    assert games[0].headers["event"] == ""


def test_cli_subprocess(tournament, tmp_path):
    games, lines = tournament
    out = tmp_path / "cli"
    cmd = [sys.executable, "-m", "jiu_env.cli", "export", str(games), "--format", "competition", "--out", str(out),
           *RULE_ARGS]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"wrote 4 of 4 games to {out}" in p.stdout
    for i, line in enumerate(lines):
        path = out / f"{i:04d}-{line['white']}-vs-{line['black']}.txt"
        assert load_record(path, rules=RULES).actions == line["record"]["actions"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "exist already: nothing written" in p.stderr
    p = subprocess.run([sys.executable, "-m", "jiu_env.cli", "export", "--help"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and "--format {json,competition,jiuchess}" in p.stdout and "--force" in p.stdout


def test_jiuchess_file_of_several_games_as_input(tournament, tmp_path):
    games, lines = tournament
    report = export_games([games], "jiuchess", tmp_path / "csv", rules=RULES)
    both = tmp_path / "both.csv"  # two exported files one after the other: two header lines, two game lines
    both.write_text("".join(open(p, encoding="utf-8").read() for p in report.written[:2]), encoding="utf-8")
    numbers = [int(os.path.basename(p)[:4]) for p in report.written[:2]]
    back = export_games([both], "json", tmp_path / "json", rules=RULES)
    assert back.ok and [os.path.basename(p)[:4] for p in back.written] == ["0000", "0001"]
    for path, i in zip(back.written, numbers):
        rec = load_record(path)
        assert rec.actions == lines[i]["record"]["actions"] and rec.result["winner"] == lines[i]["winner"]
        assert rec.meta["head"].startswith("Exporttest[6x6],2023-11-14,")  # the cells before Stage[1]
        # the headers of a jiuchess export come back from its cells
        assert rec.meta["event"] == TITLE and rec.meta["date"] == "2023-11-14"
        assert rec.meta["date_source"] == "record"
        assert rec.players == {"white": lines[i]["white_spec"], "black": lines[i]["black_spec"]}
    one = export_games([both], "json", tmp_path / "one", rules=RULES, game="1")
    assert [os.path.basename(p)[:4] for p in one.written] == ["0001"]
    with pytest.raises(ExportError, match="no game '2': it holds 2 games"):
        export_games([both], "json", tmp_path / "none", rules=RULES, game="2")


@pytest.mark.parametrize("name,spec,text", [
    ("random", "random", "random"),
    ("ab2", "alphabeta:depth=2", "ab2=alphabeta:depth=2"),
    ("alphabeta:depth=2", "alphabeta:depth=2", "alphabeta:depth=2"),
    ("human", None, "human"),
])
def test_player_text_and_back(name, spec, text):
    assert player_text(name, spec) == text
    assert split_player(text) == (name, spec if spec is not None else name)
