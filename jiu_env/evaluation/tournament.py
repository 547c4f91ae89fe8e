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

This module runs a tournament (:func:`run_tournament`); its parts live beside
it, one responsibility each, and every name is importable from here as well:
:mod:`~jiu_env.evaluation.config` (:class:`TournamentConfig`, its checks,
``load_config``), :mod:`~jiu_env.evaluation.schedule` (the games, their
seeds, colours and openings), :mod:`~jiu_env.evaluation.play` (one game, in
any process), :mod:`~jiu_env.evaluation.storage` (the output folder:
``games.jsonl``, its lock, resuming) and :mod:`~jiu_env.evaluation.summary`
(the figures of the games, :class:`TournamentResult`).  The backends
(:mod:`~jiu_env.evaluation.backends`), the reports and the numba warm-up use
those parts, not this module, so that none of them imports it back.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Callable

from ..fileio import dumps_json
from ..players import make_player, player_version
from .config import (
    EXECUTION_KEYS, MAX_BOOTSTRAP_SAMPLES, MAX_GAMES_PER_PAIR, MAX_RANDOM_OPENING, MAX_SCHEDULED_GAMES, MAX_WORKERS,
    MODES, SHIPPED_CONFIG_DIR, Player, TournamentConfig, _check_workers, _player_from, config_file, default_workers,
    load_config, shipped_configs, timed_spec,
)
from .play import play_task, run_game
from .schedule import GameTask, schedule
from .storage import (
    CONFIG_FILE, GAMES_FILE, LOCK_FILE, STALE_FILE, OutDirInUse, TournamentMismatch, _check_same_tournament,
    _load_stored, _open_games_file, _write_atomic, lock_out_dir, read_games,
)
from .summary import (
    TournamentResult, _add_score, _running_scores, _SPRTWatch, eta_text, rate, scores_text, sprt_summary, summarise,
)


def run_tournament(config: TournamentConfig, out_dir: str | None = None, workers: int | None = None,
                   resume: bool = True, progress: Any = None, write_reports: bool = True, command: str | None = None,
                   log: Callable[[str], Any] | None = None, backend: str | None = None, address: str | None = None,
                   warm: bool = True, report_only: bool = False, stored_versions: bool = False) -> TournamentResult:
    """Play the tournament (or its missing games) and summarise it: :func:`_run_tournament`, with
    ``out_dir`` locked for the run.  A second run on the same ``out_dir`` while one is going raises
    :class:`OutDirInUse` instead of rewriting ``games.jsonl`` under the first (which would go on
    appending to a replaced file, and its games would be lost).  ``report_only=True`` only reads
    ``out_dir`` and so takes no lock: it may run beside the run that plays into it."""
    kwargs = dict(config=config, out_dir=out_dir, workers=workers, resume=resume, progress=progress,
                  write_reports=write_reports, command=command, log=log, backend=backend, address=address, warm=warm,
                  report_only=report_only, stored_versions=stored_versions)
    if out_dir is None or report_only:
        return _run_tournament(**kwargs)
    # every setting and player is checked before out_dir is made or locked: a refused run leaves nothing behind
    kwargs.update(_execution(config, workers, backend, address))
    kwargs["versions"] = _versions(config)
    os.makedirs(out_dir, exist_ok=True)
    with lock_out_dir(out_dir):
        return _run_tournament(**kwargs)


def _execution(config: TournamentConfig, workers: int | None, backend: str | None,
               address: str | None) -> dict[str, Any]:
    """``workers``, ``backend`` and ``address`` resolved against the config's ``execution`` settings and checked
    (ValueError / TypeError / ImportError naming the problem)."""
    from .backends import check_backend

    execution = getattr(config, "execution", None) or {}
    source = None  # where the address came from, for the message
    if address is None and backend in (None, "ray") and execution.get("address") is not None:
        # a backend given here drops the config's address with it: the caller's settings win
        address = execution["address"]
        source = f"the config's address ({address})"
    backend = backend or execution.get("backend") or "local"
    workers = workers if workers is not None else execution.get("workers")
    _check_workers(workers)
    check_backend(backend, address, source)
    return {"workers": workers, "backend": backend, "address": address}


