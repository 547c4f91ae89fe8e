"""Training data from search: engine games stored as chunks of moves with their labels.

Why games and not positions: a 14x14 game has about 600 decisions, and its
positions (kernel states or observation planes) would take megabytes.  The
kernel replays a game's actions from the rules' start position in
microseconds, so a chunk stores only, per game, its seed, actions and result
and, per decision, the teacher's label; :func:`iter_positions` replays them
into positions when a dataset is built.

Labels.  Every decision of a game after its random opening is put to the
**teacher** (a bot spec, ``alphabeta:depth=2`` by default) as a fresh search:
the teacher is restarted with a seed derived from the game seed and the
decision index before it searches, so a label depends on the position and
that seed only, never on the searches before it.  That is what makes a label
checkable (a fresh search of the replayed position gives it again) and the
data the same whichever process or machine made it.  A label is the
teacher's move and its search value (centistones for the side to move,
``alphabeta``'s ``last_info["value"]``, clipped to ``+-VALUE_WIN`` for a
forced result).  Decisions with one legal action are not labelled (there is
nothing to learn from them).

**Soft labels** (``soft``, a temperature in centistones).  One engine move
is one bit of what the search knows: the moves it scored nearly as well,
and how badly the others lose, are thrown away.  With ``soft > 0`` the
teacher must report its root scores (``alphabeta`` with ``root_margin``,
which scores every root move within that margin of the best exactly), and
each label also stores the ``SOFT_TOP_K`` best root moves with weights
``exp((score - best) / soft)`` (in units of 1/``SOFT_SCALE``, as the
``pi_actions`` / ``pi_visits`` of a self-play chunk), the soft policy target
the training then learns instead of the one-hot move.  A ``phases:X+Y``
teacher may report them in one phase only (a network placing, a search
with ``root_margin`` fighting the battle): its decisions in the other phase
keep the move alone (a one-hot soft label).  A teacher that reports root
scores in neither phase is refused before the first game, so a misspelt
teacher does not quietly turn a soft run into a hard one.

The game is played by the labels, except that with probability ``explore``
a battle move (not a chain jump, drop or capture choice) is replaced by a
random legal move: the position is still labelled with the teacher's move,
and the games reach positions the teacher alone would not (a learner facing
weaker opponents meets them).  The first ``k`` placements, ``k`` drawn from
``0..random_opening``, are random and unlabelled.

**Played by other players** (``players``, DAgger).  A network that copies
its teacher makes mistakes the teacher never makes, and the positions they
lead to are in no game of the teacher's: the learner meets them in play but
never learned them.  DAgger (Ross, Gordon and Bagnell 2011) plays the
games with the learner (or any players) and keeps the teacher as the
labeller: with ``players=(A, B)``, game ``g`` of the run is played by ``A``
as white and ``B`` as black when ``g`` is even, colours swapped when it is
odd; every decision is still put to the teacher, which labels it and plays
nothing.  Both players are restarted with the game's seed at its start, so
a chunk is again a function of the settings and its index.  A player spec
naming a checkpoint names a file: the run does not follow the file if it
changes, so give a new run directory to a new network.

Storage.  A run directory holds ``manifest.json`` (the settings, and per
chunk its games, decisions, labels, CPU seconds and SHA-256) and the chunks
``chunk-00000.npz``...; chunk ``i`` holds games ``i*chunk_games`` to
``(i+1)*chunk_games - 1``.  A chunk is written to a temporary file and
renamed, so a run stopped at any point loses at most the chunk in progress,
and :func:`generate` started again with the same settings makes only the
chunks that are missing.  Settings that differ from the manifest's are
refused, so one directory never mixes two teachers.  The worker processes
of a local pool end with the run's process, even when it is killed, so a
stopped run leaves nothing playing on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..fileio import atomic_write_bytes, atomic_write_text
from ..rules import Rules
from .params import check_fields, check_int, check_number
from .seeds import game_seed
from .selfplay import SelfPlayConfig, play_selfplay_chunk

DATA_FORMAT = "jiu_env.learn.games/1"
MANIFEST = "manifest.json"
VALUE_WIN = 100_000  # label of a forced win for the side to move (centistones; a loss is -VALUE_WIN)
NO_VALUE = np.iinfo(np.int32).min  # a labelled decision whose teacher reports no value
SOFT_TOP_K = 8  # root moves kept per soft label
SOFT_SCALE = 10_000  # a soft label's weights are stored as integers summing to about this


@dataclass(frozen=True)
class DataConfig:
    """What a data run plays and how it labels (stored in the manifest; a resumed run must match it)."""

    teacher: str = "alphabeta:depth=2,tt_bits=18"
    rules: dict[str, Any] = field(default_factory=lambda: Rules.make("competitive").to_dict())
    seed: int = 0
    chunk_games: int = 8
    random_opening: int = 8
    explore: float = 0.05
    #: the two players that play the games (white in even games; empty: the teacher plays them)
    players: tuple[str, ...] = ()
    #: temperature of the soft labels in centistones (0: the teacher's move alone)
    soft: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.players, (str, bytes)) or not isinstance(self.players, (tuple, list)):
            raise ValueError(f"players must be two bot spec strings, not {self.players!r}")
        object.__setattr__(self, "players", tuple(self.players))
        if self.players and (len(self.players) != 2
                             or not all(isinstance(p, str) and p for p in self.players)):
            raise ValueError(f"players must be two bot spec strings (white in even games), not {self.players!r}")
        if not isinstance(self.teacher, str) or not self.teacher:
            raise ValueError(f"teacher must be a bot spec string, not {self.teacher!r}")
        check_fields(self, ints=dict(seed=(0, 2 ** 63 - 1), chunk_games=(1, 10_000), random_opening=(0, 64)),
                     numbers=dict(explore=(0, 1)))
        check_number("soft (a temperature in centistones)", self.soft, 0, 100_000)
        Rules.make(dict(self.rules))  # refuse bad rules now, not in a worker

    @property
    def rules_obj(self) -> Rules:
        return Rules.make(dict(self.rules))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.players:
            del d["players"]  # the manifests of runs made before the field existed stay resumable
        else:
            d["players"] = list(self.players)
        if not self.soft:
            del d["soft"]  # likewise
        return d


def decision_seed(gseed: int, decision: int) -> int:
    """The teacher's seed for decision ``decision`` of the game seeded ``gseed``."""
    return int(np.random.SeedSequence([gseed, decision, 7]).generate_state(1)[0])


