"""Game records: an exact JSON format and the competition notation of Jiu records.

JSON records (``docs/records.md``) hold everything needed to replay a game
exactly: format name and version, the rules options, the seed, the players, the
start (a new game or a battle position), the list of kernel actions and the
result.  :class:`GameRecord` reads, writes, replays and checks them.

The competition notation (FlameChess / CCGC style) is the text form used for
tournament records.  :func:`to_competition` writes it and
:func:`from_competition` reads it back, strictly (the first irregularity raises
:class:`RecordError` naming the entry) or leniently (irregularities are listed
in :attr:`GameRecord.issues` and the game is rebuilt as far as possible).
"""

import json
import os
from dataclasses import dataclass, field

import numpy as np

from . import kernel as K
from .state import explain_illegal, position_state
from .notation import COLS, ROWS, action_to_str, str_to_action
from .rules import Rules

FORMAT = "jiu-record"
VERSION = 1

WINNER_NAMES = {K.WHITE: "white", K.BLACK: "black", K.DRAW: "draw"}
END_REASONS = ("", "too_few_stones", "no_move", "repetition", "turn_limit")
COLOUR_NAMES = {K.WHITE: "white", K.BLACK: "black"}


class RecordError(ValueError):
    """A record that cannot be read or replayed.

    ``entry`` is the index of the offending entry of a competition record (or
    ``None``), ``item`` the position inside it (the placement number in entry 0,
    counted from 1), ``action`` the index of the offending action of a JSON
    record.
    """

    def __init__(self, message, entry=None, item=None, action=None):
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


@dataclass
class Irregularity:
    """One irregularity met by a lenient competition import."""

    entry: int
    message: str
    item: int = None

    def __str__(self):
        where = f"entry {self.entry}" + (f", placement {self.item}" if self.item is not None else "")
        return f"{where}: {self.message}"


# ------------------------------------------------------------------ results
def result_of(state):
    """The result fields of a kernel state (finished or not) as a JSON-able dict."""
    over = bool(state[K.H_PHASE] == K.PH_OVER)
    w, b = K.returns(state)
    return {
        "over": over,
        "winner": WINNER_NAMES.get(int(state[K.H_WINNER])) if over else None,
        "end_reason": END_REASONS[int(state[K.H_END_REASON])] or None if over else None,
        "returns": [float(w), float(b)],
        "battle_turns": int(state[K.H_TURNS]),
        "decisions": int(state[K.H_DECISIONS]),
    }


def result_text(result):
    """One line for a result dict: ``white wins (too_few_stones) after 212 battle turns``."""
    if not result or not result.get("over"):
        return "unfinished"
    w = result.get("winner")
    head = f"{w} wins" if w in ("white", "black") else ("draw" if w == "draw" else "undecided")
    return f"{head} ({result.get('end_reason')}) after {result.get('battle_turns')} battle turns"


