"""Players for the evaluation harness: one spec string names any kind of player.

=============================  ===================================================
spec                           player
=============================  ===================================================
``random``, ``alphabeta:depth=2``  a built-in bot (:func:`jiu_env.bots.make_bot`)
``sb3:PATH``                   a trained MaskablePPO model file (needs ``sb3-contrib``)
``az:PATH``                    an AlphaZero-style checkpoint (the ``alphazero`` bot)
``rllib:PATH``                 an RLlib checkpoint's ``learner`` module (needs ``ray[rllib]``)
``module:Class``               a user class, built as ``Class(seed=...)``
``module:Class:key=v,...``     the same with keyword parameters
``path/to/file.py:Class``      a user class from a Python file
``mix:P:SPEC``                 SPEC with probability P of a random action per decision
``phases:PLACE+BATTLE``        PLACE plays the placement phase, BATTLE the battle
=============================  ===================================================

A player follows the bot protocol of :mod:`jiu_env.bots.base`: it is built
with a ``seed`` keyword, ``step(state)`` returns a legal action for the side
to move of a kernel state (never modifying it) and ``restart(seed=None)``
forgets the previous game.  New kinds of players are added with
:func:`register_player_kind`.
"""

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys

import numpy as np

from .. import kernel as K
from ..bots import REGISTRY, make_bot, parse_spec
from ..bots.base import Bot, legal_actions

# prefix -> (factory(argument, seed) -> player, one-line description)
PLAYER_KINDS = {}


def register_player_kind(prefix, factory, description=""):
    """Make ``prefix:ARG`` specs build players with ``factory(ARG, seed)``.

    This is the hook for new kinds of players (model formats and the like).
    A prefix may not shadow a built-in bot name.
    """
    if not prefix or ":" in prefix:
        raise ValueError(f"bad player kind prefix {prefix!r}")
    if prefix in REGISTRY:
        raise ValueError(f"{prefix!r} is already the name of a built-in bot")
    PLAYER_KINDS[prefix] = (factory, description)


