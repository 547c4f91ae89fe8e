"""Tournaments between any players: scheduling, parallel seeded games, resumable result files.

A tournament plays ``games`` games for every pair of players (round robin) or
for every pair of a challenger with another player (gauntlet).  Colours
alternate inside a pair: game ``2k`` has the pair's first player as White and
game ``2k + 1`` swaps colours with the same game seed, so that both players
get the same openings and bot seeds from both sides.

Every game gets a seed derived from the tournament seed, the pair's names and
the game number (adding a player does not change the other pairs' games).  The
seed fixes the random opening placements (``random_opening``) and the players'
own seeds, so a tournament is reproducible whatever the number of workers.
With an opening suite (``openings``, :mod:`jiu_env.evaluation.openings`) game
pair ``k`` of every pair of players starts from opening ``k`` (cycling through
the suite), played once with each colour.  ``tc`` gives every player that
takes a time budget (a built-in bot with a ``time`` parameter) that budget.

With an output folder each finished game is appended as one JSON line to
``games.jsonl`` (with its full :mod:`jiu_env.records` record); running the
same tournament again skips the games already there.  A stored game is reused
only if its players' specs and code versions, rules, seed and opening
setting are those of the current configuration.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import warnings
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..bots import REGISTRY
from ..fileio import JSONTooDeep, atomic_write_text, dumps_json, loads_json
from ..rules import Rules
from ..game import play_game
from ..players import make_player, player_version

GAMES_FILE: str = "games.jsonl"
LOCK_FILE: str = ".lock"  # held by the run that writes the directory (lock_out_dir)
#: Upper bounds of the counts of a tournament, checked before any work (a schedule is built in memory).
MAX_GAMES_PER_PAIR: int = 1_000_000
MAX_SCHEDULED_GAMES: int = 1_000_000
MAX_RANDOM_OPENING: int = 100_000
MAX_BOOTSTRAP_SAMPLES: int = 100_000
MAX_WORKERS: int = 4096
CONFIG_FILE: str = "tournament.json"
STALE_FILE: str = "games.stale.jsonl"
MODES: tuple[str, ...] = ("round_robin", "gauntlet")
# settings of a config file that say where the games run, not which games: kept out of
# the tournament's definition (and its results), in ``TournamentConfig.execution``
EXECUTION_KEYS: tuple[str, ...] = ("backend", "address", "workers")


@dataclass
class Player:
    """A named player of a tournament: ``spec`` as accepted by :func:`make_player`."""

    name: str
    spec: str


@dataclass
class TournamentConfig:
    """Everything that defines a tournament (see ``docs/evaluation.md``).

    ``anchor``: ``"auto"`` rates the player whose spec is ``random`` at 0 if
    there is one (and it is rated), else the mean rating is 0; or a player
    name; or ``"mean"``.  ``intervals``: ``"fisher"`` or ``"bootstrap"``.
    ``unrated``: players that play (and appear in the tables) but are left out
    of the Elo fit, e.g. a reference player that loses every game.
    ``sprt``: ``{"elo0", "elo1", "alpha", "beta"}`` (alpha and beta default to
    0.05) to stop the match of exactly two players as soon as a sequential
    probability ratio test on colour-swapped game pairs decides (see
    :mod:`jiu_env.evaluation.sprt`); ``games`` is then the most games played.
    ``openings``: an opening suite (a file, a shipped suite's name such as
    ``"jiu14"``, or a list of openings; see
    :mod:`jiu_env.evaluation.openings`), checked against the rules and kept
    as ``{"source", "board_size", "openings"}``; game pair ``k`` of every pair of players
    starts from opening ``k`` modulo the suite's size, once with each colour.
    It cannot be combined with ``random_opening``.  ``tc``: seconds per turn
    given as ``time=`` to every player that takes a time budget
    (:func:`timed_spec`); the others are listed by :meth:`untimed`.
    """

    players: list[Player]
    games: int = 2
    rules: dict[str, Any] = field(default_factory=lambda: Rules.make("competitive").to_dict())
    seed: int = 0
    mode: str = "round_robin"
    challengers: list[str] = field(default_factory=list)
    random_opening: int = 0
    anchor: str = "auto"
    prior_draws: float = 2.0
    intervals: str = "fisher"
    bootstrap_samples: int = 500
    confidence: float = 0.95
    title: str = "Jiu tournament"
    unrated: list[str] = field(default_factory=list)
    sprt: dict[str, float] | None = None
    openings: Any = None
    tc: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.players, (str, bytes, dict, Player)) or not isinstance(self.players, (list, tuple)):
            raise TypeError(f"players must be a list of player specs (e.g. ['random', 'greedy']), "
                            f"not {type(self.players).__name__} {self.players!r}")
        self.players = [p if isinstance(p, Player) else _player_from(p) for p in self.players]
        self.rules = Rules.make(self.rules).to_dict()
        names = [p.name for p in self.players]
        if len(names) < 2:
            raise ValueError("a tournament needs at least two players")
        for nm in names:
            if not nm or any(ch in nm for ch in "|\n\r\t"):
                raise ValueError(f"player name {nm!r} must be non-empty and contain no '|' or line breaks")
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise ValueError(f"player names must be unique; repeated: {', '.join(dup)} (give them a name=)")
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games per pair must be a positive int, not {self.games!r}")
        if self.games > MAX_GAMES_PER_PAIR:
            raise ValueError(f"games per pair must be at most {MAX_GAMES_PER_PAIR:,}, not {self.games:,}")
        if not isinstance(self.mode, str) or self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        self.challengers = _name_list("challengers", self.challengers)
        if self.mode == "gauntlet":
            if not self.challengers:
                raise ValueError("a gauntlet needs challengers (the players that meet every other player)")
            bad = [c for c in self.challengers if c not in names]
            if bad:
                raise ValueError(f"unknown challenger(s) {', '.join(bad)}; players are {', '.join(names)}")
        if not isinstance(self.anchor, str):
            raise TypeError(f"anchor must be a string ('auto', 'mean' or a player name), not {self.anchor!r}")
        if self.anchor not in ("auto", "mean") and self.anchor not in names:
            raise ValueError(f"anchor {self.anchor!r} must be 'auto', 'mean' or a player name")
        self.unrated = _name_list("unrated", self.unrated)
        bad = [u for u in self.unrated if u not in names]
        if bad:
            raise ValueError(f"unknown unrated player(s) {', '.join(bad)}; players are {', '.join(names)}")
        if self.anchor in self.unrated:
            raise ValueError(f"the anchor {self.anchor!r} cannot be unrated")
        if len(names) - len(self.unrated) < 2 and self.unrated:
            raise ValueError("at least two players must be rated")
        if not isinstance(self.intervals, str) or self.intervals not in ("fisher", "bootstrap"):
            raise ValueError(f"intervals must be 'fisher' or 'bootstrap', not {self.intervals!r}")
        self._check_settings()
        self._check_sprt()
        self._check_openings()
        self._check_tc()

    def _check_openings(self) -> None:
        """Read and check the opening suite (every opening legal under the rules); keep it as a dict."""
        self._suite = None
        if self.openings is None:
            return
        from .openings import load_suite

        if self.random_opening:
            raise ValueError(f"random_opening ({self.random_opening}) and openings cannot be combined: "
                             "choose random placements or an opening suite")
        self._suite = load_suite(self.openings, self.rules)
        self.openings = self._suite.to_config(int(self.rules["board_size"]))

    def opening_of(self, game: int) -> dict[str, Any] | None:
        """The opening of game ``game`` of every pair (``None`` without a suite): game pair ``game // 2``
        takes the suite's openings in order, cycling."""
        if self.openings is None:
            return None
        ops = self.openings["openings"]
        k = (game // 2) % len(ops)
        return {"index": k, **ops[k]}

    def _check_tc(self) -> None:
        """Work out each player's spec as played: a model that learned the battle only gets random placement
        (:func:`jiu_env.players.whole_game_spec`), then the time control (checked here) its ``time=``."""
        from ..players import whole_game_spec

        self._played = {p.name: whole_game_spec(p.spec) for p in self.players}
        self._battle_only = [p.name for p in self.players if self._played[p.name] != p.spec]
        self._untimed: list[str] = []
        if self.tc is None:
            return
        from ..bots.base import MAX_SECONDS

        _check_real_setting("tc", self.tc)
        if not 0 < self.tc <= MAX_SECONDS:
            raise ValueError(f"tc must be seconds per turn, > 0 and <= {MAX_SECONDS:g}, not {self.tc!r}")
        self.tc = float(self.tc)
        for p in self.players:
            timed = timed_spec(self._played[p.name], self.tc)
            if timed is None:
                self._untimed.append(p.name)
            else:
                self._played[p.name] = timed

    def played_spec(self, name: str) -> str:
        """The spec the player is built from: its spec, with random placement for a model that learned the
        battle only (:meth:`battle_only`) and the time control's ``time=`` where it takes one."""
        return self._played[name]

    def battle_only(self) -> list[str]:
        """The players whose ``sb3:`` model declares that it learned the battle only: they play from random
        placements, ``phases:random+sb3:PATH`` (:meth:`played_spec`; a ``phases:`` spec is played as given)."""
        return list(self._battle_only)

    def untimed(self) -> list[str]:
        """The players that take no time budget, so that ``tc`` does not reach them (empty without ``tc``)."""
        return list(self._untimed)

    def _check_sprt(self):
        """The SPRT settings: exactly two players, an even number of games (whole colour-swapped pairs)."""
        if self.sprt is None:
            return
        from .sprt import check_settings

        if not isinstance(self.sprt, dict):
            raise TypeError(f"sprt must be a table with elo0, elo1 (and alpha, beta), not {self.sprt!r}")
        unknown = sorted(set(self.sprt) - {"elo0", "elo1", "alpha", "beta"})
        if unknown or "elo0" not in self.sprt or "elo1" not in self.sprt:
            raise ValueError(f"sprt needs elo0 and elo1 (and optionally alpha, beta), got {sorted(self.sprt)}")
        self.sprt = check_settings(**{"alpha": 0.05, "beta": 0.05, **self.sprt})
        if len(self.players) != 2:
            raise ValueError(f"SPRT needs exactly two players (A against B), not {len(self.players)}: "
                             f"{', '.join(self.names)}")
        if self.games % 2:
            raise ValueError(f"with SPRT the games are played in colour-swapped pairs: games must be even, "
                             f"not {self.games}")

    def _check_settings(self):
        """Type and range of the scalar settings: every mistake is found before the first game."""
        _check_int_setting("seed", self.seed, 0)
        _check_int_setting("random_opening", self.random_opening, 0, MAX_RANDOM_OPENING)
        _check_int_setting("bootstrap_samples", self.bootstrap_samples, 2, MAX_BOOTSTRAP_SAMPLES)
        total = len(self.pairs()) * self.games
        if total > MAX_SCHEDULED_GAMES:
            raise ValueError(f"the tournament would schedule {total:,} games ({len(self.pairs())} pairs x "
                             f"{self.games:,}); at most {MAX_SCHEDULED_GAMES:,} are allowed: fewer games per "
                             "pair or fewer players")
        _check_real_setting("prior_draws", self.prior_draws)
        if self.prior_draws < 0:
            raise ValueError(f"prior_draws must be >= 0, not {self.prior_draws!r}")
        _check_real_setting("confidence", self.confidence)
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be between 0 and 1 (exclusive), not {self.confidence!r}")
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a string, not {type(self.title).__name__}")
        # plain Python numbers from here on (tournament.json, seeds)
        self.seed, self.random_opening = int(self.seed), int(self.random_opening)
        self.bootstrap_samples = int(self.bootstrap_samples)
        self.prior_draws, self.confidence = float(self.prior_draws), float(self.confidence)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.players]

    def spec_of(self, name: str) -> str:
        return next(p.spec for p in self.players if p.name == name)

    def rules_obj(self) -> Rules:
        return Rules.make(self.rules)

    def anchor_name(self) -> str:
        """The rating anchor actually used: a player name or ``"mean"``."""
        if self.anchor != "auto":
            return self.anchor
        for p in self.players:
            if p.spec.strip() == "random" and p.name not in self.unrated:
                return p.name
        return "mean"

    def rated_names(self) -> list[str]:
        """The players in the Elo fit."""
        return [n for n in self.names if n not in self.unrated]

    def pairs(self) -> list[tuple[str, str]]:
        """The pairs that meet, in schedule order."""
        names = self.names
        if self.mode == "round_robin":
            return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        out = []
        for c in self.challengers:
            for other in names:
                if other != c and (other, c) not in out:
                    out.append((c, other))
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["players"] = [asdict(p) for p in self.players]
        for key in ("sprt", "openings", "tc"):
            if d[key] is None:  # a tournament without them keeps the dict it always had
                del d[key]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TournamentConfig:
        """A config from a dict (e.g. a parsed TOML/JSON file); unknown keys are errors.

        ``backend``, ``address`` and ``workers`` (where the games run) go to
        the config's ``execution`` dict, the defaults of :func:`run_tournament`.
        """
        if not isinstance(d, dict):
            raise TypeError(f"a tournament config is a table of settings, not {type(d).__name__}")
        d = dict(d)
        if "games_per_pair" in d and "games" in d:
            raise ValueError("give either games or games_per_pair, not both")
        execution = {k: d.pop(k) for k in EXECUTION_KEYS if k in d}
        optional = _name_list("optional", d.pop("optional", []))
        if "games_per_pair" in d:
            d["games"] = d.pop("games_per_pair")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - known)
        if unknown:
            valid = ", ".join(sorted(known | {"optional"}))
            raise ValueError(f"unknown tournament setting(s) {', '.join(unknown)}; valid: {valid}")
        rules = d.get("rules", "competitive")
        if isinstance(rules, dict):
            rules = dict(rules)
        d["rules"] = Rules.make(rules).to_dict()
        left_out = _leave_out_unavailable(d, optional) if optional else {}
        cfg = cls(**d)
        # Attributes, not dataclass fields: where the games run is no part of the tournament's definition, and
        # the players left out are not in it.
        setattr(cfg, "execution", execution)
        setattr(cfg, "left_out", left_out)
        return cfg


