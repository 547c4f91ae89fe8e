"""Execution backends of a tournament: where the scheduled games are played.

A backend takes the list of :class:`~jiu_env.evaluation.tournament.GameTask`
still to play and yields their result lines (those of
:func:`~jiu_env.evaluation.tournament.play_task`) as the games finish, in any
order.  A game's result depends only on its task (seeds included), so every
backend gives the same lines; :func:`~jiu_env.evaluation.tournament.run_tournament`
appends them to ``games.jsonl`` in the parent process.

- ``local``: this process (one worker) or a pool of fresh worker processes.
- ``ray``: long-lived Ray actors, one per CPU of a Ray cluster (or
  ``workers``), on this machine or on a cluster (``address``).  Each actor
  warms its bots once; the model files that player specs name (and the
  ``rllib:`` checkpoint directories, as tar archives) are read here and
  shipped once through Ray's object store, so a worker on another node needs
  no shared file system (see ``docs/scaling_ray.md``).  An actor lost with
  its node (or its process) is not fatal: its unfinished games are played
  again on the actors left, and new actors replace it within the CPUs left.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..players import player_spec
from ..specs import PlayerSpec
from .config import BACKENDS

if TYPE_CHECKING:
    from .schedule import GameTask

RAY_EXTRA = "pip install -e '.[ray]' (in a checkout of the repository)"


def check_backend(backend: str, address: str | None = None, source: str | None = None) -> None:
    """Raise ValueError / ImportError with a clear message unless ``backend`` and ``address`` can run here
    (``source``: where the address came from, for the message; default "the address ADDRESS")."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if address is not None and backend != "ray":
        source = source or f"the address {address!r}"
        raise ValueError(f"{source} is a Ray cluster's address: it needs the ray backend (--backend ray)")
    if backend == "ray":
        import_ray()


def import_ray() -> ModuleType:
    """The ``ray`` module; ImportError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"the ray backend needs Ray, which is not installed here: {RAY_EXTRA}") from None
    return ray


def execute(todo: Sequence[GameTask], workers: int | None = None, backend: str = "local",
            address: str | None = None, log: Callable[[str], Any] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the result lines of the tasks in ``todo`` as they finish, on the chosen backend (``log``: notes of the
    ray backend, such as a lost node)."""
    check_backend(backend, address)
    if not todo:
        return iter(())
    if backend == "ray":
        return execute_ray(todo, workers=workers, address=address, log=log)
    return execute_local(todo, workers)


# ------------------------------------------------------------------ local
def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes, one BLAS / torch thread each, that end with this process
    (:func:`one_thread_per_worker`): the local pool of tournaments, data generation and PPO games.

    spawn: a fresh interpreter per worker is safe whatever threads numba or a bot started here.
    """
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=one_thread_per_worker, initargs=(os.getpid(),))


def one_thread_per_worker(parent_pid: int | None = None) -> None:
    """Worker start-up: one BLAS / torch thread each (model players; the workers already use every
    core between them), and, in a local pool, die with the parent process."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if parent_pid is not None:
        _die_with_parent(parent_pid)


