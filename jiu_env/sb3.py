"""Stable-Baselines3 helpers for Jiu: a CNN over the board planes, a spatial policy, players and self-play.

Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib); the rest of
``jiu_env`` never imports this module unless asked to.

- :class:`JiuCNN`: features extractor for the ``(N, N, C)`` float32 planes.
  SB3 only treats *uint8* boxes as (channel-last) images, so the extractor
  permutes to channels-first itself.
- :class:`JiuPolicy`: a ``MaskablePPO`` policy whose action logits come from a
  1x1 convolution over the trunk (one plane per action kind, docs/rules.md §7) and
  a STOP logit from pooled features, so that a move learnt on one point
  generalises to every point.
- :class:`ModelPlayer`: a trained model (or policy) as a :class:`~jiu_env.bots.base.Bot`.
- :class:`PolicySnapshot`: a picklable frozen copy of a policy, for self-play
  pools across ``SubprocVecEnv`` workers; :class:`SelfPlayCallback` adds one
  to every env of the pool at a fixed interval.
- :func:`evaluate`: win / draw / loss counts of a model against opponents.
- :func:`transfer_weights`: start a policy from a model of another board size
  (the network is fully convolutional): a board-size curriculum.
- :func:`set_model_rules` / :func:`model_rules`: the rules a model was trained
  on, stored in its ``.zip`` (the ``jiu_rules`` attribute, which SB3 saves
  and loads with the model); a :class:`ModelPlayer` of such a model refuses a
  game of other rules.
- :func:`set_model_phase` / :func:`model_phase`: the phase a model was trained
  on (``jiu_phase`` in its ``.zip``): a model that learned the battle only
  plays whole games from random placements (``phases:random+sb3:PATH``).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from . import kernel as K

from . import vocab as V
from .bots.base import Bot
from .game import play_game
from .nets import SpatialActionHead, ValueHead, conv_trunk, set_torch_threads
from .observation import write_observation
from .players import (check_model_phase, file_hash, make_player, rules_mismatch, sb3_file_phase, sb3_file_rules,
                      sb3_model_file)
from .validate import check_flag, check_int

if TYPE_CHECKING:
    from .rules import Rules


class JiuCNN(BaseFeaturesExtractor):
    """Small convolutional trunk over the observation planes.

    Input ``(B, N, N, C)`` float32 (channel-last, as the env emits it), permuted
    to ``(B, C, N, N)``.  ``layers`` 3x3 convolutions with ``channels`` filters
    and ReLU, zero padding (so the board edge is visible).  With
    ``features_dim=None`` (spatial mode, used by :class:`JiuPolicy`) the
    output is the flattened ``(B, channels * N * N)`` feature map; otherwise a
    linear layer maps it to ``features_dim`` values (for SB3's stock MLP heads).
    """

    def __init__(self, observation_space: spaces.Box, channels: int = 32, layers: int = 4,
                 features_dim: int | None = 256) -> None:
        shape = observation_space.shape
        if len(shape) != 3 or shape[0] != shape[1]:
            raise ValueError(f"JiuCNN expects (N, N, C) board planes, got shape {shape}")
        # checked before they size anything: int() took 8.9 as 8 and True as 1, and 0 met SB3's bare assert
        check_int("channels", channels, 1)
        check_int("layers", layers, 1)
        check_int("features_dim", features_dim, 1, or_none=True, note="(None: the flat feature map)")
        n, _, c_in = shape
        spatial = features_dim is None
        out_dim = channels * n * n if features_dim is None else int(features_dim)
        super().__init__(observation_space, out_dim)
        self.board_size = n
        self.channels = channels
        self.spatial = spatial
        self.trunk = conv_trunk(c_in, channels, layers)
        self.head = nn.Identity() if spatial else nn.Sequential(nn.Flatten(), nn.Linear(channels * n * n, out_dim), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.permute(0, 3, 1, 2)
        x = self.trunk(x)
        if self.spatial:
            return x.flatten(1)
        return self.head(x)


class JiuPolicy(MaskableActorCriticPolicy):
    """``MaskablePPO`` policy for Jiu: :class:`JiuCNN` trunk, spatial action head, pooled value head.

    ``MaskablePPO(JiuPolicy, env, policy_kwargs=dict(channels=32, layers=4))``;
    ``channels`` and ``layers`` size the trunk, ``value_hidden`` the value MLP.
    The observation space must be the env's ``(N, N, C)`` planes and the
    action space ``Discrete(10*N*N + 1)``.
    """

    def __init__(self, observation_space: spaces.Box, action_space: spaces.Discrete, lr_schedule: Any, channels: int = 32,
                 layers: int = 4, value_hidden: int = 64, **kwargs: Any) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise TypeError("JiuPolicy needs a Discrete action space")
        n = observation_space.shape[0]
        if action_space.n != V.num_actions(n):
            raise ValueError(f"action space of {action_space.n} actions does not match a {n}x{n} board ({V.num_actions(n)})")
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch", "share_features_extractor"):
            if key in kwargs:
                raise TypeError(f"JiuPolicy sets {key} itself; use channels / layers / value_hidden")
        for name, value in (("channels", channels), ("layers", layers), ("value_hidden", value_hidden)):
            check_int(name, value, 1)  # before SB3 builds anything: value_hidden=0 built a Linear(64, 0)
        self.value_hidden = int(value_hidden)
        super().__init__(
            observation_space, action_space, lr_schedule, net_arch=[],
            features_extractor_class=JiuCNN,
            features_extractor_kwargs=dict(channels=channels, layers=layers, features_dim=None),
            share_features_extractor=True, **kwargs)

    def _build(self, lr_schedule):
        self._build_mlp_extractor()  # net_arch=[]: the identity on the feature map
        fe = self.features_extractor
        self.action_net = SpatialActionHead(fe.channels, fe.board_size)
        self.value_net = ValueHead(fe.channels, fe.board_size, self.value_hidden)
        if self.ortho_init:
            # the gains of SB3's stock policies: small initial logits, unit-scale values
            for module, gain in ((fe, np.sqrt(2)), (self.action_net, 0.01), (self.value_net, 1.0)):
                module.apply(lambda m, g=gain: self.init_weights(m, gain=g))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self):
        data = super()._get_constructor_parameters()
        for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch", "share_features_extractor"):
            data.pop(key, None)
        fe_kwargs = self.features_extractor_kwargs
        data.update(channels=fe_kwargs["channels"], layers=fe_kwargs["layers"], value_hidden=self.value_hidden)
        return data


# ------------------------------------------------------------ model rules
#: The model attribute that holds the rules (``Rules.to_dict()``) a model was trained on; SB3 pickles
#: every plain attribute of the model into the saved ``.zip`` and restores it on load.
RULES_ATTR = "jiu_rules"


def set_model_rules(model: Any, rules: str | Rules | dict[str, Any] = "competitive", **options: Any) -> dict[str, Any]:
    """Record on ``model`` the rules it plays (saved with ``model.save``); returns them as a dict.

    ``rules`` and ``options`` as for :meth:`Rules.make`.  The board size must
    match the model's observations.
    """
    from .rules import Rules

    r = Rules.make(rules, **options)
    shape = getattr(getattr(_policy_of(model), "observation_space", None), "shape", None)
    if shape is not None and shape[0] != r.board_size:
        raise ValueError(f"the model sees a {shape[0]}x{shape[1]} board; rules of board_size={r.board_size} "
                         "do not fit it")
    d = r.to_dict()
    setattr(model, RULES_ATTR, d)
    return d


def model_rules(model: Any) -> Rules | None:
    """The rules recorded on ``model`` (a model, or a model file path) by :func:`set_model_rules`, or None."""
    from .rules import Rules

    if isinstance(model, (str, os.PathLike)):
        return sb3_file_rules(model)
    d = getattr(model, RULES_ATTR, None)
    return None if d is None else Rules.make(d)


#: The model attribute that declares the phase a model was trained on (:data:`jiu_env.players.MODEL_PHASES`),
#: saved in its ``.zip`` like :data:`RULES_ATTR`.
PHASE_ATTR = "jiu_phase"


def set_model_phase(model: Any, phase: str) -> str:
    """Declare on ``model`` the phase it was trained on (saved with ``model.save``); returns it.

    ``"battle"``: battles from random placements only (``JiuVsBotEnv(start="battle")``); given as a
    whole-game player (``sb3:model.zip`` to ``make_player`` / ``make_bot`` / ``jiu eval`` / ``jiu play``)
    it plays ``phases:random+sb3:model.zip``: its stones are placed at random, as in its training.
    ``"game"``: whole games, placement included; it plays as it is.  A model that declares nothing
    plays as it is too.
    """
    setattr(model, PHASE_ATTR, check_model_phase(phase, "set_model_phase"))
    return phase


def model_phase(model: Any) -> str | None:
    """The phase declared on ``model`` (a model, or a model file path) by :func:`set_model_phase`, or None."""
    if isinstance(model, (str, os.PathLike)):
        return sb3_file_phase(model)
    phase = getattr(model, PHASE_ATTR, None)
    return None if phase is None else check_model_phase(phase, "the model's declared phase")


def run_phase(start: str, init: Any = None) -> str:
    """The phase a training run's model declares (:func:`set_model_phase`): ``"game"`` when the run plays
    placement (``start`` other than ``"battle"``) or its starting model ``init`` (a model or a model file)
    already did: battles only do not undo the placement a whole-game model learnt, so it keeps playing its
    own (declared ``"battle"``, ``jiu eval`` would place its stones at random).  Else ``"battle"``."""
    if start != "battle" or (init and model_phase(init) == "game"):
        return "game"
    return "battle"


# Header slots of a kernel state that decide the play of a position: the rule options of the table
# (jiu_env/options.py) less the turn limit (the size of the repetition history is not in RULE_FIELDS):
# those end or bound a game, they do not change its moves.
_RULE_FIELDS = tuple(f for f in V.RULE_FIELDS if f != V.H_MAXT)


def _rule_key(state: np.ndarray) -> tuple[int, ...]:
    return tuple(int(state[f]) for f in _RULE_FIELDS)


# ------------------------------------------------------------------ players
def _policy_of(model):
    """The policy network of an SB3 model, of a :class:`ModelPlayer` (``sb3_policy``), or ``model`` itself."""
    for name in ("sb3_policy", "policy"):
        net = getattr(model, name, None)
        if isinstance(net, nn.Module):
            return net
    return model


def policy_probs(policy: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Action probabilities of ``policy`` for a batch ``obs`` (B, N, N, C) restricted to ``mask`` (B, A)."""
    with torch.no_grad():
        obs_t = torch.as_tensor(obs, device=policy.device)
        dist = policy.get_distribution(obs_t)
        logits = dist.distribution.logits.cpu().numpy().astype(np.float64)
    logits = np.where(mask, logits, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


class ModelPlayer(Bot):
    """A trained SB3 model (or its policy) playing as a bot, for either colour.

    ``deterministic=True`` plays the most probable legal action, otherwise the
    action is sampled from the masked policy with the bot's seeded generator.
    Holds a reference to the model: a model that keeps training keeps changing
    the player (use :class:`PolicySnapshot` for a frozen copy).

    ``rules``: the rules the model was trained on (default: those recorded on
    the model by :func:`set_model_rules`, None if none).  With rules known, a
    position of other rules (board size, flying, bans...; the turn limit and
    history size aside) raises ValueError naming both; without, only the board
    size is checked.
    """

    name = "model"
    PARAMS = {}

    def __init__(self, model: Any, deterministic: bool | str = True, seed: int | None = None,
                 rules: str | Rules | dict[str, Any] | None = None) -> None:
        from .rules import Rules

        # "false" is a true value to Python: it must not play greedily (the same check as rllib: players)
        self.deterministic = check_flag("deterministic", deterministic)
        check_int("seed", seed, 0, or_none=True)  # numpy would say "expected non-negative integer" at restart
        self.sb3_policy = _policy_of(model)  # not self.policy: that is Bot.policy(), the loop callable
        check_jiu_spaces(self.sb3_policy, "the model")
        self.path: str | None = None
        self._mask: np.ndarray | None = None
        self.rules = Rules.make(rules) if rules is not None else model_rules(model)
        self._rules_key = None if self.rules is None else _rule_key(self.rules.new_state())
        if self.rules is not None:
            shape = self.sb3_policy.observation_space.shape
            if shape[0] != self.rules.board_size:
                raise ValueError(f"the model sees a {shape[0]}x{shape[1]} board; rules of "
                                 f"board_size={self.rules.board_size} do not fit it")
        super().__init__(seed=seed)

    @classmethod
    def load(cls, path: str | os.PathLike[str], deterministic: bool | str = True, seed: int | None = None,
             threads: int | None = 1) -> ModelPlayer:
        """The model saved at ``path`` (a MaskablePPO ``.zip``; loaded once per process) as a player.

        ``threads``: torch threads of this process, set as the ``policy`` and
        ``alphazero`` players set them (``None`` leaves torch's setting).  One
        by default, what ``sb3:PATH`` players get: tournaments play one game
        a core, and a network this small (one position a decision) gains
        nothing from more threads but loses much when a core is busy (a
        14x14 game took 13 s against 0.35 s beside a training run).
        """
        set_torch_threads(threads)
        player = cls(load_sb3_model(path), deterministic=deterministic, seed=seed)
        player.path = os.fspath(path)
        return player

    def version_key(self) -> str:
        """The model file's hash (a new model is a new player); the class source for an in-memory model."""
        if self.path is None:
            return file_hash(__file__)
        return file_hash(self.path if os.path.isfile(self.path) else self.path + ".zip")

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Action for one egocentric observation and its legal-action mask (bool or 0/1)."""
        mask = np.asarray(mask, bool)
        obs_shape = self.sb3_policy.observation_space.shape
        n_actions = int(self.sb3_policy.action_space.n)
        if mask.shape != (n_actions,):  # a shorter mask would broadcast to "every action is legal"
            raise ValueError(f"the mask has shape {mask.shape}; this model's is ({n_actions},)")
        if np.shape(obs) != obs_shape:
            raise ValueError(f"the observation has shape {np.shape(obs)}; this model's is {obs_shape}")
        if not mask.any():
            raise ValueError("no legal action in the mask")
        self.sb3_policy.set_training_mode(False)
        p = policy_probs(self.sb3_policy, np.asarray(obs, np.float32)[None], mask[None])[0]
        if self.deterministic:
            return int(np.argmax(p))
        return int(self.rng.choice(p.size, p=p))

    def _choose(self, state):
        n = int(state[V.H_N])
        shape = self.sb3_policy.observation_space.shape
        if shape[0] != n:
            what = self.path if self.path is not None else "the model"
            raise ValueError(f"{what} was trained on a {shape[0]}x{shape[1]} board; this position is {n}x{n}")
        if self._rules_key is not None and _rule_key(state) != self._rules_key:
            from .rules import rules_from_state

            what = self.path if self.path is not None else "the model"
            diff = "; ".join(rules_mismatch(self.rules, rules_from_state(state)))
            raise ValueError(f"{what} was trained on other rules than this game's: {diff}")
        obs = np.empty((n, n, shape[2]), np.float32)
        write_observation(state, int(state[V.H_TO_MOVE]), obs)
        if self._mask is None or self._mask.size != V.num_actions(n):
            self._mask = np.empty(V.num_actions(n), np.int8)
        K.legal_mask(state, self._mask)
        return self.act(obs, self._mask)

    def __repr__(self) -> str:
        what = self.path if self.path is not None else type(self.sb3_policy).__name__
        return f"ModelPlayer({what!s}, deterministic={self.deterministic})"


# model file -> (its hash when loaded, the model)
_SB3_CACHE: dict[str, tuple[str, Any]] = {}


def check_jiu_spaces(policy: Any, what: str) -> None:
    """ValueError naming ``what`` unless ``policy`` sees the N x N x 21 observation planes and acts on the
    ``Discrete(10 N^2 + 1)`` actions of a board (a model of other observations fails at load, not mid-game)."""
    from .observation import NUM_PLANES

    shape = getattr(getattr(policy, "observation_space", None), "shape", None)
    if shape is None or len(shape) != 3 or shape[0] != shape[1] or shape[2] != NUM_PLANES:
        raise ValueError(f"{what} is not a Jiu model: its observations are {shape}, not N x N x {NUM_PLANES} "
                         "board planes")
    n_actions = getattr(getattr(policy, "action_space", None), "n", None)
    if n_actions != V.num_actions(int(shape[0])):
        raise ValueError(f"{what} is not a Jiu model: it has {n_actions} actions, not the "
                         f"{V.num_actions(int(shape[0]))} of a {shape[0]}x{shape[0]} board")


# The globals (module, name) the pickled entries of a MaskablePPO file may name when it is loaded without
# trust (load_sb3_model): the classes and the numpy / gymnasium reconstructors of what SB3 writes for a
# Jiu model (policy class, spaces, schedules, buffers).  Unpickling a name calls it: anything else (a
# function pickled by value, os.system, ...) could run any code, and is refused.  add_safe_globals adds.
_SAFE_GLOBALS: set[tuple[str, str]] = {
    ("jiu_env.sb3", "JiuPolicy"),
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
    ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"),
    ("sb3_contrib.common.maskable.buffers", "MaskableRolloutBuffer"),
    ("sb3_contrib.common.maskable.buffers", "MaskableDictRolloutBuffer"),
    ("stable_baselines3.common.utils", "ConstantSchedule"),
    ("stable_baselines3.common.utils", "FloatSchedule"),
    ("gymnasium.spaces.box", "Box"),
    ("gymnasium.spaces.discrete", "Discrete"),
    ("gymnasium.spaces.dict", "Dict"),
    ("gymnasium.spaces.multi_binary", "MultiBinary"),
    ("collections", "deque"),
    ("collections", "OrderedDict"),
    ("numpy", "dtype"),
    ("numpy", "ndarray"),
    *((core, name) for core in ("numpy.core.numeric", "numpy._core.numeric") for name in ("_frombuffer",)),
    *((core, name) for core in ("numpy.core.multiarray", "numpy._core.multiarray") for name in ("scalar", "_reconstruct")),
    ("numpy.random._pcg64", "PCG64"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.random.bit_generator", "SeedSequence"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
}
# The pickled entries a model needs to play; the others (schedules, buffers, the last rollout's
# observations, ...) only matter to training, and one naming a global outside the list is left out.
_PLAY_ENTRIES = ("policy_class", "observation_space", "action_space")
# what a left-out entry becomes: SB3 rebuilds its schedules from these (a player never trains)
_LEFT_OUT = {"clip_range": 0.0, "learning_rate": 0.0, "lr_schedule": 0.0}


def add_safe_globals(*objs: Any) -> None:
    """Let :func:`load_sb3_model` unpickle these classes (or functions) by name from model files, as
    ``torch.serialization.add_safe_globals`` does for ``torch.load``: a model of your own policy class
    loads once its class is added, without trusting the file with everything else."""
    for obj in objs:
        module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if not isinstance(module, str) or not isinstance(name, str) or "<locals>" in name:
            raise TypeError(f"add_safe_globals takes importable classes or functions, not {obj!r}")
        _SAFE_GLOBALS.add((module, name))


class _Refused(Exception):
    """A pickled entry names a global outside :data:`_SAFE_GLOBALS`."""


def _safe_unpickle(blob: bytes) -> Any:
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if (module, name) not in _SAFE_GLOBALS:
                raise _Refused(f"{module}.{name}")
            return super().find_class(module, name)

    return Unpickler(io.BytesIO(blob)).load()


def _safe_objects(found: str) -> dict[str, Any]:
    """``custom_objects`` for ``MaskablePPO.load`` that stand for every pickled entry of the file's ``data``,
    so that SB3 unpickles none of them itself: each unpickled with only :data:`_SAFE_GLOBALS`; one that
    names anything else is left out (:data:`_LEFT_OUT`, else None) or, if a player needs it, refused."""
    import base64

    from .players import _sb3_file_data

    objects: dict[str, Any] = {}
    for key, entry in _sb3_file_data(found)[1].items():
        if not (isinstance(entry, dict) and ":serialized:" in entry):
            continue
        try:
            objects[key] = _safe_unpickle(base64.b64decode(entry[":serialized:"]))
        except _Refused as e:
            if key in _PLAY_ENTRIES:
                raise ValueError(
                    f"{found}: its {key} is pickled as {e}, which jiu_env does not unpickle from a model file (it "
                    "could run any code). If you trust the file, load it with jiu_env.sb3.load_sb3_model(path, "
                    "trusted=True); if the name is a class of yours, allow it with "
                    "jiu_env.sb3.add_safe_globals(cls)") from None
            objects[key] = _LEFT_OUT.get(key)
    return objects


def load_sb3_model(path: str | os.PathLike[str], trusted: bool = False) -> Any:
    """Load (and cache per process) a MaskablePPO model; clear errors for a missing file or package.

    The cache is keyed on the file's hash too (what :meth:`ModelPlayer.version_key`
    reports), so a model saved again to the same path is loaded again: a
    player never plays old weights under the new file's version.  A file
    that is not a MaskablePPO model of Jiu (damaged, another program's, a
    model of other observations) raises ValueError naming the file.

    A ``.zip`` of SB3 holds pickled Python objects, and unpickling may run any
    code.  By default (what ``sb3:PATH`` players get) no entry of the file is
    unpickled beyond a list of known classes (the policy classes, spaces and
    schedules of SB3 and jiu_env; :func:`add_safe_globals` adds to it), the
    entries only training reads are left out when they name anything else,
    and the weights are read as tensors only.  A file whose policy class or
    spaces name anything else raises ValueError saying so.  ``trusted=True``
    loads it as ``MaskablePPO.load`` does, running what it holds: only for
    files you made or trust.
    """
    trusted = check_flag("trusted", trusted)
    found = sb3_model_file(path)
    try:
        key = file_hash(found)
    except OSError as e:  # no read permission, ...: named as a load error would be
        raise ValueError(f"{found} is not a readable MaskablePPO model file ({type(e).__name__}: {e})") from None
    key += "+trusted" if trusted else ""
    cached = _SB3_CACHE.get(found)
    if cached is None or cached[0] != key:
        objects = None if trusted else _safe_objects(found)  # its ValueErrors name the file
        try:
            model = MaskablePPO.load(found, device="cpu", custom_objects=objects)
        except Exception as e:  # zipfile, pickle, torch and SB3's own errors for a damaged or foreign file
            first = (str(e).strip().splitlines() or [""])[0][:200]
            raise ValueError(f"{found} is not a readable MaskablePPO model file ({type(e).__name__}: {first})") from None
        check_jiu_spaces(getattr(model, "policy", None), found)
        _SB3_CACHE[found] = cached = (key, model)  # the model of the file's old content, if any, is let go
    return cached[1]


def transfer_weights(source: Any, model: Any) -> dict[str, int]:
    """Start ``model``'s :class:`JiuPolicy` from the weights of ``source`` (a model or a ``.zip`` path), whatever its board size.

    The policy is fully convolutional: 3x3 convolutions, a 1x1 action head
    and a value head over pooled features, so none of its weights depends on
    the board size, and a network that learned on 8x8 plays 14x14 as it is.
    That makes a board-size curriculum possible (learn on a small board,
    go on on the large one: ``train_maskable_ppo.py --init``), as in
    fully convolutional Go networks trained across board sizes.

    Both policies must be :class:`JiuPolicy` networks of the same ``channels``,
    ``layers`` and ``value_hidden``; anything else raises ValueError naming
    what differs, and ``model`` is left as it was.  Only the network moves,
    not the optimizer's state, the rules (:func:`set_model_rules`) or the
    step count.  Returns ``{"tensors": ..., "parameters": ...}`` copied.
    """
    src = load_sb3_model(source) if isinstance(source, (str, os.PathLike)) else source
    what = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "the source model"
    for name, pol in ((what, src.policy), ("the target model", model.policy)):
        if not isinstance(pol, JiuPolicy):
            raise ValueError(f"{name} has a {type(pol).__name__} policy, not a JiuPolicy: its weights do not transfer")
    a, b = src.policy._get_constructor_parameters(), model.policy._get_constructor_parameters()
    diff = [f"{k}={a[k]} against {b[k]}" for k in ("channels", "layers", "value_hidden") if a[k] != b[k]]
    if diff:
        raise ValueError(f"{what} is a different network ({', '.join(diff)}): its weights do not transfer")
    state = src.policy.state_dict()
    target = model.policy.state_dict()
    if set(state) != set(target) or any(state[k].shape != target[k].shape for k in state):
        raise ValueError(f"{what}: its weights do not have the target policy's names and shapes")
    model.policy.load_state_dict(state)
    return {"tensors": len(state), "parameters": int(sum(p.numel() for p in model.policy.parameters()))}


class PolicySnapshot(ModelPlayer):
    """A frozen CPU copy of a model's policy that plays as a bot and pickles (for ``SubprocVecEnv``).

    ``PolicySnapshot(model, deterministic=False, tag="step 40960")``.  The
    copy leaves out the optimizer.  In a worker process torch is limited to
    one thread: an opponent evaluates one position at a time.
    """

    name = "snapshot"

    def __init__(self, model: Any, deterministic: bool | str = False, seed: int | None = None,
                 tag: str | None = None) -> None:
        deterministic = check_flag("deterministic", deterministic)  # checked again below, but before the copy
        check_int("seed", seed, 0, or_none=True)
        policy = _policy_of(model)
        opt = getattr(policy, "optimizer", None)
        policy.optimizer = None
        try:
            frozen = copy.deepcopy(policy).to("cpu")
        finally:
            policy.optimizer = opt
        frozen.set_training_mode(False)
        for p in frozen.parameters():
            p.requires_grad_(False)
        self.tag = tag
        rules = model.rules if isinstance(model, ModelPlayer) else model_rules(model)  # a player keeps its own
        super().__init__(frozen, deterministic=deterministic, seed=seed, rules=rules)

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        if multiprocessing.current_process().name != "MainProcess":
            torch.set_num_threads(1)

    def __repr__(self) -> str:
        return f"PolicySnapshot(tag={self.tag!r}, deterministic={self.deterministic})"


class SelfPlayCallback(BaseCallback):
    """Every ``every`` timesteps, add a :class:`PolicySnapshot` of the model to every training env.

    The training envs must provide ``add_snapshot`` (:class:`~jiu_env.envs.single_agent.JiuSelfPlayEnv`).
    ``at_start=True`` also adds one before the first rollout.
    """

    def __init__(self, every: int = 20_000, at_start: bool | str = False, verbose: int = 0) -> None:
        self.every = check_int("every", every, 1, note="(timesteps between snapshots)")
        self.at_start = check_flag("at_start", at_start)  # "false" would add a snapshot before the first rollout
        super().__init__(verbose)  # SB3's own (it takes a bool too)
        self.last = 0
        self.added = 0

    def _on_training_start(self):
        self.last = self.num_timesteps
        if self.at_start:
            self._add()

    def _on_step(self):
        if self.num_timesteps - self.last >= self.every:
            self.last = self.num_timesteps
            self._add()
        return True

    def _add(self):
        snap = PolicySnapshot(self.model, deterministic=False, tag=f"step {self.num_timesteps}")
        self.training_env.env_method("add_snapshot", snap)
        self.added += 1
        if self.verbose:
            print(f"self-play: snapshot {self.added} at step {self.num_timesteps}")


# --------------------------------------------------------------- evaluation
def evaluate(model: Any, opponent: Any, n_games: int = 20, seed: int = 0, deterministic: bool | str | None = None,
             rules: str | Rules | dict[str, Any] = "competitive", start: str = "battle",
             **rule_options: Any) -> dict[str, Any]:
    """Play ``n_games`` of ``model`` against ``opponent`` with the one game loop (:func:`jiu_env.play_game`).

    ``model`` is an SB3 model, its policy or a :class:`ModelPlayer`; ``opponent`` is anything
    :func:`~jiu_env.players.make_player` accepts (an SB3 model or policy too).  ``deterministic``:
    the model plays its most probable legal action (True) or samples its policy (False); by
    default greedily, and a :class:`ModelPlayer` as it was built.  Given with a player, it holds
    for these games only (the player is put back as it was).  The model plays White in even-numbered
    games and Black in odd ones; game ``i`` uses seed ``seed + i`` (an int >= 0).  ``start="battle"`` draws the
    whole placement at random (``random_opening = N*N``), as
    ``JiuVsBotEnv(start="battle")`` does; ``"placement"`` plays full games.
    Returns a dict with ``wins``, ``draws``, ``losses``, ``undecided``
    (turn limit), ``forfeits`` (illegal actions by the model), ``win_rate``,
    ``score`` (mean result, +1 / 0 / -1), ``mean_turns`` (battle turns),
    ``material`` (mean final stone difference, the model's minus the opponent's)
    and ``outcomes``: each game's :class:`~jiu_env.outcome.Outcome` (the
    model played White in game ``i`` when ``i`` is even), the counts' source.
    """
    from .rules import Rules

    check_int("n_games", n_games, 1)
    check_int("seed", seed, 0)  # game i plays seed + i: None has no i-th game
    greedy = None if deterministic is None else check_flag("deterministic", deterministic)
    if start not in ("battle", "placement"):
        raise ValueError(f"start must be 'battle' or 'placement', not {start!r}")
    rules = Rules.make(rules, **rule_options)
    opening = rules.num_points if start == "battle" else 0
    if isinstance(model, ModelPlayer):
        player = model
    else:
        player = ModelPlayer(model, deterministic=True if greedy is None else greedy)
    opp = make_player(opponent)
    own = player.deterministic
    if greedy is not None:  # asked for these games: a player given as it was built would ignore it silently
        player.deterministic = greedy
    try:
        return _play_evaluation(player, opp, n_games, seed, rules, opening)
    finally:
        player.deterministic = own


def _play_evaluation(player: ModelPlayer, opp: Any, n_games: int, seed: int, rules: Rules,
                     opening: int) -> dict[str, Any]:
    """:func:`evaluate`'s games and counts, its arguments checked."""
    from .outcome import FORFEIT
    from .vocab import COLOUR_NAMES

    counts: dict[str, Any] = {"wins": 0, "draws": 0, "losses": 0, "undecided": 0, "forfeits": 0}
    turns = 0
    material = 0
    outcomes = []
    for i in range(n_games):
        player.restart(seed=seed + i)
        opp.restart(seed=seed + 1_000_003 + i)
        me, other = (V.WHITE, V.BLACK) if i % 2 == 0 else (V.BLACK, V.WHITE)
        white, black = (player, opp) if me == V.WHITE else (opp, player)
        g = play_game(rules, white, black, random_opening=opening, opening_seed=seed + i, on_illegal="forfeit",
                      record=False)
        o = g.outcome
        outcomes.append(o)
        turns += o.battle_turns
        material += g.stones[COLOUR_NAMES[me]] - g.stones[COLOUR_NAMES[other]]
        if o.end_reason == FORFEIT and o.winner == other:
            counts["forfeits"] += 1
        if o.winner == me:
            counts["wins"] += 1
        elif o.draw:
            counts["draws"] += 1
        elif o.winner is None:
            counts["undecided"] += 1
        else:
            counts["losses"] += 1
    counts["win_rate"] = counts["wins"] / n_games
    counts["score"] = (counts["wins"] - counts["losses"]) / n_games
    counts["mean_turns"] = turns / n_games
    counts["material"] = material / n_games
    counts["outcomes"] = outcomes
    return counts


__all__ = ["JiuCNN", "JiuPolicy", "SpatialActionHead", "ValueHead", "ModelPlayer", "PolicySnapshot",
           "SelfPlayCallback", "evaluate", "transfer_weights", "policy_probs", "set_model_rules", "model_rules", "rules_mismatch", "set_model_phase", "model_phase",
           "run_phase", "load_sb3_model", "add_safe_globals"]
