"""The ``jiu`` command line through its entry point: help, eval, play (scripted stdin), replay."""

import io
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from jiu_env.cli import COMMANDS, main
from jiu_env.evaluation.tournament import read_games
from jiu_env.records import GameRecord, load_record
from jiu_env.records.writers import competition_file
from jiu_env.rules import Rules
from processes import kill_and_check_workers

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


def test_every_command_names_itself_in_its_errors():
    """A command's error ``NAME: MSG`` is printed ``jiu NAME: error: MSG``: the names that the error printer
    knows (jiu_env.cli.common, below the commands' modules) are the commands of the parser."""
    from jiu_env.cli.common import COMMAND_NAMES, _err_text

    assert tuple(COMMANDS) == COMMAND_NAMES
    for name in COMMANDS:
        assert _err_text(f"{name}: bad input") == f"jiu {name}: error: bad input"
    assert _err_text("nocommand: bad input") == "jiu: error: nocommand: bad input"


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


def test_eval_report_only_reads_the_stored_games_and_writes_nothing(tmp_path, capsys):
    """--report-only prints the report of the games of the tournament stored in --out and plays and writes
    nothing: a bad line and a half-written last line (a run still playing into the folder) are passed over,
    not moved; an SPRT counts the complete colour-swapped pairs among them."""
    out = tmp_path / "res"
    base = ["eval", "random", "other=random", "--workers", "1", "--seed", "4", "--out", str(out), "--no-progress",
            *SMALL]
    assert run(base + ["--games", "4"], capsys)[0] == 0
    games = out / "games.jsonl"
    lines = games.read_text().splitlines()
    games.write_text("\n".join(lines[:3]) + "\nnot json\n" + lines[3][:40])
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    rc, text, err = run(base + ["--games", "8", "--report-only"], capsys)
    assert rc == 0, err
    assert "3/8 games played" in text and "report only: 3 of the 8 scheduled games" in text
    assert "nothing played, nothing written" in text and "games played in" not in text
    assert "line 4 is not valid JSON: skipped\n" in err
    # the games a tighter interval needs are scaled from the 3 stored games, not from the 8 scheduled
    hint = [ln for ln in text.splitlines() if ln.startswith("widest 95% interval")]
    assert hint and hint == [ln for ln in run(base + ["--games", "4", "--report-only"], capsys)[1].splitlines()
                             if ln.startswith("widest 95% interval")]
    rc, text, err = run(base + ["--games", "8", "--report-only", "--sprt", "0", "50"], capsys)
    assert rc == 0, err
    assert "1/4" in text and "counted by the SPRT" in text  # pair 1 (games 2, 3) is not complete
    # the tables count what the test counts: pair 0; game 2 is stored and named as not counted
    assert "2/8 games played" in text and "report only: 2 of the 8 scheduled games counted by the SPRT" in text
    assert "1 more stored game not counted: pair 1 (games 2 and 3) is not complete" in text
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before

    from jiu_env.evaluation.config import TournamentConfig
    from jiu_env.evaluation.tournament import run_tournament

    cfg = TournamentConfig.from_dict({"players": ["random", {"name": "other", "spec": "random"}], "games": 8,
                                      "seed": 4, "rules": {"board_size": 6, "max_battle_turns": 100}})
    res = run_tournament(cfg, out_dir=str(out), report_only=True, log=lambda msg: None)
    assert [g["id"] for g in res.games] == [json.loads(ln)["id"] for ln in lines[:3]] and res.new_games == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_eval_report_only_reads_games_of_older_code_with_stored_versions(tmp_path, capsys, monkeypatch):
    """A folder played by older code of its players: the current code's report counts none of its games (it
    would play them again); --stored-versions reads them, names their versions, and mixes none."""
    from jiu_env.evaluation import tournament as T

    out = tmp_path / "res"
    base = ["eval", "random", "other=random", "--games", "4", "--workers", "1", "--seed", "4", "--out", str(out),
            "--no-progress", *SMALL]
    with monkeypatch.context() as m:  # the release that played the folder
        m.setattr(T, "_versions", lambda config: {"random": "old-random"})
        assert run(base, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    rc, text, err = run(base + ["--report-only"], capsys)
    assert rc == 0 and "0/4 games played" in text and "4 stored games did not match" in text
    assert "read with --stored-versions" in text
    rc, text, err = run(base + ["--report-only", "--stored-versions"], capsys)
    assert rc == 0, err
    assert "4/4 games played" in text and "played by the code versions random old-random, other old-random" in text
    rc, text, err = run(base + ["--report-only", "--stored-versions", "--sprt", "0", "50"], capsys)
    assert rc == 0 and "4 of the 4 scheduled games counted by the SPRT" in text and "0-0-2-0-0" in text
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written or moved
    rc, _, err = run(base + ["--stored-versions"], capsys)
    assert rc == 2 and "give --report-only too" in err
    with pytest.raises(ValueError, match="give report_only too"):
        T.run_tournament(T.TournamentConfig.from_dict({"players": ["random", {"name": "other", "spec": "random"}]}),
                         stored_versions=True)
    # a game of the folder played by yet another version: one report would mix two
    lines = (out / "games.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    task = next(t for t in T.schedule(T.TournamentConfig.from_dict(json.loads((out / "tournament.json").read_text())))
                if t.id == first["id"])
    import dataclasses

    first["white_version"] = "newer"
    first["fingerprint"] = dataclasses.replace(task, white_version="newer", black_version=first["black_version"]
                                               ).fingerprint()
    (out / "games.jsonl").write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    rc, _, err = run(base + ["--report-only", "--stored-versions"], capsys)
    assert rc == 2 and "were played by 2 code versions (newer, old-random)" in err


@pytest.mark.parametrize("extra, words", [
    (["--fresh"], "--fresh would discard them"),
    (["--seed", "5"], "holds a tournament with seed 4"),
    (["--out", "MISSING"], "games.jsonl does not exist"),
])
def test_eval_report_only_refuses(extra, words, tmp_path, capsys):
    out = tmp_path / "res"
    base = ["eval", "random", "other=random", "--games", "2", "--workers", "1", "--seed", "4", "--out", str(out),
            "--no-progress", *SMALL]
    assert run(base, capsys)[0] == 0
    extra = [str(tmp_path / "missing") if a == "MISSING" else a for a in extra]
    rc, _, err = run(base + ["--report-only", *extra], capsys)
    assert rc == 2 and words in err and err.count("\n") == 1
    rc, _, err = run(["eval", "random", "other=random", "--report-only"], capsys)
    assert rc == 2 and "give it with --out" in err


def test_eval_config_file_and_progress_lines(tmp_path, capsys):
    cfg = tmp_path / "ladder.toml"
    cfg.write_text('title = "mini ladder"\ngames = 2\nseed = 1\n[rules]\nprofile = "competitive"\nboard_size = 6\n'
                   'max_battle_turns = 80\n[[players]]\nname = "r1"\nspec = "random"\n'
                   '[[players]]\nname = "r2"\nspec = "random"\n')
    rc, text, err = run(["eval", "--config", str(cfg), "--workers", "1"], capsys)
    assert rc == 0
    assert "mini ladder" in text and "competitive 6x6" in text
    assert "[2/2]" in err and "ETA" in err  # progress lines when stderr is not a terminal


def test_eval_rules_flags_change_a_config_files_rules(tmp_path, capsys):
    # --rule / --board-size change the options they name on the file's rules; --rules replaces them
    cfg = tmp_path / "c.toml"
    cfg.write_text('games = 2\n[rules]\nprofile = "traditional"\nboard_size = 8\nmax_battle_turns = 50\n'
                   '[[players]]\nspec = "random"\n[[players]]\nname = "b"\nspec = "random"\n')
    kept = Rules.make("traditional", board_size=6, max_battle_turns=50).to_dict()  # fly_threshold re-derived
    for flags, want in ((["--rule", "board_size=6"], kept), (["--board-size", "6"], kept),
                        (["--rules", "competitive", "--rule", "board_size=6"],
                         Rules.make("competitive", board_size=6).to_dict()),
                        (["--rules", "ludii8", "--rule", "max_battle_turns=60"],
                         Rules.make("ludii8", max_battle_turns=60).to_dict())):
        out = tmp_path / "out"
        rc, _, err = run(["eval", "--config", str(cfg), *flags, "--workers", "1", "--no-progress", "--out", str(out),
                          "--fresh"], capsys)
        assert rc == 0, err
        assert json.loads((out / "tournament.json").read_text())["rules"] == want, flags
    assert kept["fly_threshold"] == 6


def test_eval_config_by_name_and_optional_players(tmp_path, capsys, monkeypatch):
    """--config NAME reads a config shipped with the package; an optional player that cannot be built is
    left out with one note line naming it and why."""
    import jiu_env.evaluation.config as C

    assert "--config ladder" in COMMANDS["eval"][1]  # the --help example
    rc, _, err = run(["eval", "--config", "no_such_ladder"], capsys)
    assert rc == 2 and "ladder, ladder8, ladder_time" in err and err.count("\n") == 1
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "mini.toml").write_text('title = "mini shipped"\ngames = 2\noptional = ["m"]\n[rules]\n'
                                      'board_size = 6\nmax_battle_turns = 80\n'
                                      '[[players]]\nname = "r1"\nspec = "random"\n'
                                      '[[players]]\nname = "r2"\nspec = "random"\n'
                                      '[[players]]\nname = "m"\nspec = "sb3:baselines/m.zip"\n')
    monkeypatch.setattr(C, "shipped_configs", lambda: {"mini": str(folder / "mini.toml")})  # load_config's lookup
    monkeypatch.chdir(tmp_path)
    rc, text, err = run(["eval", "--config", "mini", "--workers", "1", "--no-progress"], capsys)
    assert rc == 0, err
    assert "mini shipped" in text and "2 games played" in text
    notes = [ln for ln in err.splitlines() if "left out" in ln]
    assert len(notes) == 1 and notes[0].startswith("jiu eval: note: m left out")
    assert "baselines/m.zip" in notes[0] and "root of a checkout" in notes[0]


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
        "\u00b2",       # a digit to str.isdigit, not a move number (int() refuses it): not understood
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
    assert "not understood" in out and out.count("not understood") >= 2
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
    assert competition_file(rec) == path.read_text().strip()  # with the headers, the rules among them


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
    rc, out, _ = run(["replay", str(path)], capsys, "\n\nb\nb\nb\nwhat\n5\n\u00b2\nq\n", monkeypatch)
    assert rc == 0
    assert "[after 1/" in out and "[after 2/" in out and "already at the start" in out
    assert "'what': press Enter" in out and "[after 5/" in out
    assert "'\u00b2': press Enter" in out  # a digit to str.isdigit, not to int(): answered, not a crash


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


