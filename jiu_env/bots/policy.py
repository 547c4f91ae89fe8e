"""The network's own move: one forward pass of a policy-value network per decision, no search.

``make_bot("policy")`` loads the checkpoint shipped for the board size of the
first position it is shown (``jiu_env/data/policy_jiu14.pt`` on 14x14, made by
:mod:`jiu_env.learn`); ``policy:checkpoint=PATH`` loads another.  Where a
**battle network** is shipped for the board size
(``jiu_env/data/policy_jiu14_battle.pt``), the default player plays the battle
with it and the placement with the other: each phase from the network that
plays it best (the placement network places better; the battle network, a
deeper one trained on ``alphabeta:time=1``'s moves and then by PPO on its own
games against ``alphabeta:depth=1``, battles better; baselines/learned/jiu14-g18-ppo),
one forward pass a decision either way.  ``battle_checkpoint=PATH`` names a battle network, ``battle_checkpoint=none``
plays both phases with one network; a ``checkpoint`` alone plays both phases.  The network
sees the input planes of the side to move (the observation planes, and for a
network trained on the ``tactics`` feature set each move's immediate gain,
:mod:`jiu_env.bots.features`); its logits are masked to
the legal actions and the best one is played (``temperature > 0`` samples
``softmax(logits / temperature)`` instead).

``policy:symmetries=1`` shows the network the position under every symmetry
that commutes with the rules from it on (:func:`jiu_env.symmetry.symmetries_for`:
8 in the battle, 4 during placement on an even board, 2 on an odd one) in one
batched forward pass, maps each answer back to the position's own actions and
plays the best mean log-probability over the legal actions.  Why: a network
trained on symmetry-augmented data is still only approximately equivariant;
averaging over the symmetries (test-time augmentation, as AlphaGo's
evaluations did) removes that noise from its choice at the price of a larger
batch, and the player is exactly equivariant.  The transformed positions keep
only the current position's repetition count (:func:`jiu_env.symmetry.transform_state`),
which is all the network's input holds of the history.

A network belongs to the rules it was trained under: the board size and
every rules option of the position (the header's ``RULE_FIELDS``) must equal
the checkpoint's, else the bot refuses the position with an error naming
both, rather than play a network outside what it learnt.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import numpy as np

from .. import vocab as V
from .features import FEATURE_PLANES, write_net_input_unchecked
from ..rules import Rules
from ..symmetry import inverse, symmetries_for, transform_policy, transform_state
from ..validate import check_int, validate_state
from .network import (SHIPPED, SHIPPED_BATTLE, PickledNet, load_network, net_features, pickled_net, rules_mismatch,
                      shipped_checkpoint, unpickled_net)
from .base import Bot, check_param, legal_actions


def _key_paths(path: pathlib.Path | None, shipped: dict[int, pathlib.Path]) -> list[pathlib.Path]:
    """The network files a player's version key hashes: ``path``, or without one every file of ``shipped``
    that exists (the network is chosen by board size later, so each of them counts)."""
    return [path] if path is not None else [p for p in shipped.values() if p.exists()]


class NetworkPlayer(Bot):
    """Base of the players that run a policy-value network: loading by board size and the rules check."""

    #: the attributes that hold networks: pickled as their config and weights (:class:`~.network.PickledNet`)
    NET_ATTRS: tuple[str, ...] = ("net",)

    def __init__(self, seed: int | None = None, checkpoint: str | None = None, threads: int = 1) -> None:
        check_int("seed", seed, 0, or_none=True)  # before a network is loaded and torch's threads are set
        self.threads = int(check_param(self.name, "threads", threads, 0, 1024, integer=True))
        if checkpoint is not None and (not isinstance(checkpoint, (str, os.PathLike)) or not str(checkpoint)):
            # an empty or numeric value (an unset shell variable: checkpoint=$CKPT) played the shipped network
            raise ValueError(f"{self.name} checkpoint must be a path to a network file, not {checkpoint!r}")
        self.checkpoint = pathlib.Path(checkpoint) if checkpoint is not None else None
        self.net: Any = None
        self.net_rules: Rules | None = None
        self.data: dict[str, Any] = {}
        if self.checkpoint is not None:
            self._load(self.checkpoint)
        super().__init__(seed=seed)

    def _open(self, path: pathlib.Path) -> tuple[Any, dict[str, Any], Rules | None]:
        """``load_network(path)``, then this player's torch threads set (not before: a file that fails to
        load leaves the process's setting as it was)."""
        import torch

        loaded = load_network(path)
        if self.threads:
            torch.set_num_threads(self.threads)
        return loaded

    def _load(self, path: pathlib.Path) -> None:
        self.net, self.data, self.net_rules = self._open(path)
        self.checkpoint = path

    def _refuse_other_rules(self, state: np.ndarray, rules: Rules | None, path: pathlib.Path | None) -> None:
        """ValueError naming ``path`` and both values when ``state`` is not under the network's ``rules``."""
        why = None if rules is None else rules_mismatch(state, rules)
        if why is not None:
            raise ValueError(f"{self.name}: {path} cannot play this position: {why}")

    def _network_for(self, state: np.ndarray) -> Any:
        """The network, loaded on first use for the state's board size; refuses a state under other rules."""
        if self.net is None:
            self._load(shipped_checkpoint(int(state[V.H_N])))
        self._refuse_other_rules(state, self.net_rules, self.checkpoint)
        return self.net

    @staticmethod
    def _forward(net: Any, states: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """``net``'s logits ``(len(states), actions)`` and values ``(len(states),)``, one batched pass
        over the input planes of each state's side to move (states of one board size, unchecked)."""
        import torch

        n = int(states[0][V.H_N])
        features = net_features(net)
        obs = np.empty((len(states), n, n, FEATURE_PLANES[features]), np.float32)
        for i, s in enumerate(states):
            write_net_input_unchecked(s, features == "tactics", obs[i])
        with torch.inference_mode():
            logits, v = net(torch.from_numpy(obs.transpose(0, 3, 1, 2).copy()))
        return logits.numpy(), v.numpy().reshape(len(states))

    def logits_and_value(self, state: np.ndarray) -> tuple[np.ndarray, float]:
        """The network's logits over the flat actions and its value for the side to move."""
        validate_state(state)
        logits, v = self._forward(self._network_for(state), [state])
        return logits[0], float(v[0])

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        for k in self.NET_ATTRS:
            if d.get(k) is not None:
                d[k] = pickled_net(d[k])
        if "state_dict" in d.get("data", {}):  # the weights travel once, in the PickledNet
            d["data"] = {k: v for k, v in d["data"].items() if k != "state_dict"}
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        d = dict(d)
        rebuilt = False
        for k in self.NET_ATTRS:
            if isinstance(d.get(k), PickledNet):
                d[k] = unpickled_net(d[k])
                rebuilt = True
        super().__setstate__(d)
        if rebuilt and self.threads:  # as loading the network did in the process it came from
            import torch

            torch.set_num_threads(self.threads)

    def __copy__(self) -> NetworkPlayer:
        # a shallow copy shares the networks, as it did before pickling had a state of its own
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def version_key(self) -> str:
        """Code and weights: a new network is a new player for a tournament."""
        from ..players import file_hash, source_hash

        return "+".join([source_hash(type(self)), *(file_hash(p) for p in _key_paths(self.checkpoint, SHIPPED))])


class PolicyBot(NetworkPlayer):
    """The network's most likely legal action (``temperature > 0``: sampled), one forward pass per decision."""

    name = "policy"
    NET_ATTRS = ("net", "battle_net")
    PARAMS = {
        "checkpoint": "network checkpoint (default: the one shipped for the board size, e.g. policy_jiu14.pt)",
        "temperature": "0 plays the most likely legal action; > 0 samples softmax(logits / temperature) (default 0)",
        "battle_checkpoint": "network for battle positions (default: with no checkpoint, the battle network "
                             "shipped for the board size, e.g. policy_jiu14_battle.pt; else checkpoint); "
                             "'none': checkpoint's (or the shipped) network for both phases",
        "symmetries": "1 averages the network's log-probabilities over every symmetry of the position that "
                      "commutes with the rules (8 in battle, 4 in placement), one batched forward pass; "
                      "0 (default) one position",
        "threads": "torch CPU threads for the whole process; 0 leaves torch's setting (default 1)",
    }

    def __init__(self, seed: int | None = None, checkpoint: str | None = None, temperature: float = 0.0,
                 symmetries: int = 0, battle_checkpoint: str | None = None, threads: int = 1) -> None:
        self.temperature = check_param("policy", "temperature", temperature, 0, 1e6)
        self.symmetries = int(check_param("policy", "symmetries", symmetries, 0, 1, integer=True))
        if battle_checkpoint is not None and (not isinstance(battle_checkpoint, (str, pathlib.Path))
                                              or not str(battle_checkpoint)):
            raise ValueError(f"policy battle_checkpoint must be a path or 'none', not {battle_checkpoint!r}")
        none = battle_checkpoint is not None and str(battle_checkpoint).lower() == "none"
        self.battle_checkpoint = None if none or battle_checkpoint is None else pathlib.Path(battle_checkpoint)
        # with no checkpoint and no battle_checkpoint, the battle network shipped for the board size plays
        # the battle (chosen at the first battle position); 'none' or a checkpoint alone: one network
        self.shipped_battle = checkpoint is None and battle_checkpoint is None
        self.battle_net: Any = None
        self.battle_rules: Rules | None = None
        super().__init__(seed=seed, checkpoint=checkpoint, threads=threads)
        if self.battle_checkpoint is not None:
            self._load_battle(self.battle_checkpoint)

    def _load_battle(self, path: pathlib.Path) -> None:
        self.battle_net, _, self.battle_rules = self._open(path)
        self.battle_checkpoint = path

    def _network_for(self, state: np.ndarray) -> Any:
        """The battle network for a battle position when there is one, else the network (see the class)."""
        if int(state[V.H_PHASE]) == V.PH_PLACEMENT:
            return super()._network_for(state)
        if self.battle_net is None and self.shipped_battle:
            path = SHIPPED_BATTLE.get(int(state[V.H_N]))
            if path is not None and path.exists():
                self._load_battle(path)
        # none shipped for this size: the network plays both phases (decided per position, not once for good:
        # a position of another size shown first must not take the battle network from this one's)
        if self.battle_net is None:
            return super()._network_for(state)
        self._refuse_other_rules(state, self.battle_rules, self.battle_checkpoint)
        return self.battle_net

    def version_key(self) -> str:
        """Code and weights of both phases' networks."""
        from ..players import file_hash

        paths = _key_paths(self.battle_checkpoint, SHIPPED_BATTLE if self.shipped_battle else {})
        return "+".join([super().version_key(), *(file_hash(p) for p in paths)])

    def mean_log_policy(self, state: np.ndarray, acts: np.ndarray) -> np.ndarray:
        """The network's log-probabilities of the legal actions ``acts``, averaged over the symmetries.

        Each symmetry ``g`` of :func:`symmetries_for` gives the position
        ``transform_state(state, g)``; the network's logits for it are mapped
        back (``transform_policy`` by ``inverse(g)``), so that entry ``a``
        scores the original action ``a``, and normalised over ``acts``.
        """
        validate_state(state)
        n = int(state[V.H_N])
        syms = symmetries_for(state)
        logits, _ = self._forward(self._network_for(state),
                                  [state if g == 0 else transform_state(state, g) for g in syms])
        logits = logits.astype(np.float64)
        total = np.zeros(acts.size)
        for i, g in enumerate(syms):
            x = transform_policy(logits[i], inverse(g), n)[acts]
            x -= x.max()
            total += x - np.log(np.exp(x).sum())
        return total / len(syms)

    def _choose(self, state: np.ndarray) -> int:
        acts = legal_actions(state)
        if acts.size == 1:
            self._network_for(state)  # a forced move still refuses a position under other rules
            return int(acts[0])
        if self.symmetries:
            x = self.mean_log_policy(state, acts)
        else:
            logits, _ = self.logits_and_value(state)
            x = logits[acts].astype(np.float64)
        if self.temperature <= 0:
            return int(acts[int(np.argmax(x))])
        p = np.exp((x - x.max()) / self.temperature)
        return int(acts[self.rng.choice(acts.size, p=p / p.sum())])

    def __repr__(self) -> str:
        return (f"PolicyBot(checkpoint={str(self.checkpoint)!r}, "
                f"battle_checkpoint={None if self.battle_checkpoint is None else str(self.battle_checkpoint)!r}, "
                f"temperature={self.temperature}, "
                f"symmetries={self.symmetries}, seed={self.seed!r})")


__all__ = ["PolicyBot", "NetworkPlayer", "SHIPPED", "SHIPPED_BATTLE", "shipped_checkpoint", "rules_mismatch"]
