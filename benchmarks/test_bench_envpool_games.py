"""Pgx's board games against EnvPool's C++ ports of them (envpool 1.2.5, ``-v1``): random
self-play at N = 4096 on one thread, both sides drawing their moves in numpy.

Both sides step N games with a random legal move for the agent to move in each, drawn by the same
numpy code from the legal mask each side shows (``harness.uniform_legal``: EnvPool's
``info["legal_action_mask"]``, vecenv's ``obs["legal"]``), next-step autoreset on both (a finished
game is reset by the next step, as EnvPool resets it): vecenv through ``vecenv.make(game,
num_envs=4096, autoreset="next_step")`` and ``step``, EnvPool through ``envpool.make(task,
env_type="gymnasium", num_envs=4096, batch_size=4096, num_threads=1)``. 8 steps a round, the
rounds alternating between the sides (EnvPool's timed by hand before each of vecenv's), both held
to one CPU (``harness.against_envpool``). The numpy draw costs both sides alike; vecenv's own
in-engine agents (the Pgx benchmarks' stream) would spare it the draw, so this is the stricter
comparison. Target: at least 10x. Animal shogi, Gardner chess and shogi are in
``test_bench_shogi.py``; Pgx's side of these games in ``test_bench_pgx_games.py`` and the games'
own benchmarks.

EnvPool is an optional peer (``pip install envpool==1.2.5``, not in the test extra): where it does
not import, these benchmarks skip with the reason. Smoke mode: N = 64, one step.

Keys: ("selfplay", game, 4096, impl) with impl "vecenv-numpy-T1" and "envpool-T1" (plies per
second).
"""

import pytest
from harness import against_envpool, declare_envpool, numpy_envpool_round, numpy_vecenv_round

N = 4096
STEPS = 8
ROUNDS = 12
SMOKE_N = 64
TARGET = 10.0
# The report's name: (vecenv's game and configuration, EnvPool's task).
GAMES = {
    "tictactoe": (("tictactoe", {}), "TicTacToe-v1"),
    "connect_four": (("connectx", {}), "ConnectFour-v1"),
    "othello": (("othello", {}), "Othello-v1"),
    "go_9x9": (("go", {}), "Go9x9-v1"),
    "go_13x13": (("go", {"size": 13}), "Go13x13-v1"),
    "chess": (("chess", {}), "Chess-v1"),
    "hex": (("hex", {}), "Hex-v1"),
    "kuhn_poker": (("kuhn_poker", {}), "KuhnPoker-v1"),
    "leduc_holdem": (("leduc_holdem", {}), "LeducHoldem-v1"),
    "backgammon": (("backgammon", {}), "Backgammon-v1"),
    "sparrow_mahjong": (("sparrow_mahjong", {}), "SparrowMahjong-v1"),
}
SECTION = f"Random self-play on one thread, N={N}: vecenv vs EnvPool's C++ ports (numpy's draws)"

for _game, (_, _task) in GAMES.items():
    declare_envpool(SECTION, ("selfplay", _game, N), _task, TARGET)


@pytest.mark.parametrize("game", GAMES)
def test_random_selfplay_against_envpool(benchmark, game):
    benchmark.group = f"{game} random self-play N={N}, numpy's draws"
    n, steps = (SMOKE_N, 1) if benchmark.disabled else (N, STEPS)
    (name, configuration), task = GAMES[game]
    theirs = numpy_envpool_round(task, n, steps)
    ours = numpy_vecenv_round(name, n, steps, **configuration)
    against_envpool(benchmark, ("selfplay", game, N), ours, theirs, steps, n, ROUNDS)
