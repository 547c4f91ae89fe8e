"""Warm numba's on-disk cache: compile the kernel and the bots once per machine.

Every numba function of ``jiu_env`` is declared ``@njit(cache=True)``: the
first process that calls it compiles it and writes the machine code to a
folder named by a hash of the package's numba sources
(``jiu_env/__pycache__/numba-<hash>/``, ``$NUMBA_CACHE_DIR/jiu_env-<hash>/``
when that is set, else ``~/.cache/jiu_env/numba-<hash>/``: see
:mod:`jiu_env._numba_cache`); every later process with the same sources loads
it in a fraction of the time, and a change to any of them starts afresh.
:func:`warm_up` plays one short game of each bot against ``random`` so that
everything the bots call is compiled (or loaded) before the real work starts.
Run it once when building an image or preparing a cluster node
(``jiu warm``); ``jiu eval`` does it in the parent process before it starts
its workers, so that the workers load instead of each compiling on its own.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable

from .players import check_spec_depth, make_player, player_spec, warm_spec

if TYPE_CHECKING:
    from .rules import Rules

DEFAULT_BOTS = ("random", "greedy", "pattern", "alphabeta:depth=1", "mcts:sims=20")
DEFAULT_BOARD_SIZES = (8,)
# rough wall time of a first compile of jiu eval --quick's bots: in one process, and spread over two
# (measured on 2 cores: docs/evaluation.md)
COLD_SECONDS = 70
COLD_SECONDS_SPREAD = 45


@dataclass
class WarmupReport:
    """What :func:`warm_up` did: numba functions compiled now, loaded from the cache, and the time taken."""

    bots: list[str]
    board_sizes: list[int]
    seconds: float = 0.0
    compiled: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    cache_dirs: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    #: processes that compiled at once (1 unless a cold cache was warmed with ``workers > 1``)
    processes: int = 1

    def text(self) -> str:
        """The report as a few lines of text (``jiu warm`` prints it)."""
        from ._numba_cache import current_hash

        where = ", ".join(self.cache_dirs) or "no cache directory (caching off?)"
        where += f" (keyed by the numba sources: {current_hash()})"
        par = f" (compiled in {self.processes} processes at once: the others' work counts as loaded)" \
            if self.processes > 1 else ""
        lines = [f"numba warm in {self.seconds:.1f}s: {len(self.compiled)} functions compiled, "
                 f"{len(self.loaded)} loaded from the cache{par} ({', '.join(self.bots)}; "
                 f"board size {', '.join(map(str, self.board_sizes))})",
                 f"cache: {where}"]
        for spec, why in self.skipped.items():
            lines.append(f"skipped {spec}: {why}")
        return "\n".join(lines)


def numba_functions() -> list[tuple[str, Any]]:
    """``[(qualified name, dispatcher)]`` for every numba function of the imported ``jiu_env`` modules."""
    from numba.core.dispatcher import Dispatcher

    out = []
    for name, mod in sorted(sys.modules.items()):
        if mod is None or not (name == "jiu_env" or name.startswith("jiu_env.")):
            continue
        for attr, obj in sorted(vars(mod).items()):
            if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == name:
                out.append((f"{name}.{attr}", obj))
    return out


def _cached_entries(disp):
    """Number of signatures in ``disp``'s on-disk cache index that match its current source (None: unknown)."""
    try:
        return len(disp._cache._cache_file._load_index())
    except Exception:  # no cache (cache=False) or a numba without these internals
        return None


def cache_is_warm(modules: Collection[str] = ("jiu_env.kernel",)) -> bool | None:
    """True if each of these modules has its numba functions in the on-disk cache.

    A module counts as cached when at least one of its functions has a cache
    entry that matches the current source (a module's helpers compile
    together with its entry points).  ``None`` when it cannot be told (no
    numba functions found, or a numba version with other internals).
    """
    by_module: dict[str, list[int | None]] = {}
    for name, d in numba_functions():
        mod = name.rpartition(".")[0]
        if mod in modules:
            by_module.setdefault(mod, []).append(_cached_entries(d))
    if not by_module:
        return None
    if any(c is None for counts in by_module.values() for c in counts):
        return None
    return all(any(c is not None and c > 0 for c in counts) for counts in by_module.values())  # None: ruled out above


