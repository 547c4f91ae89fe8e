"""Exporting games: every game of a ``games.jsonl`` or of record files, one file per game, in one format.

:func:`export_games` reads its inputs (a ``games.jsonl`` of ``jiu eval``, a
JSON record, competition notation or a jiuchess CSV file, detected from the
content as :func:`~jiu_env.records.load_record` does), makes the text of every
game in the chosen format (``json``, ``competition`` or ``jiuchess``) and
writes one file per game into a folder (``jiu export``).  Each file carries
the game's headers where they are known:

* ``event``: the record's own event; else the tournament's title (from the
  ``tournament.json`` next to a ``games.jsonl``, else ``jiu eval``); else the
  program that saved it (``jiu play``).
* ``date``: the record's own date (``meta["date"]``; ``jiu play`` stores the
  day it saved the game); else the day the input file was last modified
  (UTC), and ``date_source`` says which.
* the players, as ``NAME=SPEC`` where a tournament player's name is not its
  spec; the result and its end reason; the rules (the profile and the options
  that differ from it).

A game a notation cannot write (the text notations need a game that starts
with the placement phase and ends at the end of a turn; the jiuchess notation
has no mark for a fly to a neighbouring point) or a line of a ``games.jsonl``
that cannot be read is *refused*: :class:`ExportReport` names it with the
reason, and the other games are written.  Names are ``NNNN-WHITE-vs-BLACK.EXT``
(``NNNN`` the game's number in its input, from 0; the input's file name
first when several inputs are given); existing files are refused before
anything is written, unless ``force``.  Every file is written atomically
(:func:`jiu_env.fileio.atomic_write_text`).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from .. import fileio
from ..rules import Rules, rules_differences
from . import formats
from .errors import ChooseGame, NotARecord, RecordError, check_strict, game_number
from .game_record import GameRecord
from .jiuchess import game_lines, header_cells
from .writers import JIUCHESS_COLUMNS as JIUCHESS_COLUMNS, competition_file, jiuchess_file, outcome_headers
from .writers import rules_text as rules_text  # moved to the writers, which GameRecord.save uses too

#: The largest ``games.jsonl`` read (a single record file: :data:`jiu_env.fileio.MAX_RECORD_BYTES`).
MAX_GAMES_BYTES: int = 1 << 30


class ExportError(ValueError):
    """An export that cannot start: an unknown format, an input that cannot be read, files in the way."""


@dataclass
class ExportGame:
    """One game to export: where it comes from, its record (None when unreadable) and its headers."""

    label: str
    number: int
    record: GameRecord | None
    headers: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    prefix: str = ""


@dataclass
class ExportReport:
    """What :func:`export_games` did: the files written, and the games refused with the reason."""

    games: int = 0
    written: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Was every game written?"""
        return not self.refused

    def text(self, out_dir: str | os.PathLike[str] = "") -> str:
        """A summary line: ``wrote 3 of 4 games to DIR; 1 refused``."""
        where = f" to {os.fspath(out_dir)}" if out_dir else ""
        tail = f"; {len(self.refused)} refused" if self.refused else ""
        return f"wrote {len(self.written)} of {self.games} games{where}{tail}"


# ------------------------------------------------------------------ headers
def utc_date(timestamp: float) -> str:
    """The UTC calendar day of a POSIX timestamp, ``YYYY-MM-DD``."""
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).date().isoformat()


