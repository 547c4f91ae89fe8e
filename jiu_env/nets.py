"""The torch building blocks of the Jiu policy networks, shared by :mod:`jiu_env.sb3` and
:mod:`jiu_env.integrations.rllib` (needs torch; nothing else in ``jiu_env`` imports it).

- :func:`conv_trunk`: 3x3 convolutions with ReLU over the ``(B, C, N, N)`` planes.
- :class:`SpatialActionHead`: the logits of the flat action space ``10*N*N + 1``
  (docs/rules.md §7) from a feature map, one 1x1-convolution plane per action kind
  and a STOP logit from pooled features, so a move learnt on one point
  generalises to every point.
- :class:`ValueHead`: a state value from mean- and max-pooled features.
- :func:`set_torch_threads`: the torch threads a model player sets when it is loaded.
"""

import numpy as np
import torch
from torch import nn

from .validate import check_int


def set_torch_threads(threads):
    """Set torch's threads for this process (``None``: leave them); an int >= 1, else TypeError / ValueError.

    Model players loaded from a spec (``sb3:``, ``rllib:``, like ``policy`` and
    ``alphazero``) set one: games are played one a core, and one small
    network evaluating one position gains nothing from more threads, while
    it slows down many times when another process holds a core.
    """
    if check_int("threads", threads, 1, or_none=True) is not None:
        torch.set_num_threads(threads)


def conv_trunk(in_channels, channels=32, layers=4):
    """``layers`` 3x3 convolutions with ``channels`` filters, ReLU and zero padding (the edge stays visible).

    ``channels`` and ``layers`` are ints >= 1 (ValueError otherwise: ``layers=0`` would hand the heads the
    input planes, and fail at the first forward pass).
    """
    for name, value in (("in_channels", in_channels), ("channels", channels), ("layers", layers)):
        check_int(f"{name} of the network", value, 1)
    convs = []
    c = in_channels
    for _ in range(layers):
        convs += [nn.Conv2d(c, channels, 3, padding=1), nn.ReLU()]
        c = channels
    return nn.Sequential(*convs)


class SpatialActionHead(nn.Module):
    """Logits of the flat action space from a ``(B, C*N*N)`` feature map.

    A 1x1 convolution gives 10 planes, ordered POINT, STEP up/right/down/left,
    JUMP up/right/down/left, LIFT, so that flattening ``(B, 10, N, N)`` yields
    index ``kind * P + p`` exactly as in docs/rules.md §7; STOP (index ``10P``) is
    a linear function of the pooled features.
    """

    def __init__(self, channels, board_size):
        super().__init__()
        self.channels = channels
        self.board_size = board_size
        self.conv = nn.Conv2d(channels, 10, 1)
        self.stop = nn.Linear(channels, 1)

    def forward(self, latent):
        x = _board_view(self, latent)
        return torch.cat([self.conv(x).flatten(1), self.stop(x.mean((2, 3)))], 1)


class ValueHead(nn.Module):
    """State value from mean- and max-pooled features of a ``(B, C*N*N)`` feature map."""

    def __init__(self, channels, board_size, hidden=64):
        check_int("hidden size of the value head", hidden, 1)  # Linear(2C, 0) builds, and values nothing
        super().__init__()
        self.channels = channels
        self.board_size = board_size
        self.mlp = nn.Sequential(nn.Linear(2 * channels, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, latent):
        x = _board_view(self, latent)
        return self.mlp(torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1))


def _board_view(head, latent):
    """``latent`` ``(B, C*N*N)`` as ``(B, C, N, N)`` for ``head``'s channels and board; ValueError for another size.

    ``view(-1, C, N, N)`` alone would fold the features of a larger board into
    several rows (a 6x6 network given a 12x12 observation returned 4 values)."""
    c, n = head.channels, head.board_size
    if latent.dim() != 2 or latent.shape[1] != c * n * n:
        raise ValueError(f"{type(head).__name__} of a {n}x{n} board expects (B, {c * n * n}) features ({c} channels "
                         f"over (B, {n}, {n}, planes) observations), got {tuple(latent.shape)}: is the observation "
                         f"of another board size?")
    return latent.view(-1, c, n, n)


def orthogonal_init(module, gain):
    """Orthogonal weights with ``gain`` and zero biases for every conv / linear layer of ``module``."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.orthogonal_(m.weight, gain=gain)
            if m.bias is not None:
                m.bias.data.fill_(0.0)
    return module


__all__ = ["conv_trunk", "SpatialActionHead", "ValueHead", "orthogonal_init"]