# ------------------------------------------------------------------ hostile input
@pytest.mark.parametrize("argv,words", [
    (["eval", "random", "b=random", "--seed", "-1"], "argument --seed: must be an integer >= 0"),
    (["eval", "random", "b=random", "--seed", "x"], "argument --seed: expected an integer"),
    (["eval", "random", "b=random", "--games", "0"], "argument --games: must be an integer >= 1"),
    (["eval", "random", "b=random", "--bootstrap", "-5"], "argument --bootstrap: must be an integer >= 2"),
    (["eval", "random", "b=random", "--bootstrap", "0"], "argument --bootstrap: must be an integer >= 2"),
    (["eval", "random", "b=random", "--workers", "0"], "argument --workers: must be an integer >= 1"),
    (["eval", "random", "b=random", "--workers", "-1"], "argument --workers: must be an integer >= 1"),
    (["eval", "random", "b=random", "--random-opening", "-2"], "argument --random-opening"),
    (["play", "--seed", "-2"], "argument --seed"),
    (["bench", "--only", "bogus"], "argument --only: unknown section(s) bogus; choose from kernel"),
    (["bench", "--only", ","], "argument --only: no section given"),
    (["bench", "--games", "0"], "argument --games: must be an integer >= 1"),
])
def test_bad_flags_are_argparse_errors_naming_the_flag(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and f"jiu {argv[0]}: error:" in err


def _eval_err(argv, capsys):
    try:
        rc, out, err = run(["eval", *argv, "--no-progress", "--workers", "1"], capsys)
    except SystemExit as e:  # --rule errors leave through SystemExit(2)
        rc, (out, err) = e.code, capsys.readouterr()
    assert rc == 2 and "Traceback" not in err and not out, (out, err)
    assert err.startswith("jiu eval: error: ") and err.count("\n") == 1, err
    return err


def test_eval_hostile_paths_and_configs(tmp_path, capsys):
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert "exists and is not a directory" in _eval_err(["random", "b=random", "--out", str(afile)], capsys)
    assert "/dev/null is not a directory" in _eval_err(["random", "b=random", "--out", "/dev/null/x"], capsys)
    assert "--fresh needs --out" in _eval_err(["random", "b=random", "--fresh"], capsys)
    assert "No such file" in _eval_err(["--config", str(tmp_path / "none.toml")], capsys)
    assert "Is a directory" in _eval_err(["--config", str(tmp_path)], capsys)
    cases = {
        'players = "random"\n': "players must be a list",
        "players = [\n": "--config",
        "players = []\n": "at least two players",
        'players = ["random", "random"]\n': "unique",
        'players = ["random", "b=random"]\nmode = "gauntlet"\n': "challengers",
        'players = ["random", "b=random"]\nanchor = "zz"\n': "anchor",
        'players = ["random", "b=random"]\nprior_draws = -3\n': "prior_draws",
        'players = ["random", "b=random"]\nbootstrap_samples = -4\nintervals = "bootstrap"\n': "bootstrap_samples",
        'players = ["random", "b=random"]\nseed = -1\n': "seed",
        'players = ["random", "b=random"]\ngames = 2\ngames_per_pair = 3\n': "games_per_pair",
        'players = ["random", "b=random"]\nworker = 2\n': "unknown tournament setting",
        'players = ["random", "b=random"]\n[rules]\nsingle_jump_ban = ["none"]\n': "single_jump_ban",
        'players = ["random", "b=random"]\n[rules]\nboard_size = 6\nmin_stones = 18\n': "battle turn 0",
        '[[players]]\nname = "a"\n[[players]]\nspec = "random"\n': "needs 'spec'",
    }
    for i, (text, words) in enumerate(cases.items()):
        path = tmp_path / f"c{i}.toml"
        path.write_text(text)
        err = _eval_err(["--config", str(path)], capsys)
        assert words in err and str(path) in err, (text, err)
    (tmp_path / "c.json").write_text("[1, 2]")
    assert "table of settings" in _eval_err(["--config", str(tmp_path / "c.json")], capsys)
    assert "min_stones" in _eval_err(["random", "b=random", "--rule", "board_size=6", "--rule", "min_stones=18"],
                                     capsys)
    assert "single_jump_ban" in _eval_err(["random", "b=random", "--rule", "single_jump_ban=[none]"], capsys)
    assert "--rule expects KEY=VALUE" in _eval_err(["random", "b=random", "--rule", "board_size"], capsys)
    assert "unknown challenger(s) zz" in _eval_err(["random", "b=random", "--gauntlet", "zz"], capsys)
    assert "anchor 'zz'" in _eval_err(["random", "b=random", "--anchor", "zz"], capsys)
    assert "at least two players must be rated" in _eval_err(["random", "b=random", "--unrated", "random", "b"],
                                                             capsys)
    assert "unique" in _eval_err(["random", "random"], capsys)
    assert "unknown player" in _eval_err(["random", "zz=nonsense"], capsys)


def test_eval_rerun_with_another_seed_is_refused(tmp_path, capsys):
    out = tmp_path / "res"
    argv = ["eval", "random", "b=random", "--games", "2", "--workers", "1", "--out", str(out), "--no-progress", *SMALL]
    assert run(argv + ["--seed", "1"], capsys)[0] == 0
    rc, _, err = run(argv + ["--seed", "2"], capsys)
    assert rc == 2 and f"{out} holds a tournament with seed 1 (this one: 2)" in err and "--fresh" in err
    rc, text, _ = run(argv + ["--seed", "2", "--fresh"], capsys)
    assert rc == 0 and "2 games played" in text
    rec = load_record(out / "games.jsonl", game="random|b|0")
    assert rec.seed == json.loads((out / "games.jsonl").read_text().splitlines()[0])["seed"]
    # a non-object line is skipped with a note, and the run goes on
    with open(out / "games.jsonl", "a") as f:
        f.write("[1, 2]\n")
    rc, text, err = run(argv + ["--seed", "2", "--games", "4", "--workers", "3"], capsys)
    assert rc == 0 and "2 games played" in text
    assert "note: " in err and "line 3 is a JSON list, not an object" in err
    assert "3 workers asked for 2 games to play: using 2" in err


def test_play_and_bench_check_their_output_paths_first(tmp_path, capsys):
    rc, out, err = run(["play", "--save", str(tmp_path / "nowhere" / "g.json"), *SMALL], capsys)
    assert rc == 2 and "--save" in err and "does not exist" in err and "You play" not in out
    rc, _, err = run(["play", "--save", str(tmp_path), *SMALL], capsys)
    assert rc == 2 and "is a directory" in err
    t0 = time.perf_counter()
    rc, out, err = run(["bench", "--quick", "--only", "kernel", "--out", "/dev/null/x"], capsys)
    assert rc == 2 and err.startswith("jiu bench: error: --out /dev/null/x") and "[kernel]" not in out
    assert time.perf_counter() - t0 < 5  # nothing was measured


SLOW_BOT = '''
import time
from jiu_env.bots.random_bot import RandomBot

class Slow(RandomBot):
    def _choose(self, state):
        time.sleep(0.01)
        return super()._choose(state)
'''


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
def test_sigkill_of_eval_ends_its_workers_and_resume_completes(tmp_path, capsys):
    (tmp_path / "slowbot.py").write_text(SLOW_BOT)
    out = tmp_path / "out"
    argv = ["eval", f"slow={tmp_path / 'slowbot.py'}:Slow", "random", "--games", "12", "--out", str(out),
            "--no-progress", "--rule", "board_size=6", "--rule", "max_battle_turns=40"]
    root = str(pathlib.Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "jiu_env.cli", *argv, "--workers", "2"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    games = out / "games.jsonl"
    kill_and_check_workers(proc, lambda: games.exists() and games.read_text().count("\n") >= 1, "the tournament")
    played = len(read_games(games))
    assert 1 <= played < 12
    # resume: every game once, none lost or repeated
    rc, text, _ = run(argv + ["--workers", "1"], capsys)
    assert rc == 0 and f"{12 - played} games played" in text
    ids = [json.loads(ln)["id"] for ln in games.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 12


def test_replay_and_out_folder_oddities(tmp_path, capsys):
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00bad")
    rc, _, err = run(["replay", str(tmp_path / "bin.json")], capsys)
    assert rc == 2 and "not a text file" in err
    rc, _, err = run(["replay", str(tmp_path)], capsys)
    assert rc == 2 and "Is a directory" in err
    # a folder where tournament.json should be: a clear error, no temporary file left behind
    out = tmp_path / "o"
    (out / "tournament.json").mkdir(parents=True)
    err = _eval_err(["random", "b=random", "--out", str(out), *SMALL], capsys)
    # nothing written but the run's lock file (which stays, so that runs never race on its creation)
    assert "Is a directory" in err and sorted(p.name for p in out.iterdir()) == [".lock", "tournament.json"]


def test_board_size_flag_is_accepted_everywhere_rules_are(capsys):
    from jiu_env.cli import build_parser

    parser = build_parser()
    for cmd in ("eval", "play", "replay", "warm", "train"):
        assert "--board-size" in parser._subparsers._group_actions[0].choices[cmd].format_help()
    assert main(["eval", "random", "greedy", "--board-size", "6", "--games", "2", "--no-progress"]) == 0
    assert "competitive 6x6" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["eval", "random", "greedy", "--board-size", "6", "--rule", "board_size=8"])
    assert "disagree" in capsys.readouterr().err


def test_play_save_flag_is_kept_after_an_earlier_save_command(tmp_path, capsys, monkeypatch):
    early, final = tmp_path / "early.json", tmp_path / "final.json"
    script = "\n".join(["c2", f"save {early}", "1", "quit"]) + "\n"  # a save, then one more move, then quit
    rc, out, _ = run(["play", "--bot", "random", "--seed", "1", "--save", str(final), *SMALL], capsys, script,
                     monkeypatch)
    assert rc == 0 and f"saved to {final}" in out
    assert len(load_record(final).actions) > len(load_record(early).actions)
    # the same file saved last, nothing played since: not written twice
    again = tmp_path / "again.json"
    script = "\n".join(["c2", f"save {again}", "quit"]) + "\n"
    rc, out, _ = run(["play", "--bot", "random", "--seed", "1", "--save", str(again), *SMALL], capsys, script,
                     monkeypatch)
    assert rc == 0 and out.count(f"saved to {again}") == 1


def test_replay_names_a_file_that_is_not_a_record_and_the_game_flag(tmp_path, capsys):
    src = tmp_path / "script.py"
    src.write_text("import jiu_env\nprint(jiu_env.__version__)\n")
    obj = tmp_path / "other.json"
    obj.write_text('{"name": "not a record"}')
    for path in (src, obj):
        assert main(["replay", str(path), "--all"]) == 2
        err = capsys.readouterr().err
        assert f"{path} is not a game record" in err and "entry number" not in err.split("(")[0]
    from jiu_env import Rules, play_game

    lines = []
    for seed in range(2):
        rec = play_game(Rules.make("competitive", board_size=6), "random", "random", seed=seed).record
        lines.append(json.dumps({"id": f"g{seed}", "record": rec.to_dict()}))
    multi = tmp_path / "games.jsonl"
    multi.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(multi), "--all"]) == 2
    assert "holds 2 games; choose one with --game" in capsys.readouterr().err
    assert main(["replay", str(multi), "--game", "g1", "--all"]) == 0


