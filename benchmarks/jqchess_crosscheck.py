"""Cross-check of the ``jqchess8`` rules profile against JQ_Chess, an independent Java engine.

docs/rules.md §10.6 says which rules of JQ_Chess's competitive (竞技化, 8x8) mode the ``jqchess8`` profile
models.  This harness tests that claim position by position: it plays seeded random games with our kernel
under ``Rules.make("jqchess8")`` and, at every turn start, compares

* the complete turns our kernel allows, found by a depth-first search over the decisions of the turn (move,
  jump continuations, capture choices, ...) until the turn passes to the other side or the game ends, each
  turn canonicalised as the board it leaves and the game result it gives; with
* JQ_Chess's own list of whole-turn moves for the same position (its ``AiMoveGenerator``), each played on a
  copy of JQ's ``BoardState`` by ``benchmarks/jqchess_crosscheck/Dump.java`` to get its board and result.

JQ's sources are public code and are never copied into this repository: ``--jq`` names a folder holding
them (``JQJava``, its ``src/main/java``, or any folder with ``com/zangjiuqi/...``).  The harness compiles
them with Dump.java into a temporary folder and feeds every game of the run through one long-lived JVM.

    python benchmarks/jqchess_crosscheck.py --jq /tmp/jq/src --games 200 --seed 0 --out baselines/jqchess_crosscheck

Both sides play the same game: each turn is drawn uniformly from our kernel's distinct turns (seeded), and
JQ plays the move of its list that leaves the same board.  A game stops when it is over on both sides, at
our turn limit (JQ has none), or when the two engines disagree on the result of the turn played.

Differences whose only cause is JQ's documented cap (``AiMoveGenerator.MAX_CAPTURE_COMBINATIONS = 64``
capture sets per move path) are counted apart: a turn only we have is put down to the cap when each way our
kernel reaches it takes its square captures from more than 64 possible sets (C(enemy stones, squares) > 64),
and JQ's list for the position shows a move path with exactly 64 capture sets.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterator, Sequence

import numpy as np

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.notation import COLS, ROWS, action_to_str, point_to_str
from jiu_env.vocab import encode_jump, landing

HERE = Path(__file__).resolve().parent
DUMP_JAVA = HERE / "jqchess_crosscheck" / "Dump.java"
#: JQ_Chess's cap on the square-capture sets it lists per move path (AiMoveGenerator.MAX_CAPTURE_COMBINATIONS).
JQ_CAPTURE_CAP = 64
#: The JQ source file that must exist under the source root, and the generator Dump.java drives.
JQ_MARKER = Path("com/zangjiuqi/core/BoardState.java")
JQ_GENERATOR = Path("com/zangjiuqi/ai/AiMoveGenerator.java")
#: JQ's result reasons (BoardState.finishFromRulesIfNeeded / recordCurrentPosition) in our END_REASON_NAMES.
JQ_REASONS = {"少于4枚": "too_few_stones", "无合法着法": "no_move", "重复局面": "repetition"}
ONGOING = "ongoing"
MAX_EXAMPLES = 5


class CrossCheckError(RuntimeError):
    """A problem that stops the run: missing tools, wrong --jq, a JQ move that cannot be applied, a desync."""


# ------------------------------------------------------------------ our side: the turns of a position
@dataclass
class Turn:
    """One complete turn of our kernel, identified by the board it leaves.

    ``actions`` is one decision sequence that plays it (the first the search found).  ``capped`` says that
    every way to it takes its square captures from more than JQ_CAPTURE_CAP sets; ``short`` that every way
    owes more square captures than the enemy has stones (our kernel takes them all; JQ lists no capture set).
    ``returned`` says that some way to it is a jump chain back on its starting point that captures by
    squares there (``square_on_return``): kept only to report how often the rule was exercised.
    """

    board: str
    result: str
    actions: tuple[int, ...]
    capped: bool
    short: bool
    returned: bool


def board_string(s: np.ndarray) -> str:
    """The board as P digits (0 empty, 1 white, 2 black), row-major: the form Dump.java prints."""
    p = int(s[K.H_P])
    return "".join(map(str, s[K.HDR:K.HDR + p].tolist()))


def result_string(s: np.ndarray) -> str:
    """``ongoing`` or ``winner/reason`` (``black/too_few_stones``, ``draw/repetition``); a turn-limit stop
    counts as ongoing (JQ_Chess has no turn limit)."""
    if s[K.H_PHASE] != K.PH_OVER or s[K.H_END_REASON] == K.END_TURN_LIMIT:
        return ONGOING
    return f"{K.WINNER_NAMES[int(s[K.H_WINNER])]}/{K.END_REASON_NAMES[int(s[K.H_END_REASON])]}"


def _memo_key(s: np.ndarray, capped: bool, short: bool) -> bytes:
    """A decision point within a turn: header and board, less the fields no rule reads.

    The hash ring is left out: it is only written when the next turn starts.  The cap flags are part of
    the key so that a turn reached both with and without a capped capture set keeps ``capped`` false.
    """
    head = s[:K.HDR + int(s[K.H_P])].copy()
    head[K.H_LAST_ACTION] = 0
    head[K.H_DECISIONS] = 0
    return head.tobytes() + bytes((capped, short))


def enumerate_turns(state: np.ndarray) -> dict[str, Turn]:
    """Every complete turn the side to move has, keyed by the board it leaves.

    A depth-first search over the decisions of one turn: a placement is a turn of its own; in the battle
    phase the search goes on until the turn passes to the other side or the game ends.  Decision points
    reached twice (capture choices in another order, chains that meet) are searched once.  ``state`` is
    not changed.
    """
    s0 = np.array(state, dtype=np.int64)
    if s0[K.H_PHASE] == K.PH_OVER:
        return {}
    mover = int(s0[K.H_TO_MOVE])
    enemy = K.opponent(mover)
    placement = s0[K.H_PHASE] == K.PH_PLACEMENT
    buf = np.empty(int(K.stop_action(int(s0[K.H_P]))) + 1, np.int64)
    turns: dict[str, Turn] = {}
    seen: set[bytes] = set()
    stack: list[tuple[np.ndarray, tuple[int, ...], bool, bool, bool]] = [(s0, (), False, False, False)]
    while stack:
        s, actions, capped, short, returned = stack.pop()
        k = K.legal_actions_unchecked(s, buf)
        for a in buf[:k].tolist():
            t = s.copy()
            K.apply_action_unchecked(t, a)
            path = actions + (a,)
            c, sh, ret = capped, short, returned
            if s[K.H_SUB] != K.SUB_CAPTURE and t[K.H_PHASE] == K.PH_BATTLE and t[K.H_SUB] == K.SUB_CAPTURE:
                # The move just came to rest and owes square captures: as many as JQ would ask for
                # (squares at the final point), chosen from the enemy stones left.
                owed = int(K.squares_at(t, int(t[K.H_LAST_TO]), mover))
                left = int(t[K.H_COUNT + enemy])
                c, sh = math.comb(left, owed) > JQ_CAPTURE_CAP, owed > left
                ret = bool(t[K.H_LAST_TO] == t[K.H_ORIGIN])
            if placement or t[K.H_PHASE] == K.PH_OVER or t[K.H_TO_MOVE] != mover:
                board = board_string(t)
                old = turns.get(board)
                if old is None:
                    turns[board] = Turn(board, result_string(t), path, c, sh, ret)
                else:
                    old.capped = old.capped and c
                    old.short = old.short and sh
                    old.returned = old.returned or ret
                continue
            key = _memo_key(t, c, sh) + bytes((ret,))
            if key not in seen:
                seen.add(key)
                stack.append((t, path, c, sh, ret))
    return turns


def coverage(s: np.ndarray, turns: dict[str, Turn]) -> list[str]:
    """Which of the rules §10.6 lists a battle position exercises, so that the report says how often each
    was put to the test (a rule never met cannot show a difference)."""
    mover = int(s[K.H_TO_MOVE])
    enemy = K.opponent(mover)
    n, p_ = int(s[K.H_N]), int(s[K.H_P])
    found = []
    if s[K.H_FLY_NOW]:
        found.append("mover flying (fly_only: flights only)")
    else:
        refused = 0
        for p in range(p_):
            if s[K.HDR + p] != mover:
                continue
            for d in range(4):
                m, q = landing(p, d, 1, n), landing(p, d, 2, n)
                if q >= 0 and s[K.HDR + m] == enemy and s[K.HDR + q] == K.EMPTY:
                    refused += not K.is_legal(s, encode_jump(p, d, p_))
        if s[K.H_BAN_NOW]:
            found.append("single-jump ban at the turn start")
            if refused:
                found.append("a first jump refused by the turn-start ban")
        elif refused:
            found.append("a lone first jump refused by ban_after_capture only")
    if s[K.H_REP_COUNT] == 2:
        found.append("position seen twice (a return draws)")
    if any(t.returned for t in turns.values()):
        found.append("a turn capturing by squares back on its starting point (square_on_return)")
    found.extend(f"a turn ending the game: {t.result}" for t in turns.values() if t.result != ONGOING)
    return sorted(set(found))


# ------------------------------------------------------------------ JQ's side: the oracle process
@dataclass
class JQMove:
    """One whole-turn move of JQ's list: its notation and what playing it gives."""

    notation: str
    board: str
    result: str


