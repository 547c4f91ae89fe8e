"""Every shell command of the docs and the README is checked, so a wrong flag fails CI (no games are played).

Commands are collected from the code blocks of README.md and docs/*.md: every line of a ``bash``/``sh``/
``shell``/``console`` block, and the lines of ``text`` or unlabelled blocks that start with ``jiu``,
``python``, ``pip``, ``bash`` or ``.venv/bin/...``.  ``\\`` continuations are joined, ``# comments`` dropped,
``&&``/``;``/``|`` chains split, ``$ `` prompts, ``VAR=value`` prefixes and ``time`` removed.  Then:

* ``jiu SUB ...`` (also ``python -m jiu_env.cli SUB ...``) is parsed by the real parser
  (:func:`jiu_env.cli.build_parser`); its player specs follow the player grammar (built-in bots take only
  their own parameters; model paths are not opened), ``--rule KEY=VALUE`` / ``--rules`` make real rules,
  ``--config`` files exist and load, ``--openings`` is a shipped suite or a file, the names given to
  ``--gauntlet``/``--unrated``/``--anchor`` are players of the command.
* ``python examples/X.py ...`` / ``python benchmarks/X.py ...``: the script exists, and every ``--flag`` used
  appears in its ``--help`` (run once per script).
* ``pip install ...``: the project is named as in pyproject.toml and its extras exist.
* Files of the repository that a command reads (``baselines/...``, ``examples/...``) exist.

Inline code spans (`` `jiu eval ... --backend ray` ``) are checked as far as they go: the sub-command exists
and each ``--flag`` is one of its options; a span without placeholders (``...``, ``SPEC``, ``FILE``) that
names a whole command is checked like a block's.  The command lines of the scripts' module docstrings
(examples/*.py, benchmarks/*.py: their ``--help``) and the examples of ``jiu --help`` are checked too, and
so is every repository path named in an inline span (`` `baselines/README.md` ``).

A command that is wrong in a doc someone else is fixing goes in :data:`KNOWN` with the reason (a strict
xfail: once the doc is fixed, the test says so, and the entry goes).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import pathlib
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: (doc file name, a piece of the command) -> why it is wrong; strict xfails, to be fixed in the doc and removed.
KNOWN: dict[tuple[str, str], str] = {}

SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh"}
LOOSE_LANGS = {"", "text", "txt"}  # only lines that start like a command
COMMAND_START = re.compile(r"^(\$\s+)?([A-Z_][A-Z0-9_]*=\S*\s+)*(time\s+)?"
                           r"(jiu|python3?|pip3?|bash|\S*\.venv/bin/\S+)(\s|$)")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
CHAIN = {"&&", "||", ";", "|", "&"}
REDIRECT = {">", ">>", "<", ">&", "&>", "<&", ">|"}
REPO_DIRS = ("baselines", "examples", "benchmarks", "jiu_env", "docs", "tests")
#: bots that the docs make up to show how a bot is added (docs/architecture.md: 'first')
DOC_BOTS = {"first"}
OUTPUT_FLAGS = {"--out", "--checkpoint", "--save", "--output"}  # their values are written, not read


@dataclass
class Command:
    file: str  # the doc's file name (README.md, evaluation.md, ...)
    line: int  # its first line in the doc
    text: str  # the command as written (continuations joined)
    argv: list[str] = field(default_factory=list)  # the words, program first
    inline: bool = False  # from an inline code span (checked loosely)

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


# ------------------------------------------------------------------ collecting
def _strip_comment(line: str) -> str:
    """``line`` without a shell comment: a ``#`` outside quotes at the start of a word."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def _words(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    return list(lex)


def split_commands(text: str) -> list[list[str]]:
    """The simple commands of a shell line: chains split, redirections, env-var prefixes, prompts and
    ``time`` / ``nice`` / ``cd`` left out (each command is a list of words, program first)."""
    text = _strip_comment(text.strip())
    if text.startswith("$ "):
        text = text[2:]
    out, cur = [], []
    words = _words(text)
    i = 0
    while i < len(words):
        w = words[i]
        if w in CHAIN:
            out.append(cur)
            cur = []
        elif w in REDIRECT:
            if cur and cur[-1].isdigit():
                cur.pop()
            i += 1  # its target
        else:
            cur.append(w)
        i += 1
    out.append(cur)
    cmds = []
    for c in out:
        while c and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", c[0]) or c[0] in ("time", "exec", "sudo")):
            c = c[1:]
        if c[:1] == ["nice"]:
            c = c[3:] if c[1:2] == ["-n"] else c[1:]
        if c and c[0] not in ("cd", "export", "echo"):
            cmds.append(c)
    return cmds