def test_bench_default_out_leaves_the_kept_figures_alone():
    """``jiu bench`` with no ``--out`` writes under runs/ (gitignored): the kept benchmarks/results, which the
    docs' figure markers read, change only when named."""
    import argparse
    import pathlib

    from jiu_env.benchmark import add_arguments

    args = add_arguments(argparse.ArgumentParser()).parse_args([])
    out = pathlib.PurePath(args.out)
    assert out.parts[0] == "runs" and "benchmarks" not in out.parts


# ------------------------------------------------------------------ bad input of the other commands
def test_prompts_answer_a_number_too_long_for_int(tmp_path, capsys, monkeypatch):
    _, _, path = _saved_game(tmp_path)
    rc, out, _ = run(["replay", str(path)], capsys, "9" * 5000 + "\nq\n", monkeypatch)
    assert rc == 0 and "press Enter" in out
    rc, out, _ = run(["play", "--bot", "random", *SMALL], capsys, "9" * 5000 + "\nquit\n", monkeypatch)
    assert rc == 0 and "is not a move number" in out


def test_rules_flags_are_never_passed_over(tmp_path, capsys, monkeypatch):
    rules, rec, path = _saved_game(tmp_path)  # a 6x6 JSON record: it stores its rules
    rc, _, err = run(["replay", str(path), "--all", "--board-size", "8"], capsys)
    assert rc == 2 and "stores the rules it was played under" in err and "board_size=6 (asked: 8)" in err
    assert run(["replay", str(path), "--all", "--board-size", "6", "--rule", "max_battle_turns=60"], capsys)[0] == 0
    rc, _, err = run(["export", str(path), "--format", "competition", "--out", str(tmp_path / "x"),
                      "--board-size", "8"], capsys)
    assert rc == 1 and "stores other rules than the ones asked" in err and not (tmp_path / "x").exists()
    with pytest.raises(SystemExit) as e:  # as argparse does for a bad flag
        main(["play", "--bot", "random", "--rule", "board_size=8", "--rule", "board_size=6"])
    assert e.value.code == 2 and "--rule board_size is given twice" in capsys.readouterr().err
    rc, _, err = run(["play", "--bot", "random", "--hint-bot", "", *SMALL], capsys, "", monkeypatch)
    assert rc == 2 and "non-empty string" in err