@dataclass
class JQPosition:
    """A position as JQ reports it, with its full move list (first move kept per resulting board).

    ``capped_paths`` counts the move paths that JQ lists with exactly JQ_CAPTURE_CAP capture sets: the
    evidence on JQ's side that its cap cut a list short.
    """

    board: str
    phase: str
    to_move: str
    result: str
    moves: dict[str, JQMove]
    listed: int
    capped_paths: int


def jq_result(text: str) -> str:
    """Dump.java's result (``ongoing`` or ``winner|JQ's reason``) in our result_string form."""
    if text == ONGOING:
        return text
    winner, _, reason = text.partition("|")
    for needle, ours in JQ_REASONS.items():
        if needle in reason:
            return f"{winner}/{ours}"
    return f"{winner}/{reason}"


def jq_source_root(path: Path) -> Path:
    """The folder holding ``com/zangjiuqi/...`` for a --jq argument: that folder, its src/main/java, or
    JQJava/src/main/java below it.  Raises CrossCheckError saying what was expected."""
    if not path.exists():
        raise CrossCheckError(f"--jq {path}: no such file or folder (give JQ_Chess's JQJava folder, "
                              f"its src/main/java, or a folder holding {JQ_MARKER.parent.parent})")
    for root in (path, path / "src" / "main" / "java", path / "JQJava" / "src" / "main" / "java"):
        if (root / JQ_MARKER).is_file():
            if not (root / JQ_GENERATOR).is_file():
                raise CrossCheckError(f"--jq {path}: {root / JQ_GENERATOR} is missing (Dump.java drives it)")
            return root
    raise CrossCheckError(f"--jq {path}: no JQ_Chess sources there: expected {JQ_MARKER} in it, "
                          "in its src/main/java or in JQJava/src/main/java")