def timed_spec(spec: str, seconds: float) -> str | None:
    """``spec`` with the time budget ``time=seconds``; ``None`` for a player that takes no time budget.

    A built-in bot with a ``time`` parameter (``alphabeta``, ``mcts``,
    ``alphazero``) gets ``time=seconds`` added to its parameters (its other
    limits, such as ``depth`` or ``sims``, still apply); ``mix:P:SPEC`` and
    ``phases:A+B`` pass it to the players inside.  A spec that already sets
    another ``time`` is refused with a ValueError naming it.
    """
    from ..bots import bot_class, parse_spec

    s = spec.strip()
    prefix, sep, rest = s.partition(":")
    if prefix == "mix" and sep:
        prob, sep2, inner = rest.partition(":")
        t = timed_spec(inner, seconds) if sep2 else None
        return None if t is None else f"mix:{prob}:{t}"
    if prefix == "phases" and sep:
        place, plus, battle = rest.partition("+")
        if not plus:
            return None
        tp, tb = timed_spec(place, seconds), timed_spec(battle, seconds)
        if tp is None and tb is None:
            return None
        return f"phases:{tp or place.strip()}+{tb or battle.strip()}"
    if prefix not in REGISTRY or "time" not in getattr(bot_class(prefix), "PARAMS", {}):
        return None
    text = repr(float(seconds))
    if rest.strip() and "=" not in rest:  # alphazero:PATH, a checkpoint file
        path = rest.strip()
        return None if "," in path else f"{prefix}:checkpoint={path},time={text}"
    params = parse_spec(s)[1]
    if "time" in params:
        given = params["time"]
        if isinstance(given, bool) or not isinstance(given, (int, float)) or float(given) != float(seconds):
            raise ValueError(f"player {spec!r} sets time={given}, and the tournament's time control (tc) is "
                             f"{seconds:g} s: remove one of them")
        return s
    return f"{s}{',' if rest.strip() else ':'}time={text}"


