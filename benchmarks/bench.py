"""The performance benchmark (``jiu bench``); see :mod:`jiu_env.benchmark`."""

import sys

from jiu_env.benchmark import main

if __name__ == "__main__":
    sys.exit(main())
