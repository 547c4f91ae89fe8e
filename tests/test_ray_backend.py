"""The Ray backend of the tournament: same games as the local backend on a real multi-node cluster
(started inside the test on loopback addresses), resume, model files shipped to the workers, and
clear errors for bad arguments."""

import json
import sys

import pytest

from jiu_env.cli import main
from jiu_env.evaluation import TournamentConfig, run_tournament, schedule
from jiu_env.evaluation.backends import FileCache, init_ray, rewrite_spec, spec_files
from jiu_env.players import make_player, player_version
from jiu_env.evaluation.tournament import play_task, read_games

RULES8 = {"profile": "competitive", "board_size": 8, "max_battle_turns": 120}

PLAYER_FILE = '''
from jiu_env.bots import Bot
from jiu_env.bots.base import legal_actions


class Lowest(Bot):
    """Plays the legal action with the smallest index."""

    def _choose(self, state):
        return int(legal_actions(state).min())
'''


def _comparable(line):
    """A result line without its timing fields (decision times differ from run to run)."""
    return {k: v for k, v in line.items() if k != "time"}


def _by_id(path):
    return {ln["id"]: _comparable(ln) for ln in read_games(path)}


@pytest.fixture(scope="module")
def cluster(request):
    """A head and one worker node on 127.0.0.1, one CPU each; the driver connects to it."""
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
    c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    c.wait_for_nodes()
    return c


def test_ray_cluster_games_match_local_and_resume(cluster, tmp_path):
    cfg = TournamentConfig(players=["random", "greedy", "pattern"], games=2, seed=3, rules=RULES8,
                           random_opening=2)
    local = run_tournament(cfg, out_dir=tmp_path / "local", workers=1, write_reports=False)
    remote = run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address,
                            write_reports=False)
    assert local.new_games == remote.new_games == 6
    a, b = _by_id(tmp_path / "local" / "games.jsonl"), _by_id(tmp_path / "ray" / "games.jsonl")
    assert sorted(a) == sorted(b) and a == b  # same ids, actions, records and results
    assert remote.summary["pairs"] == local.summary["pairs"]
    # the same line format: every line has the same keys, the record included
    raw = read_games(tmp_path / "ray" / "games.jsonl")
    assert {tuple(sorted(ln)) for ln in raw} == {tuple(sorted(ln)) for ln in read_games(tmp_path / "local" / "games.jsonl")}

    # resume with the ray backend: cut the last two games (and leave a line cut short)
    path = tmp_path / "ray" / "games.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-2]) + lines[-2][:40])
    again = run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address,
                           write_reports=False)
    assert again.new_games == 2
    assert _by_id(path) == a
    assert run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", address=cluster.address,
                          write_reports=False).new_games == 0


def test_ray_worker_plays_from_shipped_files(cluster, tmp_path):
    """A player file is read in the parent and sent through the object store: the worker does not need
    the original path (it is gone by the time the worker plays)."""
    import ray

    from jiu_env.evaluation.backends import GameWorker

    if not ray.is_initialized():
        init_ray(cluster.address)
    src = tmp_path / "lowest_player.py"
    src.write_text(PLAYER_FILE)
    spec = f"{src}:Lowest"
    cfg = TournamentConfig(players=[f"low={spec}", "greedy"], games=2, seed=5, rules=RULES8)
    versions = {p.spec: player_version(make_player(p.spec, seed=0)) for p in cfg.players}
    tasks = schedule(cfg, versions)
    expected = [play_task(t) for t in tasks]
    files = spec_files([spec])
    assert files == {str(src): str(src)}
    shipped = {tok: (ray.put(open(path, "rb").read()), "lowest_player.py") for tok, path in files.items()}
    actor = ray.remote(num_cpus=1)(GameWorker).remote(shipped)
    src.rename(tmp_path / "moved.py")
    got = ray.get([actor.play.remote(t) for t in tasks])
    ray.get(actor.close.remote())
    ray.kill(actor)
    assert [_comparable(x) for x in got] == [_comparable(x) for x in expected]
    assert got[0]["white_spec"] == spec  # the line names the original spec, not the worker's copy


