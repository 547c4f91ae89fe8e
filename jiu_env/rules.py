"""Rules configuration: the options and named profiles of docs/rules.md §6 and §10."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from . import kernel as K
from .names import did_you_mean
from .validate import validate_state

BAN_MODES: dict[str, int] = {"none": K.BAN_NONE, "vs_flyer": K.BAN_VS_FLYER, "flyer": K.BAN_FLYER, "both": K.BAN_BOTH}
FLYER_MOVES: dict[str, int] = {name: i for i, name in enumerate(K.FLYER_MOVES_NAMES)}
MIN_STONES_CHECKS: dict[str, int] = {name: i for i, name in enumerate(K.MIN_CHECK_NAMES)}

PROFILES: tuple[str, ...] = ("competitive", "traditional", "ludii8", "jqchess8")

#: Options added after the first record format, with their default.  :meth:`Rules.to_dict` lists
#: them only where they differ from the profile's value, so records and configs written with the
#: earlier profiles' rules are unchanged (and readers that predate these options still read them).
LATER_OPTIONS: dict[str, Any] = dict(flyer_moves="all", min_stones_check="decision", square_on_return=False,
                                     formations=False, history_size=0, ban_after_capture=False)
MAX_HISTORY: int = 1_000_001


@dataclass(frozen=True)
class Rules:
    """One complete rule set.  Build it with :meth:`Rules.make` (profile + overrides).

    A profile sets every option; options given to :meth:`make` override it.
    Changing ``board_size`` re-derives the profile's ``fly_threshold``
    (``board_size`` for competitive / traditional / jqchess8, ``board_size - 1``
    for ludii8) unless ``fly_threshold`` is given too.

    ``history_size = 0`` sizes the repetition history automatically:
    ``max_battle_turns + 1`` turn starts (exact) or, without a turn limit, 2048.
    """

    board_size: int = 14
    fly_threshold: int = 14
    single_jump_ban: str = "vs_flyer"
    min_stones: int = 4
    chain_may_stop: bool = True
    repetition_draw: int = 3
    max_battle_turns: int = 1000
    flyer_moves: str = "all"
    min_stones_check: str = "decision"
    square_on_return: bool = False
    formations: bool = False
    history_size: int = 0
    ban_after_capture: bool = False
    profile: str = "competitive"

    def __post_init__(self) -> None:
        _validate(self)

    # ------------------------------------------------------------ building
    @classmethod
    def make(cls, rules: str | Rules | dict[str, Any] = "competitive", **options: Any) -> Rules:
        """Rules from a profile name (or a :class:`Rules`, or a dict of options) plus overrides.

        >>> Rules.make("competitive", board_size=8).fly_threshold
        8
        """
        if isinstance(rules, Rules):
            base = asdict(rules)
        elif isinstance(rules, dict):
            base = dict(rules)
            prof = base.pop("profile", "competitive")
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
        elif "board_size" in options and "fly_threshold" not in options:
            # a new board size re-derives the profile's fly threshold
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
        d = asdict(self)
        prof = _profile_defaults(self.profile)
        for k in LATER_OPTIONS:
            if d[k] == prof[k]:
                del d[k]
        return d

    @property
    def history_capacity(self) -> int:
        """Turn-start hashes the repetition history holds (see ``history_size``)."""
        if self.history_size:
            return self.history_size
        return self.max_battle_turns + 1 if self.max_battle_turns else K.DEFAULT_HISTORY

    @property
    def repetition_exact(self) -> bool:
        """Does the history hold every turn start a repetition could go back to (docs/rules.md §5.2.3)?"""
        return self.max_battle_turns > 0 and self.history_capacity >= self.max_battle_turns + 1

    @property
    def num_points(self) -> int:
        return self.board_size * self.board_size

    @property
    def num_actions(self) -> int:
        """Size of the flat action space, ``10 * N * N + 1`` (plain Python: no numba call per access)."""
        return K.A_STOP * self.board_size * self.board_size + 1

    def kernel_args(self) -> tuple[Any, ...]:
        """Positional arguments of :func:`jiu_env.kernel.new_state`."""
        return (
            self.board_size,
            self.fly_threshold,
            BAN_MODES[self.single_jump_ban],
            self.min_stones,
            self.chain_may_stop,
            self.repetition_draw,
            self.max_battle_turns,
            FLYER_MOVES[self.flyer_moves],
            MIN_STONES_CHECKS[self.min_stones_check],
            self.square_on_return,
            self.formations,
            self.history_size,
            self.ban_after_capture,
        )

    def new_state(self) -> np.ndarray:
        """A fresh kernel state at the start of the placement phase."""
        return K.new_state(*self.kernel_args())


def _plain(value):
    """numpy scalars (np.int64(8), np.bool_(True)) as the Python values they stand for."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _profile_defaults(profile, board_size=None):
    later = dict(LATER_OPTIONS)
    if profile == "ludii8":
        n = 8 if board_size is None else board_size
        return dict(board_size=n, fly_threshold=n - 1, single_jump_ban="flyer", min_stones=4,
                    chain_may_stop=True, repetition_draw=3, max_battle_turns=1000, **later)
    if profile == "jqchess8":
        # JQ_Chess (github.com/lguoyanyunyan/JQ_Chess), "competitive" mode: 8x8, flying at <= 8 stones
        # and then only flying, the ban on the strong side's single jumps (decided again with the counts
        # after the jump's capture), fewer than 4 stones loses when the turn is over, squares counted
        # wherever the moved stone rests, threefold repetition.
        n = 8 if board_size is None else board_size
        later.update(flyer_moves="fly_only", min_stones_check="turn_end", square_on_return=True,
                     ban_after_capture=True)
        return dict(board_size=n, fly_threshold=n, single_jump_ban="vs_flyer", min_stones=4,
                    chain_may_stop=True, repetition_draw=3, max_battle_turns=1000, **later)
    n = 14 if board_size is None else board_size
    ban = "vs_flyer" if profile == "competitive" else "none"
    return dict(board_size=n, fly_threshold=n, single_jump_ban=ban, min_stones=4,
                chain_may_stop=True, repetition_draw=3, max_battle_turns=1000, **later)


