"""The GPU engine beside the CPU engine for every game, on numba's CUDA simulator (CI has no GPU).

The simulator must be chosen before numba.cuda is first imported, and the rest of the suite uses
the real numba.cuda, so processes of their own (``tests.cuda.simulated``, started by
``conftest.py``) run every check of ``sidebyside`` on small batches; each check is reported here
as a test of its own. Under the
simulator the rules run as Python on the host's C library: every game matches bit for bit.
"""

import pytest

import vecenv
from vecenv import registry

from . import require_numba_cuda

require_numba_cuda()


@pytest.fixture(scope="module")
def results(cuda_workers):
    rows = [row for worker in cuda_workers["simulated"] for row in worker.rows()]
    return {(row["game"], row["check"]): row["error"] for row in rows}


def test_every_game_is_checked(results):
    games = {game for game, _ in results}
    assert games == set(vecenv.list_envs())
    checks = {check for _, check in results}
    assert {"trajectories", "bad_actions", "state_round_trip", "agents", "vector_env"} <= checks
    assert "two_blocks" in checks
    assert {game for game, check in results if check == "search"} == {"tictactoe", "connectx"}
    assert {"autoreset_same_step", "autoreset_disabled", "any_actions"} <= checks
    one_agent = {g for g in games if registry.get_spec(g).num_agents == 1}
    assert {game for game, check in results if check == "rollout"} == one_agent
    assert {"rollout_same_step", "rollout_disabled", "rollout_policy", "rollout_dlpack"} <= checks
    assert {game for game, check in results if check == "one_launch"} >= {"cartpole", "connectx"}
    assert {game for game, check in results if check == "mlp_policy"} >= {"cartpole", "game_2048"}
    assert {"device_training", "device_trainer_refuses"} <= checks
    assert {
        "dlpack",
        "dlpack_layout",
        "pickling",
        "pickling_vector_env",
        "pickling_seats",
    } <= checks


@pytest.mark.parametrize("game", vecenv.list_envs())
def test_game_matches_the_cpu_engine(results, game):
    failed = {check: error for (g, check), error in results.items() if g == game and error}
    assert not failed, "\n\n".join(f"{check}:\n{error}" for check, error in failed.items())
