"""The record formats, one row each: how a text of the format is recognised, read and written.

Every place that picks a format goes through :data:`FORMATS`:
:func:`~jiu_env.records.load_record` and
:func:`~jiu_env.records.detect_format` (recognising and reading),
:meth:`GameRecord.save <jiu_env.records.GameRecord.save>` (the writer chosen by
the path's ending), and ``jiu export`` (its ``--format`` choices, file
extensions and writers).  A new format is one module holding its reader and
writer that ends with one :func:`register` call, plus its import in
``jiu_env/records/__init__.py``.

Each format's row is registered by the module that reads it (``json`` by
:mod:`.game_record`, ``jsonl`` by :mod:`.loading`, the notations by
:mod:`.competition` and :mod:`.jiuchess`): the readers build
:class:`~jiu_env.records.GameRecord` objects, so a table that named them here
would sit above ``GameRecord``, whose ``save`` needs the table.  Importing
any part of :mod:`jiu_env.records` imports the package, which registers
every row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from .errors import RecordError


@dataclass(frozen=True)
class RecordFormat:
    """One record format.

    ``read(text, game, rules, strict, path)`` gives the record of game
    ``game`` (``None``: the only one; else an id or a number from 0 that the
    format's own reader checks) of a ``text`` recognised as this format;
    ``rules`` and ``strict`` matter to the formats that do not store the rules
    (the text notations); ``path`` names the file in errors.  ``write``
    makes a record's text (without the final newline), ``None`` for a format
    that is only read.
    """

    name: str
    #: Detection order: the rows are asked from the lowest priority up, the first that says yes wins.
    priority: int
    #: ``detect(text, path)``: does the text (byte-order mark and leading white space stripped) look like
    #: this format?  ``path`` is the file's path in lower case, ``""`` when there is none.
    detect: Callable[[str, str], bool]
    #: How many games a text of this format holds.
    games: Callable[[str], int]
    #: The reader (typed ``Any`` here: this module sits below :class:`~jiu_env.records.GameRecord`).
    read: Callable[[str, "int | str | None", Any, bool, str], Any]
    write: Callable[[Any], str] | None = None
    #: The extension of the files ``jiu export`` writes in this format.
    extension: str = ""
    #: :meth:`GameRecord.save` writes this format to a path ending in one of these (lower case).
    save_suffixes: tuple[str, ...] = ()
    #: Does one text hold several games (a bad one is then refused alone, the others still read)?
    multi_game: bool = False
    #: Does the reader honour ``strict=False`` (a lenient import of an irregular real record)?  The text
    #: notations do; a JSON record is read exactly, so ``--lenient`` is refused for it, not passed over.
    lenient: bool = False


#: Every registered format by name, in the order they were registered (the order help texts list them).
FORMATS: dict[str, RecordFormat] = {}


def register(fmt: RecordFormat) -> RecordFormat:
    """Add a format; its name must be new."""
    if fmt.name in FORMATS:
        raise ValueError(f"record format {fmt.name!r} is registered already")
    FORMATS[fmt.name] = fmt
    return fmt


def detect(text: str, path: str | os.PathLike[str] | None = None) -> RecordFormat:
    """The format of a text: the first row, in detection order, whose ``detect`` says yes."""
    stripped = text.lstrip("\ufeff").lstrip()
    low = os.fspath(path).lower() if path is not None else ""
    for fmt in sorted(FORMATS.values(), key=lambda f: f.priority):
        if fmt.detect(stripped, low):
            return fmt
    raise ValueError(f"no record format recognises the text; formats: {', '.join(FORMATS)}")


def writable() -> dict[str, RecordFormat]:
    """The formats that can be written, by name."""
    return {name: fmt for name, fmt in FORMATS.items() if fmt.write is not None}


def for_path(path: str | os.PathLike[str]) -> RecordFormat:
    """The format :meth:`GameRecord.save` writes to ``path``: chosen by its ending, else ``json``."""
    low = os.fspath(path).lower()
    for fmt in writable().values():
        if low.endswith(fmt.save_suffixes):
            return fmt
    return FORMATS["json"]


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split at ``\n`` only (``\r\n`` too), never at the other line breaks
    ``str.splitlines`` knows (U+2028, U+0085...), which a record's strings hold unescaped."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def one_game(game: int | str | None, path: str) -> None:
    """A single-game format's check of ``game``: ``None`` or 0, else :class:`RecordError`."""
    if game is not None and str(game) != "0":
        raise RecordError(f"{path or 'the text'}: no game {game!r}: it holds 1 game (0..0)")


__all__ = ["FORMATS", "RecordFormat", "detect", "for_path", "json_lines", "one_game", "register", "writable"]
