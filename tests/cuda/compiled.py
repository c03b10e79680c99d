"""Compiles games' GPU kernels to PTX, in a process of its own, for ``test_ptx.py``: for sm_90
(``BOTH`` for sm_80 too; ``SEARCHED``'s search too), with no GPU or driver (see
``vecenv.cuda.compile.target_capability``), every kernel the engine launches for the games of
``EVERY_KERNEL`` and each other game's ``game_kernels``. Prints one JSON line per game:
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


# Every kernel for one game of one agent and one of two with built-in agents: the kernels' own
# code is the same for every game. Every other game compiles the kernel that runs all of its
# rules (``game_kernels``): the other kernels are the same code around a part of them, and
# compiling them all took a third more of the suite's CPU time for no more of the rules.
EVERY_KERNEL = (BOTH, "connectx")


def capabilities(game):
    return CAPABILITIES if game == BOTH else CAPABILITIES[-1:]


def game_kernels(game):
    """The labels of ``vecenv.cuda.ptx.signatures`` compiled for ``game``: None (every one) for
    ``EVERY_KERNEL``; else the one-agent rollout (reset, step and observe) or the step with the
    built-in agents' moves (reset and observe in its autoreset), or without where it has none."""
    from vecenv import registry

    if game in EVERY_KERNEL:
        return None
    if registry.get_spec(game).num_agents == 1:
        return {"rollout"}
    return {"step_agents"} if registry.game_module(game, "agents") is not None else {"step"}


def main(games):
    from vecenv.cuda.ptx import mlp_ptx, ptx, search_ptx  # here: importing capabilities stays light
    from vecenv.cuda.tables import const_bytes

    cachelock.install()  # the test process shares these caches
    for game in games:
        try:
            out = ptx(game, capabilities(game), only=game_kernels(game))
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
