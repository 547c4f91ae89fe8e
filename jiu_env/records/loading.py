"""Reading a record file of any format, with format detection."""

from __future__ import annotations

import json
import os
from typing import Any

from .competition import from_competition
from .errors import RecordError
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
    rules).  A leading UTF-8 byte-order mark is ignored.
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read().lstrip("\ufeff")
    kind = detect_format(text, path)
    if kind == "jsonl":
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if game is None:
            if len(lines) != 1:
                raise RecordError(f"{path} holds {len(lines)} games; choose one with game=<id or line number>")
            game = 0
        chosen = None
        for i, ln in enumerate(lines):
            try:
                d = json.loads(ln)
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
        return GameRecord.from_json(text)
    if kind == "jiuchess":
        return from_jiuchess(text, rules=rules, strict=strict, game=game)
    return from_competition(text, rules=rules, strict=strict)
