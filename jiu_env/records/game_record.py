"""JSON game records (format ``jiu-record``): :class:`GameRecord`, results, start positions."""

from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .. import vocab as V
from .. import fileio
from ..fileio import atomic_write_text
from ..state import position_state
from ..notation import action_to_str, str_to_action
from ..outcome import FORFEIT, Outcome
from ..rules import Rules
from . import formats
from .errors import Irregularity, NotARecord, RecordError, record_text
from .fields import (  # the names, results and start every format shares, importable from here as before
    COLOUR_NAMES as COLOUR_NAMES, END_REASONS as END_REASONS, WINNER_NAMES as WINNER_NAMES, norm_start as norm_start,
    result_of as result_of, result_text as result_text,
)
from .replay import check_passes, play, walk

FORMAT: str = "jiu-record"
VERSION: int = 1

RESULT_KEYS: tuple[str, ...] = ("over", "winner", "end_reason", "returns", "battle_turns", "decisions")
#: How deep the arrays and objects of a record may nest (a record needs 3: the start board inside
#: ``start``); deeper JSON, which Python's reader and writer follow by recursion, is refused.
MAX_JSON_DEPTH: int = 32


def json_depth(value: Any, limit: int) -> int:
    """How deep lists, tuples and dicts nest in ``value`` (a scalar is 0), counted without recursion
    and only up to ``limit + 1``: the walk stops as soon as ``limit`` is exceeded."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, (list, tuple)):
            continue
        d += 1
        if d > deepest:
            deepest = d
            if d > limit:
                return d
        stack.extend((x, d) for x in v if isinstance(x, (dict, list, tuple)))
    return deepest


def non_finite(value: Any) -> tuple[str, Any] | None:
    """``(where, number)`` of the first NaN or infinite float in ``value`` (lists, tuples and dicts
    walked without recursion; ``where`` like ``result.returns[0]``), or None when there is none."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, (float, np.floating)):
            if not math.isfinite(v):
                return where or "the value", v
        elif isinstance(v, dict):
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


def unencodable(value: Any) -> tuple[str, str] | None:
    """``(where, text)`` of the first string in ``value`` (keys included) that UTF-8 cannot encode (a lone
    surrogate such as ``"\\ud800"``, which a JSON reader accepts), or None: a record holding one could not
    be written to a file."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return where or "the value", v
        elif isinstance(v, dict):
            for k in v:
                if isinstance(k, str) and unencodable(k) is not None:
                    return f"{where}.{k!r}" if where else repr(k), k
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


_JSON_SCALARS = (str, int, float, bool, type(None))


def unwritable(value: Any) -> tuple[str, Any] | None:
    """``(where, value)`` of the first value (or dict key) in ``value`` that JSON cannot hold, or None.

    JSON holds dicts, lists, tuples, str, int, float, bool and None (keys: str,
    int, float, bool, None); a numpy scalar counts as the Python number it is
    (:func:`plain_json` writes it so).  Anything else (an array, a set, an
    object) is named, so that a record that cannot be written says which
    field is at fault.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, dict):
            for k in v:
                if not isinstance(k, _JSON_SCALARS):
                    return (f"{where}.{k!r}" if where else repr(k)) + " (a key)", k
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
        elif not isinstance(v, (*_JSON_SCALARS, np.bool_, np.integer, np.floating)):
            return where or "the value", v
    return None


