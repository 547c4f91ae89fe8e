"""Rules configuration: the options and named profiles of docs/rules.md §6 and §10.

Every option is a row of :data:`jiu_env.options.RULE_OPTIONS` (its header slot, type,
range, default, profile values and doc line); :class:`Rules` takes its defaults,
profiles, validation, :meth:`Rules.new_state` and :func:`rules_from_state` from
that table, and holds one typed field per row (checked at import).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from . import kernel as K

from . import vocab as V
from .names import did_you_mean
from .options import PROFILES as PROFILES, RULE_OPTION, RULE_OPTIONS, defaults, header_values
from .validate import validate_state

BAN_MODES: dict[str, int] = {name: i for i, name in enumerate(RULE_OPTION["single_jump_ban"].choices)}
FLYER_MOVES: dict[str, int] = {name: i for i, name in enumerate(RULE_OPTION["flyer_moves"].choices)}
MIN_STONES_CHECKS: dict[str, int] = {name: i for i, name in enumerate(RULE_OPTION["min_stones_check"].choices)}

#: Options added after the first record format, with their default.  :meth:`Rules.to_dict` lists
#: them only where they differ from the profile's value, so records and configs written with the
#: earlier profiles' rules are unchanged (and readers that predate these options still read them).
LATER_OPTIONS: dict[str, Any] = {o.name: o.default for o in RULE_OPTIONS if o.later}
MAX_HISTORY: int = RULE_OPTION["history_size"].upper(0) or 0

#: The defaults of the first profile, which the fields of :class:`Rules` start from.
_DEFAULTS = defaults()


@dataclass(frozen=True)
class Rules:
    """One complete rule set.  Build it with :meth:`Rules.make` (profile + overrides).

    A profile sets every option; options given to :meth:`make` override it.
    Changing ``board_size`` re-derives the profile's ``fly_threshold``
    (``board_size`` for competitive / traditional / jqchess8, ``board_size - 1``
    for ludii8) unless ``fly_threshold`` is given too, whether the rules
    changed are a :class:`Rules` or its :meth:`to_dict`; giving the same
    board size keeps the threshold they have.

    ``history_size = 0`` sizes the repetition history automatically:
    ``max_battle_turns + 1`` turn starts (exact) or, without a turn limit, 2048.
    """

    # One typed field per row of jiu_env/options.py, in its order (for type checkers and the API
    # docs, which read the class as written); the defaults and everything else come from the table.
    board_size: int = _DEFAULTS["board_size"]
    fly_threshold: int = _DEFAULTS["fly_threshold"]
    single_jump_ban: str = _DEFAULTS["single_jump_ban"]
    min_stones: int = _DEFAULTS["min_stones"]
    chain_may_stop: bool = _DEFAULTS["chain_may_stop"]
    repetition_draw: int = _DEFAULTS["repetition_draw"]
    max_battle_turns: int = _DEFAULTS["max_battle_turns"]
    flyer_moves: str = _DEFAULTS["flyer_moves"]
    min_stones_check: str = _DEFAULTS["min_stones_check"]
    square_on_return: bool = _DEFAULTS["square_on_return"]
    formations: bool = _DEFAULTS["formations"]
    history_size: int = _DEFAULTS["history_size"]
    ban_after_capture: bool = _DEFAULTS["ban_after_capture"]
    profile: str = PROFILES[0]

    def __post_init__(self) -> None:
        _validate(self)

    # ------------------------------------------------------------ building
    @classmethod
    def make(cls, rules: str | Rules | dict[str, Any] = PROFILES[0], **options: Any) -> Rules:
        """Rules from a profile name (or a :class:`Rules`, or a dict of options) plus overrides.

        >>> Rules.make("competitive", board_size=8).fly_threshold
        8
        """
        if isinstance(rules, Rules):
            base = rules.options()
            base["profile"] = rules.profile
        elif isinstance(rules, dict):
            base = dict(rules)
            prof = base.pop("profile", "competitive")
            if not isinstance(prof, str):  # a dict here would be taken for the rules themselves
                raise TypeError(f"rules option 'profile' must be a str (a profile name: {', '.join(PROFILES)}), "
                                f"not {type(prof).__name__} ({prof!r})")
            if _new_size(base, options):
                base.pop("fly_threshold", None)  # re-derived for the new size, as from a Rules (to_dict holds it)
            return cls.make(prof, **{**base, **options})
        elif isinstance(rules, str):
            if rules not in PROFILES:
                raise ValueError(f"unknown rules profile {rules!r}{did_you_mean(rules, PROFILES)}; "
                                 f"choose one of {', '.join(PROFILES)}")
            base = {"profile": rules}
        else:
            raise TypeError(f"rules must be a profile name, a Rules or a dict, not {type(rules).__name__}")
        options = {k: _plain(v) for k, v in options.items()}
        known = {f.name for f in fields(cls)} - {"profile"}
        unknown = sorted(set(options) - known)
        if unknown:
            hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
            raise ValueError(f"unknown rules option(s) {', '.join(map(repr, unknown))}{hint}; "
                             f"valid options: {', '.join(sorted(known))}")
        prof = base.get("profile", "competitive")
        merged = dict(base)
        if isinstance(rules, str):
            merged.update(_profile_defaults(prof, options.get("board_size")))
        elif _new_size(base, options):
            # a new board size re-derives the profile's fly threshold (the same size keeps the one set)
            merged["fly_threshold"] = _profile_defaults(prof, options["board_size"])["fly_threshold"]
        merged.update(options)
        merged["profile"] = prof
        return cls(**merged)

    def replace(self, **options: Any) -> Rules:
        """A copy with some options changed (validated like :meth:`make`)."""
        return Rules.make(self, **options)

    def to_dict(self) -> dict[str, Any]:
        """The options as a dict (``Rules.make(d)`` rebuilds them); the options of
        :data:`LATER_OPTIONS` appear only where they differ from the profile's value."""
        d = self.options()
        prof = _profile_defaults(self.profile)
        for k in LATER_OPTIONS:
            if d[k] == prof[k]:
                del d[k]
        d["profile"] = self.profile
        return d

    def options(self) -> dict[str, Any]:
        """Every option's value by name, in the order of :data:`jiu_env.options.RULE_OPTIONS` (no profile)."""
        return {o.name: getattr(self, o.name) for o in RULE_OPTIONS}

    @property
    def history_capacity(self) -> int:
        """Turn-start hashes the repetition history holds (see ``history_size``)."""
        return RULE_OPTION["history_size"].header_value(self.options())

    @property
    def repetition_exact(self) -> bool:
        """Does the history hold every turn start a repetition could go back to (docs/rules.md §5.2.3)?"""
        return self.max_battle_turns > 0 and self.history_capacity >= self.max_battle_turns + 1

    @property
    def num_points(self) -> int:
        return self.board_size * self.board_size

    @property
    def num_actions(self) -> int:
        """Size of the flat action space, ``10 * N * N + 1`` (:func:`jiu_env.vocab.num_actions`)."""
        return int(V.num_actions.py_func(self.board_size))  # its Python body: no numba call per access

    def header(self) -> dict[int, int]:
        """``{header slot: value}``: how a state keeps these options (:func:`jiu_env.options.header_values`)."""
        return header_values(self.options())

    def kernel_args(self) -> tuple[Any, ...]:
        """Positional arguments of the deprecated :func:`jiu_env.kernel.new_state` (use :meth:`new_state`)."""
        warnings.warn("Rules.kernel_args() is deprecated: kernel.new_state's positional arguments cover only the "
                      "first 13 options; use Rules.new_state() (or kernel.new_state_from(rules.header()))",
                      DeprecationWarning, stacklevel=2)
        h = self.header()
        return tuple(h[RULE_OPTION[name].slot] if name != "history_size" else self.history_size
                     for name in K.NEW_STATE_ARGS)

    def new_state(self) -> np.ndarray:
        """A fresh kernel state at the start of the placement phase, with these options in its header."""
        return K.new_state_from(self.header())


