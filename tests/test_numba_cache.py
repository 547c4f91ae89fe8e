"""Numba's on-disk cache is keyed by the package's numba sources (jiu_env/_numba_cache.py): a change to one
numba file cannot leave another file's compiled code with the old version inlined."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numba
import pytest

import jiu_env
from jiu_env import _numba_cache as nc
from jiu_env import kernel as K

PKG = os.path.dirname(os.path.abspath(jiu_env.__file__))

# A tiny package with two numba modules: b.use() inlines a.const(); the source-keyed locator is on when
# FAKE_KEYED=1 (off: numba's own per-file check, which is what went stale).
FAKE_INIT = "import os\nif os.environ.get('FAKE_KEYED') == '1':\n    from . import _numba_cache  # noqa: F401\n"
FAKE_A = "from numba import njit\n\n\n@njit(cache=True)\ndef const():\n    return {value}\n"
FAKE_B = "from numba import njit\n\nfrom .a import const\n\n\n@njit(cache=True)\ndef use():\n    return const() + 10\n"


def _fake_package(root):
    pkg = root / "fakepkg"
    pkg.mkdir()
    shutil.copy(nc.__file__, pkg / "_numba_cache.py")
    (pkg / "__init__.py").write_text(FAKE_INIT)
    (pkg / "a.py").write_text(FAKE_A.format(value=1))
    (pkg / "b.py").write_text(FAKE_B)
    return pkg


def _use(root, keyed):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env.update(PYTHONPATH=str(root), FAKE_KEYED="1" if keyed else "0", XDG_CACHE_HOME=str(root / "xdg"))
    code = "from fakepkg.b import use; print(use(), use._cache.cache_path)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, cwd=root)
    assert r.returncode == 0, r.stderr
    value, path = r.stdout.split()
    return int(value), path


@pytest.mark.parametrize("keyed", [True, False])
def test_a_change_to_one_numba_file_reaches_the_cached_code_of_another(tmp_path, keyed):
    pkg = _fake_package(tmp_path)
    value, path = _use(tmp_path, keyed)
    assert value == 11
    assert any(f.endswith(".nbi") and f.startswith("b.use") for f in os.listdir(path))
    (pkg / "a.py").write_text(FAKE_A.format(value=2))  # b.py itself is unchanged
    value2, path2 = _use(tmp_path, keyed)
    if keyed:
        assert value2 == 12  # a fresh cache: b.use recompiled with the new a.const
        assert path2 != path and os.path.basename(path2).startswith("numba-")
        assert os.path.dirname(path2) == str(pkg / "__pycache__")
        assert not os.path.exists(path)  # the old hash's folder was pruned
    else:
        assert value2 == 11  # numba alone: b.use kept the old a.const inlined (the bug this module fixes)


def test_jiu_env_caches_under_a_folder_named_by_its_source_hash():
    h = nc.current_hash()
    assert len(h) == nc.HASH_LENGTH and h == nc.source_hash()
    root = nc.cache_root()
    assert root is not None and h in os.path.basename(root)
    path = K.apply_action_unchecked._cache.cache_path
    assert os.path.commonpath([path, root]) == root
    from jiu_env.bots import greedy
    assert os.path.commonpath([greedy.greedy_action._cache.cache_path, root]) == root
    keyed = nc.numba_sources()
    for f in ("kernel.py", "observation.py", "vocab.py", "bots/alphabeta.py", "bots/search.py", "bots/leaves.py", "bots/greedy.py"):
        assert f in keyed
    for f in ("cli/__init__.py", "cli/eval.py", "players.py", "warmup.py", "__init__.py"):
        assert f not in keyed


def test_the_hash_changes_with_a_numba_source_only(tmp_path):
    pkg = tmp_path / "jiu_env"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "data"))
    h0 = nc.source_hash(str(pkg))
    assert h0 == nc.source_hash(PKG)
    with open(pkg / "cli" / "eval.py", "a") as f:
        f.write("\n# not numba code\n")
    assert nc.source_hash(str(pkg)) == h0
    with open(pkg / "kernel.py", "a") as f:
        f.write("\nSOME_CONSTANT = 1\n")
    h1 = nc.source_hash(str(pkg))
    assert h1 != h0
    with open(pkg / "bots" / "base.py", "a") as f:  # imported by numba modules (constants numba would freeze)
        f.write("\nX = 2\n")
    assert nc.source_hash(str(pkg)) not in (h0, h1)


def test_a_user_numba_cache_dir_is_kept_and_keyed(monkeypatch, tmp_path):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    assert nc.cache_root() == os.path.join(str(tmp_path), f"jiu_env-{nc.current_hash()}")


def test_other_files_keep_numba_default_locators(tmp_path):
    code = textwrap.dedent("""
        import jiu_env
        from numba import njit
        @njit(cache=True)
        def f():
            return 1
        f()
        print(f._cache.cache_path)
    """)
    script = tmp_path / "mod.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.path.dirname(PKG)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "__pycache__")


OBSERVE = textwrap.dedent("""
    import json
    import numpy as np
    import jiu_env
    from jiu_env import kernel as K, observation as O
    r = jiu_env.Rules.make("competitive")
    s = r.new_state()
    obs = np.zeros((r.board_size, r.board_size, O.NUM_PLANES), np.float32)
    mask = np.zeros(r.num_actions, np.int8)
    O.observe_unchecked(s, int(s[K.H_TO_MOVE]), True, obs, mask)  # numba code of observation.py inlining the kernel
    print(json.dumps({"m0": int(mask[0]), "path": O.observe_unchecked._cache.cache_path, "file": jiu_env.__file__,
                      "hits": sum(O.observe_unchecked.stats.cache_hits.values())}))
""")
# appended to a copy of kernel.py: the legal mask, as observation.py's numba code sees it, changes
PATCH = textwrap.dedent("""

    _test_orig_legal_mask_unchecked = legal_mask_unchecked


    @njit(cache=True)
    def legal_mask_unchecked(s, mask):
        _test_orig_legal_mask_unchecked(s, mask)
        mask[0] = 42
""")


@pytest.mark.parametrize("keyed", [True, False])
def test_a_kernel_change_reaches_the_cached_observation_code(tmp_path, keyed):
    """The real package, copied: observation.py's cached code follows a change to kernel.py (observation.py
    itself unchanged), while an unchanged package loads its cache.  keyed=False: numba's own in-tree locator
    only (NUMBA_CACHE_LOCATOR_CLASSES), which kept the old kernel: the check would catch the bug."""
    shutil.copytree(PKG, tmp_path / "jiu_env", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env.update(PYTHONPATH=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    if not keyed:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = "InTreeCacheLocator"

    def run():
        r = subprocess.run([sys.executable, "-c", OBSERVE], capture_output=True, text=True, timeout=600, env=env,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    first = run()
    assert first["file"].startswith(str(tmp_path)) and first["m0"] != 42
    pycache = str(tmp_path / "jiu_env" / "__pycache__")
    assert first["path"].startswith(pycache + os.sep + "numba-") if keyed else first["path"] == pycache
    again = run()
    assert again["hits"] >= 1 and again["path"] == first["path"]  # unchanged sources: loaded from the cache
    with open(tmp_path / "jiu_env" / "kernel.py", "a") as f:
        f.write(PATCH)
    changed = run()
    if keyed:
        assert changed["m0"] == 42 and changed["hits"] == 0 and changed["path"] != first["path"]
    else:
        assert changed["m0"] == first["m0"] and changed["hits"] >= 1  # stale: the old kernel, from the cache