def make_player(spec, seed=None):
    """Build the player named by ``spec`` (see the module doc) with ``seed``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a player spec is a non-empty string like 'random' or 'sb3:model.zip', not {spec!r}")
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    if prefix in PLAYER_KINDS:
        if not rest.strip():
            raise ValueError(f"player spec {spec!r}: {prefix}: needs an argument ({PLAYER_KINDS[prefix][1]})")
        return PLAYER_KINDS[prefix][0](rest.strip(), seed)
    if prefix in REGISTRY:
        return make_bot(spec, seed=seed)
    if sep and rest and "=" not in rest.split(":")[0]:
        return _user_class(prefix, rest, seed)
    kinds = ", ".join(sorted(REGISTRY)) + "; " + ", ".join(f"{k}:ARG" for k in sorted(PLAYER_KINDS))
    raise ValueError(f"unknown player {spec!r}: use a built-in bot ({kinds}) or module:Class")


def check_player(player, spec="player"):
    """Raise TypeError unless ``player`` follows the bot protocol."""
    for attr in ("step", "restart"):
        if not callable(getattr(player, attr, None)):
            raise TypeError(f"{spec}: {type(player).__name__} does not follow the bot protocol "
                            f"(no {attr}() method; subclass jiu_env.bots.Bot)")
    return player


def _file_hash(path, chunk=1 << 20):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()[:12]


def player_version(player):
    """A short hash that changes when the player's code (or model file) changes.

    A player may define ``version_key()``; otherwise it is the hash of the
    source file of its class (``""`` when there is none).  The tournament uses
    it so that games stored by an older version of a bot are not reused.
    """
    key = getattr(player, "version_key", None)
    if callable(key):
        return str(key())
    try:
        src = inspect.getsourcefile(type(player))
    except TypeError:
        src = None
    return _file_hash(src) if src and os.path.isfile(src) else ""


# ------------------------------------------------------------- user classes
def _import_module(name):
    if name.endswith(".py"):
        path = os.path.abspath(name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"player module file {name!r} not found")
        mod_name = "jiu_user_" + os.path.splitext(os.path.basename(path))[0]
        if mod_name in sys.modules and getattr(sys.modules[mod_name], "__file__", None) == path:
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
        return mod
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise ValueError(f"player module {name!r} cannot be imported ({e}); "
                         "is it on PYTHONPATH, or give a path ending in .py") from None


def _user_class(module, rest, seed):
    cls_name, _, params_text = rest.partition(":")
    mod = _import_module(module)
    cls = getattr(mod, cls_name, None)
    if cls is None or not callable(cls):
        raise ValueError(f"{module!r} has no class {cls_name!r}")
    params = parse_spec("x:" + params_text)[1] if params_text.strip() else {}
    try:
        player = cls(seed=seed, **params)
    except TypeError as e:
        raise TypeError(f"{module}:{cls_name} must accept seed=... and its keyword parameters: {e}") from None
    return check_player(player, f"{module}:{cls_name}")


# ------------------------------------------------------------- SB3 models
_SB3_CACHE = {}


class SB3Player(Bot):
    """A MaskablePPO model (``sb3-contrib``) as a player (``sb3:PATH``).

    The model sees the egocentric planes of :func:`jiu_env.observation.write_observation`
    for the side to move (shape ``(N, N, C)`` float32) and the legal-action
    mask; it is loaded once per process, on first use.
    """

    name = "sb3"
    PARAMS = {"path": "model file (.zip) saved by MaskablePPO.save", "deterministic": "greedy actions (default true)"}

    def __init__(self, path, seed=None, deterministic=True):
        self.path = os.fspath(path)
        self.deterministic = bool(deterministic)
        self.model = load_sb3_model(self.path)
        super().__init__(seed=seed)

    def version_key(self):
        path = self.path if os.path.isfile(self.path) else self.path + ".zip"
        return _file_hash(path)

    def _choose(self, state):
        from ..observation import NUM_PLANES, write_observation

        n = int(state[K.H_N])
        me = int(state[K.H_TO_MOVE])
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(state, me, obs)
        mask = np.zeros(K.num_actions(n), np.bool_)
        mask[legal_actions(state)] = True
        a, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        a = int(np.asarray(a).reshape(-1)[0])
        if not mask[a]:
            raise RuntimeError(f"model {self.path} chose illegal action {a}")
        return a


def load_sb3_model(path):
    """Load (and cache per process) a MaskablePPO model; clear errors for a missing file or package."""
    path = os.fspath(path)
    candidates = [path] if path.endswith(".zip") else [path, path + ".zip"]
    found = next((p for p in candidates if os.path.isfile(p)), None)
    if found is None:
        raise FileNotFoundError(f"sb3 model file {path!r} not found")
    if found in _SB3_CACHE:
        return _SB3_CACHE[found]
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise ImportError(f"sb3:{path} needs sb3-contrib and torch ({e}); install the 'train' extra: "
                          "pip install torch, then pip install 'jiu-env[train]'") from None
    model = MaskablePPO.load(found, device="cpu")
    _SB3_CACHE[found] = model
    return model


def _child_seed(seed, k):
    """Seed ``k`` derived from a composite player's seed (None stays None: fresh entropy)."""
    return None if seed is None else int(np.random.SeedSequence([seed, k]).generate_state(1)[0])


class MixPlayer(Bot):
    """A handicapped player (``mix:P:SPEC``): SPEC's choice, but a uniformly random legal
    action instead with probability P at every decision.

    ``mix:0.5:greedy`` lies between random and greedy in strength; a few such
    rungs make a ladder whose neighbours score between 20% and 80% against
    each other, which an Elo fit can measure (a 100% score cannot).
    """

    name = "mix"
    PARAMS = {"p": "probability of a random action at each decision", "spec": "the player being handicapped"}

    def __init__(self, p, spec, seed=None):
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"mix: the random-move probability must be in 0..1, not {p}")
        self.p = p
        self.spec = spec
        self.inner = make_player(spec, seed=seed)
        super().__init__(seed=seed)

    def restart(self, seed=None):
        super().restart(seed)
        # the inner player gets its own stream, derived from this one's seed
        self.inner.restart(_child_seed(self.seed, 1))

    def version_key(self):
        return f"{player_version(self.inner)}+{_file_hash(__file__)}"

    def _choose(self, state):
        if self.rng.random() < self.p:
            acts = legal_actions(state)
            return acts[self.rng.integers(acts.size)]
        return self.inner.step(state)