def _plain(value: Any) -> Any:
    """numpy scalars (np.int64(8), np.bool_(True)) as the Python values they stand for."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _profile_defaults(profile: str, board_size: int | None = None) -> dict[str, Any]:
    """Every option's value in ``profile`` (the table's profile values; ``board_size`` re-derives those
    that follow the board size, such as ``fly_threshold``)."""
    return defaults(profile, board_size)


def max_min_stones(board_size: int) -> int:
    """The largest ``min_stones`` that does not decide the game before the battle starts.

    After placement and the removal of the two diagonal-end stones each side
    has at least ``board_size**2 // 2 - 1`` stones; a larger ``min_stones``
    would make the side to move lose at battle turn 0.

    ``board_size`` is checked as the ``board_size`` option is (an int in its
    range, numpy integers included): TypeError / ValueError otherwise.
    """
    board_size = _plain(board_size)
    RULE_OPTION["board_size"].check(board_size, 0)
    return RULE_OPTION["min_stones"].upper(board_size) or 0  # a Bound: never None


def _validate(r: Rules) -> None:
    """Each option against its row (type, range, choices; the board-size bounds on ``r.board_size``)."""
    board = RULE_OPTION["board_size"]
    board.check(r.board_size, 0)
    for o in RULE_OPTIONS:
        if o is not board:
            o.check(getattr(r, o.name), r.board_size)
    if not isinstance(r.profile, str) or r.profile not in PROFILES:
        raise ValueError(f"unknown rules profile {r.profile!r}{did_you_mean(r.profile, PROFILES)}; "
                         f"choose one of {', '.join(PROFILES)}")


def _new_size(base: dict[str, Any], options: dict[str, Any]) -> bool:
    """Whether ``options`` change the board size of ``base`` without setting a fly threshold (one to re-derive)."""
    return ("board_size" in options and "fly_threshold" not in options
            and options["board_size"] != base.get("board_size"))


def rules_from_state(state: np.ndarray) -> Rules:
    """Recover the :class:`Rules` (profile name aside) stored in a kernel state."""
    validate_state(state)
    header = [int(v) for v in state[:V.HDR]]
    return Rules(**{o.name: o.value_from_header(header) for o in RULE_OPTIONS})


def rules_differences(rules: Rules, other: Rules, other_name: str = "other") -> list[str]:
    """The options in which ``other`` differs from ``rules`` (the profile name aside), as
    ``"NAME=RULES' (OTHER_NAME: OTHER'S)"`` strings; empty when they are the same rules."""
    return [f"{o.name}={getattr(rules, o.name)!r} ({other_name}: {getattr(other, o.name)!r})" for o in RULE_OPTIONS
            if getattr(rules, o.name) != getattr(other, o.name)]


def state_rules_mismatch(rules: Rules, state: np.ndarray) -> list[str]:
    """The options in which the rules stored in the kernel ``state`` differ from ``rules`` (the profile name
    aside), as ``"NAME=RULES' (state: STATE'S)"`` strings: the kernel plays a state by its own rules, so a shell
    that reports ``rules`` must not step a state whose rules differ."""
    return rules_differences(rules, rules_from_state(state), "state")


def _check_fields() -> None:
    """Rules has one field per row of the options table, in its order, with the row's type (else import stops)."""
    have = [(f.name, f.type) for f in fields(Rules) if f.name != "profile"]
    want = [(o.name, o.type.__name__) for o in RULE_OPTIONS]
    if have != want:
        missing = [f"{name}: {tp} = _DEFAULTS[{name!r}]" for name, tp in want if (name, tp) not in have]
        raise TypeError("the fields of jiu_env.rules.Rules do not match the rows of jiu_env/options.py"
                        + (f": add {'; '.join(missing)}" if missing else f": {have} != {want}"))


_check_fields()


__all__ = ["Rules", "PROFILES", "BAN_MODES", "FLYER_MOVES", "MIN_STONES_CHECKS", "rules_from_state", "rules_differences", "state_rules_mismatch",
           "max_min_stones"]