def _counts(functions):
    return {n: (sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())) for n, d in functions}


def builtin_specs(spec: str) -> list[str]:
    """The built-in bot specs a player spec plays with (``mix:0.5:greedy`` -> ``["greedy"]``), found by the one spec
    parser (:func:`jiu_env.players.player_spec`) in ``mix:`` and ``phases:`` specs."""
    def walk(parsed, depth=0):
        check_spec_depth(depth, parsed.text)  # a ValueError, not a RecursionError, for 'mix:0.5:' * 1000
        if parsed.form == "bot":
            return [parsed.text]
        return [b for part in parsed.parts for b in walk(part, depth + 1)]

    return walk(player_spec(spec))


def _rules_for(rules, n):
    from .rules import Rules

    base = Rules.make(rules)
    if n is None or n == base.board_size:
        return base
    try:
        return base.replace(board_size=int(n))
    except (TypeError, ValueError):  # options that do not fit this size: play on the given rules
        return base


#: What a bot's first compile costs beyond the kernel's: how a cold warm-up spreads the bots over processes
#: (:func:`spread`).  Measured, in seconds of one core, as each bot's cold warm-up alone less ``random``'s
#: (the kernel, the checks and the game loop: 10 s): ``mcts`` 32 (its rollouts compile ``greedy`` too),
#: ``alphazero`` about as much, ``alphabeta`` 21, ``greedy`` and ``pattern`` 9 each.  So the main job's
#: two processes compile ``mcts`` (and ``random``) in one and the rest in the other.
COMPILE_WEIGHT = {"mcts": 32, "alphazero": 32, "alphabeta": 21, "greedy": 9, "pattern": 9}


def spread(specs: Iterable[str], k: int) -> list[list[str]]:
    """``specs`` split into at most ``k`` groups of about equal compile cost (heaviest first, each to the
    lightest group so far); every spec in exactly one group, none empty."""
    def weight(spec: str) -> int:
        return COMPILE_WEIGHT.get(spec.partition(":")[0], 1)

    specs = list(specs)
    k = max(1, min(int(k), len(specs)))
    groups: list[list[str]] = [[] for _ in range(k)]
    load = [0] * k
    for spec in sorted(specs, key=weight, reverse=True):
        i = load.index(min(load))
        groups[i].append(spec)
        load[i] += weight(spec)
    return [g for g in groups if g]


def _warm_group(specs: list[str], board_sizes: list[int | None], rules: Any) -> None:
    """Warm ``specs`` in this (child) process: what it compiles lands in the shared on-disk cache."""
    warm_up(specs, board_sizes=board_sizes, rules=rules, envs=False)


def _warm_env_paths(rules: Rules) -> None:
    """The numba code the envs call beyond the bots': observation planes, legal masks, the batched runner."""
    import numpy as np

    from . import kernel as K

    from . import vocab as V
    from .batch import BatchRunner
    from .observation import NUM_PLANES, observe, write_observation

    n = rules.board_size
    s = rules.new_state()
    obs = np.empty((n, n, NUM_PLANES), np.float32)
    mask = np.empty(rules.num_actions, np.int8)
    observe(s, int(s[V.H_TO_MOVE]), True, obs, mask)  # the envs' path (planes and mask in one call)
    write_observation(s, int(s[V.H_TO_MOVE]), obs)  # and each on its own (learners, vector env)
    K.legal_mask(s, mask)
    V.opponent(V.WHITE)  # the envs' Python code calls the vocabulary's numba helpers too (rewards, infos)
    runner = BatchRunner(2, rules=rules, opponent="random", seed=0, threads=1)
    _, masks = runner.reset()
    for _ in range(4):
        masks = runner.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))[1]