def compile_oracle(source_root: Path, build: Path) -> None:
    """Compile Dump.java and the JQ classes it reaches (javac -sourcepath) into ``build``."""
    for tool in ("javac", "java"):
        if shutil.which(tool) is None:
            raise CrossCheckError(f"{tool} not found on PATH: the cross-check needs a JDK (17 or newer)")
    cmd = ["javac", "-encoding", "UTF-8", "-nowarn", "-d", str(build), "-sourcepath", str(source_root),
           str(DUMP_JAVA), str(source_root / JQ_GENERATOR)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CrossCheckError(f"javac failed ({' '.join(cmd)}):\n{done.stdout}{done.stderr}")


class JQOracle:
    """One JVM running Dump.java; every game of a run goes through it (NEW, then PLAY per turn)."""

    def __init__(self, build: Path) -> None:
        self._stderr: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._proc = subprocess.Popen(["java", "-XX:+UseSerialGC", "-cp", str(build), "Dump"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                      text=True, encoding="utf-8", bufsize=1)

    def new_game(self) -> JQPosition:
        return self._ask("NEW")

    def play(self, notation: str) -> JQPosition:
        return self._ask(f"PLAY {notation}")

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.write("QUIT\n")
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
        self._stderr.close()

    def __enter__(self) -> JQOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _line(self) -> str:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            raise CrossCheckError(f"the JQ oracle (java Dump) stopped:\n{self._stderr.read()[-4000:]}")
        return line.rstrip("\n")

    def _ask(self, command: str) -> JQPosition:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        first = self._line()
        if first.startswith("ERROR"):
            raise CrossCheckError(f"JQ refused {command!r}: {first[6:]}")
        tag, board, phase, to_move, result = first.split("\t")
        if tag != "POS":
            raise CrossCheckError(f"unexpected line from the JQ oracle: {first!r}")
        moves: dict[str, JQMove] = {}
        listed = 0
        capture_sets: Counter[str] = Counter()
        while True:
            line = self._line()
            parts = line.split("\t")
            if parts[0] == "END":
                break
            if parts[0] == "BADMOVE":
                raise CrossCheckError(f"JQ listed a move it cannot apply in position {board}: {parts[1]} ({parts[2]})")
            if parts[0] != "MOVE":
                raise CrossCheckError(f"unexpected line from the JQ oracle: {line!r}")
            listed += 1
            moves.setdefault(parts[2], JQMove(parts[1], parts[2], jq_result(parts[5])))
            path, square_captures, _ = parts[1].partition(" FC-")
            if square_captures:
                capture_sets[path] += 1
        capped_paths = sum(count == JQ_CAPTURE_CAP for count in capture_sets.values())
        return JQPosition(board, phase, to_move, jq_result(result), moves, listed, capped_paths)


# ------------------------------------------------------------------ comparing and classifying
#: What each kind of difference means (written into the report next to its count).
KIND_TEXT = {
    "cap": "turns only we have, each reached through square captures chosen from more than 64 sets, where "
           "JQ lists a move path with exactly 64 capture sets: JQ's AiMoveGenerator stops at "
           "MAX_CAPTURE_COMBINATIONS = 64 capture sets per move path",
    "short": "turns only we have that owe more square captures than the enemy has stones: our kernel "
             "takes them all (docs/rules.md §9); JQ's collectCaptureCombinations finds no set of that size",
    "ours_only": "other turns only our kernel allows",
    "jq_only": "turns only JQ allows",
    "result": "a turn both allow but whose result (game over, winner, reason) differs",
}


@dataclass
class Difference:
    """One position where the two move sets, or the results of a common turn, differ."""

    game: int
    ply: int
    battle_turn: int
    phase: str
    to_move: str
    board: str
    ours: int
    jq: int
    kinds: list[str]
    only_ours: list[Turn] = field(default_factory=list)
    only_jq: list[JQMove] = field(default_factory=list)
    results: list[tuple[str, str, str]] = field(default_factory=list)  # board, ours, JQ's

    def only_cap(self) -> bool:
        return self.kinds == ["cap"]


def compare(ours: dict[str, Turn], jq: JQPosition) -> tuple[list[str], list[Turn], list[JQMove],
                                                             list[tuple[str, str, str]]]:
    """The kinds of difference between our turns and JQ's list, with the turns and results behind them."""
    only_ours = [ours[b] for b in sorted(ours.keys() - jq.moves.keys())]
    only_jq = [jq.moves[b] for b in sorted(jq.moves.keys() - ours.keys())]
    results = [(b, ours[b].result, jq.moves[b].result) for b in sorted(ours.keys() & jq.moves.keys())
               if ours[b].result != jq.moves[b].result]
    capped = jq.capped_paths > 0  # the cap is only an explanation where JQ shows a list it cut short
    kinds = []
    if capped and any(t.capped for t in only_ours):
        kinds.append("cap")
    if any(t.short and not (capped and t.capped) for t in only_ours):
        kinds.append("short")
    if any(not ((capped and t.capped) or t.short) for t in only_ours):
        kinds.append("ours_only")
    if only_jq:
        kinds.append("jq_only")
    kinds.extend(f"result: ours {o}, JQ {j}" for _, o, j in results)
    return sorted(set(kinds)), only_ours, only_jq, results


@dataclass
class Tally:
    """Counts over a run."""

    games: int = 0
    placement_positions: int = 0
    battle_positions: int = 0
    equal: int = 0
    different: int = 0
    only_cap: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    stops: Counter[str] = field(default_factory=Counter)
    coverage: Counter[str] = field(default_factory=Counter)
    longest_game: int = 0
    our_turns: int = 0
    jq_moves_listed: int = 0
    differences: list[Difference] = field(default_factory=list)


def play_game(game: int, seed: int, rules: Rules, jq: JQOracle, tally: Tally) -> None:
    """Play one seeded random game on both engines, comparing every position on the way."""
    rng = random.Random(f"jqchess-crosscheck/{seed}/{game}")
    s = rules.new_state()
    pos = jq.new_game()
    ply = 0
    while True:
        if pos.board != board_string(s):
            raise CrossCheckError(f"game {game} ply {ply}: the engines' boards drifted apart:\n"
                                  f"ours {board_string(s)}\nJQ   {pos.board}")
        if pos.result != ONGOING:
            tally.stops["over on both sides" if s[K.H_PHASE] == K.PH_OVER else "JQ over only"] += 1
            break
        if s[K.H_PHASE] == K.PH_OVER:
            tally.stops["turn limit (JQ has none)" if s[K.H_TRUNC] else "over for us only"] += 1
            break
        ours = enumerate_turns(s)
        placement = s[K.H_PHASE] == K.PH_PLACEMENT
        if placement:
            tally.placement_positions += 1
        else:
            tally.battle_positions += 1
            tally.coverage.update(coverage(s, ours))
        tally.our_turns += len(ours)
        tally.jq_moves_listed += pos.listed
        kinds, only_ours, only_jq, results = compare(ours, pos)
        if kinds:
            diff = Difference(game, ply, int(s[K.H_TURNS]), "placement" if placement else "battle",
                              K.COLOUR_NAMES[int(s[K.H_TO_MOVE])], pos.board, len(ours), len(pos.moves),
                              kinds, only_ours, only_jq, results)
            tally.different += 1
            tally.only_cap += diff.only_cap()
            tally.kinds.update(kinds)
            tally.differences.append(diff)
        else:
            tally.equal += 1
        common = sorted(ours.keys() & pos.moves.keys())
        if not common:
            tally.stops["no common turn"] += 1
            break
        board = rng.choice(sorted(ours))
        if board not in pos.moves:
            board = rng.choice(common)
        for a in ours[board].actions:
            K.apply_action(s, a)
        pos = jq.play(pos.moves[board].notation)
        ply += 1
        if result_string(s) != pos.result:
            tally.stops[f"results differ (ours {result_string(s)}, JQ {pos.result})"] += 1
            break
    tally.longest_game = max(tally.longest_game, int(s[K.H_TURNS]))
    tally.games += 1


# ------------------------------------------------------------------ the report
def jq_to_ours(notation: str) -> str:
    """A JQ move with its points renamed ours: JQ's "C5" is rank C (our row c), file 5 (our column 4)."""
    def rename(token: str) -> str:
        return ",".join(t[0].lower() + str(int(t[1:]) - 1) for t in token.split(","))
    parts = notation.split()
    out = [rename(parts[0])] + [p[:3] + rename(p[3:]) for p in parts[1:]]
    return " ".join(out)


def changes(before: str, after: str) -> str:
    """What a turn did to the board, point by point ("d3 W>." = the white stone on d3 left)."""
    sign = {"0": ".", "1": "W", "2": "B"}
    return " ".join(f"{point_to_str(i, 8)} {sign[x]}>{sign[y]}" for i, (x, y) in enumerate(zip(before, after)) if x != y)


def diagram(board: str, n: int = 8) -> str:
    """The board as n rows (W white, B black, . empty) with our row letters and column digits."""
    sign = {"0": ".", "1": "W", "2": "B"}
    rows = ["   " + " ".join(COLS[:n])]
    for r in range(n):
        rows.append(ROWS[r] + "  " + " ".join(sign[c] for c in board[r * n:(r + 1) * n]))
    return "\n".join(rows)


def difference_record(d: Difference, limit: int = 12) -> dict[str, Any]:
    """A difference as JSON: the position and (at most ``limit`` of) the turns on each side."""
    return {
        "game": d.game, "ply": d.ply, "battle_turn": d.battle_turn, "phase": d.phase, "to_move": d.to_move,
        "board": d.board, "our_turns": d.ours, "jq_turns": d.jq, "kinds": d.kinds,
        "only_ours": [{"actions": " ".join(action_to_str(a, 8) for a in t.actions),
                       "changes": changes(d.board, t.board), "capped": t.capped, "short": t.short}
                      for t in d.only_ours[:limit]],
        "only_ours_count": len(d.only_ours),
        "only_jq": [{"jq": m.notation, "as_ours": jq_to_ours(m.notation), "changes": changes(d.board, m.board)}
                    for m in d.only_jq[:limit]],
        "only_jq_count": len(d.only_jq),
        "results": [{"changes": changes(d.board, b), "ours": o, "jq": j} for b, o, j in d.results[:limit]],
    }


def kind_name(kind: str) -> str:
    return "result" if kind.startswith("result") else kind


def write_report(out: Path, command: str, wall: float, args: argparse.Namespace, tally: Tally) -> None:
    """results.md (the summary a person reads) and results.json (counts and example differences)."""
    out.mkdir(parents=True, exist_ok=True)
    compared = tally.placement_positions + tally.battle_positions
    summary = {
        "command": command, "wall_seconds": round(wall, 1), "games": tally.games, "seed": args.seed,
        "positions_compared": compared, "placement_positions": tally.placement_positions,
        "battle_positions": tally.battle_positions, "equal": tally.equal, "different": tally.different,
        "different_only_because_of_cap": tally.only_cap, "kinds": dict(sorted(tally.kinds.items())),
        "game_stops": dict(sorted(tally.stops.items())), "coverage": dict(sorted(tally.coverage.items())),
        "longest_game_battle_turns": tally.longest_game,
        "our_turns_enumerated": tally.our_turns, "jq_moves_listed": tally.jq_moves_listed,
    }
    examples: dict[str, list[Difference]] = {}
    for d in tally.differences:
        for kind in d.kinds:
            bucket = examples.setdefault(kind, [])
            if len(bucket) < MAX_EXAMPLES:
                bucket.append(d)
    payload = {"summary": summary,
               "examples": {kind: [difference_record(d) for d in ds] for kind, ds in sorted(examples.items())},
               "non_cap_differences": [{"game": d.game, "ply": d.ply, "kinds": d.kinds}
                                       for d in tally.differences if not d.only_cap()][:2000]}
    (out / "results.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    lines = [
        "# jqchess8 against JQ_Chess: legal whole turns, position by position", "",
        "```", command, "```", "",
        f"Wall time {wall:.0f} s.  Written by benchmarks/jqchess_crosscheck.py; results.json holds the same "
        "counts and example positions.", "",
        "| | count |", "|---|---|",
        f"| games | {tally.games} |",
        f"| positions compared | {compared} ({tally.placement_positions} placement, "
        f"{tally.battle_positions} battle) |",
        f"| equal (same turns, same results) | {tally.equal} |",
        f"| different | {tally.different} |",
        f"| different only because of JQ's 64-set capture cap | {tally.only_cap} |",
        f"| different for any other reason | {tally.different - tally.only_cap} |",
        f"| our turns enumerated / JQ moves listed | {tally.our_turns} / {tally.jq_moves_listed} |",
        f"| longest game (battle turns) | {tally.longest_game} |", "",
        "## Kinds of difference (positions; a position can show several)", "",
        "| kind | positions | meaning |", "|---|---|---|",
    ]
    for kind, count in sorted(tally.kinds.items()):
        lines.append(f"| {kind} | {count} | {KIND_TEXT[kind_name(kind)]} |")
    if not tally.kinds:
        lines.append("| (none) | 0 | |")
    lines += ["", "## How the games ended", "", "| stop | games |", "|---|---|"]
    lines += [f"| {stop} | {count} |" for stop, count in sorted(tally.stops.items())]
    lines += ["", "## What the battle positions exercised", "",
              "Battle positions compared in which ... (each counted once per position):", "",
              "| feature | positions |", "|---|---|"]
    lines += [f"| {feature} | {count} |" for feature, count in sorted(tally.coverage.items())]
    lines += ["", "## Examples", ""]
    if not examples:
        lines.append("None: every position compared was equal.")
    for kind, ds in sorted(examples.items()):
        lines += [f"### {kind}", ""]
        for d in ds:
            rec = difference_record(d, limit=6)
            lines += [f"Game {d.game}, ply {d.ply} (battle turn {d.battle_turn}), {d.to_move} to move; "
                      f"{d.ours} turns ours, {d.jq} JQ's; kinds {', '.join(d.kinds)}.", "", "```",
                      diagram(d.board), "```", ""]
            for t in rec["only_ours"]:
                lines.append(f"- only ours: `{t['actions']}` ({t['changes']})"
                             + (" [capped]" if t["capped"] else "") + (" [short]" if t["short"] else ""))
            if rec["only_ours_count"] > len(rec["only_ours"]):
                lines.append(f"- ... {rec['only_ours_count'] - len(rec['only_ours'])} more only ours")
            for m in rec["only_jq"]:
                lines.append(f"- only JQ: `{m['jq']}` = `{m['as_ours']}` ({m['changes']})")
            if rec["only_jq_count"] > len(rec["only_jq"]):
                lines.append(f"- ... {rec['only_jq_count'] - len(rec['only_jq'])} more only JQ's")
            for r in rec["results"]:
                lines.append(f"- result differs for ({r['changes']}): ours {r['ours']}, JQ {r['jq']}")
            lines.append("")
    (out / "results.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ command line
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jq", type=Path, required=True,
                        help="JQ_Chess's Java sources: the JQJava folder, its src/main/java, or a folder holding "
                             "com/zangjiuqi/...")
    parser.add_argument("--games", type=int, default=200, help="random games to play (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random games (default 0)")
    parser.add_argument("--out", type=Path, required=True, help="folder for results.md and results.json")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, not {args.games}")
    return args


@dataclass
class Progress:
    """A line on stderr every few games, so that a long run shows it is alive."""

    every: int
    start: float = field(default_factory=time.perf_counter)

    def games(self, total: int) -> Iterator[int]:
        for g in range(total):
            yield g
            if (g + 1) % self.every == 0 or g + 1 == total:
                print(f"{g + 1}/{total} games, {time.perf_counter() - self.start:.0f} s", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python benchmarks/jqchess_crosscheck.py " + " ".join(
        sys.argv[1:] if argv is None else list(argv))
    try:
        source_root = jq_source_root(args.jq)
        start = time.perf_counter()
        rules = Rules.make("jqchess8")
        tally = Tally()
        with tempfile.TemporaryDirectory(prefix="jqchess-crosscheck-") as build:
            compile_oracle(source_root, Path(build))
            with JQOracle(Path(build)) as jq:
                for game in Progress(every=10).games(args.games):
                    play_game(game, args.seed, rules, jq, tally)
        wall = time.perf_counter() - start
    except CrossCheckError as exc:
        print(f"jqchess_crosscheck: error: {exc}", file=sys.stderr)
        return 2
    write_report(args.out, command, wall, args, tally)
    print(f"{tally.games} games, {tally.placement_positions + tally.battle_positions} positions: "
          f"{tally.equal} equal, {tally.different} different ({tally.only_cap} only because of the cap); "
          f"{wall:.0f} s; report in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
