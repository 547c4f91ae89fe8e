"""Rules configuration: the options and named profiles of RULES.md §6."""

from dataclasses import asdict, dataclass, fields

import numpy as np

from . import kernel as K

BAN_MODES = {"none": K.BAN_NONE, "vs_flyer": K.BAN_VS_FLYER, "flyer": K.BAN_FLYER, "both": K.BAN_BOTH}

PROFILES = ("competitive", "traditional", "ludii8")


@dataclass(frozen=True)
class Rules:
    """One complete rule set.  Build it with :meth:`Rules.make` (profile + overrides).

    ``fly_threshold=None`` means "the profile's default for this board size"
    (``board_size`` for competitive/traditional, ``board_size - 1`` for ludii8).
    """

    board_size: int = 14
    fly_threshold: int = 14
    single_jump_ban: str = "vs_flyer"
    min_stones: int = 4
    chain_may_stop: bool = True
    repetition_draw: int = 3
    max_battle_turns: int = 1000
    profile: str = "competitive"

    def __post_init__(self):
        _validate(self)

    # ------------------------------------------------------------ building
    @classmethod
    def make(cls, rules="competitive", **options):
        """Rules from a profile name (or a :class:`Rules`, or a dict of options) plus overrides.

        >>> Rules.make("competitive", board_size=8).fly_threshold
        8
        """
        if isinstance(rules, Rules):
            base = rules.to_dict()
        elif isinstance(rules, dict):
            base = dict(rules)
            prof = base.pop("profile", "competitive")
            return cls.make(prof, **{**base, **options})
        elif isinstance(rules, str):
            if rules not in PROFILES:
                raise ValueError(f"unknown rules profile {rules!r}; choose one of {', '.join(PROFILES)}")
            base = {"profile": rules}
        else:
            raise TypeError(f"rules must be a profile name, a Rules or a dict, not {type(rules).__name__}")
        options = {k: _plain(v) for k, v in options.items()}
        known = {f.name for f in fields(cls)} - {"profile"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown rules option(s) {', '.join(map(repr, unknown))}; valid options: {', '.join(sorted(known))}")
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

    def replace(self, **options):
        """A copy with some options changed (validated like :meth:`make`)."""
        return Rules.make(self, **options)

    def to_dict(self):
        return asdict(self)

    @property
    def num_points(self):
        return self.board_size * self.board_size

    @property
    def num_actions(self):
        return K.num_actions(self.board_size)

    def kernel_args(self):
        """Positional arguments of :func:`jiu_env.kernel.new_state`."""
        return (
            self.board_size,
            self.fly_threshold,
            BAN_MODES[self.single_jump_ban],
            self.min_stones,
            self.chain_may_stop,
            self.repetition_draw,
            self.max_battle_turns,
        )

    def new_state(self):
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
    if profile == "ludii8":
        n = 8 if board_size is None else board_size
        return dict(board_size=n, fly_threshold=n - 1, single_jump_ban="flyer", min_stones=4,
                    chain_may_stop=True, repetition_draw=3, max_battle_turns=1000)
    n = 14 if board_size is None else board_size
    ban = "vs_flyer" if profile == "competitive" else "none"
    return dict(board_size=n, fly_threshold=n, single_jump_ban=ban, min_stones=4,
                chain_may_stop=True, repetition_draw=3, max_battle_turns=1000)


def _check_int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"rules option {name!r} must be an int, not {type(value).__name__} ({value!r})")
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"rules option {name!r} = {value} is out of range ({rng})")


def _validate(r):
    _check_int("board_size", r.board_size, K.MIN_N, K.MAX_N)
    _check_int("fly_threshold", r.fly_threshold, 0, r.num_points)
    if r.single_jump_ban not in BAN_MODES:
        raise ValueError(f"rules option 'single_jump_ban' = {r.single_jump_ban!r} is not one of {', '.join(BAN_MODES)}")
    _check_int("min_stones", r.min_stones, 0, r.num_points // 2)
    if not isinstance(r.chain_may_stop, bool):
        raise TypeError(f"rules option 'chain_may_stop' must be a bool, not {type(r.chain_may_stop).__name__}")
    _check_int("repetition_draw", r.repetition_draw, 0)
    if r.repetition_draw == 1:
        raise ValueError("rules option 'repetition_draw' = 1 would draw every game at its first battle turn; use 0 (off) or >= 2")
    _check_int("max_battle_turns", r.max_battle_turns, 0, 1_000_000)
    if r.profile not in PROFILES:
        raise ValueError(f"unknown rules profile {r.profile!r}; choose one of {', '.join(PROFILES)}")


def rules_from_state(state):
    """Recover the :class:`Rules` (profile name aside) stored in a kernel state."""
    from .validate import validate_state

    validate_state(state)
    inv = {v: k for k, v in BAN_MODES.items()}
    return Rules(
        board_size=int(state[K.H_N]),
        fly_threshold=int(state[K.H_FLY]),
        single_jump_ban=inv[int(state[K.H_BAN])],
        min_stones=int(state[K.H_MIN]),
        chain_may_stop=bool(state[K.H_CHAIN_STOP]),
        repetition_draw=int(state[K.H_REP]),
        max_battle_turns=int(state[K.H_MAXT]),
    )


__all__ = ["Rules", "PROFILES", "BAN_MODES", "rules_from_state"]