def _fenced_lines(path: pathlib.Path):
    """(line number, line, language, in a block) for every line of the doc (fence lines: in a block = None)."""
    lang, inside = "", False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if inside:
                inside = False
            else:
                inside, lang = True, m.group(2).lower()
            yield n, line, lang, None
            continue
        yield n, line, lang, inside


def block_commands(path: pathlib.Path) -> list[Command]:
    """The commands of the doc's shell and text code blocks."""
    return _commands_in(path.name, _fenced_lines(path))


def _commands_in(name: str, lines) -> list[Command]:
    """The commands of ``lines``: (line number, line, block language, in a block) as :func:`_fenced_lines` gives."""
    cmds: list[Command] = []
    pending, start = "", 0
    for n, line, lang, inside in lines:
        if not inside or not (lang in SHELL_LANGS or lang in LOOSE_LANGS):
            pending = ""
            continue
        body = line.strip()
        if pending:
            text = pending + " " + body
        else:
            text, start = body, n
        if _strip_comment(text).endswith("\\"):
            pending = _strip_comment(text)[:-1].rstrip()
            continue
        pending = ""
        if not text or text.startswith("#"):
            continue
        if lang in LOOSE_LANGS and not COMMAND_START.match(text):
            continue
        try:
            for argv in split_commands(text):
                cmds.append(Command(name, start, " ".join(shlex.quote(w) for w in argv), argv))
        except ValueError as e:  # unbalanced quotes: a failing command, not a failing collection
            cmds.append(Command(name, start, text, ["<shell syntax error>", str(e)]))
    return cmds


SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
SPAN_START = re.compile(r"^(jiu|python3?|pip)\s")


def _unbracket(word: str) -> str:
    """A word without the brackets that mark an optional part of a span (``[--address``, ``HEAD:6379]``)."""
    if word.startswith("[") and "]" not in word:
        word = word[1:]
    if word.endswith("]") and "[" not in word:
        word = word[:-1]
    return word


def inline_commands(path: pathlib.Path) -> list[Command]:
    """The commands of the doc's inline code spans outside code blocks (``jiu ...``, ``python ...``, ``pip ...``)."""
    lines = [("" if inside is not False else line) for _, line, _, inside in _fenced_lines(path)]
    text = "\n".join(lines)
    cmds = []
    for m in SPAN.finditer(text):
        span = " ".join(m.group(1).split())
        if not SPAN_START.match(span):
            continue
        try:
            argv = _words(span)
        except ValueError:
            argv = span.split()
        argv = [_unbracket(w) for w in argv if _unbracket(w)]  # [--address HEAD:6379]: an optional part
        if len(argv) > 1 and argv[1].endswith(":"):
            continue  # a message quoted in the text ("jiu eval: error: ..."), not a command
        line = text.count("\n", 0, m.start()) + 1
        cmds.append(Command(path.name, line, span, argv, inline=True))
    return cmds