# --------------------------------------------------------------- JSON record
@dataclass
class GameRecord:
    """One game: rules, start, actions, players, seed, result and free-form metadata.

    ``start`` is ``{"from": "placement"}`` for a new game or ``{"from":
    "position", "board": NxN list, "to_move": "white"|"black"}`` for a game
    started in the battle phase.  ``result`` is recomputed by :meth:`replay`;
    ``issues`` lists the irregularities of a lenient import (not saved apart
    from ``meta["irregularities"]``).
    """

    rules: Rules
    actions: list = field(default_factory=list)
    start: dict = field(default_factory=lambda: {"from": "placement"})
    players: dict = field(default_factory=lambda: {"white": None, "black": None})
    seed: object = None
    result: dict = None
    meta: dict = field(default_factory=dict)
    issues: list = field(default_factory=list)

    # ------------------------------------------------------------ building
    @classmethod
    def from_actions(cls, rules, actions, start=None, players=None, seed=None, meta=None):
        """A record of ``actions`` played from ``start``; checks every action and fills ``result``."""
        rec = cls(
            rules=Rules.make(rules),
            actions=[int(a) for a in actions],
            start=_norm_start(start),
            players=dict(players or {"white": None, "black": None}),
            seed=seed,
            meta=dict(meta or {}),
        )
        rec.result = result_of(rec.replay())
        return rec

    def initial_state(self):
        """The kernel state the actions start from."""
        start = _norm_start(self.start)
        if start["from"] == "placement":
            return self.rules.new_state()
        return position_state(self.rules, np.asarray(start["board"]), start.get("to_move", "black"))

    def _checked(self, s, i, a):
        """Raise RecordError unless action ``a`` (number ``i``) is legal in ``s``."""
        n = self.rules.board_size
        if not K.is_legal(s, a):
            ok = 0 <= a <= 10 * n * n
            why = explain_illegal(s, a) if ok else "out of range"
            raise RecordError(f"{action_to_str(a, n) if ok else a} ({a}) is illegal: {why}", action=i)

    def states(self):
        """Iterate over the states: the initial one, then the state after each action (copies)."""
        s = self.initial_state()
        yield s.copy()
        for i, a in enumerate(self.actions):
            self._checked(s, i, a)
            K.apply_action(s, a)
            yield s.copy()

    def replay(self, check_result=False):
        """The final state after all actions; RecordError on an illegal action.

        With ``check_result`` the stored ``result`` must agree with the replay.
        """
        s = self.initial_state()
        for i, a in enumerate(self.actions):
            self._checked(s, i, a)
            K.apply_action(s, a)
        if check_result and self.result is not None:
            got = result_of(s)
            for key in ("over", "winner", "end_reason", "battle_turns"):
                if key in self.result and self.result[key] != got[key]:
                    raise RecordError(f"stored result {key}={self.result[key]!r} but the replay gives {got[key]!r}")
        return s

    def moves(self):
        """The actions in the notation of :mod:`jiu_env.notation`."""
        n = self.rules.board_size
        return [action_to_str(a, n) for a in self.actions]

    # ---------------------------------------------------------------- JSON
    def to_dict(self, moves=True):
        """The JSON-able dict of the documented format (``moves`` adds readable notation)."""
        d = {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "players": self.players,
            "start": _norm_start(self.start),
            "actions": [int(a) for a in self.actions],
        }
        if moves:
            d["moves"] = self.moves()
        d["result"] = self.result if self.result is not None else result_of(self.replay())
        meta = dict(self.meta)
        if self.issues:
            meta["irregularities"] = [str(i) for i in self.issues]
        d["meta"] = meta
        return d

    @classmethod
    def from_dict(cls, d, check=True):
        """A record from its dict; with ``check`` it is replayed and its result compared."""
        if not isinstance(d, dict):
            raise RecordError(f"a record is a JSON object, not {type(d).__name__}")
        if d.get("format") != FORMAT:
            raise RecordError(f"not a {FORMAT} record (format field is {d.get('format')!r})")
        if not isinstance(d.get("version"), int) or d["version"] > VERSION:
            raise RecordError(f"record version {d.get('version')!r} is not supported (this reader knows 1..{VERSION})")
        try:
            rules = Rules.make(dict(d.get("rules") or {}))
        except (TypeError, ValueError) as e:
            raise RecordError(f"bad rules in record: {e}") from None
        n = rules.board_size
        if "actions" in d:
            acts = d["actions"]
            if not isinstance(acts, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in acts):
                raise RecordError("'actions' must be a list of integers")
            if "moves" in d and d["moves"] is not None:
                if len(d["moves"]) != len(acts) or any(str_to_action(m, n) != a for m, a in zip(d["moves"], acts)):
                    raise RecordError("'moves' and 'actions' disagree")
        elif "moves" in d:
            acts = []
            for i, m in enumerate(d["moves"]):
                try:
                    acts.append(str_to_action(m, n))
                except (TypeError, ValueError) as e:
                    raise RecordError(str(e), action=i) from None
        else:
            raise RecordError("record has neither 'actions' nor 'moves'")
        rec = cls(
            rules=rules,
            actions=list(acts),
            start=_norm_start(d.get("start")),
            players=dict(d.get("players") or {"white": None, "black": None}),
            seed=d.get("seed"),
            result=d.get("result"),
            meta=dict(d.get("meta") or {}),
        )
        if check:
            final = rec.replay(check_result=True)
            rec.result = result_of(final)
        return rec

    def to_json(self, moves=True, indent=None):
        """The record as JSON text (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(moves=moves), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text, check=True):
        """A record from JSON text (see :meth:`from_dict`)."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecordError(f"not valid JSON: {e}") from None
        return cls.from_dict(d, check=check)

    def save(self, path):
        """Write the record; a ``.txt`` / ``.jiu`` path gets the competition notation, anything else JSON."""
        path = os.fspath(path)
        if path.lower().endswith((".txt", ".jiu")):
            text = to_competition(self)
        else:
            text = self.to_json(indent=1)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def _norm_start(start):
    if start is None:
        return {"from": "placement"}
    if not isinstance(start, dict):
        raise RecordError(f"'start' must be an object, not {type(start).__name__}")
    kind = start.get("from", "position" if "board" in start else "placement")
    if kind == "placement":
        return {"from": "placement"}
    if kind != "position" or "board" not in start:
        raise RecordError("'start' must be {'from': 'placement'} or {'from': 'position', 'board': ..., 'to_move': ...}")
    board = np.asarray(start["board"]).astype(int).tolist()
    return {"from": "position", "board": board, "to_move": start.get("to_move", "black")}


