"""What the ``jiu`` sub-commands share: argparse types, checks of output paths, the rules flags, errors.

An error of a command is printed argparse style (``jiu CMD: error: MSG``)
with exit status 2, so that every command reports a bad flag the same way.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from ..bots import parse_value  # rules options use the bot-spec value syntax
from ..options import rules_flags  # the rules flags given, read one way by the CLI and jiu train
from ..rules import Rules

#: The sub-commands of ``jiu``, in the order of ``jiu --help`` (the keys of :data:`jiu_env.cli.COMMANDS`): an
#: error message starting with ``NAME: `` names its command.
COMMAND_NAMES: tuple[str, ...] = ("eval", "play", "replay", "export", "bench", "warm", "train")


def int_at_least(lo: int) -> Callable[[str], int]:
    """An argparse ``type``: an int >= ``lo`` (argparse names the flag in its error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, not {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, not {value}")
        return value

    parse.__name__ = f"int >= {lo}"
    return parse


def writable_file(path: str | os.PathLike[str], flag: str) -> str | None:
    """None if ``path`` can be written later (its folder exists and is writable), else why not."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        return f"{flag} {path} is a directory, not a file"
    if not os.path.isdir(folder):
        return f"{flag} {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"{flag} {path} is not writable"
    return None


def writable_dir(path: str | os.PathLike[str], flag: str) -> str | None:
    """None if ``path`` is (or can be made) a folder we may write files in, else why not (nothing is created)."""
    path = os.path.abspath(path)
    if os.path.exists(path):
        if not os.path.isdir(path):
            return f"{flag} {path} exists and is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"{flag} {path} is not writable"
        return None
    parent = path
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{flag} {path} cannot be created: {parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{flag} {path} cannot be created: {parent} is not writable"
    return None


def _rules_from_args(args, base=None):
    """The rules of the command line: ``--rules`` with the options of ``--rule`` and ``--board-size``; with
    ``base`` (a config file's rules, as a dict) the options change those rules instead of the profile's."""
    opts = {}
    for item in args.rule or []:
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            _exit_error(f"--rule expects KEY=VALUE (e.g. board_size=8), not {item!r}", args)
        if key.strip() in opts:  # the last one would silently win
            _exit_error(f"--rule {key.strip()} is given twice: give each option once", args)
        opts[key.strip()] = parse_value(val.strip())
    if getattr(args, "board_size", None) is not None:
        if "board_size" in opts and opts["board_size"] != args.board_size:
            _exit_error(f"--board-size {args.board_size} and --rule board_size={opts['board_size']} disagree", args)
        opts["board_size"] = args.board_size
    try:
        return Rules.make((args.rules or "competitive") if base is None else base, **opts)
    except (TypeError, ValueError) as e:
        _exit_error(f"{'/'.join(rules_flags(args)) or '--rules'}: {e}", args)


def rules_flags_given(args) -> bool:
    """Whether the command line names rules (``--rules``, ``--rule`` or ``--board-size``)."""
    return bool(rules_flags(args))


def _add_rules_args(p):
    p.add_argument("--rules", default=None, metavar="PROFILE",  # None: not given (competitive)
                   help="rules profile: competitive (default), traditional, ludii8 or jqchess8")
    p.add_argument("--rule", action="append", metavar="KEY=VALUE",
                   help="override one rules option, e.g. --rule board_size=8 (repeatable)")
    p.add_argument("--board-size", type=int, metavar="N", help="board size (the same as --rule board_size=N)")


def _err_text(msg, args=None):
    """``jiu CMD: error: MSG`` (argparse style); a message starting with ``CMD: `` names its command."""
    cmd, colon, rest = msg.partition(": ")
    if colon and cmd in COMMAND_NAMES:
        return f"jiu {cmd}: error: {rest}"
    command = getattr(args, "command", None)
    return f"jiu {command}: error: {msg}" if command else f"jiu: error: {msg}"


def _exit_error(msg, args=None):
    print(_err_text(msg, args), file=sys.stderr)
    raise SystemExit(2)


def _err(msg, code=2):
    print(_err_text(msg), file=sys.stderr)
    return code