class PhasePlayer(Bot):
    """One player for the placement phase and another for the battle (``phases:PLACE+BATTLE``).

    ``phases:random+sb3:model.zip`` lets a model trained on battles only
    (``start="battle"``) play whole games: its stones are placed at random, as
    in its training, and it fights the battle itself.
    """

    name = "phases"
    PARAMS = {"placement": "the player of the placement phase", "battle": "the player of the battle phase"}

    def __init__(self, placement, battle, seed=None):
        self.placement_spec = placement
        self.battle_spec = battle
        self.placement = make_player(placement, seed=seed)
        self.battle = make_player(battle, seed=seed)
        super().__init__(seed=seed)

    def restart(self, seed=None):
        super().restart(seed)
        for i, inner in enumerate((self.placement, self.battle)):
            inner.restart(_child_seed(self.seed, 2 + i))

    def version_key(self):
        return f"{player_version(self.placement)}+{player_version(self.battle)}+{_file_hash(__file__)}"

    def _choose(self, state):
        inner = self.placement if state[K.H_PHASE] == K.PH_PLACEMENT else self.battle
        return inner.step(state)


def _phases_factory(arg, seed):
    placement, sep, battle = arg.partition("+")
    if not sep or not placement.strip() or not battle.strip():
        raise ValueError(f"phases:{arg}: expected phases:PLACEMENT_SPEC+BATTLE_SPEC, e.g. phases:random+sb3:model.zip")
    return PhasePlayer(placement.strip(), battle.strip(), seed=seed)


def _mix_factory(arg, seed):
    p, sep, spec = arg.partition(":")
    if not sep or not spec.strip():
        raise ValueError(f"mix:{arg}: expected mix:P:SPEC, e.g. mix:0.5:greedy")
    try:
        p = float(p)
    except ValueError:
        raise ValueError(f"mix:{arg}: {p!r} is not a probability") from None
    return MixPlayer(p, spec.strip(), seed=seed)


def _sb3_factory(arg, seed):
    return SB3Player(arg, seed=seed)


def _az_factory(arg, seed):
    if "alphazero" not in REGISTRY:
        raise ValueError("az:PATH needs the 'alphazero' bot, which is not registered in jiu_env.bots.REGISTRY")
    from ..bots import bot_class

    if not os.path.isfile(arg):
        raise FileNotFoundError(f"AlphaZero checkpoint {arg!r} not found")
    cls = bot_class("alphazero")
    bot = cls(seed=seed, checkpoint=arg)
    code = _file_hash(inspect.getsourcefile(cls))
    weights = _file_hash(arg)
    bot.version_key = lambda: f"{code}+{weights}"  # new weights are a new player
    return bot


def _rllib_factory(arg, seed):
    try:
        from ..integrations.rllib import rllib_player
    except ImportError as e:
        raise ImportError(f"rllib:{arg} needs ray[rllib] and torch ({e}); install the 'rllib' extra: "
                          "pip install torch, then pip install 'jiu-env[rllib]'") from None
    return rllib_player(arg, seed)


register_player_kind("mix", _mix_factory, "a handicapped player, e.g. mix:0.5:greedy (half its decisions random)")
register_player_kind("phases", _phases_factory,
                     "one player places, another fights the battle, e.g. phases:random+sb3:model.zip")
register_player_kind("sb3", _sb3_factory, "a MaskablePPO model file, e.g. sb3:models/ppo.zip")
register_player_kind("az", _az_factory, "an AlphaZero-style checkpoint, e.g. az:baselines/alphazero/net.pt")
register_player_kind("rllib", _rllib_factory, "an RLlib checkpoint (Algorithm or RLModule), e.g. rllib:checkpoints/jiu")


__all__ = ["make_player", "register_player_kind", "check_player", "player_version", "PLAYER_KINDS", "MixPlayer",
           "PhasePlayer", "SB3Player", "load_sb3_model"]