def today() -> str:
    """Today's UTC date, ``YYYY-MM-DD`` (the date ``jiu play`` stores in a saved record)."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def player_text(name: Any, spec: Any) -> str:
    """``NAME=SPEC`` (the ``jiu eval`` syntax), or the one of them given when they are the same."""
    name = "" if name is None else str(name)
    spec = "" if spec is None else str(spec)
    if not name or name == spec:
        return spec
    if not spec:
        return name
    return f"{name}={spec}"


def split_player(text: str) -> tuple[str, str]:
    """``(name, spec)`` of a :func:`player_text`: ``NAME=SPEC`` where the part before the first ``=``
    has no ``:`` (as ``jiu eval`` reads it), else the text is both."""
    name, eq, spec = text.partition("=")
    if eq and name.strip() and ":" not in name:
        return name.strip(), spec.strip()
    return text, text


def _headers(record: GameRecord, event: str, date: str, date_source: str, names: dict[str, Any]) -> dict[str, Any]:
    players = record.players or {}
    out = {"event": event, "date": date, "date_source": date_source}
    for side in ("white", "black"):
        spec = players.get(side)
        out[side] = player_text(names.get(side, spec), spec)
        out[f"{side}_name"] = "" if names.get(side, spec) is None else str(names.get(side, spec))
        out[f"{side}_spec"] = "" if spec is None else str(spec)
    out.update(outcome_headers(record))  # result, end reason, rules: as GameRecord.save writes them
    return out


def _game_headers(record: GameRecord, event: str, file_date: str, names: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    meta = record.meta or {}
    ev = str(meta.get("event") or event or meta.get("source") or "")
    if meta.get("date"):
        date, source = str(meta["date"]), "record"
    else:
        date, source = file_date, "file modification time (UTC)"
    return _headers(record, ev, date, source, names or {})


# ------------------------------------------------------------------ reading
def _tournament_title(folder: str) -> str | None:
    """The title in ``folder/tournament.json`` (written by ``jiu eval --out``), or None."""
    path = os.path.join(folder, "tournament.json")
    try:
        d = fileio.loads_json(fileio.read_text_limited(path, fileio.MAX_RECORD_BYTES, "tournament file"), path)
    except (OSError, ValueError):
        return None
    title = d.get("title") if isinstance(d, dict) else None
    return str(title) if title else None


def _jsonl_games(path: str, text: str, file_date: str, game: int | str | None) -> list[ExportGame]:
    title = _tournament_title(os.path.dirname(os.path.abspath(path)))
    out = []
    numbered = [(k + 1, ln) for k, ln in enumerate(formats.json_lines(text)) if ln.strip()]
    try:
        number = None if game is None else game_number(game, path)
    except RecordError as e:
        raise ExportError(str(e)) from None
    for i, (lineno, raw) in enumerate(numbered):
        label = f"{path} game {i} (line {lineno})"
        why: str | None
        try:
            d = fileio.loads_json(raw, f"{path} line {lineno}")
        except fileio.JSONTooDeep as e:
            d, why = None, str(e)
        except json.JSONDecodeError as e:
            d, why = None, f"not valid JSON ({e.msg}, column {e.colno})"
        else:
            why = None if isinstance(d, dict) else f"a JSON {type(d).__name__}, not a game"
        gid = d.get("id") if isinstance(d, dict) else None
        if gid is not None:
            label = f"{path} game {i} (id {gid!r})"
        if game is not None and not (str(gid) == str(game) or i == number):
            continue
        if why is not None:
            out.append(ExportGame(label, i, None, error=why))
            continue
        try:
            record = GameRecord.from_dict(d.get("record", d))
        except RecordError as e:
            out.append(ExportGame(label, i, None, error=f"not a readable record: {e}"))
            continue
        names = {side: d.get(side) for side in ("white", "black") if d.get(side) is not None}
        if "record" in d and "pair" in d:
            event = title or "jiu eval"
        else:
            event = ""
        out.append(ExportGame(label, i, record, _game_headers(record, event, file_date, names)))
    if game is not None and not out:
        raise ExportError(f"{path}: no game {game!r} (give a game id or a line number from 0)")
    return out


def read_games(path: str | os.PathLike[str], game: int | str | None = None,
               rules: str | Rules | dict[str, Any] = "competitive", strict: bool = True) -> list[ExportGame]:
    """The games of one input file, each with its headers; ``game`` picks one (an id or a number from 0).

    A ``games.jsonl`` gives every line (a line that cannot be read comes back
    with ``error`` set, to be reported); a jiuchess CSV file every game line;
    a JSON record or competition notation its one game.  ``rules`` and
    ``strict`` are those of the text notations.  An input that cannot be read
    at all raises :class:`ExportError` naming it.
    """
    check_strict(strict)
    path = os.fspath(path)
    try:
        rules = Rules.make(rules)
    except (TypeError, ValueError) as e:
        raise ExportError(f"bad rules: {e}") from None
    try:
        limit = MAX_GAMES_BYTES if path.lower().endswith(".jsonl") else fileio.MAX_RECORD_BYTES
        text = fileio.read_text_limited(path, limit, "games file").lstrip("\ufeff")
        file_date = utc_date(os.stat(path).st_mtime)
    except FileNotFoundError:
        raise ExportError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ExportError(f"{path} is a directory, not a games.jsonl or a record file") from None
    except UnicodeDecodeError:
        raise ExportError(f"{path} is not a text file (not UTF-8)") from None
    except (OSError, fileio.FileTooLarge) as e:
        raise ExportError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    if not text.strip():
        raise ExportError(f"{path} is empty: no games to export")
    fmt = formats.detect(text, path)
    if fmt.name == "jsonl":  # a games.jsonl: each line's players and the tournament's title are headers too
        return _jsonl_games(path, text, file_date, game)
    count = fmt.games(text)
    numbers = range(count) if game is None else [_number(game, count, path)]
    headers = _HEADERS.get(fmt.name, _plain_headers)
    out = []
    for k in numbers:
        label = f"{path} game {k}" if fmt.multi_game else path
        try:
            record = fmt.read(text, k, rules, strict, path)
        except NotARecord as e:
            raise ExportError(str(e)) from None
        except ChooseGame as e:  # pragma: no cover - every game of a multi-game file is read one by one
            raise ExportError(f"{path}: {e}") from None
        except RecordError as e:
            if not fmt.multi_game:
                raise ExportError(f"{path}: {e}") from None
            out.append(ExportGame(label, k, None, error=f"not a readable record: {e}"))  # the others still go
            continue
        out.append(ExportGame(label, k, record, headers(text, k, record, file_date)))
    return out


def _plain_headers(text: str, k: int, record: GameRecord, file_date: str) -> dict[str, Any]:
    """The headers of a record read from a file: its own event and date, else the file's date."""
    return _game_headers(record, "", file_date)


