"""Reading and writing the files a user names: whole-file replacement and bounded reads.

:func:`atomic_write_text` (and :func:`atomic_write_bytes`) is the one way
the package replaces a file a user names (a saved record, a tournament's
reports and ``games.jsonl`` rewrites):
the text goes to a temporary file in the same folder, which then replaces the
target in one step, so that a failed write (an encoding error, a full disk, a
kill) leaves the previous file as it was.

:func:`read_text_limited` reads a text file of at most ``limit`` bytes, and
reads no more than ``limit + 1`` bytes of anything larger (an endless stream
such as ``/dev/zero`` included) before refusing it.

:func:`loads_json` is ``json.loads`` with a named error for JSON nested too
deeply for the parser (Python's decoder recurses and would raise
``RecursionError``).
"""

from __future__ import annotations

import errno
import io
import json
import os
import secrets
import stat
from typing import Any

#: The largest record file :func:`jiu_env.records.load_record` (and ``jiu replay``) reads.
MAX_RECORD_BYTES: int = 64 << 20


class FileTooLarge(ValueError):
    """A file is larger than the limit for its kind."""


def _create_temp(target: str) -> tuple[int, str]:
    """A new, empty file next to ``target`` (mode 0666 less the umask, as :func:`open` makes): ``(fd, path)``.

    An error (no such folder, no permission) names ``target``, not the temporary name.
    """
    folder, base = os.path.split(target)
    if len(os.fsencode(base)) > 200:  # the 14 characters added must not push a valid name past 255 bytes
        base = base[:40]
    for _ in range(100):
        tmp = os.path.join(folder or ".", f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:
            raise type(e)(e.errno, e.strerror, target) from None
    raise FileExistsError(errno.EEXIST, "no free temporary file name next to it", target)


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8",
                      newline: str | None = None, fsync: bool = True) -> None:
    """Replace ``path`` by ``text`` in one step: the old file stays whole if anything fails.

    The text is encoded first (an encoding error leaves every file as it
    was), then written with :func:`atomic_write_bytes`.  ``newline`` is that
    of :func:`open` (``None``: ``os.linesep``; ``""`` writes line ends as they are).
    """
    if newline is None:
        newline = os.linesep
    if newline not in ("", "\n"):
        text = text.replace("\n", newline)
    atomic_write_bytes(path, text.encode(encoding), fsync=fsync)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, fsync: bool = True) -> None:
    """Replace ``path`` by ``data`` in one step: the old file stays whole if anything fails.

    The data is written to a temporary file next to ``path`` (same folder,
    so the rename cannot cross file systems), flushed to disk (``fsync``),
    given the old file's permissions (a new file: those :func:`open` would
    give) and renamed over ``path`` with :func:`os.replace`.  On any error
    the temporary file is removed and the error, naming ``path``,
    propagates.  A symbolic link keeps pointing to the (replaced) file; a
    device or a pipe (``/dev/null``) is written directly, as :func:`open`
    would.
    """
    path = os.fspath(path)
    if os.path.islink(path):
        path = os.path.realpath(path)  # the link keeps pointing to the (replaced) file
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None  # a new file: the temporary file's own mode
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(st.st_mode):  # a device or a pipe (/dev/null, /dev/stdout): nothing to replace
            with open(path, "wb") as f:
                f.write(data)
            return
        if not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    fd, tmp = _create_temp(path)
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.errno and e.filename is None:  # a full disk, a file-size limit: name it
            raise type(e)(e.errno, e.strerror, path) from None
        raise


def read_text_limited(path: str | os.PathLike[str], limit: int, what: str = "file",
                      encoding: str = "utf-8") -> str:
    """The text of ``path`` (universal newlines, as :func:`open` in text mode), at most ``limit`` bytes.

    A larger file, or a stream that does not end, raises :class:`FileTooLarge`
    naming the file and the limit; no more than ``limit + 1`` bytes are read.
    A file that is not valid text raises :class:`UnicodeDecodeError`.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        try:
            size = os.fstat(f.fileno()).st_size
        except OSError:  # pragma: no cover - fstat of an open file does not fail on the platforms we run on
            size = 0
        if size > limit:
            raise FileTooLarge(f"{path} is {size} bytes: larger than the {limit}-byte limit for a {what}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"{path} holds more than {limit} bytes (the limit for a {what}): "
                           "not read further")
    with io.TextIOWrapper(io.BytesIO(data), encoding=encoding) as t:
        return t.read()


def loads_json(text: str | bytes, where: str = "JSON text") -> Any:
    """``json.loads(text)``; JSON nested deeper than the parser can follow raises ValueError naming ``where``.

    Malformed JSON raises :class:`json.JSONDecodeError` as ``json.loads`` does.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeep(f"{where}: JSON nested too deeply to read") from None


def dumps_json(value: Any, where: str = "JSON text", **kwargs: Any) -> str:
    """``json.dumps(value, allow_nan=False)``: strict JSON, whose readers elsewhere accept no NaN or Infinity.

    A non-finite float raises ValueError naming ``where`` instead of writing
    a line that other JSON readers refuse.
    """
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError as e:
        raise ValueError(f"{where}: holds NaN or Infinity, which JSON cannot store ({e})") from None


class JSONTooDeep(ValueError):
    """JSON text whose arrays and objects nest deeper than the parser follows."""


__all__ = ["atomic_write_text", "atomic_write_bytes", "read_text_limited", "loads_json", "dumps_json", "FileTooLarge", "JSONTooDeep", "MAX_RECORD_BYTES"]