def plain_json(value: Any) -> Any:
    """``json.dumps``'s ``default``: a numpy scalar as the Python number it is; anything else a TypeError."""
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def check_seed(seed: Any) -> int | None:
    """A record's ``seed``: ``None`` or an integer (a numpy integer becomes an ``int``); RecordError otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)):
        raise RecordError(f"'seed' must be an integer or null, not the boolean {seed!r}")
    if not isinstance(seed, (int, np.integer)):
        raise RecordError(f"'seed' must be an integer or null, not {type(seed).__name__} {seed!r}")
    return int(seed)


def _same(key: str, stored: Any, got: Any) -> bool:
    if key == "returns":
        return (isinstance(stored, (list, tuple)) and len(stored) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in stored)
                and all(math.isclose(float(x), y) for x, y in zip(stored, got)))
    if key in ("battle_turns", "decisions"):
        return isinstance(stored, int) and not isinstance(stored, bool) and bool(stored == got)
    if key == "over":
        return isinstance(stored, bool) and bool(stored == got)
    return bool(stored == got)


def compare_result(stored: Any, got: dict[str, Any]) -> None:
    """Raise RecordError when a stored result dict disagrees with the replayed one."""
    if stored is None:
        return
    if not isinstance(stored, dict):
        raise RecordError(f"'result' must be an object or null, not {type(stored).__name__}")
    for key in RESULT_KEYS:
        if key in stored and not _same(key, stored[key], got[key]):
            raise RecordError(f"stored result {key}={stored[key]!r} but the replay gives {got[key]!r}")


# --------------------------------------------------------------- JSON record
@dataclass
class GameRecord:
    """One game: rules, start, actions, players, seed, result and free-form metadata.

    ``start`` is ``{"from": "placement"}`` for a new game or ``{"from":
    "position", "board": NxN list, "to_move": "white"|"black"}`` for a game
    started in the battle phase.  ``result`` is recomputed by :meth:`replay`;
    ``issues`` lists the irregularities of a lenient import (not saved apart
    from ``meta["irregularities"]``).  ``passes`` is empty for every legal
    game; a lenient import of an irregular real record lists there the action
    indices before which the turn is handed over (see ``docs/records.md``).
    """

    rules: Rules
    actions: list[int] = field(default_factory=list)
    start: dict[str, Any] = field(default_factory=lambda: {"from": "placement"})
    players: dict[str, Any] = field(default_factory=lambda: {"white": None, "black": None})
    seed: Any = None
    result: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    issues: list[Irregularity] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome | None:
        """The game's :class:`~jiu_env.outcome.Outcome`, or ``None`` for an unfinished game.

        Read from ``result`` (replayed when there is none).  A game the game
        loop ended by a forfeit (``meta["forfeit"]``, written by
        :func:`jiu_env.play_game` with ``on_illegal="forfeit"``) is not over
        on the board, and has the forfeit's outcome: the other side wins by
        ``"illegal_action"``, as :attr:`jiu_env.game.GameResult.outcome` says.
        """
        res = self.result if self.result is not None else result_of(self.replay())
        forfeit = self.meta.get("forfeit")
        if not res.get("over"):
            if isinstance(forfeit, dict) and forfeit.get("colour") in ("white", "black"):
                return Outcome(winner=V.BLACK if forfeit["colour"] == "white" else V.WHITE, end_reason=FORFEIT,
                               battle_turns=res["battle_turns"], decisions=res["decisions"])
            return None
        return Outcome.from_dict(res)

    # ------------------------------------------------------------ building
    @classmethod
    def from_actions(cls, rules: str | Rules | dict[str, Any], actions: Any, start: dict[str, Any] | None = None,
                     players: dict[str, Any] | None = None, seed: Any = None, meta: dict[str, Any] | None = None,
                     passes: Any = None) -> GameRecord:
        """A record of ``actions`` played from ``start``; checks every action and fills ``result``."""
        acts = list(actions)
        for i, a in enumerate(acts):  # int() would truncate 5.9 to 5 and take True as 1
            if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
                raise RecordError(f"an action is an integer, not {type(a).__name__} {a!r}", action=i)
        rec = cls(
            rules=Rules.make(rules),
            actions=[int(a) for a in acts],
            start=norm_start(start),
            players=_players(players),
            seed=check_seed(seed),
            meta=dict(meta or {}),
            passes=check_passes(list(passes or []), len(acts)),
        )
        rec.result = result_of(rec.replay())
        return rec

    def initial_state(self) -> np.ndarray:
        """The kernel state the actions start from."""
        start = norm_start(self.start)
        if start["from"] == "placement":
            return self.rules.new_state()
        try:
            return position_state(self.rules, np.asarray(start["board"]), start.get("to_move", "black"))
        except ValueError as e:
            raise RecordError(f"bad start position: {e}") from None

    def states(self) -> Iterator[np.ndarray]:
        """Iterate over the states: the initial one, then the state after each action (full copies)."""
        s = self.initial_state()
        yield s.copy()
        for _ in walk(s, self.actions, self.passes):
            yield s.copy()

    def positions(self) -> list[np.ndarray]:
        """The header and board of every state (initial, then after each action), as a list.

        Each item is ``state[:HDR + P]``: enough for rendering and for reading
        every header field, without the repetition history ring (whose size
        grows with ``max_battle_turns``), so a long record stays small in memory.
        """
        s = self.initial_state()
        m = V.HDR + int(s[V.H_P])
        out = [s[:m].copy()]
        for _ in walk(s, self.actions, self.passes):
            out.append(s[:m].copy())
        return out

    def replay(self, check_result: bool = False) -> np.ndarray:
        """The final state after all actions; RecordError on an illegal action.

        With ``check_result`` the stored ``result`` must agree with the replay.
        """
        s = play(self.initial_state(), self.actions, self.passes)
        if check_result:
            compare_result(self.result, result_of(s))
        return s

    def moves(self) -> list[str]:
        """The actions in the notation of :mod:`jiu_env.notation`."""
        n = self.rules.board_size
        return [action_to_str(a, n) for a in self.actions]

    # ---------------------------------------------------------------- JSON
    def to_dict(self, moves: bool = True) -> dict[str, Any]:
        """The JSON-able dict of the documented format (``moves`` adds readable notation)."""
        d = {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "players": copy.deepcopy(self.players),
            "start": norm_start(self.start),
            "actions": [int(a) for a in self.actions],
        }
        if self.passes:
            d["passes"] = [int(p) for p in self.passes]
        if moves:
            d["moves"] = self.moves()
        # copies: editing the returned dict must not change the record
        d["result"] = copy.deepcopy(self.result) if self.result is not None else result_of(self.replay())
        meta = copy.deepcopy(self.meta)
        if self.issues:
            meta["irregularities"] = [str(i) for i in self.issues]
        d["meta"] = meta
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], check: bool = True) -> GameRecord:
        """A record from its dict; with ``check`` it is replayed and its result compared."""
        if not isinstance(d, dict):
            raise RecordError(f"a record is a JSON object, not {type(d).__name__}")
        if json_depth(d, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise RecordError(f"the record's arrays and objects nest more than {MAX_JSON_DEPTH} deep")
        bad = non_finite(d)
        if bad is not None:
            raise RecordError(f"{bad[0]} is {bad[1]!r}: a record holds no NaN or Infinity")
        text = unencodable(d)
        if text is not None:
            raise RecordError(f"{text[0]} holds {text[1]!r}, which is not text UTF-8 can write (a lone surrogate)")
        if d.get("format") != FORMAT:
            raise RecordError(f"not a {FORMAT} record (format field is {d.get('format')!r})")
        v = d.get("version")
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= VERSION:
            raise RecordError(f"record version {v!r} is not supported (this reader knows 1..{VERSION})")
        if "rules" not in d or d["rules"] is None:
            raise RecordError("the record has no 'rules' field (every rules option, as in Rules.to_dict())")
        if not isinstance(d["rules"], dict):
            raise RecordError(f"'rules' must be an object, not {type(d['rules']).__name__}")
        try:
            rules = Rules.make(dict(d["rules"]))
        except (TypeError, ValueError) as e:
            raise RecordError(f"bad rules in record: {e}") from None
        n = rules.board_size
        if "actions" in d:
            acts = d["actions"]
            if not isinstance(acts, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in acts):
                raise RecordError("'actions' must be a list of integers")
            for i, a in enumerate(acts):
                if not 0 <= a <= 10 * n * n:
                    raise RecordError(f"{a} is out of range (actions are 0..{10 * n * n} for a {n}x{n} board)", action=i)
            if "moves" in d and d["moves"] is not None:
                ms = d["moves"]
                if not isinstance(ms, list) or len(ms) != len(acts):
                    raise RecordError(f"'moves' and 'actions' disagree: 'moves' must be a list of {len(acts)} "
                                      "move strings, one for each action")
                for i, (m, a) in enumerate(zip(ms, acts)):
                    if not isinstance(m, str) or _parse_move(m, n) != a:
                        raise RecordError(f"'moves' and 'actions' disagree: move {m!r} is not action {a} "
                                          f"({action_to_str(a, n)})", action=i)
        elif "moves" in d:
            if not isinstance(d["moves"], list):
                raise RecordError("'moves' must be a list of strings")
            acts = []
            for i, m in enumerate(d["moves"]):
                try:
                    acts.append(str_to_action(m, n))
                except (TypeError, ValueError, AttributeError) as e:
                    raise RecordError(str(e), action=i) from None
        else:
            raise RecordError("record has neither 'actions' nor 'moves'")
        for key in ("players", "meta"):
            if d.get(key) is not None and not isinstance(d[key], dict):
                raise RecordError(f"'{key}' must be an object, not {type(d[key]).__name__}")
        if d.get("result") is not None and not isinstance(d["result"], dict):
            raise RecordError(f"'result' must be an object or null, not {type(d['result']).__name__}")
        seed = check_seed(d.get("seed"))
        rec = cls(
            rules=rules,
            actions=list(acts),
            start=norm_start(d.get("start")),
            players=_players(d.get("players")),
            seed=seed,
            result=d.get("result"),
            meta=dict(d.get("meta") or {}),
            passes=check_passes(d.get("passes"), len(acts)),
        )
        if check:
            final = rec.replay(check_result=True)
            rec.result = result_of(final)
        return rec

    def to_json(self, moves: bool = True, indent: int | None = None) -> str:
        """The record as JSON text (see :meth:`to_dict`).

        JSON has no NaN or Infinity: a record holding one (in ``seed``, ``meta``, ``players`` or a
        stored ``result``) is refused with a ValueError naming the field, and nothing is written.
        A numpy number (``np.float32(0.1)``, ``np.int64(3)``) is written as the Python number it is;
        a value JSON cannot hold (an array, a set, an object) is a TypeError naming the field.
        """
        d = self.to_dict(moves=moves)
        bad = non_finite(d)
        if bad is not None:
            raise ValueError(f"cannot write the record as JSON: {bad[0]} is {bad[1]!r}, and JSON has no"
                             " NaN or Infinity")
        text = unencodable(d)
        if text is not None:
            raise ValueError(f"cannot write the record as JSON: {text[0]} holds {text[1]!r}, which UTF-8 cannot "
                             "encode (a lone surrogate)")
        d["seed"] = check_seed(d["seed"])  # a numpy integer is written as the int it is
        try:
            return json.dumps(d, indent=indent, ensure_ascii=False, allow_nan=False, default=plain_json)
        except TypeError:  # looked for only when json fails: the walk would slow every record written
            other = unwritable(d)
            if other is None:
                raise
            raise TypeError(f"cannot write the record as JSON: {other[0]} is {type(other[1]).__name__} "
                            f"{other[1]!r}, which JSON cannot hold (numbers, text, lists and dicts)") from None

    @classmethod
    def from_json(cls, text: str, check: bool = True) -> GameRecord:
        """A record from JSON text (see :meth:`from_dict`); a leading UTF-8 BOM is ignored."""
        text = record_text(text)
        try:
            d = json.loads(text.lstrip("\ufeff"))
        except json.JSONDecodeError as e:
            raise RecordError(f"not valid JSON: {e}") from None
        except RecursionError:
            raise RecordError(f"not readable: JSON nested too deeply (a record nests at most {MAX_JSON_DEPTH} "
                              "deep)") from None
        return cls.from_dict(d, check=check)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the record in the format its path's ending names (:func:`.formats.for_path`):
        ``.txt`` / ``.jiu`` get the competition notation, ``.csv`` a jiuchess CSV file, ``.jsonl``
        the JSON record on one line (a JSON-lines file of one game), anything else JSON.

        The text notations are written with the headers ``jiu export`` writes
        (:func:`.writers.competition_file`, :func:`.writers.jiuchess_file`: players,
        event, date, result, end reason and rules), so that a game saved as text
        keeps its players and is read back under the rules it was played under
        (the notations do not store the rules otherwise).

        The text is made in full and written to a temporary file that then
        replaces ``path`` (:func:`jiu_env.fileio.atomic_write_text`): if
        anything fails (a record the notation cannot express, text that cannot
        be encoded, a full disk) the file that was there is left as it was.
        """
        path = os.fspath(path)
        if path.lower().endswith(".jsonl"):  # JSON lines: one game a line, as load_record reads the ending
            text = self.to_json()
        else:
            write = formats.for_path(path).write
            assert write is not None  # for_path gives only writable formats
            text = write(self)
        atomic_write_text(path, text + "\n")  # a failed save leaves the previous file whole


