"""The one player registry: a spec string or an object in, a player out.

Every place that takes a player uses :func:`make_player`:
:func:`jiu_env.bots.make_bot`, the envs' ``opponent=``, :func:`jiu_env.play_game`,
tournaments and ``jiu eval`` / ``jiu play``.

=================================  ===================================================
spec or object                     player
=================================  ===================================================
``random``, ``alphabeta:depth=2``  a built-in bot (:data:`jiu_env.bots.REGISTRY`)
``alphazero:PATH``                 an AlphaZero-style checkpoint (also
                                   ``alphazero:checkpoint=PATH,sims=N``; ``az:PATH``
                                   is the old spelling and warns)
``sb3:PATH``                       a trained MaskablePPO model file (needs ``sb3-contrib``); one that
                                   declares it learned the battle only plays as
                                   ``phases:random+sb3:PATH`` (:func:`whole_game_spec`)
``rllib:PATH``                     an RLlib checkpoint's ``learner`` module (needs ``ray[rllib]``)
``module:Class``                   a user class, built as ``Class(seed=...)``
``module:Class:key=v,...``         the same with keyword parameters
``path/to/file.py:Class``          a user class from a Python file
``mix:P:SPEC``                     SPEC with probability P of a random action per decision
``phases:PLACE+BATTLE``            PLACE plays the placement phase, BATTLE the battle
a :class:`~jiu_env.bots.Bot`       itself (anything with ``step`` and ``restart``)
an SB3 model or policy             its masked policy, sampled (:class:`jiu_env.sb3.ModelPlayer`)
a callable ``f(state) -> action``  wrapped as a player
=================================  ===================================================

A player follows the bot protocol of :mod:`jiu_env.bots.base`: it is built
with a ``seed`` keyword, ``step(state)`` returns a legal action for the side
to move of a kernel state (never modifying it) and ``restart(seed=None)``
forgets the previous game.  New kinds of players are added with
:func:`register_player_kind`; a new built-in bot is one module plus one line
in :data:`REGISTRY` (also :data:`jiu_env.bots.REGISTRY`).

Specs are parsed by :mod:`jiu_env.specs` (:func:`player_spec`), the one
parser that the warm-up and the tournament backends use too.  This module
imports no player's code: the built-in bots are named by module in
:data:`REGISTRY`, and the player kinds built by other modules (``mix:`` and
``phases:`` by :mod:`jiu_env.bots.composite`, ``sb3:`` by :mod:`jiu_env.sb3`,
``rllib:`` by :mod:`jiu_env.integrations.rllib`) in :data:`PLUGIN_MODULES`;
each is imported by name when it is first used.  So the registry sits below
everything that builds or uses players (docs/architecture.md, the layers), and
``import jiu_env`` loads neither torch nor Ray.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import warnings
from types import ModuleType
from typing import Any, Callable, Iterator

from .names import did_you_mean
from .specs import PlayerSpec, parse_player_spec, split_params
from .validate import check_int

# name -> (module, class) of the built-in bots; modules are imported on first use.
REGISTRY: dict[str, tuple[str, str]] = {
    "random": ("jiu_env.bots.random_bot", "RandomBot"),
    "greedy": ("jiu_env.bots.greedy", "GreedyBot"),
    "pattern": ("jiu_env.bots.pattern", "PatternBot"),
    "alphabeta": ("jiu_env.bots.alphabeta", "AlphaBetaBot"),
    "mcts": ("jiu_env.bots.mcts", "MCTSBot"),
    "alphazero": ("jiu_env.bots.alphazero", "AlphaZeroBot"),
    "policy": ("jiu_env.bots.policy", "PolicyBot"),
}

#: The built-in bots that also take a checkpoint file as ``NAME:PATH``.
NETWORK_BOTS: tuple[str, ...] = ("alphazero", "policy")

#: The plugin table: kind -> the module that builds players of that kind, imported by name (:func:`plugin_module`)
#: when such a player is first built.  These modules use the registry (a mix: player builds its inner player with
#: make_player), so the registry may not import them; the layer contract (pyproject.toml) documents this table.
PLUGIN_MODULES: dict[str, str] = {
    "mix": "jiu_env.bots.composite",
    "phases": "jiu_env.bots.composite",
    "sb3": "jiu_env.sb3",
    "rllib": "jiu_env.integrations.rllib",
}


def bot_class(name: str) -> type:
    """The class registered under ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown bot {name!r}{did_you_mean(name, REGISTRY)}; available: {', '.join(sorted(REGISTRY))}")
    mod, cls = REGISTRY[name]
    found: type = getattr(importlib.import_module(mod), cls)
    return found