def teacher_label(teacher: Any, state: np.ndarray, gseed: int) -> tuple[int, int]:
    """``(action, value)``: the teacher's fresh search of ``state`` (decision index from the state)."""
    teacher.restart(decision_seed(gseed, int(state[V.H_DECISIONS])))
    a = int(teacher.step(state))
    info = getattr(teacher, "last_info", None) or {}
    v = info.get("value")
    if v is None:
        return a, int(NO_VALUE)
    return a, int(max(-VALUE_WIN, min(VALUE_WIN, int(v))))


def reports_root_scores(teacher: Any, phase: int) -> bool:
    """Whether ``teacher``'s searches of ``phase`` decisions report their root scores (soft labels there).

    An engine says so itself (``alphabeta``'s ``reports_root_scores``: with
    ``root_margin > 0`` and a depth); a ``phases:X+Y`` teacher does where
    that phase's engine does.
    """
    from ..bots.composite import PhasePlayer

    if isinstance(teacher, PhasePlayer):
        teacher = teacher.placement if phase == V.PH_PLACEMENT else teacher.battle
    return bool(getattr(teacher, "reports_root_scores", False))


def soft_phases(config: DataConfig, teacher: Any) -> dict[int, bool]:
    """Per phase, whether ``config``'s decisions there get soft labels from ``teacher``.

    A soft run (``config.soft > 0``) whose teacher reports root scores in
    neither phase is refused: it would quietly be a hard one.
    """
    soft_in = {ph: bool(config.soft) and reports_root_scores(teacher, ph) for ph in (V.PH_PLACEMENT, V.PH_BATTLE)}
    if config.soft and not any(soft_in.values()):
        raise ValueError(f"soft labels need a teacher that reports its root scores in at least one phase "
                         f"(last_info['root']), not {config.teacher!r}: use alphabeta with a depth and "
                         f"root_margin > 0, e.g. alphabeta:depth=2,root_margin=240, or a phases teacher with one")
    return soft_in


