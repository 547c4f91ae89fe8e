"""Former home of the batched runner and the vector env.

The runner is :mod:`jiu_env.batch` (numba only); the Gymnasium ``VectorEnv``
is :mod:`jiu_env.envs.vector`.  Deprecated: this path keeps working for this
release and warns on import.
"""

import warnings

warnings.warn("jiu_env.vector is deprecated: import BatchRunner and its helpers from jiu_env.batch and JiuVectorEnv "
              "from jiu_env.envs.vector (or the root: jiu_env.JiuVectorEnv)", DeprecationWarning, stacklevel=2)

from .batch import (  # noqa: F401
    LEARNERS, OPP_GREEDY, OPP_NONE, OPP_RANDOM, OPPONENTS, STARTS, BatchRunner, derive_seeds, first_illegal,
    first_invalid, sample_masked,
)
from .envs.vector import JiuVectorEnv  # noqa: F401

__all__ = ["BatchRunner", "JiuVectorEnv", "sample_masked", "derive_seeds", "first_illegal", "first_invalid", "OPPONENTS",
           "OPP_NONE", "OPP_RANDOM", "OPP_GREEDY", "LEARNERS", "STARTS"]
