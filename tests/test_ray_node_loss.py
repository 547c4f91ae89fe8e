"""The Ray backend survives the loss of a node: a tournament on a two-node loopback cluster (started and
stopped here) loses its worker node mid-run, and its games are played again on the node left, with the same
results as a local run; a game that kills its worker every time stops the run after a bounded number of
attempts, naming the game."""

import collections
import os
import time

import pytest

from jiu_env.evaluation import TournamentConfig, run_tournament
from jiu_env.evaluation.backends import GAME_ATTEMPTS, WorkersLost
from jiu_env.evaluation.tournament import read_games

RULES8 = {"profile": "competitive", "board_size": 8, "max_battle_turns": 120}

# A player whose games hang on a worker node started with JIU_TEST_HOLD=DIR:N (after the first N games that
# start there), so that the node is removed while it holds games; each game that starts leaves a file in DIR.
# Elsewhere it plays at once.  Its moves never depend on it.
HOLD_PLAYER = '''
import os
import time

from jiu_env.bots import Bot
from jiu_env.bots.base import legal_actions


class Lowest(Bot):
    """Plays the legal action with the smallest index."""

    def _choose(self, state):
        hold = os.environ.get("JIU_TEST_HOLD")
        if hold and not getattr(self, "_seen", False):
            self._seen = True
            folder, n = hold.rsplit(":", 1)
            open(os.path.join(folder, f"{os.getpid()}-{id(self)}"), "w").close()
            if len(os.listdir(folder)) > int(n):
                time.sleep(600)  # until the node is removed
        return int(legal_actions(state).min())
'''


def _hold_node(cluster, folder, n, num_cpus):
    """Add a worker node on which the games of HOLD_PLAYER hang after the first ``n``."""
    folder.mkdir()
    node = cluster.add_node(num_cpus=num_cpus, node_ip_address="127.0.0.1", env_vars={"JIU_TEST_HOLD": f"{folder}:{n}"})
    cluster.wait_for_nodes()
    return node


def _remove_when(cluster, node, folder, started, removed):
    """A progress callback: at the first game back, wait until ``started`` games have started on ``node``, then
    remove it."""

    def progress(done, total, line, scores):
        if line is None or removed:
            return
        deadline = time.monotonic() + 480  # worker start-up may include compiling numba on a busy machine
        while len(os.listdir(folder)) < started:
            assert time.monotonic() < deadline, "the games did not start on the worker node"
            time.sleep(0.1)
        cluster.remove_node(node)
        removed.append(done)

    return progress


CRASH_PLAYER = '''
import os
import sys

from jiu_env.bots import Bot
from jiu_env.bots.base import legal_actions


class Crash(Bot):
    """Ends its process at its first move in a Ray worker (as a crashing native library would)."""

    def _choose(self, state):
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            os._exit(3)
        return int(legal_actions(state).min())
'''


def _comparable(line):
    return {k: v for k, v in line.items() if k != "time"}


@pytest.fixture
def cluster(request):
    """A head node with one CPU on 127.0.0.1 (the test adds and removes worker nodes); stopped at the end."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False})

    def stop():
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()

    request.addfinalizer(stop)
    return c


def test_a_node_lost_mid_tournament_is_survived_with_the_same_games(cluster, tmp_path):
    """Head: one CPU; worker node: two CPUs (two actors, each playing a game and holding one more).  The node is
    removed when the first game comes back; its four games are played again on the head's actor."""
    t0 = time.monotonic()
    marks = tmp_path / "started"
    worker = _hold_node(cluster, marks, 0, num_cpus=2)
    src = tmp_path / "lowest_player.py"
    src.write_text(HOLD_PLAYER)
    cfg = TournamentConfig(players=[f"low={src}:Lowest", "random"], games=8, seed=11, rules=RULES8)
    notes, removed = [], []
    res = run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address, log=notes.append,
                         progress=_remove_when(cluster, worker, marks, 2, removed), write_reports=False)
    t_ray = time.monotonic() - t0
    assert removed == [1]
    assert res.new_games == 8
    lines = read_games(tmp_path / "ray" / "games.jsonl")
    ids = [ln["id"] for ln in lines]
    assert len(ids) == 8 and len(set(ids)) == 8, collections.Counter(ids)  # every game once
    died = [n for n in notes if "died" in n]
    assert len(died) == 2 and all("its node is lost" in n and "2 of its games to play again" in n for n in died), notes
    assert not any("new Ray worker" in n for n in notes), notes  # the one CPU left is the head's actor's
    # the same games as a local run of the same tournament
    local = run_tournament(cfg, out_dir=tmp_path / "local", workers=1, write_reports=False)
    assert {ln["id"]: _comparable(ln) for ln in lines} == {g["id"]: _comparable(g) for g in local.games}
    print(f"ray run with a node lost: {t_ray:.1f} s; notes: {notes}")