def _versions(config: TournamentConfig) -> dict[str, str]:
    """The code version of every played spec: each player is built once here, so a bad spec or a missing file
    fails early, and the versions decide which stored games are still valid."""
    versions: dict[str, str] = {}
    for p in config.players:
        spec = config.played_spec(p.name)
        if spec not in versions:
            versions[spec] = player_version(make_player(spec, seed=0))
    return versions


def _stored_versions(config: TournamentConfig, by_id: dict[str, Any], done: dict[str, Any]) -> dict[str, str]:
    """The code version of every played spec in the stored games ``done`` (``stored_versions``): ValueError
    for a player whose games were played by several versions, which one report would mix."""
    seen: dict[str, set[str]] = {}
    for gid, line in done.items():
        t = by_id[gid]
        seen.setdefault(t.white_spec, set()).add(line.get("white_version", ""))
        seen.setdefault(t.black_spec, set()).add(line.get("black_version", ""))
    versions: dict[str, str] = {}
    for p in config.players:
        spec = config.played_spec(p.name)
        found = sorted(seen.get(spec, {""}))
        if len(found) > 1:
            raise ValueError(f"the stored games of {p.name} ({spec}) were played by {len(found)} code versions "
                             f"({', '.join(found)}): a report of stored versions reads one version a player")
        versions[spec] = found[0]
    return versions


def _run_tournament(config: TournamentConfig, out_dir: str | None = None, workers: int | None = None,
                   resume: bool = True, progress: Any = None, write_reports: bool = True, command: str | None = None,
                   log: Callable[[str], Any] | None = None, backend: str | None = None, address: str | None = None,
                   warm: bool = True, report_only: bool = False, stored_versions: bool = False,
                   versions: dict[str, str] | None = None) -> TournamentResult:
    """Play the tournament (or its missing games) and summarise it.

    ``workers``: worker processes (default: all cores; 1 plays in this
    process).  ``backend``: ``"local"`` (this machine's cores, the default)
    or ``"ray"`` (Ray actors; ``address`` names a running cluster, else a
    private one is started here; see ``docs/scaling_ray.md``).  Both give the
    same games.  ``workers``, ``backend`` and ``address`` default to the
    config's ``execution`` settings (from its file); a ``backend`` given
    here other than ``"ray"`` drops the config's address with its backend.
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

    ``report_only=True`` plays nothing and writes nothing: the result is the
    summary of the games of this configuration already stored in
    ``out_dir`` (all of them, or those an SPRT counted), which may be fewer
    than the schedule.  It reads a match while it is still being played
    (the half-written line of a game being stored is passed over), or a
    finished folder with other settings of the report (``sprt``, anchor,
    intervals) without rewriting its reports.  ``stored_versions=True`` (with ``report_only``) reads the
    stored games whatever code versions of the players played them, one version a player (a folder played
    by an older release: the current code would play them again); the summary's ``versions`` are theirs,
    and no player is built.
    """
    from .backends import execute

    stored = None  # report_only: the games file it reads
    if report_only:
        if out_dir is None:
            raise ValueError("report_only reads the games stored in out_dir: give out_dir")
        stored = os.path.join(out_dir, GAMES_FILE)
        if not os.path.isfile(stored):
            raise ValueError(f"report_only reads the games stored in out_dir: {stored} does not exist")
        if not resume:
            raise ValueError("report_only reads the stored games: it cannot discard them (resume=False)")
    elif stored_versions:
        raise ValueError("stored_versions reads the stored games as they were played: give report_only too "
                         "(a run that plays needs the current code's versions)")

    log = log or _warn
    if versions is None:  # not checked by run_tournament before it locked out_dir
        resolved = _execution(config, workers, backend, address)
        workers, backend, address = resolved["workers"], resolved["backend"], resolved["address"]
        # stored_versions: the stored lines' own (read below), no player built
        versions = {} if stored_versions else _versions(config)
    assert backend is not None, "run_tournament resolves the backend before it passes the versions"
    if config.untimed():
        log(f"the time control ({config.tc:g} s per turn) does not reach {', '.join(config.untimed())}: "
            "they take no time budget")
    tasks = schedule(config, versions)
    by_id = {t.id: t for t in tasks}
    done = {}
    stale = 0
    games_path = None
    if stored is not None:
        _check_same_tournament(out_dir, config, log)
        done, stale = _load_stored(stored, by_id, log, tidy=False, any_version=stored_versions)
        if stored_versions:
            versions = _stored_versions(config, by_id, done)
    elif out_dir is not None:
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
    decided = watch is not None and watch.update(done)
    if report_only or decided:
        todo = []  # nothing to play, or the stored games already decide the test
    else:
        todo = [t for t in tasks if t.id not in done]
    if workers is not None and todo and workers > len(todo) and backend == "local":
        log(f"{workers} workers asked for {len(todo)} games to play: using {len(todo)}")
    if todo and warm:
        _warm_parent(todo, getattr(progress, "note", None),
                     workers=min(len(todo), workers if workers is not None and backend == "local" else default_workers()))
    scores = _running_scores(config, done.values())
    n_done = len(done)
    if progress is not None:
        progress(n_done, len(tasks), None, scores)
    fout = _open_games_file(games_path) if games_path else None
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
    if watch is not None:  # the tables and the Elo fit cover the games the test counted, decided or not
        used = watch.used_ids()
        games = [done[t.id] for t in tasks if t.id in used]
    else:
        games = [done[t.id] for t in tasks if t.id in done]  # all of them, unless report_only
    summary = summarise(config, games)
    if watch is not None:
        # decided: games finished by other workers while the deciding pairs were played; undecided (a folder
        # read while it is played, or with a gap): games stored beyond the first incomplete pair
        key = "games_after_decision" if watch.decided else "games_not_counted"
        summary["sprt"][key] = len(done) - len(games)
    summary["stale_lines_ignored"] = stale
    summary["versions"] = {p.name: versions[config.played_spec(p.name)] for p in config.players}
    result = TournamentResult(config, games, summary, new_games=new, out_dir=out_dir)
    if out_dir is not None and write_reports and not report_only:
        from .report import write_reports as _write

        if not _write(result, out_dir, command=command):
            log(f"no results.png in {out_dir}: drawing it needs matplotlib (pip install matplotlib, or the eval "
                "extra)")
    return result


