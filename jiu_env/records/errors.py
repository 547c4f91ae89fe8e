"""The one error type of record reading, and the irregularity list of lenient imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..rules import Rules


class RecordError(ValueError):
    """A record that cannot be read or replayed.

    ``entry`` is the index of the offending entry of a text record (or
    ``None``), ``item`` the position inside it (the placement number in entry 0,
    counted from 1), ``action`` the index of the offending action of a JSON
    record.
    """

    def __init__(self, message: str, entry: int | None = None, item: int | None = None,
                 action: int | None = None) -> None:
        where = []
        if entry is not None:
            where.append(f"entry {entry}")
        if item is not None:
            where.append(f"placement {item}")
        if action is not None:
            where.append(f"action {action}")
        self.entry = entry
        self.item = item
        self.action = action
        self.reason = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class NotARecord(RecordError):
    """A file that is in none of the record formats (JSON, JSON lines, jiuchess CSV, competition notation)."""


class RulesMismatch(RecordError):
    """A text record whose header names the rules it was played under, read under other rules.

    Its own type, so that format detection does not take it for a text that is
    no record at all (:class:`NotARecord`): the record is fine, the rules
    are not.  ``declared`` is the header's rules field as written
    (``competitive board_size=6``); ``differ`` names each option that differs,
    ``board_size=6 (read under 14)``.
    """

    def __init__(self, message: str, declared: str, differ: list[str], entry: int | None = None) -> None:
        self.declared = declared
        self.differ = list(differ)
        super().__init__(message, entry=entry)


class ChooseGame(RecordError):
    """A file that holds several games, read without saying which one (``count``: how many)."""

    def __init__(self, message: str, count: int) -> None:
        self.count = count
        super().__init__(message)


@dataclass
class Irregularity:
    """One irregularity met by a lenient import."""

    entry: int
    message: str
    item: int | None = None

    def __str__(self) -> str:
        where = f"entry {self.entry}" + (f", placement {self.item}" if self.item is not None else "")
        return f"{where}: {self.message}"


def game_number(game: Any, where: str = "the text") -> int | None:
    """``game`` of a reader as a game number (an ``int`` >= 0, or a string of ASCII digits), or None for a
    string that is not one (a ``games.jsonl`` game id).  A bool, a negative number or another type is a
    :class:`RecordError`: ``-1`` is not "the last game", and ``"\u0661"`` (an Arabic-Indic one) not 1."""
    if isinstance(game, (bool, np.bool_)) or not isinstance(game, (int, np.integer, str)):
        raise RecordError(f"{where}: a game is a number from 0 or a game id, not {type(game).__name__} {game!r}")
    if isinstance(game, str):
        return int(game) if game.isascii() and game.isdigit() else None
    if game < 0:
        raise RecordError(f"{where}: no game {int(game)}: games are numbered from 0")
    return int(game)


def check_strict(strict: Any) -> bool:
    """``strict`` of the record readers as a bool; TypeError for anything but True or False.

    A truthy string such as ``"false"`` or a number must not silently pick a mode.
    """
    if isinstance(strict, (bool, np.bool_)):  # numpy's bool too
        return bool(strict)
    raise TypeError(f"strict must be True or False, not {type(strict).__name__} {strict!r}")


def record_text(text: Any) -> str:
    """The text of a record given to a reader: a ``str`` as it is, ``bytes`` decoded as UTF-8 (RecordError
    when they are not); TypeError for anything else (``None``, a number, a path object: read the file with
    :func:`~jiu_env.records.load_record`)."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray)):
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise RecordError(f"not readable as UTF-8 text: {e}") from None
    raise TypeError(f"a record's text must be a str (or UTF-8 bytes), not {type(text).__name__} {text!r:.60}")


class Reader:
    """State of one text-record import (strict or lenient): the rules and the irregularities met."""

    def __init__(self, rules: Rules, strict: bool) -> None:
        self.rules = rules
        self.n = rules.board_size
        self.strict = check_strict(strict)
        self.issues: list[Irregularity] = []

    def problem(self, msg: str, entry: int, item: int | None = None) -> None:
        """Strict: raise RecordError; lenient: note the irregularity and go on."""
        if self.strict:
            raise RecordError(msg, entry=entry, item=item)
        self.issues.append(Irregularity(entry, msg, item))

    def note(self, msg: str, entry: int, item: int | None = None) -> None:
        """An irregularity that a lenient import has already decided how to handle."""
        self.issues.append(Irregularity(entry, msg, item))
