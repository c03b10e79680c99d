"""The reference figures behind the tuned PPO targets that no published PPO result gives.

csuite's continuing games have no published PPO table, so their targets (``envs/<game>/ppo.json``)
are 90% of the reward per step of a reference policy, measured here: the optimal policy where the
game's model is small enough to solve exactly (AccessControl, Taxi: relative value iteration on
the exact model), a hand-written near-optimal one elsewhere (the Catch variants: move toward
where the lowest ball will land; the pendulums: pump energy, then hold upright). 2048's target is
the mean score of a hand-written corner strategy. Every policy plays vecenv's own game through its
Gymnasium face, beside the uniformly random policy (over the legal moves for 2048), so the table
also shows how far the target sits above chance.

    python benchmarks/ppo_targets.py                  # every game (about a minute)
    python benchmarks/ppo_targets.py --games taxi,catch --steps 5000

Figures are means over ``--envs`` envs of ``--steps`` steps each after a ``--settle`` steps'
start (the pendulums' swing-up and the queue's first fill are not the steady state), seed 0; the
exact optima are printed beside their simulation.
"""

import argparse
import sys
from math import comb
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FRACTION = 0.9  # a continuing game's target: this share of its reference's reward per step


# -- playing a policy --------------------------------------------------------------------------


def reward_rate(game, policy, envs=64, steps=20_000, settle=1_000, seed=0):
    """Mean reward per step of ``policy(obs, rng) -> actions`` on ``game`` (continuing: never
    ends), over the steps after the first ``settle``."""
    from vecenv.ppo import vector_env

    env = vector_env(game, envs)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    total = 0.0
    for t in range(settle + steps):
        obs, reward, terminated, truncated, _ = env.step(policy(obs, rng))
        if terminated.any() or truncated.any():
            raise AssertionError(f"{game} ended an episode: it should be continuing")
        if t >= settle:
            total += float(reward.sum())
    env.close()
    return total / (envs * steps)


def mean_score(game, policy, envs=64, games=1_000, seed=0):
    """Mean return of the first ``games`` episodes ``policy`` finishes on ``game``."""
    from vecenv.ppo import vector_env

    env = vector_env(game, envs)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns, scores = np.zeros(envs), []
    resetting = np.zeros(envs, dtype=bool)  # next-step autoreset: this step only resets
    while len(scores) < games:
        obs, reward, terminated, truncated, _ = env.step(policy(obs, rng))
        returns += np.where(resetting, 0.0, reward)
        ended = (terminated | truncated) & ~resetting
        scores.extend(returns[ended].tolist())
        returns[ended] = 0.0
        resetting = ended
    env.close()
    return float(np.mean(scores[:games]))


def uniform(actions):
    def policy(obs, rng):
        return rng.integers(actions, size=len(obs))

    return policy


# -- Catch, WindyCatch, DancingCatch -----------------------------------------------------------