def test_a_game_that_kills_its_worker_every_time_stops_the_run_naming_it(cluster, tmp_path):
    src = tmp_path / "crash_player.py"
    src.write_text(CRASH_PLAYER)
    cfg = TournamentConfig(players=[f"crash={src}:Crash", "random"], games=1, seed=2, rules=RULES8)
    notes = []
    with pytest.raises(WorkersLost) as info:
        run_tournament(cfg, out_dir=tmp_path / "out", backend="ray", address=cluster.address, log=notes.append,
                       write_reports=False)
    msg = str(info.value)
    assert msg.startswith("game crash|random|0 (crash vs random) was started"), msg  # the game's id
    assert f"was started {GAME_ATTEMPTS} times" in msg and "died every time" in msg, msg
    assert "running the same command again resumes" in msg
    died = [n for n in notes if "its process ended" in n]
    assert len(died) == GAME_ATTEMPTS, notes
    assert "ActorDiedError" in msg  # the cause, as Ray gives it
    assert read_games(tmp_path / "out" / "games.jsonl") == []


@pytest.fixture
def cluster_no_head_cpu(request):
    """A head node without CPUs on 127.0.0.1 (the games can only run on the worker nodes the test adds)."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False})

    def stop():
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()

    request.addfinalizer(stop)
    return c


def test_no_cpu_left_stops_the_run_and_the_same_command_resumes(cluster_no_head_cpu, tmp_path):
    """Head: no CPU; one worker node with one CPU (one actor), removed while it plays the second game: no CPU is
    left, the run stops saying so, and after a new node joins the same call plays the rest."""
    cluster = cluster_no_head_cpu
    marks = tmp_path / "started"
    worker = _hold_node(cluster, marks, 1, num_cpus=1)
    src = tmp_path / "lowest_player.py"
    src.write_text(HOLD_PLAYER)
    cfg = TournamentConfig(players=[f"low={src}:Lowest", "random"], games=4, seed=5, rules=RULES8)
    notes, removed = [], []
    with pytest.raises(WorkersLost) as info:
        run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address, log=notes.append,
                       progress=_remove_when(cluster, worker, marks, 2, removed), write_reports=False)
    msg = str(info.value)
    assert f"the Ray cluster at {cluster.address} has no CPU left for the workers (1 node(s) lost)" in msg, msg
    assert "3 games are still to play" in msg and "running the same command again" in msg, msg
    assert len(read_games(tmp_path / "ray" / "games.jsonl")) == 1  # the game that came back is kept
    # a new node joins: the same call plays the three games left, the same as a local run
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    again = run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address,
                           write_reports=False)
    assert again.new_games == 3
    local = run_tournament(cfg, out_dir=tmp_path / "local", workers=1, write_reports=False)
    lines = read_games(tmp_path / "ray" / "games.jsonl")
    assert len(lines) == 4
    assert {ln["id"]: _comparable(ln) for ln in lines} == {g["id"]: _comparable(g) for g in local.games}