def _warn(msg):
    warnings.warn(msg, stacklevel=3)


def _warm_parent(todo, note=None, workers=1):
    """Compile (or load) the numba code of the built-in bots the games use, once, in this process.

    The games are played on a small board: numba compiles per argument type,
    not per board size, so this compiles everything at a fraction of the cost
    of a full game.  Workers started afterwards load the cache.  On a cold
    cache the bots compile in up to ``workers`` processes at once (the cores
    the games are about to use), not one after another.
    """
    from ..warmup import builtin_specs, warm_up

    specs = sorted({b for t in todo for s in (t.white_spec, t.black_spec) for b in builtin_specs(s)})
    if not specs:
        return None
    n = min(8, int(todo[0].rules["board_size"]))
    rep = warm_up(specs, board_sizes=[n], rules=todo[0].rules, note=note, envs=False, workers=max(1, int(workers)))
    if note is not None:
        note(f"numba ready in {rep.seconds:.0f}s ({len(rep.compiled)} functions compiled, "
             f"{len(rep.loaded)} loaded from the cache)")
    return rep


def _execute(todo, workers):
    """Yield result lines as games finish on this machine (see :mod:`jiu_env.evaluation.backends`)."""
    from .backends import execute_local

    return execute_local(todo, workers)


__all__ = [
    "Player", "TournamentConfig", "GameTask", "TournamentResult", "load_config", "schedule", "run_game",
    "play_task", "run_tournament", "summarise", "rate", "read_games", "default_workers", "scores_text",
    "TournamentMismatch", "sprt_summary", "timed_spec", "shipped_configs", "config_file",
]
