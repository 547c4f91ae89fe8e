"""``jiu replay``: step through a saved game in any record format the package reads."""

from __future__ import annotations

import argparse
from typing import Callable

from ..notation import action_to_str
from ..options import rules_flags_for
from ..render import render_ansi
from ..rules import rules_differences
from .common import _add_rules_args, _err, _rules_from_args, rules_flags_given


def _replay_args(p):
    p.add_argument("file", metavar="FILE",
                   help="a game record: .json, a games.jsonl of jiu eval (with --game), competition notation or a"
                        " jiuchess CSV file (the format is detected from the content)")
    p.add_argument("--game", metavar="ID", help="in a .jsonl file: the game id (e.g. 'random|greedy|3') or line number;"
                                                " in a jiuchess CSV file: the game's line number (from 0)")
    p.add_argument("--all", action="store_true", help="print every position and exit (no prompts)")
    p.add_argument("--lenient", action="store_true",
                   help="competition / jiuchess notation: go on past irregularities instead of stopping at the first "
                        "error (refused for a JSON record, which is read exactly)")
    _add_rules_args(p)


def exact_format(path: str) -> str | None:
    """What ``path`` is when ``--lenient`` means nothing to it (a JSON record or JSON lines, read exactly:
    the flag would be silently passed over), else None: a text notation, or a file that cannot be read,
    whose reader then says why."""
    from .. import fileio
    from ..records import formats

    if path.lower().endswith(".jsonl"):  # JSON lines by its name, as the readers take it (it may be large)
        fmt = formats.FORMATS["jsonl"]
    else:
        try:
            text = fileio.read_text_limited(path, fileio.MAX_RECORD_BYTES, "record file")
        except (OSError, ValueError):  # UnicodeDecodeError and FileTooLarge are ValueErrors
            return None
        fmt = formats.detect(text, path)
    if fmt.lenient:
        return None
    return {"json": "a JSON record", "jsonl": "a JSON-lines file"}.get(fmt.name, f"in the {fmt.name} format")


def lenient_formats() -> str:
    """The formats ``--lenient`` applies to, for messages: ``competition, jiuchess``."""
    from ..records import formats

    return ", ".join(name for name, fmt in formats.FORMATS.items() if fmt.lenient)


def cmd_replay(args: argparse.Namespace, inp: Callable[[str], str] = input) -> int:
    from ..records import ChooseGame, RecordError, RulesMismatch, load_record, result_text

    rules = _rules_from_args(args)
    exact = exact_format(args.file) if args.lenient else None
    if exact:
        return _err(f"replay: --lenient reads the text notations ({lenient_formats()}); {args.file} is {exact}, "
                    "which is read exactly: drop --lenient")
    try:
        rec = load_record(args.file, game=args.game, strict=not args.lenient, rules=rules)
        states = rec.positions()  # header and board only: small even with a huge turn limit
    except UnicodeDecodeError:
        return _err(f"replay: {args.file} is not a text file (not UTF-8)")
    except ChooseGame as e:
        return _err(f"replay: {args.file} holds {e.count} games; choose one with --game ID (a game id or a "
                    "0-based line number)")
    except RulesMismatch as e:  # a record all the same: say under which rules to read it
        return _err(f"replay: {args.file} was played under {e.declared}; read it with {rules_flags_for(e.declared)}"
                    f" (the rules read under differ: {'; '.join(e.differ)})")
    except (RecordError, OSError, ValueError) as e:
        return _err(f"replay: {e}")
    differ = rules_differences(rec.rules, rules, "asked") if rules_flags_given(args) else []
    if differ:  # a JSON record carries its rules: the flags would be ignored
        return _err(f"replay: {args.file} stores the rules it was played under, and they differ from the "
                    f"--rules/--rule/--board-size given: {'; '.join(differ)} (those flags are for the text notations)")
    n = rec.rules.board_size
    players = rec.players or {}
    print(f"{players.get('white') or '?'} (white) vs {players.get('black') or '?'} (black); "
          f"{len(rec.actions)} decisions; result: {result_text(rec.result)}")
    for issue in rec.issues:
        print(f"irregularity: {issue}")

    def show(i):
        head = "start" if i == 0 else f"after {i}/{len(rec.actions)}: {action_to_str(rec.actions[i - 1], n)}"
        print(f"\n[{head}]")
        print(render_ansi(states[i]))

    if args.all:
        for i in range(len(states)):
            show(i)
        return 0
    i = 0
    show(i)
    while True:
        try:
            cmd = inp("[Enter] next, b back, NUMBER go to, q quit> ").strip().lower()
        except EOFError:
            break
        if cmd in ("q", "quit", "exit"):
            break
        if cmd == "":
            if i + 1 < len(states):
                i += 1
                show(i)
            else:
                print("end of the game: " + result_text(rec.result))
        elif cmd in ("b", "back"):
            if i > 0:
                i -= 1
                show(i)
            else:
                print("already at the start")
        elif cmd.isascii() and cmd.isdigit() and len(cmd) <= 9 and int(cmd) < len(states):
            i = int(cmd)
            show(i)
        else:
            print(f"{cmd!r}: press Enter for the next position, b to go back, a number 0..{len(states) - 1}, q to quit")
    return 0