def _jiuchess_headers(text: str, k: int, record: GameRecord, file_date: str) -> dict[str, Any]:
    """The headers of game line ``k`` of a jiuchess file; a file with headers (its first line the column
    names of :data:`JIUCHESS_COLUMNS`) gives back its event, date and players."""
    row = header_cells(text, game_lines(text)[k])
    if row is None:
        return _game_headers(record, "", file_date)
    meta = dict(record.meta or {})
    for key in ("event", "date"):
        if row[key] and not meta.get(key):
            meta[key] = row[key]
    split = {side: split_player(row[side]) for side in ("white", "black")}
    players = {side: split[side][1] or None for side in split}
    names = {side: split[side][0] for side in split if split[side][0]}
    record.meta, record.players = meta, players
    return _game_headers(record, "", file_date, names)


#: A format whose export writes headers of its own reads them back here (the others: :func:`_plain_headers`).
_HEADERS = {"jiuchess": _jiuchess_headers}


def _number(game, count, path):
    text = str(game)
    if not (text.isascii() and text.isdigit()) or int(text) >= count:
        raise ExportError(f"{path}: no game {game!r}: it holds {count} game{'s' if count != 1 else ''}"
                          f" (0..{count - 1})")
    return int(text)


# ------------------------------------------------------------------ writing
def _render_json(rec: GameRecord, h: dict[str, Any]) -> str:
    """The JSON record with the headers in its ``meta`` (``export_players``: each side's name and spec)."""
    meta = dict(rec.meta or {})
    for key in ("event", "date"):
        if h.get(key):
            meta[key] = h[key]
    if h.get("date"):
        meta["date_source"] = h["date_source"]
    meta["export_players"] = {side: {"name": h[f"{side}_name"], "spec": h[f"{side}_spec"]}
                              for side in ("white", "black")}
    return replace(rec, meta=meta).to_json(indent=1) + "\n"


def _render_competition(rec: GameRecord, h: dict[str, Any]) -> str:
    """The notation's header line with the players, event and date, then the end reason and the rules."""
    return competition_file(rec, h) + "\n"


def _render_jiuchess(rec: GameRecord, h: dict[str, Any]) -> str:
    """A CSV file: the column names of :data:`JIUCHESS_COLUMNS`, then the headers and the game line."""
    return jiuchess_file(rec, h) + "\n"


#: How a format's export carries the headers (a format not listed: its plain text, without headers).
_RENDER = {"json": _render_json, "competition": _render_competition, "jiuchess": _render_jiuchess}


def _writer(fmt: str) -> Callable[[GameRecord], str]:
    """The writer of a format that can be written; :class:`ExportError` naming the choices otherwise."""
    row = formats.writable().get(fmt)
    if row is None or row.write is None:
        raise ExportError(f"unknown export format {fmt!r}: choose one of {', '.join(formats.writable())}")
    return row.write


def render(game: ExportGame, fmt: str) -> str:
    """The text of one game in ``fmt`` (ValueError when the notation cannot write it, naming why)."""
    rec, h = game.record, game.headers
    if rec is None:
        raise ValueError(game.error or "no record")
    write = _writer(fmt)
    decorate = _RENDER.get(fmt)
    return decorate(rec, h) if decorate is not None else write(rec) + "\n"


def _slug(text: Any, fallback: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._+-]+", "_", str(text or "")).strip("._-")[:40].strip("._-")
    return s or fallback