def test_rewrite_spec_finds_file_tokens():
    seen = []

    def fn(token):
        seen.append(token)
        return "<" + token + ">"

    assert rewrite_spec("sb3:models/a.zip", fn) == "sb3:<models/a.zip>"
    assert rewrite_spec("az:net.pt", fn) == "az:<net.pt>"
    assert rewrite_spec("alphazero:checkpoint=net.pt,sims=50", fn) == "alphazero:checkpoint=<net.pt>,sims=<50>"
    assert rewrite_spec("mix:0.5:sb3:m.zip", fn) == "mix:0.5:sb3:<m.zip>"
    assert rewrite_spec("phases:random+sb3:m.zip", fn) == "phases:random+sb3:<m.zip>"
    assert rewrite_spec("dir/p.py:Cls:depth=2", fn) == "<dir/p.py>:Cls:depth=2"
    assert rewrite_spec("greedy", fn) == "greedy"
    assert rewrite_spec("mypkg.mod:Cls", fn) == "mypkg.mod:Cls"
    assert FileCache({}).local_spec("sb3:x.zip") == "sb3:x.zip"


def test_sb3_path_without_zip_is_found(tmp_path):
    (tmp_path / "m.zip").write_bytes(b"zip")
    assert spec_files([f"sb3:{tmp_path / 'm'}", "random"]) == {str(tmp_path / "m"): str(tmp_path / "m.zip")}


# ---------------------------------------------------------------- errors (no cluster needed)
def test_bad_backend_arguments(tmp_path, capsys, monkeypatch):
    cfg = TournamentConfig(players=["random", "b=random"], games=2, rules=RULES8)
    with pytest.raises(ValueError, match="ray backend"):
        run_tournament(cfg, workers=1, address="127.0.0.1:6379")
    with pytest.raises(ValueError, match="backend must be one of"):
        run_tournament(cfg, workers=1, backend="dask")
    small = ["--rule", "board_size=6", "--games", "2", "--workers", "1", "--no-progress"]
    assert main(["eval", "random", "b=random", "--address", "127.0.0.1:6379", *small]) == 2
    assert ("jiu eval: error: the address '127.0.0.1:6379' is a Ray cluster's address: it needs the ray backend "
            "(--backend ray)") in capsys.readouterr().err
    # ray missing: the error names the extra to install
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]'"):
        run_tournament(cfg, workers=1, backend="ray")
    assert main(["eval", "random", "b=random", "--backend", "ray", *small]) == 2
    assert "pip install -e '.[ray]'" in capsys.readouterr().err


def test_config_file_backend_setting(tmp_path, capsys, monkeypatch):
    cfg = tmp_path / "t.toml"
    cfg.write_text('games = 2\nbackend = "local"\nworkers = 1\n[rules]\nboard_size = 6\nmax_battle_turns = 60\n'
                   '[[players]]\nspec = "random"\n[[players]]\nname = "b"\nspec = "random"\n')
    from jiu_env.evaluation import load_config

    loaded = load_config(cfg)
    assert loaded.execution == {"backend": "local", "workers": 1}
    assert "backend" not in json.dumps(loaded.to_dict())  # where the games run is not part of the results
    assert main(["eval", "--config", str(cfg), "--no-progress"]) == 0
    cfg.write_text(cfg.read_text().replace('backend = "local"', 'backend = "local"\naddress = "127.0.0.1:6379"'))
    assert main(["eval", "--config", str(cfg), "--no-progress"]) == 2
    assert ("jiu eval: error: the config's address (127.0.0.1:6379) is a Ray cluster's address: it needs the ray "
            "backend (--backend ray)") in capsys.readouterr().err
    # the command line wins: --backend local runs here, and the config's address goes with its backend
    cfg.write_text(cfg.read_text().replace('backend = "local"', 'backend = "ray"'))
    assert main(["eval", "--config", str(cfg), "--backend", "local", "--no-progress"]) == 0