def plugin_module(kind: str) -> ModuleType:
    """The module of :data:`PLUGIN_MODULES` that builds the players of ``kind`` (imported now if it was not);
    ImportError when it needs an optional package that is missing."""
    return importlib.import_module(PLUGIN_MODULES[kind])


def player_spec(spec: str) -> PlayerSpec:
    """``spec`` parsed (:func:`jiu_env.specs.parse_player_spec`) with this registry's bots and player kinds."""
    return parse_player_spec(spec, REGISTRY, PLAYER_KINDS)

#: prefix -> (factory(argument, seed) -> player, one-line description)
PLAYER_KINDS: dict[str, tuple[Callable[[str, int | None], Any], str]] = {}

#: How deep player specs may nest (``mix:0.5:phases:random+mix:0.2:greedy`` is 4 deep): a spec
#: nested deeper raises a ValueError naming it, before Python's recursion limit is reached.
MAX_SPEC_DEPTH: int = 8
_nesting = threading.local()  # the depth of the make_player calls under way in this thread


def register_player_kind(prefix: str, factory: Callable[[str, int | None], Any], description: str = "") -> None:
    """Make ``prefix:ARG`` specs build players with ``factory(ARG, seed)``.

    This is the hook for new kinds of players (model formats and the like).
    A prefix may not shadow a built-in bot name.
    """
    if not isinstance(prefix, str) or not prefix or prefix != prefix.strip() or any(c in prefix for c in ":+,= "):
        raise ValueError(f"bad player kind prefix {prefix!r}: a word without spaces or ':+,=' (it must be able "
                         "to start a spec)")
    if prefix in REGISTRY:
        raise ValueError(f"{prefix!r} is already the name of a built-in bot")
    if not callable(factory):
        raise TypeError(f"the factory of player kind {prefix!r} must be callable (ARG, seed) -> player, "
                        f"not {type(factory).__name__}")
    PLAYER_KINDS[prefix] = (factory, description)


def make_player(spec: Any, seed: int | None = None, **overrides: Any) -> Any:
    """Build the player named by ``spec`` (see the module doc) with ``seed``.

    ``overrides`` are keyword parameters of a built-in bot (they win over the
    spec's own).  Unknown names and parameters raise ValueError naming them.
    A player object (a bot) is returned as it is, restarted with ``seed``
    when one is given.
    """
    check_int("seed", seed, 0, or_none=True)
    if not isinstance(spec, str):
        if overrides:
            raise TypeError("parameters can only be given with a built-in bot spec string")
        return _from_object(spec, seed)
    if not spec.strip():
        raise ValueError(f"a player spec is a non-empty string like 'random' or 'sb3:model.zip', not {spec!r}")
    depth = getattr(_nesting, "depth", 0)
    check_spec_depth(depth, spec)
    _nesting.depth = depth + 1
    try:
        return _make_player_from_spec(spec.strip(), seed, overrides)
    finally:
        _nesting.depth = depth


def _make_player_from_spec(spec: str, seed: int | None, overrides: dict[str, Any]) -> Any:
    """:func:`make_player` for a stripped, non-empty spec string."""
    parsed = player_spec(spec)
    prefix = parsed.name
    if parsed.form == "bot":
        if prefix in NETWORK_BOTS and parsed.path is not None:
            return _network_file(prefix, parsed.path, seed, **overrides)
        return _builtin(parsed, seed, overrides)
    if overrides:
        raise TypeError(f"parameters {sorted(overrides)} can only be given with a built-in bot, not {spec!r}")
    if prefix in PLAYER_KINDS:
        if not parsed.argument:
            raise ValueError(f"player spec {spec!r}: {prefix}: needs an argument ({PLAYER_KINDS[prefix][1]})")
        return PLAYER_KINDS[prefix][0](parsed.argument, seed)
    if parsed.form == "module":
        return _user_class(parsed, seed)
    current = sorted(k for k, (_, what) in PLAYER_KINDS.items() if not what.startswith("deprecated"))
    kinds = ", ".join(sorted(REGISTRY)) + "; " + ", ".join(f"{k}:ARG" for k in current)
    hint = did_you_mean(prefix, [*REGISTRY, *current])
    raise ValueError(f"unknown player {spec!r}{hint} (unknown bot or player kind): use a built-in bot ({kinds}) "
                     "or module:Class")


