"""``jiu play`` when its bots fail, and when ``--save`` saves: the game a person played is never lost."""

import io
import sys

import pytest

import jiu_env.players
from jiu_env.cli import build_parser, main
from jiu_env.cli.play import PLAY_HELP, cmd_play
from jiu_env.records import load_record
from jiu_env.rules import Rules

SMALL = ["--rule", "board_size=6", "--rule", "max_battle_turns=100"]
RULES = Rules.make("competitive", board_size=6, max_battle_turns=100)


class Scripted:
    """A bot (or a user's class) that plays the legal move ``d3``/``c2`` answers, then does ``then``."""

    def __init__(self, then):
        self.then = then

    def step(self, state):
        return self.then()


def _bots(monkeypatch, bot=None, hint=None):
    """``jiu play``'s opponent and hint bot, made as the specs say unless given here."""
    real = jiu_env.players.make_player
    made = iter([bot, hint])

    def make_player(spec, seed=None, **kw):
        given = next(made, None)
        return given if given is not None else real(spec, seed=seed, **kw)

    monkeypatch.setattr(jiu_env.players, "make_player", make_player)


def _play(argv, script, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def _raise(exc):
    def go():
        raise exc
    return go


@pytest.mark.parametrize("save", [True, False])
def test_a_bot_that_raises_ends_the_game_in_one_line_and_saves_it(save, tmp_path, capsys, monkeypatch):
    _bots(monkeypatch, bot=Scripted(_raise(RuntimeError("the model\nis gone"))))
    path = tmp_path / "g.json"
    rc, out, err = _play(["play", "--bot", "random", *SMALL, *(["--save", str(path)] if save else [])],
                         "d3\nquit\n", capsys, monkeypatch)
    assert rc == 1 and "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("jiu play: error: the bot (random) failed: RuntimeError: the model is gone")
    if save:
        assert err.strip().endswith(f"; the game is saved to {path}")
        assert load_record(path).actions == [3 * 6 + 3]  # the person's d3
    else:
        assert "saved" not in err and not path.exists()


@pytest.mark.parametrize("choice, words", [
    (14.9, "it chose what is not an integer action: 14.9"),  # int() would have played 14 (c2), the forced reply
    (None, "it chose what is not an integer action: None"),
    (0, "it chose the illegal action a0 (0): "),
    (10 ** 6, "it chose the action 1000000, out of range"),
])
def test_a_bot_choice_is_checked_as_play_game_checks_it(choice, words, tmp_path, capsys, monkeypatch):
    _bots(monkeypatch, bot=Scripted(lambda: choice))
    path = tmp_path / "g.json"
    rc, out, err = _play(["play", "--bot", "random", "--save", str(path), *SMALL], "d3\nquit\n", capsys, monkeypatch)
    assert rc == 1 and "Traceback" not in err
    assert f"the bot (random) failed: {words}" in err and f"the game is saved to {path}" in err
    rec = load_record(path)
    assert rec.actions == [21]  # the bad choice is not played
    assert rec.meta["forfeit"]["colour"] == "black" and rec.outcome.winner == 1  # White (the person) wins


@pytest.mark.parametrize("hint, words", [
    (Scripted(_raise(ValueError("8x8 network, 6x6 board"))), "hint bot failed: ValueError: 8x8 network, 6x6 board"),
    (Scripted(lambda: 14.9), "hint bot failed: it chose what is not an integer action: 14.9"),
])
def test_a_failing_hint_bot_says_so_and_the_game_goes_on(hint, words, tmp_path, capsys, monkeypatch):
    _bots(monkeypatch, hint=hint)
    path = tmp_path / "g.json"
    rc, out, err = _play(["play", "--bot", "random", "--save", str(path), *SMALL], "hint\nd3\nquit\n", capsys,
                         monkeypatch)
    assert rc == 0 and err == "" and words in out
    assert "random) plays: c2" in out and len(load_record(path).actions) == 2  # the game went on


def test_a_shipped_network_that_has_no_board_of_this_size_is_a_failing_bot(tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    path = tmp_path / "g.txt"
    rc, out, err = _play(["play", "--bot", "policy", "--board-size", "6", "--colour", "black", "--save", str(path)],
                         "quit\n", capsys, monkeypatch)
    assert rc == 1 and "Traceback" not in err
    assert "the bot (policy) failed: FileNotFoundError: no network is shipped for 6x6" in err
    assert load_record(path, rules={"board_size": 6}).actions == []


def test_save_flag_saves_when_the_game_ends(tmp_path, capsys):
    path = tmp_path / "g.json"
    args = build_parser().parse_args(["play", "--bot", "random", "--colour", "black", "--start", "battle",
                                      "--seed", "3", "--save", str(path), *SMALL])
    seen = []

    def inp(prompt):
        if prompt.startswith("game over"):
            seen.append(load_record(path).result["over"])  # on disk before the person leaves
            raise EOFError
        return "1"

    assert cmd_play(args, inp) == 0
    out = capsys.readouterr().out
    assert seen == [True] and out.count(f"saved to {path}") == 1  # not written again on the way out


@pytest.mark.parametrize("where", ["prompt", "bot"])
def test_ctrl_c_leaves_as_quit_does_and_keeps_the_game(where, tmp_path, capsys, monkeypatch):
    path = tmp_path / "g.json"
    if where == "bot":
        _bots(monkeypatch, bot=Scripted(_raise(KeyboardInterrupt())))
    args = build_parser().parse_args(["play", "--bot", "random", "--save", str(path), *SMALL])
    answers = iter(["d3"])

    def inp(prompt):
        try:
            return next(answers)
        except StopIteration:
            raise KeyboardInterrupt from None

    assert cmd_play(args, inp) == 0
    out = capsys.readouterr().out
    assert f"saved to {path}" in out and "bye" in out
    assert load_record(path).actions[:1] == [21]


def test_the_help_names_every_format_save_writes_and_when_save_saves(capsys):
    assert ".csv" in PLAY_HELP and "jiuchess CSV" in PLAY_HELP and ".jsonl" in PLAY_HELP
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "save the game to FILE (in the format of 'save FILE') when it ends" in text