def _check_int_setting(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {lo}, not {type(value).__name__} {value!r}")
    if value < lo:
        raise ValueError(f"{name} must be an int >= {lo}, not {value!r}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be an int from {lo} to {hi:,}, not {value:,}")


def _check_real_setting(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")


def _name_list(key, value):
    """A list of player names from a name or a list of names."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key} must be a list of player names, not {value!r}")
    return list(value)


def _player_from(p):
    if isinstance(p, str):
        # "NAME=SPEC" names a player; a spec's own "key=value" parameters come after a ':'
        name, eq, spec = p.partition("=")
        if eq and name.strip() and ":" not in name:
            return Player(name=name.strip(), spec=spec.strip())
        return Player(name=p, spec=p)
    if isinstance(p, dict):
        extra = sorted(set(p) - {"name", "spec"})
        if extra or "spec" not in p:
            raise ValueError(f"a player entry needs 'spec' (and optionally 'name'), got {p!r}")
        if not isinstance(p["spec"], str) or not isinstance(p.get("name", ""), str):
            raise TypeError(f"a player entry's 'spec' and 'name' are strings, got {p!r}")
        return Player(name=str(p.get("name") or p["spec"]), spec=str(p["spec"]))
    raise TypeError(f"a player is a spec string, a dict or a Player, not {type(p).__name__}")


def _leave_out_unavailable(d: dict[str, Any], optional: list[str]) -> dict[str, str]:
    """Take the ``optional`` players that cannot be built here out of the config dict ``d`` (its players,
    unrated and challengers); return why, by name.

    A player cannot be built when a file it names is missing (FileNotFoundError) or a package it needs is
    not installed (ImportError); any other error of its spec is raised, as for every player.
    """
    players = d.get("players")
    if not isinstance(players, (list, tuple)):
        return {}  # the config's own check names the mistake
    entries = [(p, p if isinstance(p, Player) else _player_from(p)) for p in players]
    names = [pl.name for _, pl in entries]
    bad = [o for o in optional if o not in names]
    if bad:
        raise ValueError(f"unknown optional player(s) {', '.join(bad)}; players are {', '.join(names)}")
    if d.get("anchor") in optional:
        raise ValueError(f"the anchor {d['anchor']!r} cannot be optional")
    why = {}
    for _, pl in entries:
        if pl.name in optional:
            try:
                make_player(pl.spec, seed=0)
            except (FileNotFoundError, ImportError) as e:
                why[pl.name] = str(e)
    if why:
        d["players"] = [raw for raw, pl in entries if pl.name not in why]
        for key in ("unrated", "challengers"):
            if key in d:
                d[key] = [n for n in _name_list(key, d[key]) if n not in why]
    return why


#: The folder of the tournament configs shipped with the package: ``--config NAME`` / ``load_config(NAME)``
#: reads ``NAME.toml`` from it when there is no file ``NAME`` in the current directory.
SHIPPED_CONFIG_DIR: tuple[str, ...] = ("data", "ladders")


def shipped_configs() -> dict[str, str]:
    """The tournament configs shipped with the package (the baseline ladders): name -> file."""
    from importlib.resources import files

    folder = files("jiu_env").joinpath(*SHIPPED_CONFIG_DIR)
    if not folder.is_dir():
        return {}
    return {e.name[:-len(".toml")]: str(e) for e in sorted(folder.iterdir(), key=lambda e: e.name)
            if e.name.endswith(".toml") and e.is_file()}


def config_file(path: str | os.PathLike[str]) -> str:
    """The file ``--config PATH`` reads: ``PATH`` itself when it exists; else, for a bare name (no folder,
    ``.toml`` optional) such as ``ladder``, the config of that name shipped with the package
    (:func:`shipped_configs`).  Otherwise FileNotFoundError, listing the shipped names."""
    path = os.fspath(path)
    if os.path.exists(path):
        return path
    shipped = shipped_configs()
    stem = path[:-len(".toml")] if path.endswith(".toml") else path
    if stem in shipped and os.path.basename(path) == path:
        return shipped[stem]
    base = os.path.basename(stem)
    hint = f" (--config {base} reads the shipped {base}.toml)" if base in shipped else ""
    listing = ", ".join(shipped) or "none"
    raise FileNotFoundError(f"No such file: {path!r}{hint}; the configs shipped with jiu_env, read by name "
                            f"(--config NAME): {listing}")


def load_config(path: str | os.PathLike[str]) -> TournamentConfig:
    """A :class:`TournamentConfig` from a TOML or JSON file, or the name of a shipped config (``"ladder"``,
    :func:`config_file`).

    An ``openings`` file named relative to the config is looked up in its folder first; the files its
    players name (models, checkpoints) are relative to the current directory.  ``optional = [NAME, ...]``
    names players left out when they cannot be built here (a file they name is missing, a package they need is
    not installed): the config's ``left_out`` attribute says which and why, and ``jiu eval`` prints it.
    """
    path = config_file(path)
    shipped = path in shipped_configs().values()
    with open(path, "rb") as f:
        raw = f.read()
    if str(path).lower().endswith(".json"):
        d = json.loads(raw.decode("utf-8"))
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:
            try:
                import tomli as tomllib
            except ModuleNotFoundError:
                raise ImportError("reading TOML on Python 3.10 needs 'tomli' (pip install tomli), or use a JSON config") from None
        d = tomllib.loads(raw.decode("utf-8"))
    suite = d.get("openings") if isinstance(d, dict) else None
    if isinstance(suite, str) and suite.strip() and not os.path.isabs(suite):
        # a suite file named in a config file is looked up next to the config file first
        beside = os.path.join(os.path.dirname(os.fspath(path)), suite)
        if os.path.isfile(beside):
            d["openings"] = beside
    cfg = TournamentConfig.from_dict(d)
    left_out = getattr(cfg, "left_out")
    for name, why in left_out.items():
        if shipped and "not found" in why:
            left_out[name] = (f"{why}: a shipped config names files of the jiu_env repository (its baselines/ "
                              "folder) relative to the current directory; run it from the root of a checkout to "
                              "include this player")
    return cfg


# ------------------------------------------------------------------ scheduling
@dataclass
class GameTask:
    """One scheduled game."""

    id: str
    pair: tuple[str, str]
    game: int
    white: str
    black: str
    white_spec: str
    black_spec: str
    seed: int
    white_seed: int
    black_seed: int
    rules: dict[str, Any]
    random_opening: int
    white_version: str = ""
    black_version: str = ""
    opening: dict[str, Any] | None = None  # {"index", "name", "moves"[, "start"]} of an opening suite

    def fingerprint(self) -> str:
        """Hash of everything that decides the game: specs, player code versions, rules, seeds, opening."""
        parts = [self.white_spec, self.black_spec, self.white_version, self.black_version, self.rules,
                 self.seed, self.white_seed, self.black_seed, self.random_opening]
        if self.opening is not None:  # (games without a suite keep the fingerprints they always had)
            parts.append({"moves": self.opening["moves"], "start": self.opening.get("start")})
        key = json.dumps(parts, sort_keys=True)
        return hashlib.sha1(key.encode()).hexdigest()[:16]


def _crc(text):
    return zlib.crc32(text.encode("utf-8"))


def _seed_of(*parts):
    return int(np.random.SeedSequence([int(x) for x in parts]).generate_state(1, np.uint32)[0])


def schedule(config: TournamentConfig, versions: dict[str, str] | None = None) -> list[GameTask]:
    """The list of :class:`GameTask` of a tournament (deterministic).

    ``versions`` maps a spec to its player's code version (see
    :func:`jiu_env.players.player_version`); stored games are only
    reused for the same versions.  The specs are the players' specs under
    the time control (:meth:`TournamentConfig.played_spec`).
    """
    versions = versions or {}
    tasks = []
    for a, b in config.pairs():
        pair_key = _crc(a + "\x00" + b)
        for g in range(config.games):
            seed = _seed_of(config.seed, pair_key, g // 2)
            white, black = (a, b) if g % 2 == 0 else (b, a)
            white_spec, black_spec = config.played_spec(white), config.played_spec(black)
            tasks.append(GameTask(
                id=f"{a}|{b}|{g}", pair=(a, b), game=g, white=white, black=black,
                white_spec=white_spec, black_spec=black_spec, seed=seed,
                white_seed=_seed_of(seed, _crc(white)), black_seed=_seed_of(seed, _crc(black)),
                rules=config.rules, random_opening=config.random_opening,
                white_version=versions.get(white_spec, ""),
                black_version=versions.get(black_spec, ""),
                opening=config.opening_of(g),
            ))
    return tasks


# ------------------------------------------------------------------ one game
def run_game(rules: str | Rules | dict[str, Any], white: Any, black: Any, seed: int = 0, random_opening: int = 0,
             players: Any = None, opening: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one tournament game (the one game loop, :func:`jiu_env.game.play_game`); return a result dict.

    ``random_opening`` placements are drawn at random (seeded by ``seed``)
    before the players decide; the players keep their own seeds.  A player
    returning an illegal action loses the game by forfeit.  The dict holds the
    :class:`GameRecord` under ``record``, the game's
    :class:`~jiu_env.outcome.Outcome` under ``outcome``, ``winner``
    (``"white"``/``"black"``/``"draw"``/``None``), ``score_white`` (1, 1/2
    or 0; truncated games count 1/2), ``end_reason``, lengths and the
    players' total decision times.  A ``games.jsonl`` line holds the same
    keys but ``outcome`` (its JSON form is the line's ``winner``,
    ``end_reason``, ``battle_turns`` and ``decisions``:
    ``Outcome.from_dict(line)`` reads it back).

    ``opening``: an opening of a suite (``{"name", "moves"[, "start"]}``,
    see :mod:`jiu_env.evaluation.openings`) played before the players
    decide; the record holds its moves, and ``decisions`` counts them.
    """
    if opening is not None:
        return _run_from_opening(rules, white, black, seed, players, opening)
    g = play_game(rules, white, black, seed=None, random_opening=random_opening, opening_seed=seed,
                  on_illegal="forfeit", players=players, meta={"random_opening": random_opening})
    return {
        "winner": g.winner,
        "score_white": g.score_white,
        "end_reason": g.end_reason,
        "truncated": g.truncated,
        "battle_turns": g.battle_turns,
        "decisions": g.decisions,
        "time": g.time,
        "moves_by": g.moves_by,
        "record": g.record,
        "outcome": g.outcome,
    }


def _run_from_opening(rules, white, black, seed, players, opening):
    """:func:`run_game` from the position after ``opening``: the players decide from there, and the record
    holds the opening's moves then theirs."""
    from ..notation import str_to_action
    from ..records import GameRecord, result_of
    from .openings import Opening

    r = rules if isinstance(rules, Rules) else Rules.make(rules)
    n = r.board_size
    op = Opening(str(opening["name"]), tuple(str_to_action(m, n) for m in opening["moves"]), opening.get("start"))
    meta = {"random_opening": 0, "opening": op.name, "opening_plies": len(op.actions)}
    g = play_game(r, white, black, seed=None, start=op.state(r), opening_seed=seed, on_illegal="forfeit",
                  players=players)
    record = GameRecord(rules=r, actions=[*op.actions, *(g.actions or [])],
                        start=op.start if op.start is not None else {"from": "placement"},
                        players=dict(players or {}), seed=seed, result=result_of(g.state),
                        meta={**meta, **({"forfeit": g.forfeit} if g.forfeit is not None else {})})
    return {
        "winner": g.winner,
        "score_white": g.score_white,
        "end_reason": g.end_reason,
        "truncated": g.truncated,
        "battle_turns": g.battle_turns,
        "decisions": len(op.actions) + g.decisions,
        "time": g.time,
        "moves_by": g.moves_by,
        "record": record,
        "outcome": g.outcome,
    }


_WARMED: set[tuple[str, str]] = set()  # (spec, repr(rules)) of the bots warmed in this process


def _warm_up(spec, rules):
    """Play one untimed game of a built-in bot against random in this process.

    The first calls of a numba bot load (or compile) its functions; without
    this they would count as decision time of the first game a worker plays.
    """
    key = (spec, repr(rules))
    if key in _WARMED or spec.partition(":")[0] not in REGISTRY:
        return
    _WARMED.add(key)
    run_game(rules, make_player(spec, seed=0), make_player("random", seed=0), seed=0)


def play_task(task: GameTask, build_specs: dict[str, str] | None = None) -> dict[str, Any]:
    """Play a :class:`GameTask` (in any process); return its JSON-able result line.

    ``build_specs`` maps a task's spec to the spec the player is built from
    here (a worker on another machine names its local copy of a model file);
    the result line keeps the task's own specs.
    """
    build_specs = build_specs or {}
    white_build = build_specs.get(task.white_spec, task.white_spec)
    black_build = build_specs.get(task.black_spec, task.black_spec)
    _warm_up(white_build, task.rules)
    _warm_up(black_build, task.rules)
    white = make_player(white_build, seed=task.white_seed)
    black = make_player(black_build, seed=task.black_seed)
    r = run_game(task.rules, white, black, seed=task.seed, random_opening=task.random_opening,
                 players={"white": task.white_spec, "black": task.black_spec}, opening=task.opening)
    rec = r.pop("record")
    del r["outcome"]  # in the line as its JSON spelling: winner, end_reason, battle_turns, decisions
    line = {
        "id": task.id, "pair": list(task.pair), "game": task.game, "white": task.white, "black": task.black,
        "white_spec": task.white_spec, "black_spec": task.black_spec, "seed": task.seed,
        "white_version": task.white_version, "black_version": task.black_version,
        "fingerprint": task.fingerprint(),
    }
    if task.opening is not None:
        line["opening"] = task.opening
    line.update(r)
    line["record"] = rec.to_dict(moves=False)
    return line


# ------------------------------------------------------------------ running
def _scan_games(path):
    """``(line number, raw text, parsed line or None, why not)`` for every non-empty line of a ``games.jsonl``.

    ``why`` is ``"cut"`` for a last line cut short by an interrupted run (no
    line end, not valid JSON), else a description of what is wrong with the
    line (not JSON, JSON nested too deeply to read, not an object, no id).
    """
    with open(path, encoding="utf-8", errors="replace") as f:
        raw_lines = f.read().split("\n")
    last = len(raw_lines) - 1  # the text after the last line end ("" when the file ends with one)
    for i, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw, f"{path} line {i + 1}")
        except JSONTooDeep:
            yield i + 1, raw, None, "JSON nested too deeply to read"
            continue
        except json.JSONDecodeError:
            yield i + 1, raw, None, "cut" if i == last else "not valid JSON"
            continue
        if not isinstance(obj, dict):
            yield i + 1, raw, None, f"a JSON {type(obj).__name__}, not an object"
        elif not isinstance(obj.get("id"), str):
            yield i + 1, raw, None, "an object without a game id"
        else:
            yield i + 1, raw, obj, None


