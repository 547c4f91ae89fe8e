"""The player spec grammar, parsed in one place: a spec string in, a :class:`PlayerSpec` out.

Three parts of the package read player specs: :func:`jiu_env.players.make_player`
builds the player, :func:`jiu_env.warmup.builtin_specs` finds the built-in bots
to compile for, and :func:`jiu_env.evaluation.backends.rewrite_spec` finds the
files a spec names so that they can be shipped to other machines.  They all
parse with :func:`parse_player_spec`, so that they cannot disagree about what a
spec means.  The grammar (the forms of :data:`FORMS`)::

    NAME[:key=value,...]        a built-in bot with parameters      (form "bot")
    NAME:PATH                   a built-in bot on a checkpoint file  (form "bot", .path set)
    mix:P:SPEC                  SPEC handicapped with probability P  (form "mix", .parts = (SPEC,))
    phases:PLACE+BATTLE         one player per phase                 (form "phases", .parts = (PLACE, BATTLE))
    KIND:ARG                    a registered player kind             (form "kind", .argument = ARG)
    module:Class[:key=value,..] a user class (module or file.py)     (form "module"; a file's path
                                                                      may hold ':', it ends at ".py:")

``phases:`` splits at its first ``+`` and ``mix:`` at the ``:`` after P, so a
``phases:`` spec nests in the battle half only.  The parser is syntax alone: it
builds nothing, imports nothing and does not look at files; the names of the
built-in bots and of the registered player kinds are given to it
(:func:`jiu_env.players.player_spec` gives the registry's).  It is lenient: a
malformed ``mix:``/``phases:`` spec parses with no parts, and the strict checks
(:meth:`PlayerSpec.params`, the players' factories) raise the errors, so a
caller that only looks for files or bots is not stopped by a spec it does not
build.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

#: The forms a player spec takes (see the module doc); "unknown" is a spec that none of the others fits.
FORMS: tuple[str, ...] = ("bot", "mix", "phases", "kind", "module", "unknown")


def parse_value(text: str) -> Any:
    """A spec parameter value: ``true``/``false``, an int, a float, or the text itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Param:
    """One comma-separated item of a ``key=value,...`` list, as written (``value`` None: the item has no ``=``)."""

    text: str
    key: str
    value: str | None


def split_params(text: str) -> tuple[Param, ...]:
    """The items of ``key=value,...`` as :class:`Param` (keys as written, values stripped); nothing is checked."""
    if not text.strip():
        return ()
    out = []
    for item in text.split(","):
        key, eq, val = item.partition("=")
        out.append(Param(item, key, val.strip() if eq else None))
    return tuple(out)


