"""The ``jiu`` command line through its entry point: help, eval, play (scripted stdin), replay."""

import io
import json
import pathlib
import subprocess
import sys

import pytest

from jiu_env.cli import COMMANDS, main
from jiu_env.records import GameRecord, load_record, to_competition
from jiu_env.rules import Rules

SMALL = ["--rule", "board_size=6", "--rule", "max_battle_turns=100"]


def run(argv, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


# ------------------------------------------------------------------ help
def test_help_lists_every_command_with_an_example(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out
        assert f"jiu {name} " in out  # an example for each
    for name in COMMANDS:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        sub = capsys.readouterr().out
        assert "example" in sub and f"jiu {name}" in sub


def test_jiu_script_help_subprocess():
    exe = pathlib.Path(sys.executable).with_name("jiu")
    cmd = [str(exe), "--help"] if exe.exists() else [sys.executable, "-m", "jiu_env.cli", "--help"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert "eval" in r.stdout and "play" in r.stdout and "replay" in r.stdout


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "usage: jiu" in capsys.readouterr().out


# ------------------------------------------------------------------ eval
def test_eval_tiny_and_resume(tmp_path, capsys):
    out = tmp_path / "res"
    argv = ["eval", "random", "other=random", "--games", "2", "--workers", "1", "--seed", "4", "--out", str(out),
            "--no-progress", *SMALL]
    rc, text, _ = run(argv, capsys)
    assert rc == 0
    assert "Elo" in text and "other" in text and "W-D-L" in text
    assert "2 games played" in text
    for f in ("games.jsonl", "results.json", "results.md", "ratings.csv", "pairs.csv", "results.png"):
        assert (out / f).exists(), f
    assert "jiu eval random other=random" in (out / "results.md").read_text()
    rc, text, _ = run(argv, capsys)
    assert rc == 0 and "0 games played" in text  # resumed: nothing left to play
    rc, text, _ = run(argv + ["--fresh"], capsys)
    assert rc == 0 and "2 games played" in text


def test_eval_config_file_and_progress_lines(tmp_path, capsys):
    cfg = tmp_path / "ladder.toml"
    cfg.write_text('title = "mini ladder"\ngames = 2\nseed = 1\n[rules]\nprofile = "competitive"\nboard_size = 6\n'
                   'max_battle_turns = 80\n[[players]]\nname = "r1"\nspec = "random"\n'
                   '[[players]]\nname = "r2"\nspec = "random"\n')
    rc, text, err = run(["eval", "--config", str(cfg), "--workers", "1"], capsys)
    assert rc == 0
    assert "mini ladder" in text and "competitive 6x6" in text
    assert "[2/2]" in err and "ETA" in err  # progress lines when stderr is not a terminal


def test_eval_errors_are_clear(tmp_path, capsys):
    rc, _, err = run(["eval", "random"], capsys)
    assert rc == 2 and "at least two players" in err
    rc, _, err = run(["eval", "random", "nonsense", "--workers", "1", "--no-progress"], capsys)
    assert rc == 2 and "unknown player 'nonsense'" in err
    rc, _, err = run(["eval", "random", f"sb3:{tmp_path / 'none.zip'}", "--workers", "1", "--no-progress"], capsys)
    assert rc == 2 and "not found" in err
    with pytest.raises(SystemExit):
        main(["eval", "random", "b=random", "--rule", "board_size"])


# ------------------------------------------------------------------ play
def test_play_scripted_with_illegal_input_undo_hint_save(tmp_path, capsys, monkeypatch):
    game = tmp_path / "game.json"
    script = "\n".join([
        "xyz",          # not notation
        "a0",           # legal notation, illegal move (first stones go on the diagonal ends)
        "99",           # not a move number
        "c2",           # White's first stone; the bot answers on d3 (forced)
        "undo",         # back to before c2
        "2",            # the second legal move in sorted order: d3
        "hint",
        "moves",
        "",             # empty line: re-prompt
        f"save {game}",
        "quit",
    ]) + "\n"
    rc, out, _ = run(["play", "--bot", "random", "--seed", "1", *SMALL], capsys, script, monkeypatch)
    assert rc == 0
    assert "not understood" in out
    assert "illegal: a0" in out and "diagonal ends" in out
    assert "99 is not a move number" in out
    assert "random) plays: d3" in out and "random) plays: c2" in out
    assert "took back c2" in out
    assert "hint: " in out
    assert "1:a0" in out  # the numbered list of legal moves
    rec = load_record(game)
    n = 6
    assert rec.actions == [3 * n + 3, 2 * n + 2]  # d3 by the person, then the bot's forced c2
    assert rec.players == {"white": "human", "black": "random"}


def test_play_as_black_battle_start_to_the_end(tmp_path, capsys, monkeypatch):
    # answer every decision with move number 1 until the game ends, then save on exit
    path = tmp_path / "g.txt"
    script = "1\n" * 400 + "quit\n"
    rc, out, _ = run(["play", "--bot", "random", "--colour", "black", "--start", "battle", "--seed", "3",
                      "--save", str(path), *SMALL], capsys, script, monkeypatch)
    assert rc == 0
    assert "game over" in out and f"saved to {path}" in out
    rec = load_record(path, rules=Rules.make("competitive", board_size=6, max_battle_turns=100))
    assert rec.result["over"]
    assert to_competition(rec) == path.read_text().strip()


def test_play_eof_quits_and_undo_with_nothing(capsys, monkeypatch):
    rc, out, _ = run(["play", "--bot", "random", *SMALL], capsys, "undo\n", monkeypatch)
    assert rc == 0 and "nothing to undo" in out and "bye" in out


# ------------------------------------------------------------------ replay
def _saved_game(tmp_path):
    rules = Rules.make("competitive", board_size=6, max_battle_turns=60)
    from jiu_env.evaluation import make_player, run_game

    r = run_game(rules, make_player("random", seed=1), make_player("random", seed=2), seed=3)
    rec = r["record"]
    path = tmp_path / "g.json"
    rec.save(path)
    return rules, rec, path


def test_replay_all_and_interactive(tmp_path, capsys, monkeypatch):
    rules, rec, path = _saved_game(tmp_path)
    rc, out, _ = run(["replay", str(path), "--all"], capsys)
    assert rc == 0
    assert out.count("[after ") == len(rec.actions)
    assert "game over" in out
    rc, out, _ = run(["replay", str(path)], capsys, "\n\nb\nb\nb\nwhat\n5\nq\n", monkeypatch)
    assert rc == 0
    assert "[after 1/" in out and "[after 2/" in out and "already at the start" in out
    assert "'what': press Enter" in out and "[after 5/" in out


def test_replay_competition_and_jsonl(tmp_path, capsys):
    rules, rec, _ = _saved_game(tmp_path)
    txt = tmp_path / "g.txt"
    rec.save(txt)
    rc, out, _ = run(["replay", str(txt), "--all", *["--rule", "board_size=6", "--rule", "max_battle_turns=60"]],
                     capsys)
    assert rc == 0 and "game over" in out
    lines = txt.read_text().splitlines()
    toks = lines[1][2:-1].split(",")
    toks[4], toks[5] = toks[5], toks[4]
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join([lines[0], "0," + ",".join(toks) + ";"] + lines[2:]))
    rc, _, err = run(["replay", str(bad), "--all", "--rule", "board_size=6", "--rule", "max_battle_turns=60"], capsys)
    assert rc == 2 and "entry 0, placement 5" in err
    rc, out, _ = run(["replay", str(bad), "--all", "--lenient", "--rule", "board_size=6",
                      "--rule", "max_battle_turns=60"], capsys)
    assert rc == 0 and "irregularity: entry 0, placement 5" in out
    jl = tmp_path / "games.jsonl"
    jl.write_text(json.dumps({"id": "x|y|0", "record": rec.to_dict(moves=False)}) + "\n"
                  + json.dumps({"id": "x|y|1", "record": rec.to_dict(moves=False)}) + "\n")
    rc, out, _ = run(["replay", str(jl), "--game", "x|y|1", "--all"], capsys)
    assert rc == 0 and "game over" in out
    rc, _, err = run(["replay", str(tmp_path / "missing.json")], capsys)
    assert rc == 2 and "replay" in err
    assert GameRecord.from_json(json.dumps(rec.to_dict())).actions == rec.actions