def read_games(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The result lines stored in a ``games.jsonl``.

    Lines that are not JSON objects with a game id (a cut-off last line, a
    damaged line) are skipped; :func:`run_tournament` names them.
    """
    if not os.path.exists(path):
        return []
    return [obj for _, _, obj, _ in _scan_games(path) if obj is not None]


# the fields of a result line that the summary reads
_LINE_KEYS = ("pair", "white", "black", "score_white", "battle_turns", "decisions", "time", "moves_by")


def _usable(line, task):
    """Is a stored line a finished game of ``task`` (same fingerprint, every field the summary needs)?"""
    return (line.get("fingerprint") == task.fingerprint() and all(k in line for k in _LINE_KEYS)
            and line.get("white") == task.white and line.get("black") == task.black
            and line.get("score_white") in (0.0, 0.5, 1.0))


def _load_stored(games_path, by_id, log):
    """The reusable stored games by id, and how many stored lines were not reused.

    Lines of games of this schedule that cannot be reused (another
    fingerprint, a repeated id) and unreadable lines are moved from
    ``games.jsonl`` to ``games.stale.jsonl``, so that ``games.jsonl`` holds one
    line per game id.  Lines of games outside this schedule stay.
    """
    done, keep, move, stale = {}, [], [], 0
    for lineno, raw, obj, why in _scan_games(games_path):
        if obj is None:
            if why != "cut":
                log(f"{games_path} line {lineno} is {why}: skipped (moved to {STALE_FILE})")
            move.append(raw)
            continue
        t = by_id.get(obj["id"])
        if t is None:
            stale += 1
            keep.append(raw)
        elif t.id not in done and _usable(obj, t):
            done[t.id] = obj
            keep.append(raw)
        else:
            stale += 1
            move.append(raw)
    if move:
        folder = os.path.dirname(games_path)
        with open(os.path.join(folder, STALE_FILE), "a", encoding="utf-8") as f:
            f.write("".join(r + "\n" for r in move))
        _write_atomic(games_path, "".join(r + "\n" for r in keep))
    return done, stale


# Replace a file by a text in one step (a kill leaves the old or the new file, never half of one):
# the package's one helper for it, under the name this module has always used.
_write_atomic = atomic_write_text


class TournamentMismatch(ValueError):
    """The output folder holds the games of a tournament with other game settings."""


# the settings that decide every game: stored games of other values are never reused
_GAME_SETTINGS = ("seed", "rules", "random_opening", "openings", "tc")


def _check_same_tournament(out_dir, config, log):
    """Raise :class:`TournamentMismatch` if ``out_dir`` holds games of another seed, rules, opening setting
    (random placements or opening suite) or time control."""
    path = os.path.join(out_dir, CONFIG_FILE)
    games = os.path.join(out_dir, GAMES_FILE)
    if not (os.path.isfile(path) and os.path.isfile(games) and os.path.getsize(games) > 0):
        return
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        if not isinstance(old, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        log(f"{path} cannot be read ({e}); the stored games are checked one by one")
        return
    new = config.to_dict()
    diffs = []
    for key in _GAME_SETTINGS:
        was, now = old.get(key), new.get(key)  # openings and tc are left out of configs without them
        if key == "openings":
            if _suite_key(was) != _suite_key(now):
                diffs.append(f"another opening suite, {_suite_text(was)} (this one: {_suite_text(now)})")
            continue
        if key == "rules":
            try:  # options added since the file was written take their defaults
                was = Rules.make(was).to_dict()
            except (TypeError, ValueError):
                pass
            if not isinstance(was, dict):
                diffs.append(f"rules {was!r}")
                continue
            diffs += [f"rules option {k} {was.get(k)!r} (this one: {now.get(k)!r})"
                      for k in sorted(set(was) | set(now)) if was.get(k) != now.get(k)]
        elif was != now:
            diffs.append(f"{key} {was!r} (this one: {now!r})")
    if diffs:
        raise TournamentMismatch(
            f"{out_dir} holds a tournament with {', '.join(diffs)}; use a new --out folder, "
            f"or --fresh (resume=False) to discard its games")


def _suite_key(suite):
    """What decides the games of an opening suite (config form): the openings' moves and starts, in order."""
    if not isinstance(suite, dict) or not isinstance(suite.get("openings"), list):
        return suite
    return [[o.get("moves"), o.get("start")] if isinstance(o, dict) else o for o in suite["openings"]]


def _suite_text(suite):
    if suite is None:
        return "no opening suite"
    if isinstance(suite, dict) and isinstance(suite.get("openings"), list):
        return f"{suite.get('source')} ({len(suite['openings'])} openings)"
    return repr(suite)


def _check_workers(workers):
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an int >= 1 (or None for all cores), not {workers!r}")
    if workers > MAX_WORKERS:
        raise ValueError(f"workers must be at most {MAX_WORKERS}, not {workers:,}")


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass
class TournamentResult:
    """Games and summary of a finished tournament (see :func:`summarise`)."""

    config: TournamentConfig
    games: list[dict[str, Any]]
    summary: dict[str, Any]
    new_games: int = 0
    out_dir: str | None = None


def run_tournament(config: TournamentConfig, out_dir: str | None = None, workers: int | None = None,
                   resume: bool = True, progress: Any = None, write_reports: bool = True, command: str | None = None,
                   log: Callable[[str], Any] | None = None, backend: str | None = None, address: str | None = None,
                   warm: bool = True) -> TournamentResult:
    """Play the tournament (or its missing games) and summarise it: :func:`_run_tournament`, with
    ``out_dir`` locked for the run.  A second run on the same ``out_dir`` while one is going raises
    :class:`OutDirInUse` instead of rewriting ``games.jsonl`` under the first (which would go on
    appending to a replaced file, and its games would be lost)."""
    if out_dir is None:
        return _run_tournament(config=config, out_dir=out_dir, workers=workers, resume=resume, progress=progress, write_reports=write_reports, command=command, log=log, backend=backend, address=address, warm=warm)
    os.makedirs(out_dir, exist_ok=True)
    with lock_out_dir(out_dir):
        return _run_tournament(config=config, out_dir=out_dir, workers=workers, resume=resume, progress=progress, write_reports=write_reports, command=command, log=log, backend=backend, address=address, warm=warm)


class OutDirInUse(RuntimeError):
    """Another run holds the lock of a tournament's output directory."""


@contextlib.contextmanager
def lock_out_dir(out_dir: str) -> Iterator[None]:
    """Hold an exclusive lock on ``out_dir/.lock`` (POSIX ``flock``; released when the run ends or dies).

    Where ``fcntl`` does not exist (Windows) the directory is not locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(os.path.join(out_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            raise OutDirInUse(f"{out_dir} is in use by another jiu eval run (pid {holder}); wait for it to end or "
                              "use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock


def _run_tournament(config: TournamentConfig, out_dir: str | None = None, workers: int | None = None,
                   resume: bool = True, progress: Any = None, write_reports: bool = True, command: str | None = None,
                   log: Callable[[str], Any] | None = None, backend: str | None = None, address: str | None = None,
                   warm: bool = True) -> TournamentResult:
    """Play the tournament (or its missing games) and summarise it.

    ``workers``: worker processes (default: all cores; 1 plays in this
    process).  ``backend``: ``"local"`` (this machine's cores, the default)
    or ``"ray"`` (Ray actors; ``address`` names a running cluster, else a
    private one is started here; see ``docs/scaling_ray.md``).  Both give the
    same games.  ``workers``, ``backend`` and ``address`` default to the
    config's ``execution`` settings (from its file).
    ``warm``: compile (or load) the bots' numba code in this process before
    the workers start, so that they load it from the cache instead of each
    compiling it.  ``progress``: ``None``, or a callable ``progress(done,
    total, line, scores)`` called after each game (the CLI passes a progress
    bar); if it has a ``note(text)`` method, that gets status lines such as
    the warm-up.
    With ``out_dir`` the games go to ``out_dir/games.jsonl`` (resumable) and
    the reports (JSON, CSV, Markdown, PNG) are written there; ``command`` (the
    command line that regenerates them) is quoted in the Markdown report.
    ``log``: a callable taking a one-line note (skipped lines, workers
    capped); by default the notes are warnings.

    ``out_dir`` may hold an earlier run: its games are reused when they match
    (see ``docs/evaluation.md``).  If it holds games of another seed, rules or
    opening setting, :class:`TournamentMismatch` is raised before any game
    unless ``resume=False``, which discards them.
    """
    from .backends import check_backend, execute

    log = log or _warn
    execution = getattr(config, "execution", None) or {}
    backend = backend or execution.get("backend") or "local"
    address = address if address is not None else execution.get("address")
    workers = workers if workers is not None else execution.get("workers")
    _check_workers(workers)
    check_backend(backend, address)
    # build every player once here: a bad spec or a missing file fails early, and the
    # players' code versions decide which stored games are still valid
    versions = {}
    for p in config.players:
        spec = config.played_spec(p.name)
        if spec not in versions:
            versions[spec] = player_version(make_player(spec, seed=0))
    if config.untimed():
        log(f"the time control ({config.tc:g} s per turn) does not reach {', '.join(config.untimed())}: "
            "they take no time budget")
    tasks = schedule(config, versions)
    by_id = {t.id: t for t in tasks}
    done = {}
    stale = 0
    games_path = None
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        games_path = os.path.join(out_dir, GAMES_FILE)
        if resume:
            _check_same_tournament(out_dir, config, log)
            if os.path.exists(games_path):
                done, stale = _load_stored(games_path, by_id, log)
        elif os.path.exists(games_path):
            os.remove(games_path)
        _write_atomic(os.path.join(out_dir, CONFIG_FILE), json.dumps(config.to_dict(), indent=1))
    watch = _SPRTWatch(config, tasks) if config.sprt is not None else None
    if watch is not None and watch.update(done):
        todo = []  # the stored games already decide the test
    else:
        todo = [t for t in tasks if t.id not in done]
    if workers is not None and todo and workers > len(todo) and backend == "local":
        log(f"{workers} workers asked for {len(todo)} games to play: using {len(todo)}")
    if todo and warm:
        _warm_parent(todo, getattr(progress, "note", None))
    scores = _running_scores(config, done.values())
    n_done = len(done)
    if progress is not None:
        progress(n_done, len(tasks), None, scores)
    fout = None
    if games_path:
        cut = False
        if os.path.exists(games_path) and os.path.getsize(games_path) > 0:
            with open(games_path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                cut = f.read(1) != b"\n"
        fout = open(games_path, "a", encoding="utf-8")
        if cut:
            fout.write("\n")  # a line cut short by an interrupted run stays on its own line
    new = 0
    stream = None
    try:
        stream = execute(todo, workers, backend=backend, address=address, log=log)
        for line in stream:
            done[line["id"]] = line
            new += 1
            if fout is not None:
                fout.write(dumps_json(line, f"game {line['id']}", separators=(",", ":")) + "\n")
                fout.flush()
            _add_score(scores, line)
            if progress is not None:
                progress(len(done), len(tasks), line, scores)
            if watch is not None and watch.update(done):
                break  # the test has decided: the games still running are not waited for
    finally:
        if stream is not None and hasattr(stream, "close"):
            stream.close()  # stops the workers (or actors) of a stream left early
        if fout is not None:
            fout.close()
    if watch is not None and watch.decided:
        used = watch.used_ids()
        games = [done[t.id] for t in tasks if t.id in used]
    else:
        games = [done[t.id] for t in tasks]
    summary = summarise(config, games)
    if watch is not None:
        # games finished by other workers while the deciding pairs were played: stored, not counted
        summary["sprt"]["games_after_decision"] = len(done) - len(games)
    summary["stale_lines_ignored"] = stale
    summary["versions"] = {p.name: versions[config.played_spec(p.name)] for p in config.players}
    result = TournamentResult(config, games, summary, new_games=new, out_dir=out_dir)
    if out_dir is not None and write_reports:
        from .report import write_reports as _write

        _write(result, out_dir, command=command)
    return result


def _warn(msg):
    warnings.warn(msg, stacklevel=3)


def _warm_parent(todo, note=None):
    """Compile (or load) the numba code of the built-in bots the games use, once, in this process.

    The games are played on a small board: numba compiles per argument type,
    not per board size, so this compiles everything at a fraction of the cost
    of a full game.  Workers started afterwards load the cache.
    """
    from ..warmup import builtin_specs, warm_up

    specs = sorted({b for t in todo for s in (t.white_spec, t.black_spec) for b in builtin_specs(s)})
    if not specs:
        return None
    n = min(8, int(todo[0].rules["board_size"]))
    rep = warm_up(specs, board_sizes=[n], rules=todo[0].rules, note=note, envs=False)
    if note is not None:
        note(f"numba ready in {rep.seconds:.0f}s ({len(rep.compiled)} functions compiled, "
             f"{len(rep.loaded)} loaded from the cache)")
    return rep


def _execute(todo, workers):
    """Yield result lines as games finish on this machine (see :mod:`jiu_env.evaluation.backends`)."""
    from .backends import execute_local

    return execute_local(todo, workers)


# ------------------------------------------------------------------ summary
def _running_scores(config, lines):
    scores = {n: [0.0, 0] for n in config.names}
    for ln in lines:
        _add_score(scores, ln)
    return scores


def _add_score(scores, line):
    sw = line["score_white"]
    scores[line["white"]][0] += sw
    scores[line["white"]][1] += 1
    scores[line["black"]][0] += 1.0 - sw
    scores[line["black"]][1] += 1


def _wdl():
    return {"games": 0, "wins": 0, "draws": 0, "losses": 0}


def _tally(d, score):
    d["games"] += 1
    if score == 1.0:
        d["wins"] += 1
    elif score == 0.0:
        d["losses"] += 1
    else:
        d["draws"] += 1


def summarise(config: TournamentConfig, games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate result lines: per pair and per colour W/D/L, lengths, decision times, Elo.

    Pair figures are from the pair's first player's point of view.  Draws
    include repetition draws and games stopped at the turn limit (counted
    separately as ``truncated``).
    """
    names = config.names
    idx = {n: i for i, n in enumerate(names)}
    k = len(names)
    wins = np.zeros((k, k))
    draws = np.zeros((k, k))
    pairs = {}
    for a, b in config.pairs():
        pairs[(a, b)] = {"a": a, "b": b, "total": _wdl(), "a_white": _wdl(), "a_black": _wdl(),
                         "battle_turns": 0, "decisions": 0, "truncated": 0, "forfeits": 0}
    per = {n: {"total": _wdl(), "white": _wdl(), "black": _wdl(), "time": 0.0, "moves": 0} for n in names}
    colour = {"white_wins": 0, "black_wins": 0, "draws": 0}
    for ln in games:
        a, b = ln["pair"]
        pr = pairs[(a, b)]
        sw = ln["score_white"]
        s_a = sw if ln["white"] == a else 1.0 - sw
        _tally(pr["total"], s_a)
        _tally(pr["a_white"] if ln["white"] == a else pr["a_black"], s_a)
        pr["battle_turns"] += ln["battle_turns"]
        pr["decisions"] += ln["decisions"]
        pr["truncated"] += int(ln.get("truncated", False))
        pr["forfeits"] += int(ln.get("end_reason") == "illegal_action")
        for side, name, sc in (("white", ln["white"], sw), ("black", ln["black"], 1.0 - sw)):
            _tally(per[name]["total"], sc)
            _tally(per[name][side], sc)
            per[name]["time"] += ln["time"][side]
            per[name]["moves"] += ln["moves_by"][side]
        ia, ib = idx[a], idx[b]
        if s_a == 1.0:
            wins[ia, ib] += 1
        elif s_a == 0.0:
            wins[ib, ia] += 1
        else:
            draws[ia, ib] += 1
            draws[ib, ia] += 1
        colour["white_wins" if sw == 1.0 else "black_wins" if sw == 0.0 else "draws"] += 1
    pair_list = []
    for (a, b), pr in pairs.items():
        g = pr["total"]["games"]
        pair_list.append({
            "a": a, "b": b, "games": g,
            "a_wins": pr["total"]["wins"], "draws": pr["total"]["draws"], "b_wins": pr["total"]["losses"],
            "a_score": (pr["total"]["wins"] + 0.5 * pr["total"]["draws"]) / g if g else None,
            "a_as_white": pr["a_white"], "a_as_black": pr["a_black"],
            "avg_battle_turns": pr["battle_turns"] / g if g else None,
            "avg_decisions": pr["decisions"] / g if g else None,
            "truncated": pr["truncated"], "forfeits": pr["forfeits"],
        })
    players = {}
    for n in names:
        p = per[n]
        t = p["total"]
        players[n] = {
            "spec": config.played_spec(n),
            **t,
            "score": (t["wins"] + 0.5 * t["draws"]) / t["games"] if t["games"] else None,
            "as_white": p["white"], "as_black": p["black"],
            "decisions": p["moves"],
            "avg_decision_ms": 1000.0 * p["time"] / p["moves"] if p["moves"] else None,
        }
    summary = {
        "title": config.title,
        "config": config.to_dict(),
        "players": players,
        "pairs": pair_list,
        "by_colour": colour,
        "games": len(games),
        "scheduled": config.games * len(pairs),
        "wins_matrix": wins.tolist(),
        "draws_matrix": draws.tolist(),
    }
    summary["elo"] = rate(config, wins, draws)
    if config.openings is not None:
        summary["openings"] = _openings_summary(config, games)
    if config.tc is not None:
        summary["tc"] = {"seconds": config.tc, "per": "turn", "untimed": config.untimed()}
    if config.sprt is not None:
        summary["sprt"] = sprt_summary(config, games)
    return summary


def _openings_summary(config, games):
    """The suite's source and, per opening, its moves and the games played from it by result."""
    n = int(config.rules["board_size"])
    rows = []
    for k, o in enumerate(config.openings["openings"]):
        rows.append({"index": k, "name": o["name"], "moves": " ".join(o["moves"]),
                     "start": "position" if o.get("start") else "placement",
                     "games": 0, "white_wins": 0, "draws": 0, "black_wins": 0})
    for ln in games:
        op = ln.get("opening")
        k = op.get("index") if isinstance(op, dict) else None
        if isinstance(k, int) and 0 <= k < len(rows):
            row = rows[k]
            row["games"] += 1
            sw = ln["score_white"]
            row["white_wins" if sw == 1.0 else "black_wins" if sw == 0.0 else "draws"] += 1
    return {"source": config.openings["source"], "count": len(rows), "board_size": n, "per_opening": rows}


# ------------------------------------------------------------------ SPRT
def _score_of(line, player):
    sw = float(line["score_white"])
    return sw if line["white"] == player else 1.0 - sw


class _SPRTWatch:
    """The SPRT of a two-player tournament, fed the complete colour-swapped pairs in schedule order.

    Pair ``k`` is games ``2k`` and ``2k + 1`` (same seed, colours swapped).
    Only the first pairs that are complete are counted, one by one, and the
    test stops at the first pair that decides: the decision does not depend
    on the order in which parallel workers finish games, and a resumed run
    reaches the same decision on the same games.
    """

    def __init__(self, config, tasks):
        from .sprt import SequentialSPRT

        self.test = SequentialSPRT(**config.sprt)
        self.player = config.pairs()[0][0]
        self.pairs = [(tasks[i].id, tasks[i + 1].id) for i in range(0, len(tasks) - 1, 2)]
        self.next = 0

    @property
    def decided(self):
        return self.test.decided

    def update(self, done):
        """Count the pairs completed in ``done`` (by id) that extend the counted prefix; True once decided."""
        while not self.test.decided and self.next < len(self.pairs):
            a, b = self.pairs[self.next]
            if a not in done or b not in done:
                break
            self.test.add(_score_of(done[a], self.player) + _score_of(done[b], self.player))
            self.next += 1
        return self.test.decided

    def used_ids(self):
        """The ids of the games of the counted pairs."""
        return {i for pr in self.pairs[:self.next] for i in pr}


def sprt_summary(config: TournamentConfig, games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The SPRT of a two-player tournament with ``config.sprt`` on its result lines, as a JSON-able dict.

    The pairs are counted in schedule order up to the first one that is
    incomplete or that decides the test.  ``a`` is the player whose Elo over
    ``b`` is tested (the pair's first player).
    """
    watch = _SPRTWatch(config, schedule(config))
    watch.update({ln["id"]: ln for ln in games})
    a, b = config.pairs()[0]
    return {"a": a, "b": b, **watch.test.result.as_dict(),
            "max_pairs": len(watch.pairs)}


def rate(config: TournamentConfig, wins: Any, draws: Any) -> dict[str, Any] | None:
    """Elo fit of the tournament's win/draw matrices as a JSON-able dict (``None`` when impossible)."""
    from .elo import bootstrap_elo, fit_elo

    keep = [i for i, n in enumerate(config.names) if n not in config.unrated]
    names = [config.names[i] for i in keep]
    wins = np.asarray(wins)[np.ix_(keep, keep)]
    draws = np.asarray(draws)[np.ix_(keep, keep)]
    n_games = wins + wins.T + draws
    if not np.any(n_games):
        return None
    anchor = config.anchor_name()
    try:
        if config.intervals == "bootstrap":
            fit = bootstrap_elo(names, wins, draws, anchor=anchor, prior_draws=config.prior_draws,
                                confidence=config.confidence, samples=config.bootstrap_samples, seed=config.seed)
        else:
            fit = fit_elo(names, wins, draws, anchor=anchor, prior_draws=config.prior_draws,
                          confidence=config.confidence)
    except ValueError as e:
        return {"error": str(e)}
    return fit.as_dict()


def scores_text(scores: dict[str, Any], width: int = 70) -> str:
    """A compact running score line: ``ab2 7.5/10  random 1/10 ...`` (best first)."""
    parts = []
    for n, (pts, g) in sorted(scores.items(), key=lambda kv: (-(kv[1][0] / kv[1][1]) if kv[1][1] else 0.0, kv[0])):
        pts_s = f"{pts:g}"
        parts.append(f"{n} {pts_s}/{g}")
    text = "  ".join(parts)
    return text if len(text) <= width else text[:width - 1] + "…"


def eta_text(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "?"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


__all__ = [
    "Player", "TournamentConfig", "GameTask", "TournamentResult", "load_config", "schedule", "run_game",
    "play_task", "run_tournament", "summarise", "rate", "read_games", "default_workers", "scores_text",
    "TournamentMismatch", "sprt_summary", "timed_spec", "shipped_configs", "config_file",
]