def _die_with_parent(parent_pid):
    """End this worker when the process that started it ends, even by SIGKILL.

    Linux: the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``),
    at once, even inside a long numba call.  Everywhere: a daemon thread
    waits for the parent's end (multiprocessing's parent sentinel, or a
    changed parent pid) and exits the process.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid and os.name == "posix":
        os._exit(1)  # the parent died before the line above
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="jiu-parent-watch", daemon=True).start()


def _watch_parent(parent_pid):
    parent = multiprocessing.parent_process()
    while True:
        if parent is not None:
            parent.join(1.0)  # returns at once when the parent has ended
            if not parent.is_alive():
                os._exit(1)
        else:
            time.sleep(1.0)
        if os.name == "posix" and os.getppid() != parent_pid:
            os._exit(1)


class GameFailed(RuntimeError):
    """A game of a tournament raised (a player's error, a worker lost): the message names the game, its players
    and the error.  A RuntimeError, as before it had a class of its own; callers that report it (``jiu eval``,
    the gate of ``jiu train``) catch this class, so that other RuntimeErrors keep their tracebacks."""


def _failed(t: GameTask, e: BaseException) -> GameFailed:
    """The error of a game that raised: the game and its players named, then the exception itself."""
    return GameFailed(f"game {t.id} ({t.white} vs {t.black}) failed: {type(e).__name__}: {e}")


def execute_local(todo: Sequence[GameTask], workers: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield result lines as games finish: in this process (one worker) or over a process pool."""
    from .config import default_workers
    from .play import play_task

    if workers is None:
        workers = default_workers()
    workers = max(1, min(int(workers), len(todo)))
    if workers == 1:
        for t in todo:
            try:
                line = play_task(t)
            except Exception as e:  # named as the pool names it: which game, which players
                raise _failed(t, e) from e
            yield line
        return
    ex = worker_pool(workers)
    clean = False
    try:
        pending = {}
        it = iter(todo)
        # a bounded queue: results stream back while later games wait
        for t in it:
            pending[ex.submit(play_task, t)] = t
            if len(pending) >= 2 * workers:
                break
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                t = pending.pop(fut)
                try:
                    line = fut.result()
                except Exception as e:
                    raise _failed(t, e) from e
                yield line
                nxt = next(it, None)
                if nxt is not None:
                    pending[ex.submit(play_task, nxt)] = nxt
        clean = True
    finally:
        # on an error, an interrupt or a caller that stops reading early (a decided SPRT),
        # do not wait for the games still running: end their workers
        end_pool(ex, clean)


def end_pool(pool: ProcessPoolExecutor, clean: bool) -> None:
    """Shut ``pool`` down: after a ``clean`` run, waiting for it; otherwise (an error, an interrupt, a caller
    that stopped reading) at once, the work not started cancelled and the workers still busy terminated, so
    that nothing plays on for a result nobody will read."""
    running = [] if clean else list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=clean, cancel_futures=True)
    for proc in running:
        if proc.is_alive():
            proc.terminate()


# ------------------------------------------------------------------ files named by specs
def rewrite_spec(spec: str, fn: Callable[[str], str], dir_fn: Callable[[str], str] | None = None) -> str:
    """``spec`` with every token that may name a file replaced by ``fn(token)``.

    The tokens are found by the syntax of the player specs alone (the file
    need not exist where this runs): the argument of ``sb3:``, ``az:`` and of
    other registered kinds, a ``file.py`` module, every parameter value of a
    built-in bot (``alphazero:checkpoint=PATH``), ``alphazero:PATH``, and the same inside
    ``mix:P:SPEC`` and ``phases:A+B``.  ``fn`` returns the token unchanged
    for the tokens that are not files.  The tokens that may name a directory
    (the checkpoint of ``rllib:PATH[:PARAMS]``, without its parameters) go to
    ``dir_fn`` instead when it is given.
    """
    return _rewrite(player_spec(spec), fn, dir_fn)


def _rewrite(parsed: PlayerSpec, fn: Callable[[str], str], dir_fn: Callable[[str], str] | None) -> str:
    """:func:`rewrite_spec` on a parsed spec."""
    spec, prefix = parsed.text, parsed.name
    if parsed.form in ("mix", "phases"):
        parts = [_rewrite(p, fn, dir_fn) for p in parsed.parts]
        if not parts:
            return spec
        return f"mix:{parsed.probability}:{parts[0]}" if parsed.form == "mix" else f"phases:{parts[0]}+{parts[1]}"
    if parsed.form == "kind" and prefix in DIRECTORY_KINDS:
        path, sep2, params = parsed.path_params()
        return f"{prefix}:{(dir_fn or fn)(path)}{sep2}{params}" if path else spec
    if parsed.form == "kind":
        return f"{prefix}:{fn(parsed.argument)}" if parsed.argument else spec
    if parsed.form == "bot":
        if parsed.path is not None:  # alphazero:PATH, the short spelling
            return f"{prefix}:{fn(parsed.path)}"
        if not parsed.items:
            return spec
        return f"{prefix}:{','.join(p.text if p.value is None else f'{p.key}={fn(p.value)}' for p in parsed.items)}"
    if prefix.endswith(".py") and parsed.has_arg:
        return f"{fn(prefix)}:{parsed.arg}"
    return spec


#: Player kinds whose argument is ``PATH[:PARAMS]`` with PATH a directory (shipped as a whole).
DIRECTORY_KINDS: tuple[str, ...] = ("rllib",)


def _resolve_file(token):
    """The file a spec token names here (``sb3:model`` may mean ``model.zip``), or None."""
    if not token:
        return None
    for path in (token, token + ".zip"):
        if os.path.isfile(path):
            return path
    return None