def test_warm_refuses_a_board_size_and_a_misspelt_bot(capsys):
    rc, _, err = run(["warm", "--board-size", "3"], capsys)
    assert rc == 2 and "--board-size 3" in err and "4..20" in err
    rc, _, err = run(["warm", "alphabeta:dept=1"], capsys)
    assert rc == 2 and "did you mean 'depth'" in err


@pytest.mark.parametrize("flags, label", [(["--board-size", "3"], "--board-size:"),
                                          (["--rule", "board_size=3"], "--rule:"),
                                          (["--rules", "traditional", "--board-size", "3"], "--rules/--board-size:"),
                                          (["--rules", "nosuch"], "--rules:")])
def test_a_rules_error_names_the_flags_that_were_given(flags, label, capsys):
    with pytest.raises(SystemExit) as e:  # as argparse does for a bad flag
        main(["eval", "a=random", "b=random", "--games", "2", *flags])
    assert e.value.code == 2 and f"jiu eval: error: {label}" in capsys.readouterr().err


# ------------------------------------------------------------------ rules headers, --lenient, a closed pipe
def test_replay_names_the_rules_a_text_record_was_played_under(tmp_path, capsys):
    _, _, path = _saved_game(tmp_path)  # 6x6, max_battle_turns=60
    assert main(["export", str(path), "--format", "competition", "--out", str(tmp_path / "out")]) == 0
    (txt,) = (tmp_path / "out").iterdir()
    capsys.readouterr()
    rc, _, err = run(["replay", str(txt), "--all"], capsys)
    assert rc == 2 and err.count("\n") == 1 and "not a game record" not in err
    assert err.startswith(f"jiu replay: error: {txt} was played under competitive board_size=6 max_battle_turns=60;"
                          " read it with --board-size 6 --rule max_battle_turns=60 (")
    assert run(["replay", str(txt), "--all", "--board-size", "6", "--rule", "max_battle_turns=60"], capsys)[0] == 0
    # jiu export names the same flags
    rc, _, err = run(["export", str(txt), "--format", "json", "--out", str(tmp_path / "json")], capsys)
    assert rc == 2 and err.rstrip().endswith("on the command line: --board-size 6 --rule max_battle_turns=60)")
    assert run(["export", str(txt), "--format", "json", "--out", str(tmp_path / "json"), "--board-size", "6",
                "--rule", "max_battle_turns=60"], capsys)[0] == 0