def toward_lowest_ball(board, wind=None):
    """Actions (0 left, 1 stay, 2 right) moving each paddle toward the column where the lowest
    ball will land: straight down, or blown ``wind`` (-1, 0, 1 per env) a column a row,
    wrapping. ``board`` is (envs, rows, columns), the paddle on the last row."""
    envs, rows, columns = board.shape
    paddle = board[:, -1, :].argmax(axis=1)
    target = np.full(envs, columns // 2)
    found = np.zeros(envs, dtype=bool)
    for y in range(rows - 2, -1, -1):  # from the row above the paddle up
        here = board[:, y, :].any(axis=1) & ~found
        column = board[:, y, :].argmax(axis=1)
        if wind is not None:
            column = (column + wind * (rows - 1 - y)) % columns
        target = np.where(here, column, target)
        found |= here
    return 1 + np.sign(target - paddle)


def catch_policy(obs, rng):
    return toward_lowest_ball(obs)


def windy_catch_policy(obs, rng, rows=10, columns=5):
    board = obs[:, : rows * columns].reshape(-1, rows, columns)
    wind = np.array([0, -1, 1])[obs[:, rows * columns :].argmax(axis=1)]  # none, left, right
    return toward_lowest_ball(board, wind)


# -- the pendulums -----------------------------------------------------------------------------


def pendulum_policy(obs, rng, gravity=9.81):
    """Torque -1/0/+1 as actions 0/1/2: within 0.5 rad of upright, push toward it (a
    proportional-derivative sign); elsewhere pump energy (torque along the velocity) until the
    pendulum has the energy of the upright position, and brake past it."""
    cos, sin, velocity = obs[:, 0], obs[:, 1], obs[:, 2]
    from_top = np.mod(np.arctan2(sin, cos), 2 * np.pi) - np.pi  # 0 upright (angle 0 hangs)
    energy = 0.5 * velocity**2 - gravity * cos
    pump = np.where(energy < gravity, np.sign(velocity + 1e-9), -np.sign(velocity))
    hold = -np.sign(8.0 * from_top + 2.0 * velocity)
    torque = np.where(np.abs(from_top) < 0.5, hold, pump)
    return (torque + 1).astype(np.int64)


# -- AccessControl: relative value iteration on the exact model -------------------------------

PRIORITIES = np.array([1.0, 2.0, 4.0, 8.0])


def access_control_optimum(servers=10, free=0.06, tol=1e-12):
    """(optimal reward per step, accept[busy, priority index]) of csuite's AccessControl:
    accepting while a server is free pays the priority and takes a server; then each busy
    server frees with probability ``free``; the next customer's priority is uniform."""
    frees = [
        [comb(b, k) * free**k * (1 - free) ** (b - k) for k in range(b + 1)]
        for b in range(servers + 1)
    ]
    h = np.zeros((servers + 1, len(PRIORITIES)))
    for _ in range(100_000):
        waiting = h.mean(axis=1)  # the next customer's priority is not known yet
        after = np.array(
            [sum(p * waiting[b - k] for k, p in enumerate(frees[b])) for b in range(servers + 1)]
        )
        reject = np.repeat(after[:, None], len(PRIORITIES), axis=1)
        accept = reject.copy()
        accept[:servers] = PRIORITIES + after[1:, None]
        new = np.maximum(accept, reject)
        gain = new[0, 0] - h[0, 0]
        new -= new[0, 0]
        if np.abs(new - h).max() < tol:
            break
        h = new
    return float(gain), accept > reject


def access_control_policy(accept):
    def policy(obs, rng):
        return accept[obs // len(PRIORITIES), obs % len(PRIORITIES)].astype(np.int64)

    return policy


# -- Taxi: relative value iteration on the exact model -----------------------------------------


def taxi_optimum(tol=1e-10):
    """(optimal reward per step, best action per state index) of csuite's continuing Taxi, by
    relative value iteration (damped: the chain is periodic) on the game's own map."""
    from envs.taxi.rules import COLOR_X, COLOR_Y, WALL_EAST

    def outcomes(x, y, p, d, a):  # [(probability, reward, state)]
        if a == 0 and y > 0:
            y -= 1
        elif a == 2 and y < 4:
            y += 1
        elif a == 3 and x < 4 and not WALL_EAST[y, x]:
            x += 1
        elif a == 1 and x > 0 and not WALL_EAST[y, x - 1]:
            x -= 1
        elif a == 4:
            if p == 4 or COLOR_X[p] != x or COLOR_Y[p] != y:
                return [(1.0, -10.0, (x, y, p, d))]
            p = 4
        elif a == 5:
            if p != 4 or COLOR_X[d] != x or COLOR_Y[d] != y:
                return [(1.0, -10.0, (x, y, p, d))]
            return [(1 / 16, 20.0, (x, y, q, e)) for q in range(4) for e in range(4)]
        return [(1.0, 0.0, (x, y, p, d))]

    # csuite's index ((x * 5 + y) * 5 + passenger) * 4 + destination, in this order
    states = [(x, y, p, d) for x in range(5) for y in range(5) for p in range(5) for d in range(4)]
    index = {s: i for i, s in enumerate(states)}
    model = [[[(q, r, index[t]) for q, r, t in outcomes(*s, a)] for a in range(6)] for s in states]
    h = np.zeros(len(states))
    for _ in range(100_000):
        q = np.array([[sum(p * (r + h[j]) for p, r, j in acts) for acts in row] for row in model])
        new = q.max(axis=1)
        gain = new[0] - h[0]
        new = 0.5 * (new - new[0]) + 0.5 * h
        if np.abs(new - h).max() < tol:
            break
        h = new
    return float(gain), q.argmax(axis=1)


def table_policy(best):
    def policy(obs, rng):
        return best[obs]

    return policy


# -- 2048 --------------------------------------------------------------------------------------


def random_legal(obs, rng):
    legal = obs["legal"]
    return (rng.random(legal.shape) * legal).argmax(axis=1)


def corner(obs, rng):
    """The first legal move of down, left, right, up: tiles gather in the bottom-left corner."""
    legal = obs["legal"][:, [2, 3, 1, 0]]
    return np.array([2, 3, 1, 0])[legal.argmax(axis=1)]


# -- the table ---------------------------------------------------------------------------------


def references():
    """{game: (the reference in words, random's figure, reference's figure, exact optimum or
    None)}, each figure a function of ``reward_rate``'s keywords (2048's: ``envs``)."""

    def rate(game, policy):
        return lambda **kw: reward_rate(game, policy, **kw)

    def exact(solve, make_policy, game):
        def figures(**kw):
            optimum, table = solve()
            return reward_rate(game, make_policy(table), **kw), optimum

        return figures

    def simulated(figure):
        return lambda **kw: (figure(**kw), None)

    return {
        "catch": (
            "toward the lowest ball",
            rate("catch", uniform(3)),
            simulated(rate("catch", catch_policy)),
        ),
        "dancing_catch": (
            "Catch's (the same game, its observation unshuffled)",
            rate("dancing_catch", uniform(3)),
            simulated(rate("catch", catch_policy)),
        ),
        "windy_catch": (
            "toward where the lowest ball lands in the wind",
            rate("windy_catch", uniform(3)),
            simulated(rate("windy_catch", windy_catch_policy)),
        ),
        "access_control": (
            "optimal (relative value iteration)",
            rate("access_control", uniform(2)),
            exact(access_control_optimum, access_control_policy, "access_control"),
        ),
        "taxi": (
            "optimal (relative value iteration)",
            rate("taxi", uniform(6)),
            exact(taxi_optimum, table_policy, "taxi"),
        ),
        "csuite_pendulum": (
            "pump energy, then hold upright",
            rate("csuite_pendulum", uniform(3)),
            simulated(rate("csuite_pendulum", pendulum_policy)),
        ),
        "pendulum_poke": (
            "pump energy, then hold upright",
            rate("pendulum_poke", uniform(3)),
            simulated(rate("pendulum_poke", pendulum_policy)),
        ),
        "game_2048": (
            "corner strategy (mean score of 1,000 games)",
            lambda envs, **_: mean_score("game_2048", random_legal, envs=envs),
            lambda envs, **_: (mean_score("game_2048", corner, envs=envs), None),
        ),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", help="comma-separated games (default: all)")
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20_000, help="measured steps per env")
    parser.add_argument("--settle", type=int, default=1_000, help="steps before measuring")
    args = parser.parse_args(argv)
    found = references()
    games = args.games.split(",") if args.games else list(found)
    unknown = sorted(set(games) - set(found))
    if unknown:
        parser.error(f"no reference for {unknown}; games: {', '.join(found)}")
    kw = {"envs": args.envs, "steps": args.steps, "settle": args.settle}
    print("| game | random | reference policy | reference | exact | 90% of the reference |")
    print("|---|---|---|---|---|---|")
    for game in games:
        words, random_figure, reference_figure = found[game]
        low = random_figure(**kw)
        ref, optimum = reference_figure(**kw)
        optimum = f"{optimum:.4g}" if optimum is not None else "-"
        share = f"{FRACTION * ref:.4g}" if game != "game_2048" else "-"
        print(f"| {game} | {low:.4g} | {words} | {ref:.4g} | {optimum} | {share} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