def _resolve_file_or_dir(token):
    """The file or directory a directory-kind token names here, or None."""
    if token and os.path.isdir(token):
        return token
    return _resolve_file(token)


def spec_files(specs: Iterable[str]) -> dict[str, str]:
    """``{token: path}`` of every file named by the player specs (as :func:`rewrite_spec` finds them), and of
    every directory named by the argument of a directory kind (``rllib:DIR``)."""
    out = {}

    def collect(token, resolve=_resolve_file):
        path = resolve(token)
        if path is not None:
            out[token] = path
        return token

    for spec in specs:
        rewrite_spec(spec, collect, lambda token: collect(token, _resolve_file_or_dir))
    return out


def pack_dir(path: str) -> bytes:
    """The directory ``path`` (its files and folders, links followed) as the bytes of a gzip tar archive."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1, dereference=True) as tar:  # weights hardly shrink
        for name in sorted(os.listdir(path)):
            tar.add(os.path.join(path, name), arcname=name)
    return buf.getvalue()


def unpack_dir(data: bytes, dest: str) -> str:
    """Unpack an archive of :func:`pack_dir` into the new directory ``dest`` (plain files and folders only)."""
    os.makedirs(dest)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python without extraction filters: the archive is ours, still refuse anything but files and folders
            members = [m for m in tar.getmembers() if (m.isfile() or m.isdir()) and not os.path.isabs(m.name)
                       and ".." not in m.name.split("/")]
            tar.extractall(dest, members=members)
    return dest


def ship_files(ray: ModuleType, specs: Iterable[str]) -> dict[str, tuple[Any, str, str]]:
    """Put the files and directories the player specs name into Ray's object store.

    Returns ``{token: (object ref, name, kind)}`` for :class:`FileCache`:
    ``kind`` is ``"file"`` (the bytes of the file) or ``"dir"`` (a gzip tar
    archive of the directory, unpacked once per worker under a name that
    holds the archive's content hash).
    """
    shipped: dict[str, tuple[Any, str, str]] = {}
    for token, path in spec_files(specs).items():
        if os.path.isdir(path):
            data = pack_dir(path)
            kind = "dir"
        else:
            with open(path, "rb") as f:
                data = f.read()
            kind = "file"
        shipped[token] = (ray.put(data), os.path.basename(os.path.normpath(path)) or "dir", kind)
    return shipped


class FileCache:
    """Files received through Ray's object store, written once to a private temporary folder.

    ``shipped`` maps a spec token to ``(object ref of the bytes, file name)``
    or ``(object ref, name, kind)`` (:func:`ship_files`; kind ``"dir"``: a
    directory archive, unpacked into ``DIR/<hash>/name``);
    :meth:`local_spec` rewrites a spec so that it names the local copies.
    """

    def __init__(self, shipped: dict[str, tuple[Any, ...]] | None) -> None:
        self.shipped = dict(shipped or {})
        self.dir: str | None = None
        self.paths: dict[str, str] = {}
        self.specs: dict[str, str] = {}

    def _path(self, token):
        if token not in self.shipped:
            return token
        if token not in self.paths:
            import ray

            ref, name, *rest = self.shipped[token]
            kind = rest[0] if rest else "file"
            if self.dir is None:
                self.dir = tempfile.mkdtemp(prefix="jiu_files_")
            data = ray.get(ref)
            if kind == "dir":
                sub = os.path.join(self.dir, "d" + hashlib.sha256(data).hexdigest()[:16])
                path = os.path.join(sub, name)
                if not os.path.isdir(path):  # the same archive under two tokens is unpacked once
                    os.makedirs(sub, exist_ok=True)
                    unpack_dir(data, path)
            else:
                sub = os.path.join(self.dir, str(len(self.paths)))
                os.makedirs(sub)
                path = os.path.join(sub, name)
                with open(path, "wb") as f:
                    f.write(data)
            self.paths[token] = path
        return self.paths[token]

    def local_spec(self, spec: str) -> str:
        """``spec`` naming the local copies of the shipped files and directories."""
        if spec not in self.specs:
            self.specs[spec] = rewrite_spec(spec, self._path) if self.shipped else spec
        return self.specs[spec]

    def close(self) -> None:
        """Delete the local copies."""
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


# ------------------------------------------------------------------ ray
class GameWorker:
    """A long-lived Ray actor that plays games (made remote in :func:`execute_ray`)."""

    def __init__(self, shipped: dict[str, tuple[Any, ...]] | None) -> None:
        one_thread_per_worker()
        self.files = FileCache(shipped)

    def play(self, task: GameTask) -> dict[str, Any]:
        """Play one game; its result line."""
        from .play import play_task

        build = {s: self.files.local_spec(s) for s in (task.white_spec, task.black_spec)}
        return play_task(task, build_specs=build)

    def node(self) -> str:
        """The Ray node id of this actor."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def close(self) -> bool:
        """Delete the shipped files' local copies (True when done)."""
        self.files.close()
        return True


def _warm_node(specs, rules):
    """Warm numba's cache on one node (a Ray task pinned to it)."""
    from ..warmup import warm_up

    rep = warm_up(specs, board_sizes=[min(8, int(rules["board_size"]))], rules=rules, envs=False)
    return len(rep.compiled), len(rep.loaded), rep.seconds


def warm_nodes(ray: ModuleType, specs: list[str], rules: dict[str, Any], skip_node: str | None = None
               ) -> list[tuple[int, int, float]]:
    """Run one warm-up task on every alive node with a CPU (in parallel), except ``skip_node``; the reports of
    the nodes that did not die meanwhile."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    fn = ray.remote(num_cpus=1, max_retries=0)(_warm_node)
    refs = []
    for node in ray.nodes():
        if not node.get("Alive") or node.get("Resources", {}).get("CPU", 0) < 1 or node["NodeID"] == skip_node:
            continue
        strat = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
        refs.append(fn.options(scheduling_strategy=strat).remote(specs, rules))
    out = []
    for ref in refs:  # a node lost meanwhile is skipped: warming is only a head start
        try:
            out.append(ray.get(ref))
        except _lost_errors(ray):
            pass
    return out


def _is_loopback(address):
    host = str(address).rpartition(":")[0].strip("[]") if ":" in str(address) else str(address)
    return host in ("localhost", "::1") or host.startswith("127.")


@contextlib.contextmanager
def _loopback(ray, address):
    """A private instance (no address) or a loopback address stays on 127.0.0.1.

    ``ray.init`` replaces a loopback address by this machine's network
    address (so that other nodes could reach it); on a machine that does not
    accept connections to its own network address that never connects.  Ray
    keeps loopback addresses when its multi-node mode is off (as on macOS and
    Windows), so it is switched off while connecting to a single-machine
    cluster.  Other addresses are left alone.
    """
    try:
        consts = importlib.import_module("ray._private.ray_constants")
    except ImportError:
        consts = None
    if consts is None or not hasattr(consts, "ENABLE_RAY_CLUSTER") or (address and not _is_loopback(address)):
        yield
        return
    old = consts.ENABLE_RAY_CLUSTER
    consts.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        consts.ENABLE_RAY_CLUSTER = old


#: Seconds :func:`init_ray` waits for a TCP connection to a cluster's address before saying nothing answers there.
CONNECT_TIMEOUT_S = 5.0


def connect_hint(address: str) -> str:
    """The likely causes of a failed connection to the Ray cluster at ``address``, and what to do."""
    return (f"is a Ray head running at {address}? (`ray start --head --port=PORT` on the head; check the address, "
            "the port and the firewall.)  If the cluster uses token authentication (Ray turns it on when a token "
            "file such as ~/.ray/auth_token exists where the head started), this process must too: set "
            "RAY_AUTH_MODE=token here and give it the cluster's token, in ~/.ray/auth_token, in a file named by "
            "RAY_AUTH_TOKEN_PATH or in RAY_AUTH_TOKEN (see docs/scaling_ray.md)")


def _host_port(address):
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address, or None (``auto``, no port)."""
    text = str(address).strip()
    if "://" in text:
        text = text.split("://", 1)[1]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ConnectionError naming ``address`` and the likely causes unless something accepts TCP connections
    there within ``timeout`` seconds (``ray.init`` would otherwise wait for minutes).  Addresses without a port
    (``auto``) are not checked."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as e:
        raise ConnectionError(f"cannot connect to the Ray cluster at {address}: nothing answers there "
                              f"({type(e).__name__}: {e}); {connect_hint(address)}") from None


def init_ray(address: str | None = None, num_cpus: int | None = None) -> ModuleType:
    """Connect this process to the Ray cluster at ``address``, or start a private instance here.

    The private instance (``num_cpus`` CPUs) listens on 127.0.0.1 only and
    has no dashboard.  With an ``address``, a connection that fails (nothing
    listening there, within :data:`CONNECT_TIMEOUT_S` seconds; or Ray's own
    error or time-out, as when the cluster wants token authentication and this
    process has none) raises ConnectionError naming the address and the
    likely causes (:func:`connect_hint`).
    """
    ray = import_ray()
    opts = dict(include_dashboard=False, log_to_driver=True, configure_logging=True, logging_level=logging.WARNING)
    with _loopback(ray, address):
        if address:
            check_reachable(address)
            try:
                ray.init(address=address, **opts)
            except Exception as e:
                if ray.is_initialized():
                    with contextlib.suppress(Exception):
                        ray.shutdown()
                raise ConnectionError(f"cannot connect to the Ray cluster at {address} ({type(e).__name__}: "
                                      f"{str(e).strip()[:500]}); {connect_hint(address)}") from e
        else:
            ray.init(address="local", num_cpus=num_cpus, **opts)
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[ModuleType]:
    """Ray for the ``with`` block: the cluster this process is already connected to (left running), else
    :func:`init_ray` (``address``, or a private instance of ``num_cpus`` CPUs here), shut down at the end."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        init_ray(address, num_cpus=num_cpus)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


#: How many times a game is played at most when the Ray worker playing it dies each time (its node lost, its
#: process killed or crashed); then the run stops with :class:`WorkersLost` naming the game.
GAME_ATTEMPTS = 3
#: Seconds :func:`execute_ray` waits with no worker ready (all of them waiting for a CPU) before it gives up.
START_TIMEOUT_S = 300.0
_WAIT_S = 5.0  # how often a waiting run looks at the cluster again


class WorkersLost(RuntimeError):
    """The Ray backend cannot go on: no CPU is left for its workers, or a game's worker died on every attempt."""


def _lost_errors(ray):
    """The Ray errors that mean a game's worker (actor) is gone, not that the game itself failed."""
    ex = ray.exceptions
    return (ex.RayActorError, ex.WorkerCrashedError, ex.NodeDiedError, ex.ObjectLostError)


def alive_cpus(ray: ModuleType) -> float:
    """The CPUs of the nodes of the Ray cluster that are alive now."""
    return sum(float(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive"))


class _Worker:
    """One GameWorker actor: its handle, the ref that says where it started, the games sent to it (in order)."""

    def __init__(self, handle, ready):
        self.handle = handle
        self.ready = ready
        self.node: str | None = None  # its node id, once started
        self.games: list[tuple[Any, GameTask]] = []


class _RayPool:
    """The actors of :func:`execute_ray` and the games waiting for them; replaces the actors that die.

    A game goes to an actor once the actor has started, at most ``in_flight``
    at a time.  When an actor dies (its node lost, its process killed), the
    games it had finished are kept, the others go back to the front of the
    queue (the one it was playing counts one attempt, :data:`GAME_ATTEMPTS` at
    most) and new actors are started, never more than the CPUs of the nodes
    still alive hold besides the actors left.
    """

    def __init__(self, ray, cls, shipped, todo, workers, in_flight, log, address, attempts):
        self.ray, self.cls, self.shipped = ray, cls, shipped
        self.queue: deque[GameTask] = deque(todo)
        self.max_workers = workers
        self.in_flight = in_flight
        self.log = log
        self.address = address
        self.max_attempts = attempts
        self.workers: list[_Worker] = []
        self.by_ref: dict[Any, _Worker] = {}  # game ref -> its actor
        self.starting: dict[Any, _Worker] = {}  # ready ref -> actor not started yet
        self.attempts: dict[str, int] = {}
        self.deaths = 0
        self.lost_nodes: set[str] = set()
        self.last_ready = time.monotonic()
        self.error: WorkersLost | None = None
        self.need_grow = False
        self.start_failures = 0  # actors in a row that died before they started

    def start(self, n):
        for _ in range(n):
            handle = self.cls.remote(self.shipped)
            w = _Worker(handle, handle.node.remote())
            self.workers.append(w)
            self.starting[w.ready] = w

    def fill(self, w):
        while len(w.games) < self.in_flight and self.queue:
            t = self.queue.popleft()
            ref = w.handle.play.remote(t)
            w.games.append((ref, t))
            self.by_ref[ref] = w

    def refs(self):
        return list(self.by_ref) + list(self.starting)

    def started(self, ref):
        """An actor has started (or died starting)."""
        w = self.starting.pop(ref)
        try:
            w.node = self.ray.get(ref)
        except _lost_errors(self.ray) as e:
            return self.died(w, e)
        self.last_ready = time.monotonic()
        self.start_failures = 0
        self.fill(w)
        return []

    def result(self, ref):
        """The line of a finished game (``[line]``), or of the games its actor had finished if it died."""
        w = self.by_ref[ref]
        try:
            line = self.ray.get(ref)
        except _lost_errors(self.ray) as e:
            return self.died(w, e)
        except Exception as e:
            t = next(t for r, t in w.games if r == ref)
            raise _failed(t, e) from e
        del self.by_ref[ref]
        w.games = [(r, t) for r, t in w.games if r != ref]
        self.last_ready = time.monotonic()
        self.fill(w)
        return [line]

    def _node_text(self, node_id):
        for n in self.ray.nodes():
            if n.get("NodeID") == node_id:
                return f"{n.get('NodeManagerAddress', '?')} ({node_id[:8]})", bool(n.get("Alive"))
        return f"({(node_id or '?')[:8]})", False

    def died(self, w, cause):
        """``w``'s actor is gone: keep the games it finished (returned), put back the others, start others."""
        ray = self.ray
        self.deaths += 1
        if w in self.workers:
            self.workers.remove(w)
        self.starting.pop(w.ready, None)
        refs = [r for r, _ in w.games]
        if refs:  # the refs of a dead actor resolve at once: a result that came back, or an error
            ray.wait(refs, num_returns=len(refs), timeout=10)
        finished, lost = [], []
        for r, t in w.games:
            self.by_ref.pop(r, None)
            try:
                finished.append(ray.get(r, timeout=0))
            except Exception:
                lost.append(t)
        w.games = []
        with contextlib.suppress(Exception):
            ray.kill(w.handle)
        where, alive = self._node_text(w.node) if w.node else ("?", True)
        if w.node and not alive:
            self.lost_nodes.add(w.node)
        why = f"{type(cause).__name__}: {' '.join(str(cause).split())[:400]}"
        if lost:
            t = lost[0]  # the game it was playing (the others were waiting behind it)
            self.attempts[t.id] = self.attempts.get(t.id, 0) + 1
            if self.attempts[t.id] >= self.max_attempts:
                self.error = WorkersLost(
                    f"game {t.id} ({t.white} vs {t.black}) was started {self.attempts[t.id]} times and its Ray "
                    f"worker died every time (last: {why}); giving up on it. The finished games are in games.jsonl: "
                    "running the same command again resumes from there")
            self.queue.extendleft(reversed(lost))
        elif w.node is None:
            self.start_failures += 1
            if self.start_failures >= self.max_attempts + self.max_workers:
                self.error = WorkersLost(f"{self.start_failures} Ray workers in a row died before they started "
                                         f"(last: {why}). The finished games are in games.jsonl: running the same "
                                         "command again resumes from there")
        self.need_grow = True
        self.log(f"a Ray worker on node {where} died ("
                 + ("its node is lost" if w.node and not alive else "its process ended" if w.node else "while starting")
                 + f"; {why[:160]}): {len(lost)} of its games to play again on the workers left")
        return finished

    def after(self):
        """After the lines of a dead actor went out: the error it left, or new actors for the games put back."""
        if self.error is not None:
            raise self.error
        if self.need_grow:
            self.need_grow = False
            self.grow()

    def grow(self):
        """Start actors for the games waiting, up to the CPUs left; WorkersLost if none is left at all."""
        if not self.queue:
            return
        live = len(self.workers)
        room = int(alive_cpus(self.ray)) - live
        n = max(0, min(self.max_workers - live, room, len(self.queue)))
        if n:
            self.start(n)
            self.log(f"{n} new Ray worker(s) started ({live + n} in all, on the CPUs left)")
        if not self.workers:
            where = f" at {self.address}" if self.address else ""
            nodes = f" ({len(self.lost_nodes)} node(s) lost)" if self.lost_nodes else ""
            raise WorkersLost(f"the Ray cluster{where} has no CPU left for the workers{nodes}: {len(self.queue)} "
                              "games are still to play. The finished games are in games.jsonl: running the same "
                              "command again (once nodes have joined) resumes from there")

    def stalled(self):
        """Nothing came back for a while: look for CPUs again; give up when no worker could start for too long."""
        self.grow()
        if self.by_ref or time.monotonic() - self.last_ready < START_TIMEOUT_S:
            return
        where = f" at {self.address}" if self.address else ""
        raise WorkersLost(f"no Ray worker could start within {START_TIMEOUT_S:.0f} s: the CPUs of the cluster{where} "
                          f"are busy or gone; {len(self.queue)} games are still to play. The finished games are in "
                          "games.jsonl: running the same command again resumes from there")


def execute_ray(todo: Sequence[GameTask], workers: int | None = None, address: str | None = None,
                in_flight: int = 2, log: Callable[[str], Any] | None = None,
                attempts: int = GAME_ATTEMPTS) -> Iterator[dict[str, Any]]:
    """Yield result lines as games finish on Ray actors.

    ``address``: a running cluster (``HEAD:6379``, ``"auto"``); without it a
    private Ray instance is started on this machine (``workers`` CPUs, default
    all cores) and stopped at the end.  If Ray is already initialised in this
    process, that cluster is used and left running.  ``workers``: number of
    actors (default: the cluster's CPUs); each has at most ``in_flight`` games
    queued, so results stream back while later games wait here.

    An actor that dies (its node lost, its process killed) is not fatal: the
    games it had not finished are played again on the actors left, and new
    actors replace it as far as the CPUs of the nodes still alive allow (never
    more than ``workers``).  A game whose actor dies ``attempts`` times, or a
    cluster with no CPU left, raises :class:`WorkersLost` (a RuntimeError).
    ``log`` gets a note for each actor lost.
    """
    from .config import default_workers

    log = log or (lambda msg: logging.getLogger(__name__).warning(msg))
    with ray_session(address, int(workers or default_workers())) as ray:
        yield from _execute_ray(ray, todo, workers, address, in_flight, log, attempts)


def _execute_ray(ray: ModuleType, todo: Sequence[GameTask], workers: int | None, address: str | None,
                 in_flight: int, log: Callable[[str], Any], attempts: int) -> Iterator[dict[str, Any]]:
    """The games of :func:`execute_ray` on the cluster ``ray`` is connected to."""
    from ..warmup import builtin_specs

    pool = None
    clean = False
    try:
        if workers is None:
            workers = int(ray.cluster_resources().get("CPU", 1)) or 1
        workers = max(1, min(int(workers), len(todo)))
        specs = sorted({s for t in todo for s in (t.white_spec, t.black_spec)})
        # compile once per node: every node but this one (warmed by the caller) loads or compiles now
        here = ray.get_runtime_context().get_node_id()
        warm_specs = sorted({b for s in specs for b in builtin_specs(s)})
        if warm_specs and len(ray.nodes()) > 1:
            warm_nodes(ray, warm_specs, todo[0].rules, skip_node=here)
        shipped = ship_files(ray, specs)
        # no restarts by Ray: a lost actor is replaced here, within the CPUs left, and its games re-queued
        cls = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(GameWorker)
        pool = _RayPool(ray, cls, shipped, todo, workers, in_flight, log, address, attempts)
        pool.start(workers)
        while pool.queue or pool.by_ref:
            refs = pool.refs()
            if not refs:
                pool.grow()
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=_WAIT_S)
            if not ready:
                pool.stalled()
                continue
            ref = ready[0]
            lines = pool.started(ref) if ref in pool.starting else pool.result(ref)
            yield from lines
            pool.after()
        clean = True
    finally:
        if pool is not None and pool.workers:
            if clean:  # after an error or an interrupt, do not wait for queued games: just stop
                try:
                    ray.get([w.handle.close.remote() for w in pool.workers if w.node is not None], timeout=30)
                except Exception:
                    pass
            for w in pool.workers:
                with contextlib.suppress(Exception):
                    ray.kill(w.handle)


__all__ = ["BACKENDS", "GameFailed", "check_backend", "execute", "execute_local", "end_pool", "execute_ray", "init_ray", "ray_session", "worker_pool", "rewrite_spec", "spec_files",
           "FileCache", "GameWorker", "DIRECTORY_KINDS", "pack_dir", "unpack_dir", "ship_files", "check_reachable",
           "connect_hint", "CONNECT_TIMEOUT_S", "GAME_ATTEMPTS", "WorkersLost", "alive_cpus"]