def test_rllib_checkpoint_directories_are_spec_files(tmp_path):
    """The path of rllib:PATH[:PARAMS] is a directory token (its parameters stay out of it); other tokens only
    ever name files."""
    seen = []

    def fn(token):
        seen.append(("file", token))
        return "<" + token + ">"

    def dir_fn(token):
        seen.append(("dir", token))
        return "[" + token + "]"

    assert rewrite_spec("rllib:ck/a:module=league_1,deterministic=false", fn, dir_fn) == \
        "rllib:[ck/a]:module=league_1,deterministic=false"
    assert rewrite_spec("phases:rllib:ck+sb3:m.zip", fn, dir_fn) == "phases:rllib:[ck]+sb3:<m.zip>"
    assert rewrite_spec("mix:0.2:rllib:ck", fn) == "mix:0.2:rllib:<ck>"  # without dir_fn: fn
    assert seen[:3] == [("dir", "ck/a"), ("dir", "ck"), ("file", "m.zip")]
    ck = tmp_path / "ck"
    (ck / "sub").mkdir(parents=True)
    (ck / "sub" / "w.pkl").write_bytes(b"w")
    (tmp_path / "m.zip").write_bytes(b"zip")
    assert spec_files([f"rllib:{ck}:module=x", f"sb3:{tmp_path / 'm'}", f"alphazero:checkpoint={ck}"]) == {
        str(ck): str(ck), str(tmp_path / "m"): str(tmp_path / "m.zip")}  # a directory only where rllib: names it


# ---------------------------------------------------------------- connecting to a cluster
def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_address_where_nothing_listens_fails_at_once_naming_the_causes(capsys):
    import time

    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    address = f"127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        init_ray(address)
    assert time.monotonic() - t0 < 10
    msg = str(info.value)
    for words in (address, "nothing answers there", "ray start --head", "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN_PATH",
                  "RAY_AUTH_TOKEN", "~/.ray/auth_token", "docs/scaling_ray.md"):
        assert words in msg
    assert not ray.is_initialized()
    cfg = TournamentConfig(players=["random", "b=random"], games=2, rules=RULES8)
    with pytest.raises(ConnectionError, match="RAY_AUTH_MODE=token"):
        run_tournament(cfg, backend="ray", address=address, write_reports=False)
    assert main(["eval", "random", "b=random", "--backend", "ray", "--address", address, "--rule", "board_size=6",
                 "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert address in err and "RAY_AUTH_MODE=token" in err and "Traceback" not in err


def test_a_cluster_that_refuses_this_process_is_a_connection_error_naming_token_auth(monkeypatch):
    """Something listens at the address but ray.init fails (as when the cluster wants a token this process does
    not send): the error names the address and token authentication, and keeps Ray's own error as its cause."""
    import socket

    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()

    def refuse(*args, **kwargs):
        raise ConnectionError("Timed out while waiting for GCS to become available.")

    monkeypatch.setattr(ray, "init", refuse)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(ConnectionError) as info:
            init_ray(address)
    msg = str(info.value)
    assert address in msg and "Timed out while waiting for GCS" in msg and "RAY_AUTH_MODE=token" in msg
    assert isinstance(info.value.__cause__, ConnectionError)


TOKEN_HEAD = '''
import os, sys
os.environ["RAY_AUTH_MODE"] = "token"
from ray.cluster_utils import Cluster
c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1",
                                                  "include_dashboard": False})
print(c.address, flush=True)
try:
    sys.stdin.readline()
finally:
    c.shutdown()
'''


@pytest.mark.slow
def test_jiu_eval_without_the_token_of_a_token_auth_cluster_names_the_cause(tmp_path):
    """A real loopback head with token authentication; jiu eval --address from a process without RAY_AUTH_MODE
    is refused by Ray after its time-out, and says why (about 40 s)."""
    import os
    import pathlib
    import subprocess

    pytest.importorskip("ray")
    root = pathlib.Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    head = subprocess.Popen([sys.executable, "-c", TOKEN_HEAD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    try:
        address = head.stdout.readline().strip()
        assert address.startswith("127.0.0.1:"), address
        r = subprocess.run([sys.executable, "-m", "jiu_env.cli", "eval", "random", "b=random", "--backend", "ray",
                            "--address", address, "--rule", "board_size=6", "--games", "2", "--no-progress"],
                           capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    finally:
        head.stdin.close()
        head.wait(timeout=120)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"cannot connect to the Ray cluster at {address}" in r.stderr and "RAY_AUTH_MODE=token" in r.stderr
    assert "Traceback" not in r.stderr