def check_labellers(config: DataConfig) -> None:
    """Build ``config``'s teacher and players once and check the soft labels' teacher, so that a misspelt
    spec is refused before a run directory is written (and not by every worker, after the manifest)."""
    from ..bots import make_bot

    soft_phases(config, make_bot(config.teacher, seed=0))
    for spec in config.players:
        make_bot(spec, seed=0)


def one_hot_target(action: int) -> tuple[np.ndarray, np.ndarray]:
    """``(actions, weights)``: the soft label of a decision whose teacher reports only its move."""
    pa = np.full(SOFT_TOP_K, -1, np.int32)
    pv = np.zeros(SOFT_TOP_K, np.int32)
    pa[0], pv[0] = action, SOFT_SCALE
    return pa, pv


def soft_target(teacher: Any, action: int, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """``(actions, weights)``: the soft label of the teacher's last search (``SOFT_TOP_K`` entries each).

    The root moves by score, best first (ties by action), weighted
    ``exp((score - best) / temperature)`` in units of ``1/SOFT_SCALE`` of
    their sum; unused entries hold action -1 and weight 0.  The teacher's
    move keeps weight >= 1 even where its score is not the best reported.
    """
    info = getattr(teacher, "last_info", None) or {}
    root = info.get("root")
    if root is None:
        raise ValueError("soft labels need a teacher that reports its root scores (last_info['root']): "
                         "use alphabeta with a depth and root_margin > 0, e.g. alphabeta:depth=2,root_margin=240")
    moves = np.asarray(root[0], np.int64)
    scores = np.clip(np.asarray(root[1], np.int64), -VALUE_WIN, VALUE_WIN).astype(np.float64)
    order = np.lexsort((moves, -scores))[:SOFT_TOP_K]
    if action not in moves[order]:
        order = np.concatenate([[int(np.flatnonzero(moves == action)[0])], order[:SOFT_TOP_K - 1]])
    w = np.exp((scores[order] - scores[order].max()) / temperature)
    weights = np.maximum(np.rint(SOFT_SCALE * w / w.sum()), 0).astype(np.int32)
    weights[moves[order] == action] = np.maximum(weights[moves[order] == action], 1)
    pa = np.full(SOFT_TOP_K, -1, np.int32)
    pv = np.zeros(SOFT_TOP_K, np.int32)
    pa[:order.size], pv[:order.size] = moves[order], weights
    return pa, pv


def play_labelled_game(config: DataConfig, teacher: Any, gseed: int,
                       players: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """One game of the run: its actions, per-decision labels and result.

    ``players``: the bots (white, black) that play the game, restarted here
    with ``gseed``; None: the teacher's labels are played.
    """
    if players is not None:
        for p in players:
            p.restart(gseed)
    rules = config.rules_obj
    rng = np.random.default_rng(gseed)
    opening = int(rng.integers(config.random_opening + 1))
    s = rules.new_state()
    buf = np.empty(rules.num_actions, np.int64)
    actions: list[int] = []
    labels: list[int] = []
    values: list[int] = []
    pi_actions: list[np.ndarray] = []
    pi_weights: list[np.ndarray] = []
    soft_in = soft_phases(config, teacher)
    while s[V.H_PHASE] != V.PH_OVER:
        k = K.legal_actions(s, buf)
        label, value = -1, 0
        if s[V.H_PHASE] == V.PH_PLACEMENT and int(s[V.H_DECISIONS]) < opening:
            a = int(buf[rng.integers(k)])
        elif k == 1:
            a = int(buf[0])
        else:
            label, value = teacher_label(teacher, s, gseed)
            if config.soft:
                pa, pv = (soft_target(teacher, label, config.soft) if soft_in[int(s[V.H_PHASE])]
                          else one_hot_target(label))
                pi_actions.append(pa)
                pi_weights.append(pv)
            a = label if players is None else int(players[0 if s[V.H_TO_MOVE] == V.WHITE else 1].step(s))
            if config.explore > 0 and s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] == V.SUB_MOVE \
                    and rng.random() < config.explore:
                a = int(buf[rng.integers(k)])
        K.apply_action(s, a)
        actions.append(a)
        labels.append(label)
        values.append(value)
    game = {"seed": gseed, "actions": actions, "labels": labels, "values": values,
            "result": int(K.result_for_white(s)), "end_reason": int(s[V.H_END_REASON]),
            "battle_turns": int(s[V.H_TURNS])}
    if config.soft:
        game["pi_actions"], game["pi_visits"] = pi_actions, pi_weights
    return game


def chunk_name(i: int) -> str:
    """File name of chunk ``i`` in a data run; zero-padded so the chunks sort in play order."""
    return f"chunk-{i:05d}.npz"


def play_chunk(config: DataConfig, index: int) -> tuple[bytes, float, float]:
    """Play the games of chunk ``index``: ``(the chunk file's bytes, CPU seconds, wall seconds)``.

    Writes nothing, so it runs the same in this process, a worker process or
    a Ray task on another machine; :func:`store_chunk` writes the bytes.
    """
    from ..bots import make_bot

    t0 = time.process_time()
    w0 = time.perf_counter()
    teacher = make_bot(config.teacher, seed=0)
    bots = tuple(make_bot(spec, seed=0) for spec in config.players)

    def players(g: int) -> tuple[Any, Any] | None:
        return None if not bots else (bots[0], bots[1]) if g % 2 == 0 else (bots[1], bots[0])

    games = [play_labelled_game(config, teacher, game_seed(config, g), players(g))
             for g in range(index * config.chunk_games, (index + 1) * config.chunk_games)]
    payload = pack_games(games, soft=bool(config.soft))
    return payload, time.process_time() - t0, time.perf_counter() - w0


def pack_games(games: list[dict[str, Any]], soft: bool = False) -> bytes:
    """The bytes of a chunk file holding ``games`` (dicts as :func:`play_labelled_game` returns them).

    ``soft``: the games carry the soft label of every labelled decision (``pi_actions``, ``pi_visits``),
    stored in order as in a self-play chunk.  Any maker of labelled games (an engine run, stored match
    records) writes its chunks through here, so :func:`load_games` reads them all alike.
    """
    import io

    offsets = np.cumsum([0] + [len(g["actions"]) for g in games]).astype(np.int64)
    arrays = {
        "seed": np.array([g["seed"] for g in games], np.int64),
        "offsets": offsets,
        "actions": np.concatenate([np.array(g["actions"], np.int32) for g in games]),
        "labels": np.concatenate([np.array(g["labels"], np.int32) for g in games]),
        "values": np.concatenate([np.array(g["values"], np.int32) for g in games]),
        "result": np.array([g["result"] for g in games], np.int8),
        "end_reason": np.array([g["end_reason"] for g in games], np.int8),
        "battle_turns": np.array([g["battle_turns"] for g in games], np.int32),
    }
    if soft:
        for key in ("pi_actions", "pi_visits"):
            arrays[key] = np.concatenate([np.array(g[key], np.int32).reshape(-1, SOFT_TOP_K) for g in games])
    buf = io.BytesIO()
    np.savez_compressed(buf, **cast(dict[str, Any], arrays))  # numpy's stub confuses **arrays with allow_pickle
    return buf.getvalue()


def store_chunk(out_dir: str | os.PathLike[str], index: int, payload: bytes, cpu_seconds: float | None = None,
                wall_seconds: float | None = None) -> dict[str, Any]:
    """Write chunk ``index`` atomically (temporary file, then rename); returns its manifest entry."""
    path = pathlib.Path(out_dir) / chunk_name(index)
    atomic_write_bytes(path, payload)
    return chunk_entry(path, cpu_seconds=cpu_seconds, wall_seconds=wall_seconds)


def make_chunk(config: DataConfig, index: int, out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Play chunk ``index`` here and write it; returns its manifest entry."""
    return store_chunk(out_dir, index, *play_chunk(config, index))


def chunk_entry(path: pathlib.Path, cpu_seconds: float | None = None, wall_seconds: float | None = None
                ) -> dict[str, Any]:
    """A chunk's manifest entry, read from its file."""
    with np.load(path) as z:
        n_games = int(z["seed"].size)
        decisions = int(z["actions"].size)
        labelled = int((z["labels"] >= 0).sum())
        wins = {"white": int((z["result"] > 0).sum()), "black": int((z["result"] < 0).sum()),
                "none": int((z["result"] == 0).sum())}
    return {"games": n_games, "decisions": decisions, "labelled": labelled, "results": wins,
            "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds, 3),
            "wall_seconds": None if wall_seconds is None else round(wall_seconds, 3),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def read_manifest(out_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of the data run in ``out_dir``, or None if there is none yet (a new run).

    A file of another format raises ValueError rather than being resumed as a data run.
    """
    path = pathlib.Path(out_dir) / MANIFEST
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("format") != DATA_FORMAT:
        raise ValueError(f"{path} is not a jiu_env training-data manifest (format {DATA_FORMAT})")
    return data


def write_manifest(out_dir: str | os.PathLike[str], data: dict[str, Any]) -> None:
    """Replace the manifest in one step, so a run stopped mid-write still finds the previous one."""
    atomic_write_text(pathlib.Path(out_dir) / MANIFEST, json.dumps(data, indent=1, sort_keys=True) + "\n")


def open_run(out_dir: str | os.PathLike[str], config: Any) -> dict[str, Any]:
    """The manifest of the run in ``out_dir``: created for ``config``, or checked against it when resuming.

    Chunk files on disk that the manifest does not list yet (a run stopped
    between writing a chunk and the manifest) are read back into it.
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = read_manifest(out)
    if data is None:
        data = {"format": DATA_FORMAT, "config": config.to_dict(), "chunks": {}}
    elif data["config"] != json.loads(json.dumps(config.to_dict())):
        raise ValueError(f"{out} holds data made with other settings: {data['config']} (asked: {config.to_dict()}); "
                         "use another directory")
    for path in sorted(out.glob("chunk-*.npz")):
        if path.name not in data["chunks"]:
            data["chunks"][path.name] = chunk_entry(path)
    for pattern in (".chunk-*.tmp", f".{MANIFEST}.*.tmp"):  # a chunk or manifest being written when a run was stopped
        for tmp in out.glob(pattern):
            tmp.unlink()
    write_manifest(out, data)
    return data


#: what the chunk runners yield, ``(index, chunk bytes, CPU seconds, wall seconds)``; generators, so that
#: :func:`generate` can close them (and so end their workers) the moment it stops reading
_Chunks = Generator[tuple[int, bytes, float, float], None, None]


def _chunk_job(cfg: dict[str, Any], index: int) -> tuple[int, bytes, float, float]:
    if cfg.get("kind") == "selfplay":
        return (index, *play_selfplay_chunk(SelfPlayConfig(**cfg), index))
    return (index, *play_chunk(DataConfig(**cfg), index))


def generate(out_dir: str | os.PathLike[str], config: Any, games: int, workers: int = 1,
             progress: bool = True, backend: str = "local", address: str | None = None) -> dict[str, Any]:
    """Make the chunks of the first ``games`` games (rounded up to whole chunks) that ``out_dir`` lacks.

    ``config``: a :class:`DataConfig` (engine games labelled by a teacher) or a
    :class:`~jiu_env.learn.selfplay.SelfPlayConfig` (the network's self-play).

    ``backend="local"``: this process (``workers == 1``) or a pool of
    ``workers`` processes; ``backend="ray"``: Ray tasks on the cluster at
    ``address`` (or a private instance of ``workers`` CPUs on this machine),
    retried on another node if theirs is lost.  A chunk depends only on the
    settings and its index, so every backend writes the same bytes; the
    chunks are written here as they come back.  Returns the manifest.

    A chunk that raises stops the run with :class:`ChunkFailed` naming it:
    the chunks finished by then are stored, the others are not played on.
    """
    from ..evaluation.backends import check_backend

    check_int("games", games, 1, 10_000_000)
    check_int("workers", workers, 1, 1024)
    check_backend(backend, address)
    if isinstance(config, DataConfig):
        check_labellers(config)
    data = open_run(out_dir, config)
    n_chunks = -(-games // config.chunk_games)
    todo = [i for i in range(n_chunks) if chunk_name(i) not in data["chunks"]]
    cfg = config.to_dict()
    bar = _progress(len(todo), progress, f"chunks of {config.chunk_games} games")

    def done(index: int, payload: bytes, cpu: float, wall: float) -> None:
        data["chunks"][chunk_name(index)] = store_chunk(out_dir, index, payload, cpu, wall)
        write_manifest(out_dir, data)
        bar(data["chunks"][chunk_name(index)])

    if not todo:
        return data
    if backend == "ray":
        results = _ray_chunks(cfg, todo, workers if workers > 1 else None, address)
    elif workers == 1 or len(todo) == 1:
        results = _serial_chunks(cfg, todo)
    else:
        results = _local_chunks(cfg, todo, min(workers, len(todo)))
    # closed at once when a chunk fails or this process is interrupted: the workers stop now, not when the
    # generator happens to be collected
    with contextlib.closing(results):
        for result in results:
            done(*result)
    return data


class ChunkFailed(RuntimeError):
    """A chunk of a run raised (a player's or the teacher's error, a worker process lost).

    The message names the chunk and the error.  The chunks finished before it are stored (a run started again
    does not play them again), the others are not played on: one bad player should not cost hours of games
    that are then thrown away.
    """


def _chunk_failed(index: int, e: BaseException) -> ChunkFailed:
    """The error of chunk ``index`` that raised ``e`` (a Ray task's error: the one its task raised), on one line."""
    cause = getattr(e, "cause", None)  # ray.exceptions.RayTaskError: the task's own exception
    err = cause if isinstance(cause, BaseException) else e
    return ChunkFailed(f"chunk {index} failed: {type(err).__name__}: {' '.join(str(err).split())[:1000]}")


def _serial_chunks(cfg: dict[str, Any], todo: list[int]) -> _Chunks:
    """Chunks played in this process, one after another."""
    for i in todo:
        try:
            result = _chunk_job(cfg, i)
        except Exception as e:  # named as the pool names it: which chunk
            raise _chunk_failed(i, e) from e
        yield result


def _local_chunks(cfg: dict[str, Any], todo: list[int], workers: int) -> _Chunks:
    """Chunks played by a pool of ``workers`` processes (jiu eval's: one torch thread each, ending with this
    process even when it is killed), yielded as they finish.

    When a chunk raises, the chunks finished by then are yielded first (so they are stored), then
    :class:`ChunkFailed` is raised; on that, an interrupt or a caller that stops reading, the chunks not
    started are cancelled and the workers still playing are ended, as :func:`jiu_env.evaluation.backends.execute_local`
    does, instead of the pool's exit waiting for every chunk to be played to the end.
    """
    from concurrent.futures import as_completed

    from ..evaluation.backends import end_pool, worker_pool

    pool = worker_pool(workers)
    clean = False
    try:
        pending = {pool.submit(_chunk_job, cfg, i): i for i in todo}
        yielded = set()
        for fut in as_completed(pending):  # each future once, as it finishes: no scan of the pending ones
            exc = fut.exception()
            if exc is not None:
                # the chunks that finished beside it are stored before the run stops (one scan, on failure)
                for other in sorted(pending, key=pending.__getitem__):
                    if other not in yielded and other.done() and not other.cancelled() and other.exception() is None:
                        yield other.result()
                raise _chunk_failed(pending[fut], exc) from exc
            yielded.add(fut)
            yield fut.result()
        clean = True
    finally:
        end_pool(pool, clean)


def _ray_chunks(cfg: dict[str, Any], todo: list[int], workers: int | None, address: str | None
                ) -> _Chunks:
    """Chunks played as Ray tasks (at most two per CPU in flight), yielded as they finish.

    A task that raises stops the run with :class:`ChunkFailed` (the chunk and its task's error, not Ray's
    wrapped traceback); the tasks still in flight are cancelled, so a cluster this process only connected to
    does not play them on for nothing.
    """
    from ..evaluation.backends import ray_session

    with ray_session(address, workers) as ray:
        job = ray.remote(num_cpus=1, max_retries=3)(_chunk_job)
        limit = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        it = iter(todo)
        pending = {job.remote(cfg, i): i for i in (next(it, None) for _ in range(limit)) if i is not None}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                index = pending.pop(ready[0])
                try:
                    result = ray.get(ready[0])
                except Exception as e:
                    raise _chunk_failed(index, e) from e
                yield result
                nxt = next(it, None)
                if nxt is not None:
                    pending[job.remote(cfg, nxt)] = nxt
        finally:
            for ref in pending:  # empty after a clean run
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)


def _progress(total: int, on: bool, what: str):
    """A progress line per finished chunk (stderr), with the CPU time so far."""
    import sys

    state = {"n": 0, "cpu": 0.0, "games": 0}

    def tick(entry: dict[str, Any]) -> None:
        state["n"] += 1
        state["cpu"] += entry.get("cpu_seconds") or 0.0
        state["games"] += entry["games"]
        if on:
            print(f"[{state['n']}/{total} {what}] {state['games']} games, {entry['labelled']} labels in the last "
                  f"chunk, {state['cpu']:.0f} CPU s", file=sys.stderr, flush=True)

    return tick


# ---------------------------------------------------------------- reading
def load_games(out_dir: str | os.PathLike[str], verify: bool = False) -> Iterator[dict[str, Any]]:
    """Every game of a run, chunk by chunk: dicts with ``seed``, ``actions``, ``labels``, ``values``, ``result``."""
    data = read_manifest(out_dir)
    if data is None:
        raise FileNotFoundError(f"no {MANIFEST} in {out_dir}: not a training-data directory")
    for name in sorted(data["chunks"]):
        path = pathlib.Path(out_dir) / name
        if verify and hashlib.sha256(path.read_bytes()).hexdigest() != data["chunks"][name]["sha256"]:
            raise ValueError(f"{path} does not match its manifest entry (changed or corrupt)")
        with np.load(path) as z:
            arr = {k: z[k] for k in z.files}
        off = arr["offsets"]
        # self-play and soft-labelled chunks: the soft policy target of every labelled decision, in order
        lab_off = np.concatenate([[0], np.cumsum(arr["labels"] >= 0)]) if "pi_actions" in arr else None
        for g in range(arr["seed"].size):
            sl = slice(int(off[g]), int(off[g + 1]))
            game = {"seed": int(arr["seed"][g]), "actions": arr["actions"][sl], "labels": arr["labels"][sl],
                    "values": arr["values"][sl], "result": int(arr["result"][g]), "chunk": name}
            if lab_off is not None:
                ls = slice(int(lab_off[off[g]]), int(lab_off[off[g + 1]]))
                game["pi_actions"], game["pi_visits"] = arr["pi_actions"][ls], arr["pi_visits"][ls]
            yield game


def iter_positions(rules: Rules, game: dict[str, Any]) -> Iterator[tuple[np.ndarray, int, int, int]]:
    """Replay ``game`` and yield ``(state, label, value, result for the side to move)`` at each labelled decision.

    The state is the kernel's own array, changed by the next step: copy it to keep it.
    """
    s = rules.new_state()
    result = game["result"]
    for a, lab, v in zip(game["actions"], game["labels"], game["values"]):
        if lab >= 0:
            mover = int(s[V.H_TO_MOVE])
            yield s, int(lab), int(v), result if mover == V.WHITE else -result
        K.apply_action(s, int(a))


__all__ = ["DataConfig", "DATA_FORMAT", "VALUE_WIN", "NO_VALUE", "SOFT_TOP_K", "SOFT_SCALE", "game_seed",
           "decision_seed", "teacher_label", "soft_target", "one_hot_target", "reports_root_scores", "soft_phases", "check_labellers",
           "play_labelled_game", "play_chunk", "pack_games", "store_chunk", "make_chunk", "open_run", "generate", "load_games", "iter_positions",
           "read_manifest", "ChunkFailed"]