#: scripts whose module docstring (their --help) shows commands
SCRIPTS = [*sorted((ROOT / "examples").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py")),
           ROOT / "jiu_env" / "benchmark" / "__init__.py"]


def docstring_commands(path: pathlib.Path) -> list[Command]:
    """The command lines (``python ...``, ``jiu ...``) of a script's module docstring."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree, clean=False)
    if doc is None:
        return []
    first = tree.body[0].lineno
    lines = [(first + i, line, "text", True) for i, line in enumerate(doc.splitlines())]
    return _commands_in(path.relative_to(ROOT).as_posix(), lines)


def cli_example_commands() -> list[Command]:
    """The examples of ``jiu --help`` and ``jiu COMMAND --help`` (jiu_env.cli.COMMANDS)."""
    from jiu_env.cli import COMMANDS as CLI

    lines = []
    for name, (_, example, _, _) in CLI.items():
        lines += [(0, line, "text", True) for line in example.splitlines()]
    return _commands_in("jiu_env/cli/__init__.py (COMMANDS examples)", lines)


def collect() -> list[Command]:
    out = []
    for f in FILES:
        if f.exists():
            out += block_commands(f) + inline_commands(f)
    for f in SCRIPTS:
        if f.exists():
            out += docstring_commands(f)
    return out + cli_example_commands()


COMMANDS = collect()


# ------------------------------------------------------------------ checking
class DocCommandError(AssertionError):
    pass


def fail(cmd: Command, why: str):
    raise DocCommandError(f"{cmd.where()}\n  -> {why}")


@functools.lru_cache(maxsize=None)
def _parser():
    from jiu_env.cli import build_parser

    return build_parser()


def _subparser(sub: str):
    import argparse

    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(sub)
    return None


def _is_placeholder(word: str) -> bool:
    """An upper-case placeholder (``SPEC``, ``NAME=SPEC``, ``FILE``, ``RUN/net/net.pt``) or ``...``."""
    return "..." in word or bool(re.fullmatch(r"[A-Z][A-Z0-9_]*([=:/.][A-Za-z0-9_./=:]*)?", word))


def _check_repo_path(cmd: Command, path: str, what: str):
    """A file of the repository the command reads must exist (other paths are the user's own files)."""
    if _is_placeholder(path) or os.path.isabs(path):
        return
    first = pathlib.PurePosixPath(path).parts[0] if path else ""
    if first in REPO_DIRS and not (ROOT / path).exists():
        fail(cmd, f"{what} {path} does not exist in the repository")


def check_spec(cmd: Command, spec: str, depth: int = 0):
    """``spec`` follows the player-spec grammar of :func:`jiu_env.players.make_player` (nothing is built)."""
    from jiu_env.bots import REGISTRY, bot_class, parse_spec
    from jiu_env.players import PLAYER_KINDS

    spec = spec.strip()
    if _is_placeholder(spec) or spec in DOC_BOTS:
        return
    if depth > 8 or not spec:
        fail(cmd, f"bad player spec {spec!r}")
    prefix, sep, rest = spec.partition(":")
    if prefix in REGISTRY:
        if prefix in ("alphazero", "policy") and rest.strip() and "=" not in rest:
            _check_repo_path(cmd, rest.strip(), f"the {prefix} checkpoint")
            return
        try:
            name, params = parse_spec(spec)
            allowed = getattr(bot_class(name), "PARAMS", {})
        except (ValueError, ImportError) as e:
            fail(cmd, f"player spec {spec!r}: {e}")
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            fail(cmd, f"player spec {spec!r}: unknown parameter(s) {unknown} for {name!r}; it takes {sorted(allowed)}")
        if isinstance(params.get("checkpoint"), str):
            _check_repo_path(cmd, params["checkpoint"], f"the {prefix} checkpoint")
        return
    if prefix in PLAYER_KINDS:
        if not rest.strip():
            fail(cmd, f"player spec {spec!r}: {prefix}: needs an argument")
        if prefix == "mix":
            p, sep2, inner = rest.partition(":")
            try:
                float(p)
            except ValueError:
                fail(cmd, f"player spec {spec!r}: {p!r} is not a probability")
            if not sep2:
                fail(cmd, f"player spec {spec!r}: expected mix:P:SPEC")
            check_spec(cmd, inner, depth + 1)
        elif prefix == "phases":
            place, sep2, battle = rest.partition("+")
            if not sep2:
                fail(cmd, f"player spec {spec!r}: expected phases:PLACEMENT+BATTLE")
            check_spec(cmd, place, depth + 1)
            check_spec(cmd, battle, depth + 1)
        elif prefix == "az":
            fail(cmd, f"player spec {spec!r}: 'az:' is deprecated, write 'alphazero:'")
        else:  # sb3:PATH, rllib:PATH, ...: the grammar only (models are not loaded)
            _check_repo_path(cmd, rest.strip(), f"the {prefix} model")
        return
    if sep and rest and "=" not in rest.split(":")[0]:  # module:Class or file.py:Class
        if prefix.endswith(".py"):
            _check_repo_path(cmd, prefix, "the player file")
        return
    fail(cmd, f"unknown player {spec!r} (not a built-in bot, player kind or module:Class)")


def _player(p: str) -> tuple[str, str]:
    """(name, spec) of a ``jiu eval`` player argument (``NAME=SPEC`` or ``SPEC``), as the tournament reads it."""
    try:
        from jiu_env.evaluation.tournament import _player_from
    except ImportError:  # its rule: a name before the first '=', if that name has no ':'
        name, eq, spec = p.partition("=")
        return (name.strip(), spec.strip()) if eq and name.strip() and ":" not in name else (p, p)
    pl = _player_from(p)
    return pl.name, pl.spec


def _rules(cmd: Command, args):
    from jiu_env import cli

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            cli._rules_from_args(args)
    except SystemExit:
        fail(cmd, err.getvalue().strip())


def _config_players(cmd: Command, config: str) -> set[str]:
    """The player names of ``--config CONFIG``: a file of the repository, or the name of a config shipped
    with the package (``ladder``); it must load."""
    from jiu_env.evaluation import tournament

    path = ROOT / config
    if not path.is_file():
        resolve = getattr(tournament, "config_file", None)  # shipped configs, read by name
        if resolve is None:
            fail(cmd, f"--config {config} does not exist")
        try:
            path = pathlib.Path(resolve(config))
        except FileNotFoundError as e:
            fail(cmd, f"--config {config} does not exist: {e}")
    try:
        return {p.name for p in tournament.load_config(path).players}
    except (ValueError, TypeError, OSError, ImportError) as e:
        fail(cmd, f"--config {config}: {e}")


def check_jiu(cmd: Command, argv: list[str]):
    """``jiu ARGS``: the real parser accepts the arguments, and the values it cannot check are right."""
    if cmd.inline:
        check_jiu_loosely(cmd, argv)
        if any(_is_placeholder(w) for w in argv):
            return
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = _parser().parse_args(argv)
    except SystemExit as e:
        if e.code and cmd.inline and re.search(r"required|expected (one|\d+) argument", err.getvalue()):
            return  # a span naming a command and some of its options, not a whole command line
        if e.code:
            fail(cmd, f"the jiu parser refuses it: {err.getvalue().strip()}")
        return  # --help / --version
    sub = args.command
    if sub is None:
        return
    if sub in ("eval", "play", "export", "train"):
        _rules(cmd, args)
    if sub == "warm":
        from jiu_env.rules import Rules

        try:
            Rules.make(args.rules)
        except (TypeError, ValueError) as e:
            fail(cmd, f"--rules: {e}")
        for spec in args.bots:
            check_spec(cmd, spec)
    if sub == "play":
        for spec in (args.bot, args.hint_bot):
            if spec:
                check_spec(cmd, spec)
    if sub == "eval":
        names = set()
        if args.config and not _is_placeholder(args.config):
            names |= _config_players(cmd, args.config)
        if args.quick:
            from jiu_env.cli import QUICK_PLAYERS

            names |= {n for n, _ in QUICK_PLAYERS}
        for p in args.players:
            name, spec = _player(p)
            check_spec(cmd, spec)
            names.add(name)
        given = [*(args.gauntlet or []), *(args.unrated or [])]
        if args.anchor and args.anchor not in ("mean", "auto"):
            given.append(args.anchor)
        for name in given:
            if name not in names and not _is_placeholder(name):
                fail(cmd, f"{name!r} (--gauntlet/--unrated/--anchor) is not one of the players {sorted(names)}")
        if args.openings and not _is_placeholder(args.openings):
            from jiu_env.evaluation.openings import SHIPPED

            if args.openings not in SHIPPED:
                _check_repo_path(cmd, args.openings, "--openings")
    if sub == "train":
        for flag in ("init", "net", "against", "data"):
            value = getattr(args, flag, None)
            for v in [value] if isinstance(value, str) else value or []:
                _check_repo_path(cmd, v, f"--{flag}")
        if args.teacher is not None:
            check_spec(cmd, args.teacher)
        from jiu_env.learn.pipeline import stage_flag_problems

        for problem in stage_flag_problems(args):  # a flag its stage would ignore
            fail(cmd, problem)
        check_spec(cmd, args.gate_player.replace("{net}", "NET.pt"))


def check_jiu_loosely(cmd: Command, argv: list[str]):
    """An inline span: the sub-command exists and every ``--flag`` is one of its options."""
    if not argv:
        return
    sub = argv[0]
    if sub.startswith("-"):
        flags = set(_parser()._option_string_actions)
    elif _is_placeholder(sub):
        return
    else:
        p = _subparser(sub)
        if p is None:
            fail(cmd, f"jiu has no sub-command {sub!r}")
        flags = set(p._option_string_actions)
    for w in argv:
        flag = w.split("=", 1)[0]
        if flag.startswith("--") and flag not in flags:
            fail(cmd, f"jiu {sub} has no option {flag}")


_HELP: dict[str, subprocess.Popen | tuple[int, str]] = {}


def _start_help(script: str):
    if script not in _HELP and (ROOT / script).is_file():
        _HELP[script] = subprocess.Popen([sys.executable, str(ROOT / script), "--help"], cwd=ROOT, text=True,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONPATH": str(ROOT)})


def script_help(script: str) -> tuple[int, str]:
    """(exit status, output) of ``python SCRIPT --help``, once per script (the first call starts them all)."""
    if not _HELP:
        for c in COMMANDS:
            for w in c.argv[1:2]:
                if w.endswith(".py"):
                    _start_help(w)
    _start_help(script)
    got = _HELP[script]
    if isinstance(got, subprocess.Popen):
        out, _ = got.communicate(timeout=120)
        _HELP[script] = got = (got.returncode, out)
    return got


#: packages of the optional extras: a script that needs one that is missing here is skipped
OPTIONAL = ("ray", "torch", "stable_baselines3", "sb3_contrib", "tianshou", "matplotlib", "pyspiel", "chess", "tqdm",
            "pygame")


def check_script(cmd: Command, script: str, argv: list[str]):
    """``python SCRIPT ARGS``: the script exists, has a --help, and lists every flag used."""
    if not (ROOT / script).is_file():
        fail(cmd, f"the script {script} does not exist")
    code, text = script_help(script)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", text)
    if code != 0 and missing and missing.group(1).split(".")[0] in OPTIONAL:
        pytest.skip(f"{script} needs the optional package {missing.group(1)}")
    if code != 0 or "usage:" not in text:
        fail(cmd, f"{script} --help does not print a usage (no argparse?), exit status {code}:\n{text[-2000:]}")
    prev = None
    for w in argv:
        flag, eq, value = w.partition("=")
        if w.startswith("--"):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text):
                fail(cmd, f"{script} has no option {flag} (not in its --help)")
            if eq:
                _check_script_value(cmd, script, text, flag, value)
        else:
            if prev and prev.startswith("--"):
                _check_script_value(cmd, script, text, prev, w)
            if prev not in OUTPUT_FLAGS and not w.startswith("-") and re.search(r"\.\w+$", w):
                _check_repo_path(cmd, w, "the input file")
        prev = flag


#: options of the example and benchmark scripts that take a player spec (besides their own words)
SCRIPT_SPEC_FLAGS = {"--opponent": (), "--bot": (), "--watch": (), "--bootstrap": (), "--teacher": (),
                     "--judge": ("greedy",), "--battle": ("net", "")}


def _check_script_value(cmd: Command, script: str, help_text: str, flag: str, value: str):
    """The value of a script's option: one of its choices (``--flag {a,b}`` in the help), or a player spec."""
    if _is_placeholder(value):
        return
    m = re.search(rf"(?<![\w-]){re.escape(flag)} \{{([^}}]*)\}}", help_text)
    if m and value not in m.group(1).split(","):
        fail(cmd, f"{script} {flag}: {value!r} is not one of its choices {{{m.group(1)}}}")
    if flag in SCRIPT_SPEC_FLAGS and value not in SCRIPT_SPEC_FLAGS[flag]:
        check_spec(cmd, value)


@functools.lru_cache(maxsize=None)
def _pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_pip(cmd: Command, argv: list[str]):
    """``pip install ...``: the project (``.``, ``-e .``, or its name) with extras that exist."""
    if not argv or argv[0] != "install":
        return
    project = _pyproject()
    extras = set(project.get("optional-dependencies", {}))
    for w in argv[1:]:
        if w.startswith("-"):
            continue
        m = re.fullmatch(r"([^\[\]=<>!~;]+?)\s*(\[([^\]]*)\])?\s*([=<>!~].*)?", w)
        if not m:
            fail(cmd, f"pip cannot read the requirement {w!r}")
        target, wanted = m.group(1), m.group(3)
        local = target in (".", "./") or target.startswith(("./", "/")) or target.endswith("/")
        if local and target.rstrip("/") not in (".", "") and not _is_placeholder(target):
            _check_repo_path(cmd, target.rstrip("/"), "the folder")
        ours = local or _norm(target) == _norm(project["name"])
        if not ours:
            if _norm(target) in {"jiu", "jiu-env", "jiuenv", "jiu-chess"}:
                fail(cmd, f"the project is named {project['name']!r} in pyproject.toml, not {target!r}")
            continue  # another package (torch==2.13.0, ...)
        for extra in (wanted or "").split(","):
            extra = extra.strip()
            if extra and extra not in extras:
                fail(cmd, f"pyproject.toml has no extra {extra!r} (it has {', '.join(sorted(extras))})")


def _program(word: str) -> str:
    return pathlib.PurePosixPath(word).name


def check_command(cmd: Command) -> str:
    """Check one command; returns what kind of command it was (``jiu``, ``script``, ``pip``, ``other``...)."""
    argv = cmd.argv
    if argv[0] == "<shell syntax error>":
        fail(cmd, f"not valid shell words: {argv[1]}")
    prog = _program(argv[0])
    if prog == "jiu":
        check_jiu(cmd, argv[1:])
        return "jiu"
    if re.fullmatch(r"pip3?", prog):
        check_pip(cmd, argv[1:])
        return "pip"
    if re.fullmatch(r"python(3(\.\d+)?)?", prog):
        rest = argv[1:]
        while rest and rest[0] in ("-u", "-O", "-B", "-X") or (rest and rest[0].startswith("-X")):
            rest = rest[2:] if rest[0] == "-X" else rest[1:]
        if not rest:
            return "python"
        if rest[0] == "-m":
            module = rest[1] if len(rest) > 1 else ""
            if module == "jiu_env.cli":
                check_jiu(cmd, rest[2:])
                return "jiu"
            if module == "pip":
                check_pip(cmd, rest[2:])
                return "pip"
            import importlib.util

            if module not in ("venv",) and importlib.util.find_spec(module.split(".")[0]) is None:
                fail(cmd, f"python -m {module}: no module {module!r} here")
            return "python -m"
        if rest[0] == "-c":
            return "python -c"
        if rest[0].endswith(".py"):
            if cmd.inline and len(rest) == 1 and not (ROOT / rest[0]).is_file():
                fail(cmd, f"the script {rest[0]} does not exist")
            check_script(cmd, rest[0], rest[1:])
            return "script"
        return "python"
    if prog == "bash" and len(argv) > 1 and argv[1].endswith(".sh"):
        _check_repo_path(cmd, argv[1], "the script")
        return "bash"
    return "other"


def _known(cmd: Command):
    for (name, piece), why in KNOWN.items():
        if name == cmd.file and piece in cmd.text:
            return why
    return None


def _params():
    for c in COMMANDS:
        why = _known(c)
        marks = [pytest.mark.xfail(strict=True, raises=DocCommandError, reason=why)] if why else []
        kind = "inline" if c.inline else "block"
        yield pytest.param(c, id=f"{c.file}:{c.line}:{kind}:{c.text[:60]}", marks=marks)


@pytest.mark.parametrize("cmd", list(_params()))
def test_doc_command(cmd):
    check_command(cmd)


PATH_SPAN = re.compile(r"(%s)(/[\w.-]+)*/?" % "|".join(REPO_DIRS))
#: paths in the docs that are files of other repositories, not of this one
FOREIGN_PATHS = {"docs/rules_pdf_extracted.txt"}  # docs/rules.md: a file of JQ_Chess


def _path_spans():
    for f in FILES:
        lines = [("" if inside is not False else line) for _, line, _, inside in _fenced_lines(f)]
        text = "\n".join(lines)
        for m in SPAN.finditer(text):
            word = m.group(1).strip()
            if PATH_SPAN.fullmatch(word) and word not in FOREIGN_PATHS:
                yield f.name, text.count("\n", 0, m.start()) + 1, word


def test_doc_paths_exist():
    """A repository path named in an inline span (`baselines/...`, `examples/x.py`) exists."""
    spans = list(_path_spans())
    assert len(spans) > 20, spans  # the collector works
    missing = [f"{name}:{line}: {word}" for name, line, word in spans
               if not (ROOT / word).exists() and (name, word) not in KNOWN]
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_known_entries_still_match():
    """Every KNOWN entry names a command that is still in the docs (else the entry is stale: remove it)."""
    for (name, piece), why in KNOWN.items():
        assert any(c.file == name and piece in c.text for c in COMMANDS) or any(
            (f, w) == (name, piece) for f, _, w in _path_spans()), f"stale KNOWN entry {(name, piece)}: {why}"


def test_the_docs_have_commands():
    """The collector finds the commands (a broken collector would pass every doc)."""
    files = {c.file for c in COMMANDS if not c.inline}
    assert {"README.md", "evaluation.md", "training.md", "records.md"} <= files, files
    kinds = {check_kind(c) for c in COMMANDS if not c.inline}
    assert {"jiu", "script", "pip"} <= kinds, kinds


def check_kind(cmd: Command) -> str:
    prog = _program(cmd.argv[0])
    if prog == "jiu" or cmd.argv[1:3] == ["-m", "jiu_env.cli"]:
        return "jiu"
    if re.fullmatch(r"pip3?", prog) or cmd.argv[1:3] == ["-m", "pip"]:
        return "pip"
    if any(w.endswith(".py") for w in cmd.argv[1:2]):
        return "script"
    return "other"


# ------------------------------------------------------------------ the collector and the checks themselves
SAMPLE = """\
Intro `jiu eval --board-sise 8` and `jiu eval: error: x`.

```bash
# a comment
$ FOO=1 jiu eval random greedy \\
    --games 2   # two games
python3 -m venv .venv && .venv/bin/pip install -e ".[eval]" && .venv/bin/jiu eval --quick
ray start --head
```

```text
some output
jiu replay results/games.jsonl --game 'a|b|0'
```

```python
jiu = 1
```
"""


def test_collector_handles_shell_syntax(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(SAMPLE, encoding="utf-8")
    got = [(c.line, c.argv) for c in block_commands(doc)]
    assert got == [
        (5, ["jiu", "eval", "random", "greedy", "--games", "2"]),
        (7, ["python3", "-m", "venv", ".venv"]),
        (7, [".venv/bin/pip", "install", "-e", ".[eval]"]),
        (7, [".venv/bin/jiu", "eval", "--quick"]),
        (8, ["ray", "start", "--head"]),
        (13, ["jiu", "replay", "results/games.jsonl", "--game", "a|b|0"]),
    ]
    spans = inline_commands(doc)
    assert [(c.line, c.argv) for c in spans] == [(1, ["jiu", "eval", "--board-sise", "8"])]


@pytest.mark.parametrize("text, needle", [
    ("jiu eval random greedy --board-sise 8", "unrecognized arguments"),
    ("jiu eval random greedy --rule board_sise=8", "board_sise"),
    ("jiu eval random alphabeta:dept=2", "unknown parameter"),
    ("jiu eval random gredy", "unknown player"),
    ("jiu eval a=random b=greedy --gauntlet c", "'c'"),
    ("jiu eval --config baselines/nothing.toml", "does not exist"),
    ("jiu play --bot mix:x:greedy", "probability"),
    ("jiu eval random greedy --openings jiu_env/data/openings/none.txt", "does not exist"),
    ("python examples/alphazero.py --no-such-flag 3", "no option --no-such-flag"),
    ("python examples/none.py", "does not exist"),
    ("pip install -e '.[evaluation]'", "no extra 'evaluation'"),
    ("pip install 'jiu[eval]'", "named 'jiu-env'"),
    ("python examples/alphazero.py --opponent mcts:sim=100", "unknown parameter"),
    ("python examples/play_against_model.py --colour red", "not one of its choices"),
    ("jiu train runs/x --teacher alphabeta:depht=2", "unknown parameter"),
])
def test_checks_catch_wrong_commands(text, needle):
    for argv in split_commands(text):
        with pytest.raises(DocCommandError, match=re.escape(needle)):
            check_command(Command("x.md", 1, text, argv))


@pytest.mark.parametrize("text", [
    "jiu eval n=alphabeta:depth=3 o=mix:0.5:phases:random+greedy --gauntlet n --anchor o --unrated o",
    "jiu eval NAME=SPEC greedy",
    "jiu eval --config ladder --gauntlet greedy",
    "pip install -e '.[eval,train]'",
    "pip install torch==2.13.0",
    "python -m jiu_env.cli eval --quick --backend ray",
    "python examples/alphazero.py --opponent=mcts:sims=100 --quick",
])
def test_checks_pass_right_commands(text):
    for argv in split_commands(text):
        check_command(Command("x.md", 1, text, argv))