def _players(players: dict[str, Any] | None) -> dict[str, Any]:
    """A record's ``players``: a copy of the dict given, ``{}`` included (so that it round-trips exactly);
    ``None`` (or no field, in a file) is the default ``{"white": None, "black": None}``."""
    return {"white": None, "black": None} if players is None else dict(players)


def _parse_move(m: Any, n: int) -> int | None:
    try:
        return str_to_action(m, n)
    except (TypeError, ValueError, AttributeError):
        return None


def _read_json(text: str, game: int | str | None, rules: Any, strict: bool, path: str) -> GameRecord:
    """The ``json`` row's reader: one record, which stores its own rules (``rules``/``strict`` unused)."""
    formats.one_game(game, path)
    where = path or "the text"
    try:
        d = fileio.loads_json(text, where)
    except fileio.JSONTooDeep as e:
        raise NotARecord(str(e)) from None
    except json.JSONDecodeError as e:
        raise NotARecord(f"{where} is not a game record: {e}") from None
    if not isinstance(d, dict) or "format" not in d:
        raise NotARecord(f"{where} is not a game record (a JSON file without the record's format field)")
    return GameRecord.from_dict(d)


formats.register(formats.RecordFormat(
    "json", priority=10, detect=lambda text, path: text.startswith("{"), games=lambda text: 1, read=_read_json,
    write=lambda record: record.to_json(indent=1), extension=".json"))
