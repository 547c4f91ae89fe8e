"""The definition of a tournament: :class:`TournamentConfig`, its checks, and reading it from a file.

Every setting is checked when the config is made (types, ranges, names, the
opening suite against the rules, the time control against the players), so
that a mistake is named before the first game.  ``load_config`` reads a TOML
or JSON file, or a config shipped with the package by name (the baseline
ladders).  Where the games run (``backend``, ``address``, ``workers``) is no
part of the definition: it is kept apart, in ``execution``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from ..bots import REGISTRY
from ..players import make_player
from ..rules import Rules
from ..validate import check_int, check_real
from .elo import BOOTSTRAP_NEEDS_PRIOR

#: Upper bounds of the counts of a tournament, checked before any work (a schedule is built in memory).
MAX_GAMES_PER_PAIR: int = 1_000_000
MAX_SCHEDULED_GAMES: int = 1_000_000
MAX_RANDOM_OPENING: int = 100_000
MAX_BOOTSTRAP_SAMPLES: int = 100_000
MAX_WORKERS: int = 4096
MODES: tuple[str, ...] = ("round_robin", "gauntlet")
# settings of a config file that say where the games run, not which games: kept out of
# the tournament's definition (and its results), in ``TournamentConfig.execution``
EXECUTION_KEYS: tuple[str, ...] = ("backend", "address", "workers")
#: Where games can run: this machine's cores, or Ray actors (jiu_env.evaluation.backends runs them).
BACKENDS: tuple[str, ...] = ("local", "ray")


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
        self.games = check_int("games per pair", self.games, 1, MAX_GAMES_PER_PAIR)
        if not isinstance(self.mode, str) or self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        self.challengers = _name_list("challengers", self.challengers)
        if self.mode == "gauntlet":
            if not self.challengers:
                raise ValueError("a gauntlet needs challengers (the players that meet every other player)")
            bad = [c for c in self.challengers if c not in names]
            if bad:
                raise ValueError(f"unknown challenger(s) {', '.join(bad)}; players are {', '.join(names)}")
        elif self.challengers:  # a round robin has none: a config file that forgot mode = "gauntlet"
            raise ValueError(f"challengers ({', '.join(self.challengers)}) are for mode 'gauntlet', not "
                             f"{self.mode!r}: set mode = \"gauntlet\" or leave them out")
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

        check_real("tc", self.tc)
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
        self.seed = check_int("seed", self.seed, 0)
        self.random_opening = check_int("random_opening", self.random_opening, 0, MAX_RANDOM_OPENING)
        self.bootstrap_samples = check_int("bootstrap_samples", self.bootstrap_samples, 2, MAX_BOOTSTRAP_SAMPLES)
        total = len(self.pairs()) * self.games
        if total > MAX_SCHEDULED_GAMES:
            raise ValueError(f"the tournament would schedule {total:,} games ({len(self.pairs())} pairs x "
                             f"{self.games:,}); at most {MAX_SCHEDULED_GAMES:,} are allowed: fewer games per "
                             "pair or fewer players")
        check_real("prior_draws", self.prior_draws)
        if self.prior_draws < 0:
            raise ValueError(f"prior_draws must be >= 0, not {self.prior_draws!r}")
        if self.intervals == "bootstrap" and self.prior_draws == 0:
            raise ValueError(BOOTSTRAP_NEEDS_PRIOR)
        check_real("confidence", self.confidence)
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
        _check_execution(execution)
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
    ``phases:A+B`` pass it to the players inside (``az:PATH``, the deprecated
    spelling of ``alphazero:PATH``, is timed as that one).  A spec that already sets
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
    if prefix == "az" and sep and rest.strip():  # the deprecated spelling of alphazero:PATH: timed as that one
        prefix = "alphazero"
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


def _name_list(key, value):
    """A list of player names from a name or a list of names."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key} must be a list of player names, not {value!r}")
    dup = sorted({v for v in value if value.count(v) > 1})
    if dup:  # a challenger named twice would play (and count) every game twice
        raise ValueError(f"{key} must name each player once; repeated: {', '.join(dup)}")
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
    Its ``games_given`` attribute says whether the file sets ``games`` (or ``games_per_pair``).
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
    # whether the file sets the games (jiu eval --sprt's default of most games applies only when it does not)
    setattr(cfg, "games_given", isinstance(d, dict) and ("games" in d or "games_per_pair" in d))
    left_out = getattr(cfg, "left_out")
    for name, why in left_out.items():
        if shipped and "not found" in why:
            left_out[name] = (f"{why}: a shipped config names files of the jiu_env repository (its baselines/ "
                              "folder) relative to the current directory; run it from the root of a checkout to "
                              "include this player")
    return cfg


# ------------------------------------------------------------------ where the games run
def _check_execution(execution):
    """The kinds of a config file's ``backend``, ``address`` and ``workers``, checked when it is read (whether
    they fit together is checked where they are used: the command line may replace some of them)."""
    if "workers" in execution:
        _check_workers(execution["workers"])
    if "backend" in execution and execution["backend"] not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {execution['backend']!r}")
    address = execution.get("address")
    if "address" in execution and not (isinstance(address, str) and address.strip()):
        raise ValueError(f"address must be a Ray cluster's address (HOST:PORT), not {address!r}")


def _check_workers(workers):
    check_int("workers", workers, 1, MAX_WORKERS, or_none=True, note="(None for all cores)")


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


__all__ = [
    "Player", "TournamentConfig", "timed_spec", "shipped_configs", "config_file", "load_config", "default_workers",
    "MAX_GAMES_PER_PAIR", "MAX_SCHEDULED_GAMES", "MAX_RANDOM_OPENING", "MAX_BOOTSTRAP_SAMPLES", "MAX_WORKERS",
    "MODES", "EXECUTION_KEYS", "BACKENDS", "SHIPPED_CONFIG_DIR",
]
