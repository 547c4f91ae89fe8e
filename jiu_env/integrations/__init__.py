"""Bridges to RL frameworks that are optional extras.

- :mod:`jiu_env.integrations.rllib`: a turn-based RLlib ``MultiAgentEnv``, an
  action-masking RLModule, a self-play ``PPOConfig`` and the ``rllib:CHECKPOINT``
  player (install the ``rllib`` extra).

Nothing in the rest of ``jiu_env`` imports these modules.
"""