def load_record(path, game=None, strict=True, rules="competitive"):
    """Read a record file: JSON, JSON lines (``game`` = id or 0-based line number) or competition text.

    Competition text is read with :func:`from_competition` (``strict`` and
    ``rules`` are passed on).
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if path.lower().endswith(".jsonl") or (stripped.startswith("{") and "\n{" in stripped.rstrip()):
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
            if str(d.get("id")) == str(game) or (str(game).isdigit() and i == int(game)):
                chosen = d
                break
        if chosen is None:
            raise RecordError(f"no game {game!r} in {path}")
        return GameRecord.from_dict(chosen.get("record", chosen))
    if stripped.startswith("{"):
        return GameRecord.from_json(text)
    return from_competition(text, rules=rules, strict=strict)


# ------------------------------------------------------ competition notation
RESULT_WORDS = {
    "white wins": "white", "black wins": "black", "draw": "draw", "undecided": None, "*": None,
    "先手胜": "white", "后手胜": "black", "和棋": "draw", "平局": "draw",
}


def _pt_text(p, n, colour):
    t = ROWS[p // n] + COLS[p % n]
    return t.lower() if colour == K.WHITE else t.upper()


def _parse_pt(tok, n):
    """(point, colour) of a competition point token like ``g6`` (White) or ``G6`` (Black)."""
    t = tok.strip()
    if len(t) != 2:
        raise ValueError(f"{tok!r} is not a point (a row letter and one column digit, e.g. 'g6')")
    r_ch, c_ch = t[0], t[1]
    r = ROWS.find(r_ch.lower())
    c = COLS.find(c_ch.upper())
    if not r_ch.isalpha() or r < 0 or r >= n:
        raise ValueError(f"{tok!r}: row {r_ch!r} is not one of a..{ROWS[n - 1]}")
    if c < 0 or c >= n:
        raise ValueError(f"{tok!r}: column {c_ch!r} is not one of 0..{COLS[n - 1]}")
    return r * n + c, (K.WHITE if r_ch.islower() else K.BLACK)


def turn_entries(record):
    """Split a record's actions into placements and battle turns.

    Returns ``(placements, turns)``: ``placements`` is a list of ``(point,
    colour)``; each turn is a dict with ``colour``, ``path`` (points),
    ``jumped`` (points removed by jumps, in order) and ``victims`` (square
    captures, in order).
    """
    s = record.initial_state()
    n = record.rules.board_size
    p_ = n * n
    placements, turns = [], []
    cur = None
    for a in record.actions:
        c = int(s[K.H_TO_MOVE])
        if s[K.H_PHASE] == K.PH_PLACEMENT:
            placements.append((a, c))
            K.apply_action(s, a)
            continue
        sub = int(s[K.H_SUB])
        if sub == K.SUB_MOVE:
            cur = {"colour": c, "path": [], "jumped": [], "victims": []}
            turns.append(cur)
            kind, p = divmod(a, p_)
            if 1 <= kind <= 4:
                cur["path"] += [p, int(K.DR[kind - 1] * n + K.DC[kind - 1] + p)]
            elif 5 <= kind <= 8:
                d = kind - 5
                cur["path"] += [p, p + 2 * int(K.DR[d] * n + K.DC[d])]
                cur["jumped"].append(p + int(K.DR[d] * n + K.DC[d]))
            else:  # LIFT
                cur["path"].append(p)
        elif sub == K.SUB_CHAIN:
            if a != 10 * p_:
                kind, p = divmod(a, p_)
                d = kind - 5
                cur["path"].append(p + 2 * int(K.DR[d] * n + K.DC[d]))
                cur["jumped"].append(p + int(K.DR[d] * n + K.DC[d]))
        elif sub == K.SUB_DROP:
            cur["path"].append(a)
        else:
            cur["victims"].append(a)
        K.apply_action(s, a)
    return placements, turns


def _header_field(text):
    return str(text if text is not None else "").replace("[", "(").replace("]", ")").replace("\n", " ")


def to_competition(record, event=None, date=None):
    """The record in competition notation (see ``docs/records.md``).

    Only games that start with the placement phase can be written.
    """
    if _norm_start(record.start)["from"] != "placement":
        raise ValueError("the competition notation needs a game that starts with the placement phase")
    n = record.rules.board_size
    placements, turns = turn_entries(record)
    res = record.result if record.result is not None else result_of(record.replay())
    if res.get("over"):
        word = {"white": "white wins", "black": "black wins", "draw": "draw"}.get(res.get("winner"), "undecided")
    else:
        word = "*"
    meta = record.meta or {}
    players = record.players or {}
    head = "".join(f"[{_header_field(x)}]" for x in (
        "JIU", players.get("white"), players.get("black"), word,
        date if date is not None else meta.get("date", ""),
        event if event is not None else meta.get("event", ""),
    ))
    lines = [head]
    lines.append("0," + ",".join(_pt_text(p, n, c) for p, c in placements) + ";")
    if len(placements) == n * n:
        # entries 1 and 2: the diagonal-end stones taken off when the board is full
        for i, (p, c) in enumerate(placements[:2]):
            lines.append(f"{i + 1},{_pt_text(p, n, c)};")
        for i, t in enumerate(turns):
            c = t["colour"]
            path = "-".join(_pt_text(p, n, c) for p in t["path"])
            caps = "".join("," + _pt_text(p, n, 3 - c) for p in t["jumped"] + t["victims"])
            lines.append(f"{i + 3},{path}{caps};")
    return "\n".join(lines)


def _split_entries(text):
    """(header fields or None, [(entry index, raw index text, fields)])."""
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


class _Reader:
    """State of one competition import (strict or lenient)."""

    def __init__(self, rules, strict):
        self.rules = rules
        self.n = rules.board_size
        self.strict = strict
        self.issues = []

    def problem(self, msg, entry, item=None):
        if self.strict:
            raise RecordError(msg, entry=entry, item=item)
        self.issues.append(Irregularity(entry, msg, item))


def from_competition(text, rules="competitive", strict=True):
    """A :class:`GameRecord` from competition notation.

    ``strict``: any irregularity raises :class:`RecordError` naming the entry
    (and the placement number inside entry 0).  Lenient (``strict=False``):
    when the placement list is irregular the battle position is rebuilt from
    it (``start`` becomes that position); the battle is replayed until an entry
    cannot be played; every irregularity is listed in ``record.issues``.
    """
    rules = Rules.make(rules)
    n = rules.board_size
    p_ = n * n
    rd = _Reader(rules, strict)
    header, entries = _split_entries(text)
    players = {"white": None, "black": None}
    declared = None
    meta = {}
    if header is not None:
        if not header or header[0].upper() != "JIU":
            rd.problem(f"header must start with [JIU], not [{header[0] if header else ''}]", 0)
        vals = header[1:] + [""] * 5
        players = {"white": vals[0] or None, "black": vals[1] or None}
        word = vals[2].strip().lower() if vals[2] else ""
        if word:
            if word not in RESULT_WORDS:
                rd.problem(f"unknown result {vals[2]!r} in the header (use white wins, black wins, draw, undecided or *)", 0)
            else:
                declared = RESULT_WORDS[word]
                meta["declared_result"] = vals[2]
        if vals[3]:
            meta["date"] = vals[3]
        if vals[4]:
            meta["event"] = vals[4]
    if not entries:
        raise RecordError("no entries: a record needs at least the placement entry '0,...;'")

    # entries are numbered 0, 1, 2, ... in order
    for k, (raw_idx, _) in enumerate(entries):
        try:
            v = int(raw_idx)
        except ValueError:
            v = None
        if v != k:
            rd.problem(f"entry number {raw_idx!r} where {k} was expected", k if v is None else v)

    # ---- entry 0: placements
    _, ptoks = entries[0]
    plist = []
    for i, tok in enumerate(ptoks, start=1):
        try:
            plist.append(_parse_pt(tok, n))
        except ValueError as e:
            if strict:
                raise RecordError(str(e), entry=0, item=i) from None
            rd.issues.append(Irregularity(0, f"{e}; skipped", i))
            plist.append(None)
    state = rules.new_state()
    actions = []
    regular = True
    prev = None
    for i, pc in enumerate(plist, start=1):
        if pc is None:
            regular = False
            continue
        p, c = pc
        if not regular:
            # the kernel replay has stopped: only flag what the rebuilt position cannot show
            if c == prev:
                rd.issues.append(Irregularity(0, f"{_pt_text(p, n, c)}: {COLOUR_NAMES[c]} places twice in a row", i))
            prev = c
            continue
        prev = c
        if state[K.H_PHASE] != K.PH_PLACEMENT:
            rd.problem(f"{_pt_text(p, n, c)}: the board is already full", 0, i)
            regular = False
        elif c != state[K.H_TO_MOVE]:
            who, want = COLOUR_NAMES[c], COLOUR_NAMES[int(state[K.H_TO_MOVE])]
            rd.problem(f"{_pt_text(p, n, c)} is a {who} stone but {want} is to place (same colour twice in a row)", 0, i)
            regular = False
        elif not K.is_legal(state, p):
            rd.problem(f"{_pt_text(p, n, c)}: {explain_illegal(state, p)}", 0, i)
            regular = False
        else:
            K.apply_action(state, p)
            actions.append(p)
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
            start = _rebuild_position(rd, plist, battle, removal_entries)
            state = position_state(rules, np.asarray(start["board"]), start["to_move"])
            actions = []
    elif not regular:
        start = _rebuild_position(rd, plist, [], 0)
        state = position_state(rules, np.asarray(start["board"]), start["to_move"])
        actions = []

    # ---- battle entries
    for k in range(removal_entries, len(battle)):
        entry_no = k + 1
        if state[K.H_PHASE] == K.PH_OVER:
            rd.problem(f"the game is already over ({_over_text(state)}); {len(battle) - k} entries are left", entry_no)
            break
        try:
            acts = _realise_entry(rd, state, battle[k][1], entry_no)
        except RecordError as e:
            if strict:
                raise
            rd.issues.append(Irregularity(entry_no, f"{e.reason}; the replay stops here"
                                          f" ({len(battle) - k} entries not played)"))
            break
        for a in acts:
            K.apply_action(state, a)
        actions.extend(acts)

    rec = GameRecord(rules=rules, actions=actions, start=start, players=players, meta=meta)
    final = rec.replay()
    rec.result = result_of(final)
    if "declared_result" in meta:
        got = rec.result["winner"] if rec.result["over"] else None
        if rec.result["over"] and got != declared:
            rd.problem(f"the header says {meta['declared_result']!r} but the replay ends in {result_text(rec.result)}",
                       len(entries) - 1)
    rec.issues = rd.issues
    return rec


def _is_removal(fields_):
    toks = [t for t in fields_ if t]
    return len(toks) == 1 and "-" not in toks[0]


def _owner_at_full(actions, p):
    """Colour of the stone placed on p (placements alternate, White first)."""
    return K.WHITE if actions.index(p) % 2 == 0 else K.BLACK


def _over_text(state):
    return result_text(result_of(state))


def _rebuild_position(rd, plist, battle, removal_entries):
    """Lenient import: the battle position built directly from the placement list."""
    n = rd.n
    board = np.zeros(n * n, np.int64)
    for i, pc in enumerate(plist, start=1):
        if pc is None:
            continue
        p, c = pc
        if board[p] != 0:
            rd.issues.append(Irregularity(0, f"{_pt_text(p, n, c)}: point placed twice; the later stone is kept", i))
        board[p] = c
    empties = int(np.sum(board == 0))
    if empties:
        rd.issues.append(Irregularity(0, f"{empties} points were never placed; they start empty"))
    removed = []
    for k in range(removal_entries):
        tok = [t for t in battle[k][1] if t][0]
        try:
            p, _ = _parse_pt(tok, n)
        except ValueError as e:
            rd.issues.append(Irregularity(k + 1, f"{e}; ignored"))
            continue
        removed.append(p)
    if removal_entries < 2:
        removed = list(K.diagonal_ends(n))
        rd.issues.append(Irregularity(1, "the diagonal-end stones are removed as the rules say"))
    for p in removed:
        board[p] = 0
    to_move = "black"
    for k in range(removal_entries, len(battle)):
        toks = [t for t in battle[k][1] if t]
        if toks:
            try:
                _, c = _parse_pt(toks[0].split("-")[0], n)
                if c == K.WHITE:
                    to_move = "white"
                    rd.issues.append(Irregularity(k + 1, "the battle opens with a White move; White moves first"))
            except ValueError:
                pass
            break
    rd.issues.append(Irregularity(0, "the battle position is rebuilt from the placement list"))
    try:
        position_state(rd.rules, board.reshape(n, n), to_move)
    except ValueError as e:
        raise RecordError(f"cannot rebuild a battle position from the placements: {e}", entry=0) from None
    return {"from": "position", "board": board.reshape(n, n).tolist(), "to_move": to_move}


def _realise_entry(rd, state, fields_, entry_no):
    """Kernel actions that play one battle entry from ``state`` (not modified)."""
    n = rd.n
    p_ = n * n
    toks = [t for t in fields_ if t]
    if len(fields_) != len(toks):
        rd.problem("empty field (two commas in a row)", entry_no)
    if not toks:
        raise RecordError("no path", entry=entry_no)
    mover = int(state[K.H_TO_MOVE])
    path = []
    for t in toks[0].split("-"):
        try:
            p, c = _parse_pt(t, n)
        except ValueError as e:
            raise RecordError(f"path {toks[0]!r}: {e}", entry=entry_no) from None
        if c != mover:
            raise RecordError(f"path {toks[0]!r}: {t} is a {COLOUR_NAMES[c]} point but {COLOUR_NAMES[mover]} is to move",
                              entry=entry_no)
        path.append(p)
    caps = []
    for t in toks[1:]:
        try:
            p, c = _parse_pt(t, n)
        except ValueError as e:
            raise RecordError(f"captured stone {t!r}: {e}", entry=entry_no) from None
        if c != 3 - mover:
            rd.problem(f"captured stone {t} should be written as a {COLOUR_NAMES[3 - mover]} point ({_pt_text(p, n, 3 - mover)})",
                       entry_no)
        caps.append(p)
    if len(path) < 2:
        raise RecordError(f"path {toks[0]!r}: a move needs at least two points", entry=entry_no)
    if len(path) == 2 and path[0] == path[1]:
        raise RecordError(f"path {toks[0]!r}: a stone cannot move to its own point", entry=entry_no)

    if state[K.HDR + path[0]] != mover:
        what = "an empty point" if state[K.HDR + path[0]] == K.EMPTY else f"a {COLOUR_NAMES[3 - mover]} stone"
        raise RecordError(f"path {toks[0]!r}: {toks[0].split('-')[0]} is {what}, not a {COLOUR_NAMES[mover]} stone",
                          entry=entry_no)
    # candidate ways to make the move: step, jump chain, fly (in that order)
    cands = []
    if len(path) == 2:
        a, b = path
        d = _dir_between(a, b, n, 1)
        if d >= 0:
            cands.append([p_ + d * p_ + a])
        d = _dir_between(a, b, n, 2)
        if d >= 0:
            cands.append([5 * p_ + d * p_ + a])
        cands.append([9 * p_ + a, b])
    else:
        seq = []
        for a, b in zip(path, path[1:]):
            d = _dir_between(a, b, n, 2)
            if d < 0:
                raise RecordError(f"path {toks[0]!r}: {_pt_text(a, n, mover)} to {_pt_text(b, n, mover)} is not a jump"
                                  " (a path of three or more points is a jump chain)", entry=entry_no)
            seq.append(5 * p_ + d * p_ + a)
        cands.append(seq)
    errors = []
    for seq in cands:
        try:
            return _try_candidate(rd, state, seq, path, caps, entry_no)
        except RecordError as e:
            errors.append(e)
    # report the failure of the first reading whose path could be played (else of the first reading)
    raise max(errors, key=lambda e: getattr(e, "depth", 0))


def _dir_between(a, b, n, dist):
    dr = b // n - a // n
    dc = b % n - a % n
    for d in range(4):
        if dr == dist * int(K.DR[d]) and dc == dist * int(K.DC[d]):
            return d
    return -1


def _why_illegal(s, a, n):
    """A short reason why action ``a`` cannot be played in ``s`` (for import errors)."""
    if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_DROP and a < n * n:
        pt = ROWS[a // n] + COLS[a % n]
        what = "the flying stone's own point" if a == s[K.H_LIFT] else "occupied"
        return f"the fly cannot land on {pt}: it is {what}"
    return f"{action_to_str(a, n)} is illegal: {explain_illegal(s, a)}"


def _try_candidate(rd, state, seq, path, caps, entry_no):
    n = rd.n
    p_ = n * n
    s = state.copy()
    mover = int(s[K.H_TO_MOVE])
    acts = []

    def fail(msg, depth):
        e = RecordError(msg, entry=entry_no)
        e.depth = depth
        raise e

    for i, a in enumerate(seq):
        if s[K.H_PHASE] == K.PH_OVER:
            fail(f"the game ended ({_over_text(s)}) before the path was complete", 0)
        if not K.is_legal(s, a):
            fail(_why_illegal(s, a, n), 0)
        K.apply_action(s, a)
        acts.append(a)
    jumped = []
    for a in seq:
        if 5 * p_ <= a < 9 * p_:
            d, p = divmod(a - 5 * p_, p_)
            jumped.append(p + int(K.DR[d] * n + K.DC[d]))
    if s[K.H_PHASE] != K.PH_OVER and s[K.H_SUB] == K.SUB_CHAIN and int(s[K.H_TO_MOVE]) == mover:
        stop = 10 * p_
        if not K.is_legal(s, stop):
            fail("the jump chain may not stop here: " + explain_illegal(s, stop), 1)
        K.apply_action(s, stop)
        acts.append(stop)
    rest = list(caps)
    if jumped:
        if rest[:len(jumped)] == jumped:
            rest = rest[len(jumped):]
        elif rd.strict:
            want = ",".join(_pt_text(p, n, 3 - mover) for p in jumped)
            fail(f"the captured list must start with the jumped stones {want}", 1)
        else:
            rest = [p for p in rest if p not in jumped]
            rd.issues.append(Irregularity(entry_no, "the jumped stones are not listed first among the captures"))
    for j, v in enumerate(rest):
        if s[K.H_PHASE] == K.PH_OVER:
            fail(f"the game ended ({_over_text(s)}) but {len(rest) - j} more captures are listed", 1)
        if int(s[K.H_TO_MOVE]) != mover or s[K.H_SUB] != K.SUB_CAPTURE:
            fail(f"{len(rest) - j} captures listed but the move makes {j} square capture(s)", 1)
        if not K.is_legal(s, v):
            fail(f"capture {_pt_text(v, n, 3 - mover)}: there is no {COLOUR_NAMES[3 - mover]} stone on that point", 1)
        K.apply_action(s, v)
        acts.append(v)
    if s[K.H_PHASE] != K.PH_OVER and int(s[K.H_TO_MOVE]) == mover:
        pend = int(s[K.H_PENDING])
        fail(f"the move forms squares and {pend} more capture(s) are due", 1)
    return acts


__all__ = [
    "FORMAT", "VERSION", "GameRecord", "RecordError", "Irregularity", "result_of", "result_text",
    "load_record", "to_competition", "from_competition", "turn_entries",
]