def test_lenient_is_refused_where_it_means_nothing(tmp_path, capsys):
    rules, rec, path = _saved_game(tmp_path)
    rc, out, err = run(["replay", str(path), "--lenient", "--all"], capsys)
    assert rc == 2 and out == ""
    assert err == (f"jiu replay: error: --lenient reads the text notations (competition, jiuchess); {path} is a "
                   "JSON record, which is read exactly: drop --lenient\n")
    jl = tmp_path / "games.jsonl"
    jl.write_text(rec.to_json() + "\n")
    rc, _, err = run(["export", str(path), str(jl), "--lenient", "--format", "json", "--out", str(tmp_path / "x")],
                     capsys)
    assert rc == 2 and "is a JSON record, which is read exactly: drop --lenient" in err
    assert not (tmp_path / "x").exists()
    txt = tmp_path / "g.txt"
    rec.save(txt)
    flags = ["--board-size", "6", "--rule", "max_battle_turns=60"]
    assert run(["replay", str(txt), "--lenient", "--all", *flags], capsys)[0] == 0
    rc, _, err = run(["export", str(path), str(txt), "--lenient", "--format", "json", "--out", str(tmp_path / "y"),
                      *flags], capsys)  # a text input among them: the JSON one is noted, not refused
    assert rc == 0 and f"jiu export: note: --lenient does not apply to {path} (a JSON record, read exactly)" in err


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(tmp_path):
    from jiu_env import play_game

    rules = Rules.make("competitive", max_battle_turns=60)  # 14x14: far more text than a pipe holds
    path = tmp_path / "g.json"
    play_game(rules, "random", "random", seed=1).record.save(path)
    p = subprocess.Popen([sys.executable, "-m", "jiu_env.cli", "replay", str(path), "--all"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline()  # like `| head -1`
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141  # 128 + SIGPIPE, as a shell reports a Unix tool stopped by a closed pipe
    assert err == ""


def test_a_broken_pipe_that_is_not_stdouts_keeps_its_traceback():
    # stdout still read: the BrokenPipeError came from another pipe (a worker's), an error of the command
    code = ("import sys; from jiu_env import cli\n"
            "def boom(args): raise BrokenPipeError('a worker pipe')\n"
            "cli.COMMANDS['replay'] = (*cli.COMMANDS['replay'][:3], boom, *cli.COMMANDS['replay'][4:])\n"
            "sys.exit(cli.main(['replay', 'x.json']))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "BrokenPipeError: a worker pipe" in p.stderr
