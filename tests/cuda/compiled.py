"""Compiles games' GPU kernels to PTX, in a process of its own, for ``test_ptx.py``: every kernel
the engine launches, for sm_90 (``BOTH`` for sm_80 too; ``SEARCHED``'s search too), with no GPU
or driver (see ``vecenv.cuda.compile.target_capability``). Prints one JSON line per game:
``{"game", "kernels": [[label, "sm_XY", PTX bytes, constant bytes], ...], "error"}``.

    python -m tests.cuda.compiled game [game ...]
"""

import json
import sys
import traceback

from tests import cachelock

CAPABILITIES = ((8, 0), (9, 0))
# Every game for the newest; one game for both, which proves the capability asked for is the one
# compiled for (a second full compile of every game would double the CUDA tests' cost).
BOTH = "cartpole"
# The game whose GPU search (vecenv.cuda.search) compiles too: the search's own code is every
# game's, and another game's compile would add as much NVVM time again.
SEARCHED = "tictactoe"
# The game whose rollout kernel also compiles with the GPU trainer's MLP actor as its policy: a
# Dict of an int64 board and a bool legal-move field, the inputs scaled (every path of the
# actor's source).
TRAINED = "game_2048"


def capabilities(game):
    return CAPABILITIES if game == BOTH else CAPABILITIES[-1:]


def main(games):
    from vecenv.cuda.ptx import mlp_ptx, ptx, search_ptx  # here: importing capabilities stays light
    from vecenv.cuda.tables import const_bytes

    cachelock.install()  # the test process shares these caches
    for game in games:
        try:
            out = ptx(game, capabilities(game))
            if game == SEARCHED:
                cc = CAPABILITIES[-1]
                out["search", cc] = search_ptx(game, cc)
            if game == TRAINED:
                cc = CAPABILITIES[-1]
                out["rollout_mlp", cc] = mlp_ptx(game, cc)
            found = [
                [label, f"sm_{cc[0]}{cc[1]}", len(text), const_bytes(text)]
                for (label, cc), text in out.items()
            ]
            # PTX names its target: each capability was compiled for, not just asked for.
            for (_, cc), text in out.items():
                assert f".target sm_{cc[0]}{cc[1]}" in text
            error = None
        except Exception:
            found, error = [], traceback.format_exc()
        print(json.dumps({"game": game, "kernels": found, "error": error}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
