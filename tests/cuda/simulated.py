"""Runs ``sidebyside``'s checks for every game on numba's CUDA simulator, in a process of its own
(the simulator must be chosen before numba.cuda is first imported, and the rest of the suite
uses the real numba.cuda). Prints one JSON line per check: ``{"game", "check", "error"}``.

    python -m tests.cuda.simulated [game ...]
"""

import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import json  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import vecenv  # noqa: E402
from tests import cachelock  # noqa: E402
from vecenv import registry  # noqa: E402

from . import rollouts, sidebyside, training  # noqa: E402

ONE_AGENT_VECTOR = "cartpole"
AUTORESET_GAMES = ("cartpole", "connectx", "catch", "pendulum")
ANY_ACTIONS_GAMES = (
    "cartpole",
    "connectx",
    "pendulum",
)  # discrete one-agent, two-agent, continuous
# Agents whose code needs numba's integer typing, which the simulator's Python lacks (connectx's
# negamax shifts uint64 bitboards by int64 counts): their moves are checked on a GPU only
# (``test_gpu.py``) and their kernels compiled to PTX (``test_ptx.py``).
SIMULATED_AGENTS = {"connectx": (0, 0)}
PICKLED_SEATS = "connectx"  # a two-agent game: the engine and DeviceSeats pickled mid-game
SEARCHED = ("tictactoe", "connectx")  # the GPU search beside the CPU's
# Rollouts under the other autoreset modes (next-step for every one-agent game).
ROLLOUT_AUTORESET = {"cartpole": 20, "catch": 12}  # steps: enough for episodes to end
ONE_LAUNCH = ("cartpole", "connectx", "pendulum")
# PPO on the device: a plain Box, a large boolean image with scaled inputs (and ReLU layers), a
# Dict with legal moves.
TRAINED = {
    "cartpole": {},
    "minatar_breakout": {"norm_obs": True, "activation": "relu"},
    "game_2048": {},
}


def checks(game):
    yield "trajectories", lambda: sidebyside.trajectories(game)
    yield "bad_actions", lambda: sidebyside.bad_actions(game)
    yield "state_round_trip", lambda: sidebyside.state_round_trip(game)
    if game in AUTORESET_GAMES:
        for mode in ("same_step", "disabled"):
            yield f"autoreset_{mode}", lambda m=mode: sidebyside.trajectories(game, autoreset=m)
    if registry.game_module(game, "agents") is not None:
        yield "agents", lambda: sidebyside.agents(game, pair=SIMULATED_AGENTS.get(game, (0, -1)))
    if game in ANY_ACTIONS_GAMES:
        yield "any_actions", lambda: sidebyside.any_actions(game)
    if game == ONE_AGENT_VECTOR:
        yield "vector_env", sidebyside.vector_env
        # More episodes than one block of threads: the grid's second block, its last threads idle.
        yield "two_blocks", lambda: sidebyside.trajectories(game, num_envs=130, steps=6)
        yield "dlpack", lambda: sidebyside.dlpack(game)
        yield "dlpack_layout", sidebyside.dlpack_layout
        yield "pickling", lambda: sidebyside.pickling(game)
        yield "pickling_vector_env", sidebyside.pickling_vector_env
    if registry.get_spec(game).num_agents == 1:
        yield "rollout", lambda: rollouts.rollout_matches_steps(game)
    if game in ROLLOUT_AUTORESET:
        for mode in ("same_step", "disabled"):
            yield (
                f"rollout_{mode}",
                lambda m=mode: rollouts.rollout_matches_steps(
                    game, steps=ROLLOUT_AUTORESET[game], autoreset=m, calls=1
                ),
            )
    if game in ONE_LAUNCH:
        yield "one_launch", lambda: rollouts.one_launch(game)
    if game == ONE_AGENT_VECTOR:
        yield "rollout_policy", rollouts.rollout_policy
        yield "rollout_dlpack", rollouts.rollout_dlpack
    if game in TRAINED:
        yield "mlp_policy", lambda: training.mlp_policy_matches_torch(game, **TRAINED[game])
    if game == ONE_AGENT_VECTOR:
        yield "device_training", lambda: training.device_training(game)
        yield "device_trainer_refuses", training.device_trainer_refuses
    if game in SEARCHED:
        yield "search", lambda: sidebyside.search(game)
    if game == PICKLED_SEATS:
        yield "pickling", lambda: sidebyside.pickling(game, autoreset="next_step")
        yield "pickling_seats", lambda: sidebyside.pickling_seats(game)


def main(games):
    cachelock.install()  # the test process shares these caches
    warnings.simplefilter("ignore")  # numpy's scalar overflow warnings: the RNG wraps on purpose
    for game in games or vecenv.list_envs():
        for name, run in checks(game):
            start = time.perf_counter()
            try:
                run()
                error = None
            except Exception:
                error = traceback.format_exc()
            seconds = round(time.perf_counter() - start, 2)
            print(json.dumps({"game": game, "check": name, "error": error, "seconds": seconds}))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