def _compile_in_parallel(groups: list[list[str]], board_sizes: list[int | None], rules: Any) -> None:
    """Warm ``groups[1:]`` in child processes while this one warms ``groups[0]``; a child that fails leaves
    its bots to this process (they compile in the warm-up that follows)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(len(groups) - 1, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_warm_group, g, board_sizes, rules) for g in groups[1:]]
        _warm_group(groups[0], board_sizes, rules)
        for f in futures:
            try:
                f.result()
            except Exception:  # noqa: BLE001 - the caller's own warm-up compiles (and reports) what is missing
                pass


def warm_up(bots: Iterable[str] | None = None, board_sizes: Iterable[int | None] | int | None = DEFAULT_BOARD_SIZES,
            rules: str | Rules | dict[str, Any] = "competitive",
            note: Callable[[str], Any] | None = None, envs: bool = True, workers: int = 1) -> WarmupReport:
    """Compile (or load from numba's cache) everything the given bots use; return a :class:`WarmupReport`.

    ``bots``: player specs (default :data:`DEFAULT_BOTS`); each plays one game
    against ``random`` on every board size of ``board_sizes`` (``None``: the
    board size of ``rules``).  Numba compiles per argument type, not per board
    size, so a small board compiles everything a large one uses, quicker.
    ``note``: a callable that receives one line of text before the work starts
    (``jiu eval`` shows it instead of an ETA).  Bots that cannot be built here
    (a missing optional package) are skipped and listed in the report.
    ``envs``: also compile what the envs call beyond the bots (observation
    planes, legal masks, the batched runner); a tournament, which plays bots
    only, warms with ``envs=False``.
    ``workers > 1``: when the cache is cold, compile the bots in that many
    processes at once (:func:`spread` balances them; this process takes one
    group), then load everything here from the cache.  Numba compiles on
    one core, so on a cold cache this divides the wait by up to the number
    of cores; a warm cache loads in this process alone.
    """
    from .evaluation.play import run_game

    bots = list(DEFAULT_BOTS if bots is None else bots)
    if board_sizes is None or isinstance(board_sizes, int):
        board_sizes = [board_sizes]
    report = WarmupReport(bots=[], board_sizes=[])
    players = []
    modules = {"jiu_env.kernel"}
    for spec in bots:
        try:
            p = make_player(spec, seed=0)  # imports the bot's modules
            modules.add(type(p).__module__)
        except (ImportError, ValueError, TypeError, OSError) as e:
            report.skipped[spec] = str(e)
            continue
        players.append(spec)
        report.bots.append(spec)
    functions = numba_functions()
    warm = cache_is_warm(modules)
    groups = spread(players, workers) if warm is False and int(workers) > 1 else [players]
    if note is not None:
        if warm:
            note("warming up numba (loading the compiled cache)...")
        else:
            seconds = COLD_SECONDS_SPREAD if len(groups) > 1 else COLD_SECONDS
            note(f"warming up numba (first run compiles, ~{seconds} s)...")
    before = _counts(functions)
    t0 = time.perf_counter()
    report.processes = max(1, len(groups))
    if len(groups) > 1:
        _compile_in_parallel(groups, list(board_sizes), rules)
    for n in board_sizes:
        r = _rules_for(rules, n)
        report.board_sizes.append(r.board_size)
        for spec in players:
            try:
                run_game(r, make_player(warm_spec(spec), seed=0), make_player("random", seed=1), seed=0)
            except Exception as e:  # e.g. a network trained for another board size: warm it where it plays
                report.skipped[f"{spec} on {r.board_size}x{r.board_size}"] = f"{type(e).__name__}: {e}"
        if envs:
            _warm_env_paths(r)
    report.seconds = time.perf_counter() - t0
    functions = numba_functions()  # bots may import more modules while they play
    after = _counts(functions)
    for name, d in functions:
        h0, m0 = before.get(name, (0, 0))
        h1, m1 = after[name]
        if m1 > m0:
            report.compiled.append(name)
        elif h1 > h0:
            report.loaded.append(name)
        path = getattr(getattr(d, "_cache", None), "cache_path", None)
        if path and path not in report.cache_dirs:
            report.cache_dirs.append(path)
    return report


__all__ = ["warm_up", "spread", "COMPILE_WEIGHT", "WarmupReport", "numba_functions", "cache_is_warm", "builtin_specs", "DEFAULT_BOTS"]
