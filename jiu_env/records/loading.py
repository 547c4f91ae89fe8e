"""Reading a record file of any format, with format detection."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import fileio
from .competition import from_competition
from .errors import ChooseGame, NotARecord, RecordError, check_strict
from .game_record import GameRecord
from .jiuchess import from_jiuchess, game_lines
from ..rules import Rules

FORMATS = ("json", "jsonl", "jiuchess", "competition")


def detect_format(text: str, path: str | os.PathLike[str] | None = None) -> str:
    """``"json"``, ``"jsonl"`` (games.jsonl of ``jiu eval``), ``"jiuchess"`` (CSV lines) or ``"competition"``."""
    stripped = text.lstrip("\ufeff").lstrip()
    low = os.fspath(path).lower() if path is not None else ""
    if low.endswith(".jsonl") or (stripped.startswith("{") and "\n{" in stripped.rstrip()):
        return "jsonl"
    if stripped.startswith("{"):
        return "json"
    if game_lines(stripped):
        return "jiuchess"
    return "competition"


def load_record(path: str | os.PathLike[str], game: int | str | None = None, strict: bool = True,
                rules: str | Rules | dict[str, Any] = "competitive") -> GameRecord:
    """Read a record file: JSON, JSON lines, jiuchess CSV or competition text (detected from the content).

    ``game`` chooses one game of a multi-game file: in JSON lines the game id
    or 0-based line number, in a jiuchess CSV file the 0-based game line.
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
    kind = detect_format(text, path)
    if kind == "jsonl":
        numbered = [(k + 1, ln) for k, ln in enumerate(text.splitlines()) if ln.strip()]
        lines = [ln for _, ln in numbered]
        if game is None:
            if len(lines) != 1:
                raise ChooseGame(f"{path} holds {len(lines)} games; choose one with game=<id or line number>",
                                 len(lines))
            game = 0
        chosen = None
        for i, ln in enumerate(lines):
            try:
                d = fileio.loads_json(ln, f"{path} line {numbered[i][0]}")
            except fileio.JSONTooDeep as e:
                raise RecordError(str(e)) from None
            except json.JSONDecodeError:
                continue  # a line cut short by an interrupted run
            if not isinstance(d, dict):
                continue
            if str(d.get("id")) == str(game) or (str(game).isdigit() and i == int(game)):
                chosen = d
                break
        if chosen is None:
            raise RecordError(f"no game {game!r} in {path}")
        return GameRecord.from_dict(chosen.get("record", chosen))
    if kind == "json":
        try:
            d = fileio.loads_json(text, path)
        except (fileio.JSONTooDeep, json.JSONDecodeError):
            d = None
        if not isinstance(d, dict) or "format" not in d:
            raise NotARecord(f"{path} is not a game record (a JSON file without the record's format field)")
        return GameRecord.from_json(text)
    if kind == "jiuchess":
        return from_jiuchess(text, rules=rules, strict=strict, game=game)
    try:
        return from_competition(text, rules=rules, strict=strict)
    except RecordError as e:
        if e.entry == 0 and e.item is None:  # the very first entry is not a placement list
            raise NotARecord(f"{path} is not a game record (format not recognised: not JSON, JSON lines, "
                             f"jiuchess CSV or competition notation; as competition notation: {e})") from None
        raise
