"""Checks for kernel states, action buffers and live objects that come from outside.

The numba kernel (:mod:`jiu_env.kernel`) trusts its input: a header field out
of range makes it read or write outside the array (a crash, not an
exception), loop forever or return nonsense.  Everything that takes a state
from a caller (the checked kernel entry points, every bot's ``step``, the
envs) runs :func:`validate_state` once at that boundary; the kernel's inner
loops and the bots' searches stay unchecked and fast.

This module gathers the checks; they live below it.  The checks that need
only the vocabulary (the numba :func:`state_problem`, :func:`check_layout`,
the action and buffer checks, :func:`thaw`) are in :mod:`jiu_env.checks`,
which the kernel imports; :func:`validate_state` adds the one check that
needs the kernel's move generator (a game in progress has a legal action)
and is defined in the kernel (:func:`jiu_env.kernel.validate_state`).
"""

from __future__ import annotations

from .checks import (
    MAX_BATTLE_TURNS as MAX_BATTLE_TURNS,
    MAX_COUNTER as MAX_COUNTER,
    MAX_HISTORY as MAX_HISTORY,
    MAX_INT64 as MAX_INT64,
    NO_ACTION as NO_ACTION,
    OK as OK,
    InvalidStateError as InvalidStateError,
    check_action_value as check_action_value,
    check_buffer as check_buffer,
    check_flag as check_flag,
    check_int as check_int,
    check_real as check_real,
    check_layout as check_layout,
    check_position as check_position,
    first_problem as first_problem,
    raise_problem as raise_problem,
    state_problem as state_problem,
    thaw as thaw,
    thaw_dict as thaw_dict,
)
from .kernel import validate_state as validate_state

__all__ = ["validate_state", "state_problem", "check_layout", "check_position", "InvalidStateError", "check_action_value", "check_buffer", "check_flag", "check_int", "check_real",
           "thaw", "thaw_dict", "MAX_BATTLE_TURNS"]