def file_name(game: ExportGame, fmt: str) -> str:
    """``[PREFIX-]NNNN-WHITE-vs-BLACK.EXT``: letters, digits and ``._+-`` only."""
    h = game.headers
    white = _slug(h.get("white_name") or h.get("white_spec"), "white")
    black = _slug(h.get("black_name") or h.get("black_spec"), "black")
    head = f"{game.prefix}-" if game.prefix else ""
    return f"{head}{game.number:04d}-{white}-vs-{black}{formats.FORMATS[fmt].extension}"


def _prefixes(paths: Sequence[str]) -> list[str]:
    if len(paths) < 2:
        return [""] * len(paths)
    stems = [_slug(os.path.splitext(os.path.basename(p))[0], "input") for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [f"{k + 1}-{s}" for k, s in enumerate(stems)]


def export_games(inputs: Sequence[str | os.PathLike[str]], fmt: str, out_dir: str | os.PathLike[str],
                 game: int | str | None = None, force: bool = False,
                 rules: str | Rules | dict[str, Any] = "competitive", strict: bool = True,
                 check_rules: bool = False) -> ExportReport:
    """Write every game of ``inputs`` into ``out_dir`` in ``fmt`` (``json``, ``competition``, ``jiuchess``).

    ``game`` picks one game of each input (a ``games.jsonl`` game id or a
    number from 0).  Games the format cannot write, and lines that are not
    readable games, are listed in :attr:`ExportReport.refused` with the reason;
    the others are written.  Raises :class:`ExportError` (nothing written) for
    an unknown format, an input that cannot be read, no inputs, or files that
    exist already in ``out_dir`` (unless ``force``).  ``rules`` reads the
    text notations; with ``check_rules`` (the command line named rules) a
    game whose record stores other rules (JSON) is refused too, so the rules
    asked are never silently passed over.
    """
    _writer(fmt)
    paths = [os.fspath(p) for p in inputs]
    if not paths:
        raise ExportError("no input: give a games.jsonl or record files")
    games: list[ExportGame] = []
    for path, prefix in zip(paths, _prefixes(paths)):
        for g in read_games(path, game=game, rules=rules, strict=strict):
            g.prefix = prefix
            games.append(g)
    report = ExportReport(games=len(games))
    planned: list[tuple[str, str]] = []
    asked = Rules.make(rules)
    for g in games:
        if g.record is None:
            report.refused.append((g.label, g.error or "unreadable"))
            continue
        differ = rules_differences(g.record.rules, asked, "asked") if check_rules else []
        if differ:  # a JSON record stores its rules; the text notations are read under the asked ones
            report.refused.append((g.label, f"the record stores other rules than the ones asked: {'; '.join(differ)}"))
            continue
        try:
            text = render(g, fmt)
            text.encode("utf-8")  # a lone surrogate fails here, with the game refused, not half-way through writing
        except ExportError:
            raise
        except ValueError as e:  # UnicodeEncodeError too
            report.refused.append((g.label, str(e)))
            continue
        planned.append((os.path.join(os.fspath(out_dir), file_name(g, fmt)), text))
    names = [p for p, _ in planned]
    dup = sorted({p for p in names if names.count(p) > 1})
    if dup:  # pragma: no cover - numbers are unique within an input and prefixes across inputs
        raise ExportError(f"two games would be written to {dup[0]}")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ExportError(f"{os.fspath(out_dir)} exists and is not a directory")
    folders = [p for p in names if os.path.isdir(p)]
    if folders:  # even --force does not replace a directory: found before anything is written
        raise ExportError(f"{folders[0]} is a directory where a game's file would go: nothing written")
    if not force:
        there = [p for p in names if os.path.lexists(p)]
        if there:
            more = f" and {len(there) - 1} more" if len(there) > 1 else ""
            raise ExportError(f"{there[0]}{more} exist{'s' if len(there) == 1 else ''} already: nothing written"
                              " (use --force to overwrite, or another --out)")
    if planned:
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            raise ExportError(f"{os.fspath(out_dir)} cannot be created: {e.strerror or e}") from None
    for path, text in planned:
        fileio.atomic_write_text(path, text, newline="\n")
        report.written.append(path)
    return report


def __getattr__(name: str) -> Any:
    if name == "EXPORT_FORMATS":  # the writable formats' extensions, before the format table held them
        warnings.warn("jiu_env.records.export.EXPORT_FORMATS is deprecated: use "
                      "jiu_env.records.formats.writable() (format name -> RecordFormat, .extension)",
                      DeprecationWarning, stacklevel=2)
        return {name: fmt.extension for name, fmt in formats.writable().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ExportError", "ExportGame", "ExportReport", "export_games", "read_games", "render",
           "file_name", "rules_text", "player_text", "split_player", "today", "utc_date"]
