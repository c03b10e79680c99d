"""Compiles games' GPU kernels to PTX, in a process of its own, for ``test_ptx.py``: every kernel
the engine launches, for each capability of ``CAPABILITIES``, with no GPU or driver (see
``vecenv.cuda.compile.target_capability``). Prints one JSON line per game:
``{"game", "kernels": [[label, "sm_XY", PTX bytes], ...], "error"}``.

    python -m tests.cuda.compiled game [game ...]
"""

import json
import sys
import traceback

from tests import cachelock
from vecenv.cuda.ptx import ptx

CAPABILITIES = ((8, 0), (9, 0))


def main(games):
    cachelock.install()  # the test process shares these caches
    for game in games:
        try:
            out = ptx(game, CAPABILITIES)
            found = [[label, f"sm_{cc[0]}{cc[1]}", len(text)] for (label, cc), text in out.items()]
            # PTX names its target: each capability was compiled for, not just asked for.
            for (_, cc), text in out.items():
                assert f".target sm_{cc[0]}{cc[1]}" in text
            error = None
        except Exception:
            found, error = [], traceback.format_exc()
        print(json.dumps({"game": game, "kernels": found, "error": error}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
