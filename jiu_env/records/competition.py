"""The competition notation of Jiu records (FlameChess / CCGC style): export and strict/lenient import.

:func:`to_competition` writes it and :func:`from_competition` reads it back,
strictly (the first irregularity raises :class:`RecordError` naming the
entry) or leniently (irregularities are listed in :attr:`GameRecord.issues`
and the game is rebuilt as far as the record allows).

A battle entry's path is the moving stone's points joined by ``-``: two
neighbouring points for a step, each landing point of a jump or jump chain,
two points for a fly.  Extension of this library: a fly whose two points are
one or two apart in a row or a column (which the plain path reads as a step
or a jump) is written with :data:`FLY_MARK` before the path, ``^A4-A5``; a
marked path is read as a fly only.  Unmarked paths are read as before (step,
then jump, then fly), so records written without the mark keep their meaning,
and export then import gives back the identical actions of every legal game.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent
from ..state import position_state
from ..notation import COLS, ROWS
from ..rules import Rules
from . import formats
from .errors import NotARecord, Reader, RecordError, RulesMismatch, check_strict, record_text
from .fields import result_of, result_text
from .game_record import GameRecord
from .textimport import Move, check_header_rules, parse_placements, play_battle, play_placements, rebuild_position
from .writers import FLY_MARK as FLY_MARK, _header_field as _header_field, _pt_text, near_fly as near_fly
from .writers import to_competition as to_competition  # the writer sits below GameRecord (the readers build one)
from .writers import competition_file

RESULT_WORDS = {
    "white wins": "white", "black wins": "black", "draw": "draw", "undecided": None, "*": None,
    "先手胜": "white", "后手胜": "black", "和棋": "draw", "平局": "draw",
}


def _parse_pt(tok, n):
    """(point, colour) of a competition point token like ``g6`` (White) or ``G6`` (Black)."""
    t = tok.strip()
    if len(t) != 2 or not t.isascii():  # not ASCII: "\u212a" (Kelvin) lowercases to the row letter k
        raise ValueError(f"{tok!r} is not a point (a row letter and one column digit, e.g. 'g6')")
    r_ch, c_ch = t[0], t[1]
    r = ROWS.find(r_ch.lower())
    c = COLS.find(c_ch.upper())
    if not r_ch.isalpha() or r < 0 or r >= n:
        raise ValueError(f"{tok!r}: row {r_ch!r} is not one of a..{ROWS[n - 1]}")
    if c < 0 or c >= n:
        raise ValueError(f"{tok!r}: column {c_ch!r} is not one of 0..{COLS[n - 1]}")
    return r * n + c, (V.WHITE if r_ch.islower() else V.BLACK)


def _split_entries(text):
    """(header fields or None, [(raw index text, fields)])."""
    body = text.lstrip("\ufeff").strip()
    header = None
    if body.startswith("["):
        end = body.find("\n")
        line, body = (body, "") if end < 0 else (body[:end], body[end + 1:])
        line = line.strip().rstrip(";").strip()
        header = []
        rest = line
        while rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                raise RecordError("header line: a '[' field is not closed")
            header.append(rest[1:close].strip())
            rest = rest[close + 1:].strip()
        if rest:
            raise RecordError(f"header line: unexpected text {rest!r} after the bracketed fields")
    entries = []
    for raw in body.replace("\r", "").split(";"):
        raw = "".join(raw.split())  # whitespace and line breaks carry no meaning
        if not raw:
            continue
        fields_ = raw.split(",")
        entries.append((fields_[0], fields_[1:]))
    return header, entries


def from_competition(text: str, rules: str | Rules | dict[str, Any] = "competitive", strict: bool = True) -> GameRecord:
    """A :class:`GameRecord` from competition notation.

    ``strict``: any irregularity raises :class:`RecordError` naming the entry
    (and the placement number inside entry 0), and so does a header result
    that the replay does not reach (a truncated record).  Lenient
    (``strict=False``): when the placement list is irregular the battle
    position is rebuilt from it (``start`` becomes that position); an entry
    played by the side not to move hands the turn over; square victims left
    out of an entry leave the capture pending; the battle is replayed until an
    entry cannot be played at all; every irregularity is listed in
    ``record.issues``.  ``strict`` is True or False (TypeError otherwise).
    """
    text = record_text(text)
    check_strict(strict)
    rules = Rules.make(rules)
    n = rules.board_size
    p_ = n * n
    rd = Reader(rules, strict)
    fmt = lambda p, c: _pt_text(p, n, c)  # noqa: E731
    header, entries = _split_entries(text)
    players = {"white": None, "black": None}
    declared = None
    word = ""
    meta = {}
    if header is not None:
        if not header or header[0].upper() != "JIU":
            rd.problem(f"header must start with [JIU], not [{header[0] if header else ''}]", 0)
        vals = header[1:] + [""] * 7  # white, black, result, date, event, end reason, rules: any tail may be left out
        players = {"white": vals[0] or None, "black": vals[1] or None}
        word = vals[2].strip().lower() if vals[2] else ""
        if word:
            if word not in RESULT_WORDS:
                rd.problem(f"unknown result {vals[2]!r} in the header (use white wins, black wins, draw, undecided or *)", 0)
                word = ""
            else:
                declared = RESULT_WORDS[word]
                meta["declared_result"] = vals[2]
        if vals[3]:
            meta["date"] = vals[3]
        if vals[4]:
            meta["event"] = vals[4]
        check_header_rules(vals[6], rules)
    if not entries:
        raise RecordError("no entries: a record needs at least the placement entry '0,...;'")

    # entries are numbered 0, 1, 2, ... in order
    for k, (raw_idx, _) in enumerate(entries):
        # ASCII digits only: int() also reads "+3", "3_0" and other scripts' digits
        v = int(raw_idx) if raw_idx.isascii() and raw_idx.isdigit() else None
        if v != k:
            rd.problem(f"entry number {raw_idx!r} where {k} was expected", k if v is None else v)

    # ---- entry 0: placements ("0,;" and "0;" are a game with no placement yet)
    _, ptoks = entries[0]
    if ptoks == [""]:
        ptoks = []
    plist = parse_placements(rd, ptoks, functools.partial(_parse_pt, n=n))
    state, actions, regular = play_placements(rd, plist, fmt)
    battle = entries[1:]
    if regular and len(actions) < p_ and battle:
        rd.problem(f"the placement list has {len(actions)} stones but the {n}x{n} board needs {p_} before the battle", 0)
        regular = False

    start = {"from": "placement"}
    removal_entries = 0
    if battle:
        # entries 1 and 2 take off the diagonal-end stones
        for k in (1, 2):
            if k - 1 < len(battle) and _is_removal(battle[k - 1][1]):
                removal_entries += 1
            else:
                break
        if removal_entries < 2:
            rd.problem("entries 1 and 2 must be the removals of the two diagonal-end stones", removal_entries + 1)
        if regular:
            ends = set(K.diagonal_ends(n))
            for k in range(removal_entries):
                tok = [t for t in battle[k][1] if t][0]
                try:
                    p, c = _parse_pt(tok, n)
                except ValueError as e:
                    rd.problem(str(e), k + 1)
                    continue
                if p not in ends:
                    rd.problem(f"{tok} is not a diagonal end of the centre square, or is removed twice", k + 1)
                elif c != _owner_at_full(actions, p):
                    rd.problem(f"{tok}: the stone on that point has the other colour", k + 1)
                ends.discard(p)
        else:
            start = _rebuild(rd, plist, battle, removal_entries)
            state = position_state(rules, np.asarray(start["board"]), start["to_move"])
            actions = []
    elif not regular:
        start = _rebuild(rd, plist, [], 0)
        state = position_state(rules, np.asarray(start["board"]), start["to_move"])
        actions = []

    # ---- battle entries
    passes: list[int] = []
    items = [(k + 1, functools.partial(_parse_entry, rd, battle[k][1], k + 1)) for k in range(removal_entries, len(battle))]
    complete = play_battle(rd, state, items, actions, passes, fmt)

    rec = GameRecord(rules=rules, actions=actions, start=start, players=players, meta=meta, passes=passes)
    final = rec.replay()
    rec.result = result_of(final)
    check_declared(rd, rec.result, word, declared, meta.get("declared_result"), len(entries) - 1, complete)
    rec.issues = rd.issues
    return rec


def check_declared(rd: Reader, result: dict[str, Any], word: str | None, declared: str | None, text: str | None,
                   entry: int, complete: bool = True) -> None:
    """The replay must reach the result the record declares (``*`` declares an unfinished game).

    When a lenient replay stopped early (``complete`` False) only a finished
    game with another result is reported: the stop is already an irregularity.
    """
    if not word:
        return
    if result["over"]:
        got = result["winner"]
        if got != declared:
            rd.problem(f"the header says {text!r} but the replay ends in {result_text(result)}", entry)
    elif word != "*" and complete:
        rd.problem(f"the header says {text!r} but the replay does not reach the end of the game"
                   f" ({result['battle_turns']} battle turns played, {result['decisions']} decisions):"
                   " the record is incomplete", entry)


def _parse_entry(rd, fields_, entry_no):
    """A :class:`Move` from the fields of a battle entry."""
    n = rd.n
    toks = [t for t in fields_ if t]
    if len(fields_) != len(toks):
        rd.problem("empty field (two commas in a row)", entry_no)
    if not toks:
        raise RecordError("no path", entry=entry_no)
    fly = toks[0].startswith(FLY_MARK)
    path = []
    colour = None
    for t in toks[0][len(FLY_MARK) if fly else 0:].split("-"):
        try:
            p, c = _parse_pt(t, n)
        except ValueError as e:
            raise RecordError(f"path {toks[0]!r}: {e}", entry=entry_no) from None
        if colour is None:
            colour = c
        elif c != colour:
            raise RecordError(f"path {toks[0]!r}: {t} is written as a {('', 'white', 'black')[c]} point but the path"
                              f" starts with a {('', 'white', 'black')[colour]} one", entry=entry_no)
        path.append(p)
    caps = []
    for t in toks[1:]:
        try:
            p, c = _parse_pt(t, n)
        except ValueError as e:
            raise RecordError(f"captured stone {t!r}: {e}", entry=entry_no) from None
        if c != opponent(colour):
            rd.problem(f"captured stone {t} should be written as a {('', 'white', 'black')[opponent(colour)]} point"
                       f" ({_pt_text(p, n, opponent(colour))})", entry_no)
        caps.append(p)
    return Move(colour, path, caps, toks[0], fly=fly)


def _is_removal(fields_):
    toks = [t for t in fields_ if t]
    return len(toks) == 1 and "-" not in toks[0]


def _owner_at_full(actions, p):
    """Colour of the stone placed on p (placements alternate, White first)."""
    return V.WHITE if actions.index(p) % 2 == 0 else V.BLACK


def _rebuild(rd, plist, battle, removal_entries):
    """Lenient import: the battle position from the placement list and the removal entries."""
    n = rd.n
    removed = []
    for k in range(removal_entries):
        tok = [t for t in battle[k][1] if t][0]
        try:
            p, _ = _parse_pt(tok, n)
        except ValueError as e:
            rd.note(f"{e}; ignored", k + 1)
            continue
        removed.append(p)
    if removal_entries < 2:
        removed = None
        rd.note("the diagonal-end stones are removed as the rules say", 1)
    first_colour, first_entry = None, None
    for k in range(removal_entries, len(battle)):
        toks = [t for t in battle[k][1] if t]
        if toks:
            try:
                _, first_colour = _parse_pt(toks[0].removeprefix(FLY_MARK).split("-")[0], n)
                first_entry = k + 1
            except ValueError:
                pass
            break
    return rebuild_position(rd, plist, removed, first_colour, first_entry, lambda p, c: _pt_text(p, n, c))


def _read(text: str, game: int | str | None, rules: Any, strict: bool, path: str) -> GameRecord:
    """The ``competition`` row's reader: the notation is the fallback of detection, so a text whose
    first entry is not a placement list is not a record at all (:class:`NotARecord`).  A header naming
    other rules (:class:`RulesMismatch`) is a record all the same, and says so."""
    formats.one_game(game, path)
    try:
        return from_competition(text, rules=rules, strict=strict)
    except RulesMismatch:
        raise
    except RecordError as e:
        if e.entry == 0 and e.item is None:  # the very first entry is not a placement list
            raise NotARecord(f"{path or 'the text'} is not a game record (format not recognised: none of "
                             f"{', '.join(formats.FORMATS)}; as competition notation: {e})") from None
        raise


formats.register(formats.RecordFormat(
    "competition", priority=90, detect=lambda text, path: True, games=lambda text: 1, read=_read,
    write=competition_file, extension=".txt", save_suffixes=(".txt", ".jiu"), lenient=True))