def _check_int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"rules option {name!r} must be an int, not {type(value).__name__} ({value!r})")
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"rules option {name!r} = {value} is out of range ({rng})")


def _check_choice(name, value, choices):
    # a list or dict value is not hashable: test the type before looking it up
    if not isinstance(value, str) or value not in choices:
        kind = "" if isinstance(value, str) else f" ({type(value).__name__})"
        raise ValueError(f"rules option {name!r} = {value!r}{kind} is not one of {', '.join(choices)}")


def max_min_stones(board_size: int) -> int:
    """The largest ``min_stones`` that does not decide the game before the battle starts.

    After placement and the removal of the two diagonal-end stones each side
    has at least ``board_size**2 // 2 - 1`` stones; a larger ``min_stones``
    would make the side to move lose at battle turn 0.
    """
    return board_size * board_size // 2 - 1


def _check_min_stones(r):
    _check_int("min_stones", r.min_stones, 0)
    top = max_min_stones(r.board_size)
    if r.min_stones > top:
        raise ValueError(f"rules option 'min_stones' = {r.min_stones} would decide every game at battle turn 0: "
                         f"on {r.board_size}x{r.board_size} each side has {top} stones after placement "
                         f"(use 0..{top})")


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"rules option {name!r} must be a bool (True or False), not {type(value).__name__} ({value!r})")


def _validate(r):
    _check_int("board_size", r.board_size, K.MIN_N, K.MAX_N)
    _check_int("fly_threshold", r.fly_threshold, 0, r.num_points)
    _check_choice("single_jump_ban", r.single_jump_ban, BAN_MODES)
    _check_min_stones(r)
    _check_bool("chain_may_stop", r.chain_may_stop)
    _check_int("repetition_draw", r.repetition_draw, 0)
    if r.repetition_draw == 1:
        raise ValueError("rules option 'repetition_draw' = 1 would draw every game at its first battle turn; use 0 (off) or >= 2")
    _check_int("max_battle_turns", r.max_battle_turns, 0, 1_000_000)
    _check_choice("flyer_moves", r.flyer_moves, tuple(FLYER_MOVES))
    _check_choice("min_stones_check", r.min_stones_check, tuple(MIN_STONES_CHECKS))
    _check_bool("square_on_return", r.square_on_return)
    _check_bool("formations", r.formations)
    _check_bool("ban_after_capture", r.ban_after_capture)
    _check_int("history_size", r.history_size, 0, MAX_HISTORY)
    if r.history_size == 1:
        raise ValueError("rules option 'history_size' = 1 keeps no earlier position, so no repetition could be "
                         "seen; use 0 (automatic) or >= 2")
    if not isinstance(r.profile, str) or r.profile not in PROFILES:
        raise ValueError(f"unknown rules profile {r.profile!r}{did_you_mean(r.profile, PROFILES)}; "
                         f"choose one of {', '.join(PROFILES)}")


def rules_from_state(state: np.ndarray) -> Rules:
    """Recover the :class:`Rules` (profile name aside) stored in a kernel state."""
    validate_state(state)
    inv = {v: k for k, v in BAN_MODES.items()}
    maxt = int(state[K.H_MAXT])
    cap = int(state[K.H_CAP])
    auto = maxt + 1 if maxt > 0 else K.DEFAULT_HISTORY
    return Rules(
        board_size=int(state[K.H_N]),
        fly_threshold=int(state[K.H_FLY]),
        single_jump_ban=inv[int(state[K.H_BAN])],
        min_stones=int(state[K.H_MIN]),
        chain_may_stop=bool(state[K.H_CHAIN_STOP]),
        repetition_draw=int(state[K.H_REP]),
        max_battle_turns=maxt,
        flyer_moves=K.FLYER_MOVES_NAMES[int(state[K.H_FLYER_MOVES])],
        min_stones_check=K.MIN_CHECK_NAMES[int(state[K.H_MIN_CHECK])],
        square_on_return=bool(state[K.H_SQ_RETURN]),
        formations=bool(state[K.H_FORMATIONS]),
        history_size=0 if cap == auto else cap,
        ban_after_capture=bool(state[K.H_BAN_AFTER]),
    )


__all__ = ["Rules", "PROFILES", "BAN_MODES", "FLYER_MOVES", "MIN_STONES_CHECKS", "rules_from_state", "max_min_stones"]
