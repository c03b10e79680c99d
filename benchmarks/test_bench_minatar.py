"""MinAtar's five games at N = 4096 against gymnax's ``<Game>-MinAtar``.

Env-steps per second of the engine (``vecenv.make("minatar_<game>", num_envs=N)``, one thread,
random actions of the minimal set drawn before timing, MinAtar's sticky actions and same-step...
next-step autoreset as the engine does by default) against gymnax's ``step`` under
``jax.jit(jax.vmap(...))`` on CPU over random actions of the same set: a ``jax.lax.scan`` of
T = 32 steps in one call returning every step's observation (10x10xC), reward and termination
(``gymnax scan``, the figure the target is for), the same without observations (``gymnax scan,
obs dropped``: an upper bound on gymnax), and one jitted step a call (``gymnax per call``).
Compile time is excluded. Both sides run the same games (gymnax ports MinAtar's; its episodes are
truncated at 1000 steps, Freeway's at 2500, as ours by default) with their own random streams.
Target: the engine at least 10x the gymnax scan for each game. gymnax is an optional peer
(``pip install gymnax``, with jax); where it does not install or import, its benchmarks skip with
the reason. gymnax's Seaquest runs about 10 k steps/s here: its rounds take seconds.

Keys: ("<Game>-MinAtar", 4096, impl) with impl "vecenv", "gymnax-scan", "gymnax-scan-noobs",
"gymnax-step".
"""

import numpy as np
import pytest
import report
from harness import (
    GYMNAX_IMPLS,
    calls_per_round,
    declare_gymnax,
    engine_action_rows,
    gymnax_round,
    make_engine,
    run_rounds,
    run_steps,
)

N = 4096
T = 32
TARGET = 10.0
# gymnax's id: (our game, its title, actions in the minimal set, our step's cost in CartPoles)
GAMES = {
    "Breakout-MinAtar": ("minatar_breakout", "Breakout", 3, 4),
    "Asterix-MinAtar": ("minatar_asterix", "Asterix", 5, 4),
    "Freeway-MinAtar": ("minatar_freeway", "Freeway", 3, 4),
    "Seaquest-MinAtar": ("minatar_seaquest", "Seaquest", 6, 8),
    "SpaceInvaders-MinAtar": ("minatar_space_invaders", "Space Invaders", 4, 4),
}

for gym_id, (game, title, _, _) in GAMES.items():
    declare_gymnax(
        f"MinAtar {title}, N={N}: vecenv engine (1 thread) vs gymnax {gym_id} (jax CPU)",
        f"{title} N={N}",
        (gym_id, N),
        f"vecenv {game}",
        T,
        TARGET,
    )


@pytest.mark.parametrize("impl", ("vecenv",) + GYMNAX_IMPLS)
@pytest.mark.parametrize("gym_id", GAMES)
def test_minatar_vs_gymnax(benchmark, gym_id, impl):
    game, title, actions, cost = GAMES[gym_id]
    benchmark.group = f"MinAtar {title} N={N} vs gymnax"
    if impl == "vecenv":
        engine = make_engine(game, N, 1)
        rows = engine_action_rows(engine, calls_per_round(N, cost=cost))
        calls = run_steps(benchmark, engine.step, rows)
    else:
        count = 4 if impl == "gymnax-step" else T
        rows = list(np.random.default_rng(0).integers(0, actions, size=(count, N)))
        round_fn, calls = gymnax_round(gym_id, impl, rows, T)
        run_rounds(benchmark, round_fn)
    report.record(benchmark, (gym_id, N, impl), calls, N, impl=impl)