def _builtin(spec: str | PlayerSpec, seed: int | None, overrides: dict[str, Any]) -> Any:
    if isinstance(spec, str):
        spec = player_spec(spec)
    name, params = spec.name.strip(), spec.params()
    cls = bot_class(name)
    params.update(overrides)
    allowed = getattr(cls, "PARAMS", {})
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        hint = did_you_mean(unknown[0], allowed) if len(unknown) == 1 else ""
        if "checkpoint" in allowed and any("/" in k or os.sep in k or k.endswith(".pt") for k in unknown):
            hint += (" (it reads as a path holding '=': write it checkpoint=PATH, or pass it as a keyword, "
                     f"make_bot({name!r}, checkpoint=PATH))")
        raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))}{hint} for bot {name!r}; it takes: "
                         f"{', '.join(allowed) or 'none'} (their meaning: jiu_env.bots.bot_class({name!r}).PARAMS)")
    return cls(seed=seed, **params)


class CallablePlayer:
    """A plain policy ``f(state) -> action`` as a player.

    ``restart(seed)`` is forwarded to ``f.restart`` when ``f`` has one (a
    callable object with its own generator), so seeded games stay seeded.
    """

    def __init__(self, fn: Callable[[Any], int], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        self.seed: int | None = None

    def restart(self, seed: int | None = None) -> None:
        restart = getattr(self.fn, "restart", None)
        if callable(restart):
            restart(seed=seed)

    def step(self, state: Any) -> int:
        return self.fn(state)

    def __repr__(self) -> str:
        return f"CallablePlayer({self.name})"


def _is_sb3(obj: Any) -> bool:
    """Whether ``obj`` is an SB3 model (``predict`` and ``policy``) or a bare SB3 policy (an
    ``observation_space`` and ``get_distribution``, what :func:`jiu_env.sb3.policy_probs` uses).

    Duck typing, so that this registry imports neither SB3 nor torch.  A bare
    policy is a callable torch module too: taken for a ``f(state) -> action``
    it was handed kernel states and failed deep inside SB3.
    """
    if hasattr(obj, "predict") and hasattr(obj, "policy"):
        return True
    return hasattr(obj, "observation_space") and callable(getattr(obj, "get_distribution", None))


def _from_object(obj: Any, seed: int | None) -> Any:
    if _is_sb3(obj):
        sb3 = plugin_module("sb3")
        player = sb3.ModelPlayer(obj, deterministic=False, seed=seed)
        if not _phases_given() and sb3.model_phase(obj) == "battle":  # as for an sb3:PATH spec
            return plugin_module("phases").PhasePlayer(BATTLE_ONLY_PLACEMENT, player, seed=seed)
        return player
    if callable(getattr(obj, "step", None)) and callable(getattr(obj, "restart", None)):
        if seed is not None:  # the seed asked for, as a spec's player is built with it (it was ignored)
            obj.restart(seed)
        return obj
    if callable(obj):
        return CallablePlayer(obj)
    raise TypeError(f"a player is a spec string, a Bot, an SB3 model or policy or a callable state -> action, "
                    f"not {type(obj).__name__}")


def check_player(player: Any, spec: str = "player") -> Any:
    """Raise TypeError unless ``player`` follows the bot protocol."""
    for attr in ("step", "restart"):
        if not callable(getattr(player, attr, None)):
            raise TypeError(f"{spec}: {type(player).__name__} does not follow the bot protocol "
                            f"(no {attr}() method; subclass jiu_env.bots.Bot)")
    return player


def file_hash(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """A short content hash of a file (12 hex digits)."""
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()[:12]


_BOTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bots")


def _bot_imports(path: str) -> list[str]:
    """The files of the bot layer (``jiu_env/bots/``) of the modules that the module at ``path`` imports by
    relative imports (``from .search import ...``, ``from . import leaves``), read from its source (once per
    version of the file).  A name taken from the package itself (``from . import make_bot``) is not a
    module: ``jiu_env/bots/__init__.py`` builds bots, it holds no play."""
    st = os.stat(path)
    return list(_bot_imports_of(path, st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=256)
def _bot_imports_of(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    import ast

    here = os.path.dirname(path)
    out = []
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = here
        for _ in range(node.level - 1):
            base = os.path.dirname(base)
        parts = node.module.split(".") if node.module else []
        names = [parts] if parts else [[a.name] for a in node.names]
        for name in names:
            stem = os.path.join(base, *name)
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if os.path.isfile(candidate) and os.path.dirname(os.path.abspath(candidate)) == _BOTS_DIR:
                    out.append(os.path.abspath(candidate))
                    break
    return tuple(out)


def source_hash(cls: type) -> str:
    """A short hash (12 hex digits) of the code a built-in player's play depends on: the module of ``cls``
    and every module of the bot layer it imports, directly or not (``alphabeta`` reads its evaluation
    from ``evaluation_fn``, ``mcts`` its loop from ``search``): an edit in any of them changes the
    version.  The game itself (the kernel, the rules) is not the player's code and is not hashed.  For a
    class outside the bot layer, the hash of its own file; ``""`` when it has no source file."""
    files = source_files(cls)
    if len(files) <= 1 and not (files and os.path.dirname(files[0]) == _BOTS_DIR):
        return file_hash(files[0]) if files else ""
    h = hashlib.sha1()
    for path in files:
        h.update(os.path.basename(path).encode() + b"\0" + bytes.fromhex(file_hash(path)))
    return h.hexdigest()[:12]


def source_files(cls: type) -> list[str]:
    """The source files :func:`source_hash` hashes for ``cls``, sorted: the module file of ``cls`` and of
    each class it derives from (a user's subclass of a built-in bot runs the built-in's code), and for a
    module of the bot layer the bot modules it imports, directly or not."""
    todo = []
    for c in cls.__mro__:
        if c is object:
            continue
        try:
            src = inspect.getsourcefile(c)
        except TypeError:
            src = None
        if src and os.path.isfile(src):
            todo.append(os.path.abspath(src))
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            if os.path.dirname(path) == _BOTS_DIR:
                todo.extend(_bot_imports(path))
    return sorted(seen)


def player_version(player: Any) -> str:
    """A short hash that changes when the player's code (or model file) changes.

    A player may define ``version_key()``; otherwise it is :func:`source_hash` of its class (a built-in
    bot's module and the bot modules it imports; a user's class, its file; ``""`` when there is none).
    The tournament uses it so that games stored by an older version of a bot are not reused.
    """
    key = getattr(player, "version_key", None)
    if callable(key):
        return str(key())
    return source_hash(type(player))


# ------------------------------------------------------------- user classes
def _import_module(name: str) -> Any:
    if name.endswith(".py"):
        path = os.path.abspath(name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"player module file {name!r} not found")
        mod_name = "jiu_user_" + os.path.splitext(os.path.basename(path))[0]
        if mod_name in sys.modules and getattr(sys.modules[mod_name], "__file__", None) == path:
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:  # not for a .py file that exists; typed Optional for other paths
            raise ImportError(f"player module file {name!r} cannot be loaded as a Python module")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException as e:  # a module that fails to import is not kept half-run for the next call
            sys.modules.pop(mod_name, None)
            if isinstance(e, Exception):  # its own error (a SyntaxError, one raised at its top level), named
                raise _load_error(f"player module file {name!r}", e) from e
            raise
        return mod
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise ValueError(f"player module {name!r} cannot be imported ({e}); "
                         "is it on PYTHONPATH, or give a path ending in .py") from None
    except ImportError:
        raise
    except Exception as e:  # the module was found and failed while it ran
        raise _load_error(f"player module {name!r}", e) from e


def _load_error(what: str, e: Exception) -> Exception:
    """The error of a player module that failed while it ran, on one line (its type, message, a SyntaxError's line).

    An ImportError only when the module itself could not import something (a missing package): that is
    what an optional player may be left out for.  A mistake in the module (a SyntaxError, an error raised
    at its top level) is a ValueError, which stops the run instead of quietly dropping the player."""
    why = f"{type(e).__name__}: {e.msg} (line {e.lineno})" if isinstance(e, SyntaxError) else f"{type(e).__name__}: {e}"
    cls = ImportError if isinstance(e, ImportError) else ValueError
    return cls(f"{what} cannot be loaded: {why}")


def _user_class(spec: PlayerSpec, seed: int | None) -> Any:
    module, cls_name = spec.name, spec.cls
    mod = _import_module(module)
    cls = getattr(mod, cls_name, None)
    if cls is None or not callable(cls):
        raise ValueError(f"{module!r} has no class {cls_name!r}")
    params = spec.params()
    try:
        player = cls(seed=seed, **params)
    except TypeError as e:
        raise TypeError(f"{module}:{cls_name} must accept seed=... and its keyword parameters: {e}") from None
    return check_player(player, f"{module}:{cls_name}")


#: The time budget (seconds a decision) of a timed bot while it warms up: its code runs, its clock does not matter.
WARM_TIME = 0.01


def warm_spec(spec: str) -> str:
    """``spec`` as it warms up: a built-in bot's ``time=`` budget cut to :data:`WARM_TIME` (inside ``mix:`` and
    ``phases:`` too), other specs as given.

    A warm-up game only has to call each numba function once; with the
    tournament's own budget (``alphabeta:time=1``) it would take a second a
    decision, minutes a game on a large board, in every worker process.
    """
    return _warm_spec(player_spec(spec))


def _warm_spec(parsed: PlayerSpec, depth: int = 0) -> str:
    check_spec_depth(depth, parsed.text)
    parts = parsed.parts
    if parsed.form == "mix" and parts:
        return f"mix:{parsed.probability}:{_warm_spec(parts[0], depth + 1)}"
    if parsed.form == "phases" and parts:
        return f"phases:{_warm_spec(parts[0], depth + 1)}+{_warm_spec(parts[1], depth + 1)}"
    spec = parsed.text
    if parsed.form != "bot":
        return spec
    name, _, rest = spec.partition(":")
    items = split_params(rest)
    if not any(p.key.strip() == "time" and p.value is not None for p in items):
        return spec
    return f"{name}:" + ",".join(f"time={WARM_TIME}" if p.key.strip() == "time" else p.text.strip() for p in items)


# ------------------------------------------------------------ player kinds
def _network_file(kind: str, path: str, seed: int | None, **params: Any) -> Any:
    """``alphazero:PATH`` / ``policy:PATH``: the network player ``kind`` on the checkpoint file ``path``."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{kind} checkpoint {path!r} not found")
    return _builtin(kind, seed, {"checkpoint": path, **params})


def _az_factory(arg: str, seed: int | None) -> Any:
    # FutureWarning, not DeprecationWarning: a spec is written by the user of jiu eval / make_bot, and Python
    # shows a DeprecationWarning only to code run as __main__ (jiu eval az:... would say nothing)
    warnings.warn("the player spec 'az:PATH' is deprecated; use 'alphazero:PATH'", FutureWarning, stacklevel=3)
    return _network_file("alphazero", arg, seed)


#: Rules options a trained model may be played under whatever it was trained on: the turn limit and the size of
#: the repetition history end or bound a game without changing its moves; the profile is only a name.
RULES_IGNORED: tuple[str, ...] = ("max_battle_turns", "history_size", "profile")


def rules_mismatch(trained: Any, played: Any) -> list[str]:
    """The options (those of :data:`RULES_IGNORED` aside) in which the rules ``played`` differ from the rules
    ``trained``, as ``"NAME=TRAINED (here: PLAYED)"`` strings; empty when a model trained on ``trained`` may
    play ``played``.  Both are anything :meth:`Rules.make` accepts."""
    from dataclasses import asdict

    from .rules import Rules

    a, b = asdict(Rules.make(trained)), asdict(Rules.make(played))
    return [f"{k}={a[k]!r} (here: {b[k]!r})" for k in a if k not in RULES_IGNORED and a[k] != b[k]]


def sb3_spec_rules(specs: list[str], rules: Any = None) -> Any:
    """The rules the ``sb3:PATH`` players among ``specs`` were trained on, checked against ``rules``.

    ``rules`` None: returns the rules recorded in the models (None if no
    ``sb3:`` model records any); models recording different rules raise
    ValueError naming both.  ``rules`` given: raises ValueError naming the
    model, its rules and these if a model was trained on other rules
    (:func:`rules_mismatch`), and returns ``rules``.  Only top-level
    ``sb3:`` specs are read (a model inside ``mix:`` or ``phases:`` is
    checked when it plays); files that do not exist are left to the player
    factory's error.  With ``rules`` given, the top-level ``rllib:PATH``
    checkpoints are loaded and their board size checked too (an RLModule
    records its spaces, not the rules): a damaged checkpoint or one of
    another board size raises ValueError naming it.
    """
    found = None
    for spec in specs:
        parsed = player_spec(spec)
        kind, arg = parsed.name, parsed.argument  # stripped, as the factories take it ("sb3: m.zip")
        if kind == "rllib" and parsed.has_arg and rules is not None:
            _check_rllib_board(parsed, rules)
            continue
        if kind != "sb3" or not parsed.has_arg:
            continue
        path = arg if arg.endswith(".zip") or os.path.isfile(arg) else arg + ".zip"
        if not os.path.isfile(path):
            continue
        trained = sb3_file_rules(path)
        if trained is None:
            continue
        if rules is not None:
            diff = rules_mismatch(trained, rules)
            if diff:
                raise ValueError(f"{spec} was trained on board_size={trained.board_size} ({trained.profile} rules); "
                                 f"this game's rules differ: {'; '.join(diff)}")
        elif found is None:
            found = (spec, trained)
        elif rules_mismatch(found[1], trained):
            raise ValueError(f"{found[0]} and {spec} were trained on different rules: "
                             f"{'; '.join(rules_mismatch(found[1], trained))}; give the rules to play (--rule ...)")
    if rules is not None:
        return rules
    return None if found is None else found[1]


def _check_rllib_board(parsed: PlayerSpec, rules: Any) -> None:
    """Raise ValueError when the checkpoint of ``rllib:ARG`` cannot load or plays another board size than ``rules``;
    without Ray or with a missing checkpoint, nothing (the player factory says so)."""
    from .rules import Rules

    spec = parsed.text
    path, _, params = parsed.argument.partition(":")
    module = next((p.value for p in split_params(params) if p.key.strip() == "module" and p.value is not None), None)
    if not os.path.exists(path):
        return
    try:
        rllib = plugin_module("rllib")
    except ImportError:
        return
    n = rllib.checkpoint_board_size(path, module or rllib.LEARNER)
    size = Rules.make(rules).board_size
    if n != size:
        raise ValueError(f"{spec}: the RLlib checkpoint {path!r} was built for board_size={n}; this game's rules "
                         f"differ: board_size={n} (here: {size})")


def sb3_model_file(path: str | os.PathLike[str]) -> str:
    """The SB3 model file ``path`` names (``.zip`` may be left out, as SB3's ``save`` leaves it out);
    FileNotFoundError naming ``path`` when there is none."""
    path = os.fspath(path)
    found = next((p for p in ([path] if path.endswith(".zip") else [path, path + ".zip"]) if os.path.isfile(p)), None)
    if found is None:
        raise FileNotFoundError(f"sb3 model file {path!r} not found")
    return found


def _sb3_file_data(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any]]:
    """``(file, data)``: the model file ``path`` names (``.zip`` may be left out) and the JSON ``data`` member of
    the ``.zip`` (SB3's record of the model's attributes), read without importing torch.  A missing file raises
    FileNotFoundError, a file that is not an SB3 model ValueError naming it."""
    import json
    import zipfile

    found = sb3_model_file(path)
    try:
        with zipfile.ZipFile(found) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{found} is not a readable MaskablePPO model file ({type(e).__name__}: {e})") from None
    return found, (data if isinstance(data, dict) else {})


def sb3_file_rules(path: str | os.PathLike[str]) -> Any:
    """The rules (:class:`~jiu_env.rules.Rules`) recorded in an SB3 model file, or None if it records none.

    Read from the ``data`` member of the ``.zip`` (SB3's JSON of the model's
    attributes; ``jiu_env.sb3.set_model_rules`` puts them there) without
    importing torch.  ``path`` may leave out ``.zip``.  A missing file raises
    FileNotFoundError, a file that is not an SB3 model ValueError naming it.
    """
    from .rules import Rules

    found, data = _sb3_file_data(path)
    rules = data.get("jiu_rules")
    if rules is None:
        return None
    if not isinstance(rules, dict):
        raise ValueError(f"{found}: the recorded rules are {rules!r}, not a dict of rules options")
    try:
        return Rules.make(rules)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{found}: the recorded rules are not valid rules ({e})") from None


#: What a model may declare it was trained on (``jiu_env.sb3.set_model_phase``): ``"battle"``, battles from
#: random placements only; ``"game"``, whole games (placement included).
MODEL_PHASES: tuple[str, ...] = ("battle", "game")


def check_model_phase(phase: Any, where: str = "phase") -> str:
    """``phase`` if it is one of :data:`MODEL_PHASES`, else ValueError naming ``where``."""
    if not isinstance(phase, str) or phase not in MODEL_PHASES:
        raise ValueError(f"{where}: the phase a model was trained on is one of {', '.join(MODEL_PHASES)} "
                         f"('battle': battles from random placements only; 'game': whole games), not {phase!r}")
    return phase


def sb3_file_phase(path: str | os.PathLike[str]) -> str | None:
    """The phase an SB3 model file declares it was trained on (:data:`MODEL_PHASES`), or None if it says nothing.

    Read like :func:`sb3_file_rules` (``jiu_phase`` in the ``.zip``'s ``data``, without torch); a
    recorded value that is not a phase raises ValueError naming the file.
    """
    found, data = _sb3_file_data(path)
    phase = data.get("jiu_phase")
    return None if phase is None else check_model_phase(phase, found)


#: The player that places the stones of a battle-only model playing whole games (as ``JiuVsBotEnv(start="battle")``
#: placed them in its training): ``phases:random+MODEL``.
BATTLE_ONLY_PLACEMENT: str = "random"


def check_spec_depth(depth: int, spec: str | None = None) -> None:
    """ValueError unless a spec at nesting ``depth`` (0: the top) is within :data:`MAX_SPEC_DEPTH`: every walker
    of nested specs stops there, before Python's recursion limit."""
    if depth >= MAX_SPEC_DEPTH:
        shown = "" if spec is None else f"; {spec if len(spec) <= 80 else spec[:77] + '...'!r} is at depth {depth + 1}"
        raise ValueError(f"player specs nest at most {MAX_SPEC_DEPTH} deep (mix:, phases: and other players "
                         f"built inside a player){shown}")


def whole_game_spec(spec: str, _depth: int = 0) -> str:
    """The spec a player plays whole games with: ``spec`` itself, except that an ``sb3:PATH`` model that declares
    it learned the battle only (:func:`sb3_file_phase`) gets random placement, ``phases:random+sb3:PATH``, also
    inside ``mix:P:``.  A ``phases:`` spec is used as given; a missing file is left to the player's own error.
    Specs nested deeper than :data:`MAX_SPEC_DEPTH` are refused, as :func:`make_player` refuses them."""
    check_spec_depth(_depth, spec)
    parsed = player_spec(spec)
    if parsed.name == "mix" and parsed.has_arg:
        parts = parsed.parts
        if not parts or not parts[0].text:
            return spec
        played = whole_game_spec(parts[0].text, _depth + 1)
        return spec if played == parts[0].text else f"mix:{parsed.probability}:{played.strip()}"
    if parsed.name != "sb3" or not parsed.argument:
        return spec
    try:
        phase = sb3_file_phase(parsed.argument)
    except FileNotFoundError:
        return spec
    return f"phases:{BATTLE_ONLY_PLACEMENT}+{parsed.text}" if phase == "battle" else spec


@contextlib.contextmanager
def phases_given() -> Iterator[None]:
    """Build players in here as given: a battle-only model is not given random placement (``phases:A+B`` builds
    its two players in here, so that ``phases:X+sb3:PATH`` is played as it says)."""
    depth = getattr(_nesting, "phases", 0)
    _nesting.phases = depth + 1
    try:
        yield
    finally:
        _nesting.phases = depth


def _phases_given() -> bool:
    return getattr(_nesting, "phases", 0) > 0


def _sb3_factory(arg: str, seed: int | None) -> Any:
    path = arg if arg.endswith(".zip") or os.path.isfile(arg) else arg + ".zip"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"sb3 model file {arg!r} not found")
    try:
        importlib.import_module("sb3_contrib")  # a clear error before torch is loaded
        sb3 = plugin_module("sb3")
    except ImportError as e:
        raise ImportError(f"sb3:{arg} needs sb3-contrib and torch ({e}); install the 'train' extra: "
                          "pip install torch, then pip install -e '.[train]' (in a checkout of the repository)") from None

    if not _phases_given() and sb3_file_phase(path) == "battle":
        # the model learned battles from random placements: it plays whole games the same way
        return make_player(f"phases:{BATTLE_ONLY_PLACEMENT}+sb3:{arg}", seed=seed)
    return sb3.ModelPlayer.load(arg, seed=seed)


def _phases_factory(arg: str, seed: int | None) -> Any:
    parts = player_spec("phases:" + arg).parts
    if not parts or not parts[0].text or not parts[1].text:
        raise ValueError(f"phases:{arg}: expected phases:PLACEMENT_SPEC+BATTLE_SPEC, e.g. phases:random+sb3:model.zip")
    PhasePlayer = plugin_module("phases").PhasePlayer
    with phases_given():  # phases:X+sb3:PATH is played as it says, whatever the model declares
        return PhasePlayer(parts[0].text, parts[1].text, seed=seed)


def _mix_factory(arg: str, seed: int | None) -> Any:
    parsed = player_spec("mix:" + arg)
    p, parts = parsed.probability, parsed.parts
    if not parts or not parts[0].text:
        raise ValueError(f"mix:{arg}: expected mix:P:SPEC, e.g. mix:0.5:greedy")
    try:
        prob = float(p)
    except ValueError:
        raise ValueError(f"mix:{arg}: {p!r} is not a probability") from None
    return plugin_module("mix").MixPlayer(prob, parts[0].text, seed=seed)


register_player_kind("mix", _mix_factory, "a handicapped player, e.g. mix:0.5:greedy (half its decisions random)")
register_player_kind("phases", _phases_factory,
                     "one player places, another fights the battle, e.g. phases:random+sb3:model.zip")
register_player_kind("sb3", _sb3_factory, "a MaskablePPO model file, e.g. sb3:models/ppo.zip")
register_player_kind("az", _az_factory, "deprecated spelling of alphazero:PATH")


def _rllib_factory(arg: str, seed: int | None) -> Any:
    try:
        rllib = plugin_module("rllib")
    except ImportError as e:
        raise ImportError(f"rllib:{arg} needs ray[rllib] and torch ({e}); install the 'rllib' extra: "
                          "pip install torch, then pip install -e '.[rllib]' (in a checkout of the repository)") from None
    return rllib.rllib_player(arg, seed)


register_player_kind("rllib", _rllib_factory, "an RLlib checkpoint (Algorithm or RLModule), e.g. rllib:checkpoints/jiu")

__all__ = ["make_player", "source_hash", "REGISTRY", "bot_class", "NETWORK_BOTS", "PLUGIN_MODULES", "plugin_module", "player_spec", "sb3_file_rules", "sb3_file_phase", "sb3_model_file", "whole_game_spec", "phases_given", "MODEL_PHASES",
           "check_model_phase", "BATTLE_ONLY_PLACEMENT", "sb3_spec_rules", "rules_mismatch", "RULES_IGNORED", "register_player_kind", "check_player", "player_version", "file_hash", "PLAYER_KINDS",
           "CallablePlayer", "MAX_SPEC_DEPTH", "check_spec_depth", "warm_spec", "WARM_TIME"]
