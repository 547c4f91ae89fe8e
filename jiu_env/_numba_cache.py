"""Numba's on-disk cache for ``jiu_env``, keyed by the package's numba sources.

Numba checks a cached function against its *own* source file only, so a
function of ``observation.py`` or ``bots/alphabeta.py`` kept its machine code,
with the old kernel inlined, after ``kernel.py`` changed (an edit, ``pip
install -e``, an upgrade into the same site-packages).  :func:`install` puts a
cache locator in front of numba's own ones: every ``cache=True`` function
defined under this package is cached in a directory whose name holds a hash
of the numba sources (:func:`numba_sources`), so a change to any of them
starts a fresh cache.  Where it lives (:func:`cache_root`):

* ``$NUMBA_CACHE_DIR/jiu_env-<hash>/`` when the user set ``NUMBA_CACHE_DIR``;
* else ``jiu_env/__pycache__/numba-<hash>/`` when the package folder is writable
  (older ``numba-*`` folders and the loose ``*.nbi``/``*.nbc`` files of the
  former layout are removed when a new one is made);
* else ``$XDG_CACHE_HOME/jiu_env/numba-<hash>/`` (``~/.cache/...``), never pruned
  (several installs may share it).

Importing this module installs it; ``jiu_env/__init__.py`` imports it before
any module that defines numba functions; ``NUMBA_CACHE_LOCATOR_CLASSES`` (numba's own
override) still wins.  The hash is taken once per process, at install.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import warnings
from typing import Any

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
HASH_LENGTH = 16

# A file "holds numba code" when a line starts with a numba decorator; the package modules such a file
# imports names from at top level are hashed too (numba freezes global constants into the machine code).
# (The patterns start with a literal newline, which the regex engine scans for quickly: sources get one prepended.)
_NUMBA_DEF = re.compile(rb"\n[ \t]*@(?:numba\.)?(?:njit|jit|vectorize|guvectorize|cfunc|stencil)\b")
_REL_IMPORT = re.compile(rb"\nfrom (\.+)([\w.]*) import ([^\n(]*(?:\([^)]*\))?)")
_SKIP_DIRS = {"__pycache__", "data"}

_state: dict[str, Any] = {"hash": None, "pruned": set()}


def _package_files(pkg_dir: str) -> dict[str, bytes]:
    out = {}
    for d, dirs, files in os.walk(pkg_dir):
        dirs[:] = sorted(x for x in dirs if x not in _SKIP_DIRS and not x.startswith("."))
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, pkg_dir).replace(os.sep, "/")] = fh.read()
    return out


def _imported_files(rel: str, source: bytes, files: dict[str, bytes]) -> set[str]:
    """The package modules ``rel`` imports from at top level (``from .x import a``, ``from .. import x``)."""
    out: set[str] = set()
    for m in _REL_IMPORT.finditer(b"\n" + source):
        dots, name, names = m.group(1).decode(), m.group(2).decode(), m.group(3)
        base = rel.split("/")[:-1]
        base = base[:len(base) - (len(dots) - 1)] if len(dots) > 1 else base
        mod = base + (name.split(".") if name else [])
        cands = ["/".join(mod) + ".py"] if mod else []
        cands += ["/".join(mod + [n.decode()]) + ".py" for n in re.findall(rb"\w+", names)]  # submodules
        out.update(c for c in cands if c in files)
    return out


def numba_sources(pkg_dir: str = PKG_DIR) -> dict[str, bytes]:
    """``{relative path: bytes}`` of the files the cache is keyed by: every ``.py`` file of the package that
    defines numba functions, and the package modules those import names from at top level."""
    files = _package_files(pkg_dir)
    seeds = {rel for rel, src in files.items() if b"jit" in src or b"@numba." in src or b"vectorize" in src or b"cfunc" in src
             if _NUMBA_DEF.search(b"\n" + src)}
    keyed = set(seeds)
    for rel in seeds:
        keyed |= _imported_files(rel, files[rel], files)
    return {rel: files[rel] for rel in sorted(keyed)}


def source_hash(pkg_dir: str = PKG_DIR) -> str:
    """A short hash of :func:`numba_sources` (names and contents)."""
    h = hashlib.sha256()
    for rel, src in numba_sources(pkg_dir).items():
        h.update(rel.encode() + b"\0" + hashlib.sha256(src).digest())
    return h.hexdigest()[:HASH_LENGTH]


def current_hash() -> str:
    """The hash this process keys its cache by (taken at :func:`install`)."""
    if _state["hash"] is None:
        _state["hash"] = source_hash()
    return str(_state["hash"])


def _user_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jiu_env")


def candidate_roots() -> list[tuple[str, bool]]:
    """``[(cache root, prune its siblings)]`` in the order tried (see the module docstring)."""
    from numba.core import config

    h = current_hash()
    user_dir = getattr(config, "CACHE_DIR", "")  # NUMBA_CACHE_DIR as numba read it
    if user_dir:
        return [(os.path.join(user_dir, f"jiu_env-{h}"), False)]
    return [(os.path.join(PKG_DIR, "__pycache__", f"numba-{h}"), True),
            (os.path.join(_user_cache_dir(), f"numba-{h}"), False)]


def cache_root() -> str | None:
    """The directory this process caches the package's numba code in (None: none writable, numba's default)."""
    for root, _ in candidate_roots():
        if _writable(root):
            return root
    return None


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        return os.access(path, os.W_OK)
    except OSError:
        return False


def prune(root: str) -> list[str]:
    """Remove the other ``numba-*`` folders beside ``root`` and loose ``*.nbi``/``*.nbc`` files of the former
    in-tree layout; return what was removed.  Errors are ignored (another process may be at it too)."""
    removed: list[str] = []
    parent, me = os.path.split(root)
    try:
        siblings = os.listdir(parent)
    except OSError:
        return removed
    for name in siblings:
        p = os.path.join(parent, name)
        if name.startswith("numba-") and name != me and os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    for d, dirs, files in os.walk(PKG_DIR):
        dirs[:] = [x for x in dirs if not x.startswith("numba-") and x not in ("data", ".git")]
        if os.path.basename(d) != "__pycache__":
            continue
        for f in files:
            if f.endswith((".nbi", ".nbc")):
                try:
                    os.remove(os.path.join(d, f))
                    removed.append(os.path.join(d, f))
                except OSError:
                    pass
    return removed


def _make_locator_class():
    from numba.core.caching import _CacheLocator, _SourceFileBackedLocatorMixin

    class JiuSourceKeyedLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
        """Caches the functions of files under ``jiu_env/`` in :func:`cache_root`'s folder (one sub-folder per
        sub-package); declines every other file, which numba's own locators then take."""

        def __init__(self, py_func, py_file, cache_path):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = cache_path

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            path = os.path.abspath(py_file)
            if not path.startswith(PKG_DIR + os.sep) or not os.path.exists(path):
                return None
            sub = os.path.relpath(os.path.dirname(path), PKG_DIR)
            for root, prunes in candidate_roots():
                fresh = not os.path.isdir(root)
                self = cls(py_func, py_file, os.path.normpath(os.path.join(root, sub)))
                try:
                    self.ensure_cache_path()
                except OSError:
                    continue
                if prunes and fresh and root not in _state["pruned"]:
                    _state["pruned"].add(root)
                    prune(root)
                return self
            return None

    return JiuSourceKeyedLocator


def install() -> None:
    """Put the source-keyed locator first in numba's list (once per process) and take the source hash."""
    current_hash()
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # renamed in numba 0.6x
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):
        warnings.warn("jiu_env: this numba version has no cache locator list; its cache is keyed by each file only "
                      "(delete jiu_env's *.nbi/*.nbc files after changing the kernel)", RuntimeWarning, stacklevel=2)
        return
    if not any(getattr(c, "__module__", None) == __name__ for c in classes):
        classes.insert(0, _make_locator_class())


__all__ = ["install", "numba_sources", "source_hash", "current_hash", "cache_root", "candidate_roots", "prune"]



install()
