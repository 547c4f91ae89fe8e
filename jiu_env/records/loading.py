"""Reading a record file of any format, with format detection."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import fileio
from . import formats
from .errors import ChooseGame, RecordError, check_strict, game_number
from .game_record import GameRecord
from ..rules import Rules


def _read_jsonl(text: str, game: int | str | None, rules: Any, strict: bool, path: str) -> GameRecord:
    """The ``jsonl`` row's reader: game ``game`` (an id, or a line number from 0 counting non-blank lines)
    of a ``games.jsonl`` of ``jiu eval`` or a file of JSON records, one a line; lines cut short by an
    interrupted run, and lines that are not JSON objects, are passed over."""
    numbered = [(k + 1, ln) for k, ln in enumerate(formats.json_lines(text)) if ln.strip()]
    where = path or "the text"
    if game is None:
        if len(numbered) != 1:
            raise ChooseGame(f"{where} holds {len(numbered)} games; choose one with game=<id or line number>",
                             len(numbered))
        game = 0
    number = game_number(game, where)
    for i, (lineno, ln) in enumerate(numbered):
        try:
            d = fileio.loads_json(ln, f"{where} line {lineno}")
        except fileio.JSONTooDeep as e:
            raise RecordError(str(e)) from None
        except json.JSONDecodeError:
            continue  # a line cut short by an interrupted run
        if not isinstance(d, dict):
            continue
        if str(d.get("id")) == str(game) or i == number:
            return GameRecord.from_dict(d.get("record", d))
    raise RecordError(f"no game {game!r} in {where}")


def _looks_like_jsonl(text: str, path: str) -> bool:
    """The ``jsonl`` row's detection: a ``.jsonl`` path, or several lines of which the first non-blank one
    is a JSON object on its own.  A record written with ``indent=0`` has lines that start with ``{`` too
    (the objects of a list in ``meta``), but its first line (``{``) is no object by itself.  A ``.json``
    path is not needed to tell them apart: a text whose first line is a whole object and that goes on
    is no valid JSON document, so reading it as JSON lines is its only chance."""
    if path.endswith(".jsonl"):
        return True
    if not text.startswith("{") or "\n{" not in text.rstrip():
        return False
    first = next(ln for ln in formats.json_lines(text) if ln.strip())  # text starts with "{": there is one
    try:
        return isinstance(fileio.loads_json(first), dict)
    except fileio.JSONTooDeep:
        return True  # a whole JSON value, too deep to read: the jsonl reader refuses that line, naming it
    except json.JSONDecodeError:
        return False


formats.register(formats.RecordFormat(
    "jsonl", priority=0, detect=_looks_like_jsonl,
    games=lambda text: sum(1 for ln in formats.json_lines(text) if ln.strip()), read=_read_jsonl, multi_game=True))


def detect_format(text: str, path: str | os.PathLike[str] | None = None) -> str:
    """The name of a text's format (:func:`.formats.detect`): ``"jsonl"`` (games.jsonl of ``jiu eval``),
    ``"json"``, ``"jiuchess"`` (CSV lines) or ``"competition"`` (what nothing else recognises)."""
    return formats.detect(text, path).name


def load_record(path: str | os.PathLike[str], game: int | str | None = None, strict: bool = True,
                rules: str | Rules | dict[str, Any] = "competitive") -> GameRecord:
    """Read a record file: JSON, JSON lines, jiuchess CSV or competition text (detected from the content).

    ``game`` chooses one game of a multi-game file: in JSON lines the game id
    or 0-based line number, in a jiuchess CSV file the 0-based game line; a
    single-game file holds game 0 only.
    Text formats are read with ``strict`` and ``rules`` (they do not store the
    rules).  A leading UTF-8 byte-order mark is ignored.  A file larger than
    :data:`jiu_env.fileio.MAX_RECORD_BYTES` (64 MiB), or a stream that does
    not end, is refused with a :class:`RecordError` after reading at most one
    byte more than that.
    """
    check_strict(strict)
    path = os.fspath(path)
    try:
        text = fileio.read_text_limited(path, fileio.MAX_RECORD_BYTES, "record file").lstrip("\ufeff")
    except fileio.FileTooLarge as e:
        raise RecordError(str(e)) from None
    record: GameRecord = formats.detect(text, path).read(text, game, rules, strict, path)
    return record
