"""The package works when installed from a wheel, not only from a checkout.

Builds a wheel from the tracked files, installs it (non-editable) into a
fresh virtual environment, and from a directory outside the repository runs
``make_bot("alphazero")`` (its default checkpoint is package data), a short
``jiu eval`` and an env loop.  The fresh environment borrows this
environment's third-party packages through a ``.pth`` line, so the test needs
no network; ``jiu_env`` itself can only come from the wheel.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The installed copy must not be shadowed by a checkout on PYTHONPATH (as when the suite runs from one).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _tracked_copy(dest):
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if f.startswith(("jiu_env/", "pyproject.toml", "README.md")):
            target = dest / f
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, target)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    src = tmp_path_factory.mktemp("src")
    _tracked_copy(src)
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(src)], check=True, capture_output=True)
    (wheel,) = wheels.glob("jiu_env-*.whl")
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # third-party packages from this environment, after the fresh env's own site-packages
    pathlib.Path(site, "_borrowed_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path_factory.mktemp("outside")
    return py, env_dir, work


def _run(installed, code):
    py, _, work = installed
    r = subprocess.run([str(py), "-c", code], cwd=work, capture_output=True, text=True, timeout=600, env=ENV)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_wheel_holds_data_and_marker(installed):
    out = _run(installed, "import jiu_env, pathlib; p = pathlib.Path(jiu_env.__file__).parent; "
                          "print(p); print((p / 'py.typed').exists(), (p / 'data' / 'alphazero_jiu8.pt').exists())")
    where, flags = out.strip().splitlines()
    assert str(installed[1]) in where  # the wheel's copy, not the checkout
    assert flags == "True True"


def test_installed_alphazero_default_checkpoint(installed):
    pytest.importorskip("torch")
    out = _run(installed, "from jiu_env import make_bot, Rules\n"
                          "bot = make_bot('alphazero:sims=8', seed=0)\n"
                          "s = Rules.make('competitive', board_size=8).new_state()\n"
                          "print(bot.checkpoint.name, bot.step(s))")
    name, action = out.split()
    assert name == "alphazero_jiu8.pt" and int(action) >= 0


def test_installed_14x14_network_players(installed):
    pytest.importorskip("torch")
    out = _run(installed, "from jiu_env import make_bot, Rules\n"
                          "s = Rules.make('competitive').new_state()\n"
                          "pol = make_bot('policy', seed=0)\n"
                          "az = make_bot('alphazero:sims=8', seed=0)\n"
                          "print(pol.step(s), az.step(s), pol.checkpoint.name, az.checkpoint.name, "
                          "az.battle_checkpoint.name)")
    a, b, pol_name, az_name, az_battle = out.split()
    assert pol_name == az_name == "policy_jiu14.pt" and int(a) >= 0 and int(b) >= 0
    assert az_battle == "policy_jiu14_battle.pt"  # the shipped battle network is package data too


def test_installed_env_loop_and_eval(installed):
    _run(installed, "import jiu_env\n"
                    "env = jiu_env.env(board_size=6)\n"
                    "env.reset(seed=0)\n"
                    "for agent in env.agent_iter():\n"
                    "    obs, r, term, trunc, info = env.last()\n"
                    "    env.step(None if term or trunc else env.action_space(agent).sample(obs['action_mask']))\n"
                    "import gymnasium\n"
                    "gymnasium.make('jiu_env/JiuVsBot-v0', board_size=6).reset(seed=0)\n")
    py, env_dir, work = installed
    r = subprocess.run([str(env_dir / "bin" / "jiu"), "eval", "random", "greedy", "--games", "2", "--workers", "1",
                        "--rule", "board_size=6", "--out", str(work / "eval")],
                       cwd=work, capture_output=True, text=True, timeout=600, env=ENV)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (work / "eval" / "games.jsonl").read_text().count("\n") == 2