def parse_params(text: str, spec: str) -> dict[str, Any]:
    """``"sims=2000,c=1.4"`` -> ``{"sims": 2000, "c": 1.4}`` (:func:`parse_value` values).

    An item without ``=`` or without a key, and a key given twice, raise
    ValueError naming ``spec`` (the spec the parameters belong to).
    """
    params: dict[str, Any] = {}
    for p in split_params(text):
        if p.value is None or not p.key.strip():
            raise ValueError(f"bad parameter {p.text!r} in bot spec {spec!r}: expected key=value (a value cannot "
                             "hold a ','; pass such a value, e.g. a checkpoint path, as a keyword: "
                             "make_bot(NAME, checkpoint=PATH))")
        if p.key.strip() in params:
            raise ValueError(f"parameter {p.key.strip()!r} is given twice in bot spec {spec!r}: give it once")
        params[p.key.strip()] = parse_value(p.value)
    return params


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:sims=2000,c=1.4"`` -> ``("mcts", {"sims": 2000, "c": 1.4})``; a parameter given twice raises ValueError."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a bot spec is a non-empty string like 'alphabeta:depth=4', not {spec!r}")
    name, _, rest = spec.strip().partition(":")
    return name.strip(), parse_params(rest, spec)


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec (:func:`parse_player_spec`).

    ``text``: the spec, stripped; ``form``: one of :data:`FORMS`; ``name``: the
    part before the first ``:`` (bot name, kind, module or ``file.py``);
    ``arg``: the part after it as written (``""`` when there is none);
    ``has_arg``: whether there is a ``:`` at all.
    """

    text: str
    form: str
    name: str
    arg: str
    has_arg: bool
    bots: Collection[str] = field(default=(), repr=False, compare=False)
    kinds: Collection[str] = field(default=(), repr=False, compare=False)

    @property
    def argument(self) -> str:
        """The argument after the first ``:``, stripped (a kind's ``ARG``)."""
        return self.arg.strip()

    @property
    def path(self) -> str | None:
        """A built-in bot's argument written without ``key=value`` (``alphazero:PATH``), else None."""
        if self.form == "bot" and self.argument and "=" not in self.arg:
            return self.argument
        return None

    @property
    def items(self) -> tuple[Param, ...]:
        """A built-in bot's ``key=value`` items as written, unchecked (empty for other forms or a ``path``)."""
        return split_params(self.arg) if self.form == "bot" and self.path is None else ()

    def params(self) -> dict[str, Any]:
        """The parameters of a built-in bot or a user class, checked (:func:`parse_params`)."""
        if self.form == "module":
            text = self.arg.partition(":")[2]
            return parse_params(text, self.text) if text.strip() else {}  # errors name the spec as written
        return parse_spec(self.text)[1]

    @property
    def cls(self) -> str:
        """A user class's name (form "module"): ``module:CLASS[:params]``."""
        return self.arg.partition(":")[0]

    @property
    def probability(self) -> str:
        """``P`` of ``mix:P:SPEC``, as written."""
        return self.arg.partition(":")[0]

    @property
    def parts(self) -> tuple[PlayerSpec, ...]:
        """The specs inside: ``(SPEC,)`` of ``mix:P:SPEC``, ``(PLACE, BATTLE)`` of ``phases:PLACE+BATTLE``;
        ``()`` for the other forms and for a ``mix:``/``phases:`` without its separator (parsed on each access,
        so that a deeply nested spec costs nothing until it is walked)."""
        if self.form == "mix":
            _, sep, inner = self.arg.partition(":")
            return (self._sub(inner),) if sep else ()
        if self.form == "phases":
            a, sep, b = self.arg.partition("+")
            return (self._sub(a), self._sub(b)) if sep else ()
        return ()

    def path_params(self) -> tuple[str, str, str]:
        """``(PATH, ":", PARAMS)`` of a kind's argument ``PATH[:PARAMS]`` (``rllib:DIR:module=ID``), as
        :meth:`str.partition` splits it (the separator is ``""`` when there are no parameters)."""
        return self.argument.partition(":")

    def _sub(self, text: str) -> PlayerSpec:
        return parse_player_spec(text, self.bots, self.kinds)


def parse_player_spec(spec: str, bots: Collection[str], kinds: Collection[str]) -> PlayerSpec:
    """Parse a player spec string; ``bots`` are the built-in bot names, ``kinds`` the registered player kinds.

    Nothing is checked beyond the form (see the module doc); a non-string
    raises TypeError.
    """
    if not isinstance(spec, str):
        raise TypeError(f"a player spec is a string, not {type(spec).__name__}")
    text = spec.strip()
    name, sep, arg = text.partition(":")
    if name in bots:
        form = "bot"
    elif name in ("mix", "phases"):
        form = name
    elif name in kinds:
        form = "kind"
    elif ".py:" in text and text.index(".py:") + 4 < len(text):
        # a player file whose path holds a ':' (C:\bots\me.py:Bot, a folder d:x): the file ends at its ".py:"
        end = text.index(".py:") + 3
        name, arg, form = text[:end], text[end + 1:], "module"
    elif sep and arg and "=" not in arg.split(":")[0]:
        form = "module"
    else:
        form = "unknown"
    return PlayerSpec(text, form, name, arg, bool(sep), bots, kinds)


__all__ = ["FORMS", "PlayerSpec", "Param", "parse_player_spec", "parse_spec", "parse_params", "parse_value",
           "split_params"]
