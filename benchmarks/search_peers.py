"""Batched MCTS against its peers: simulations per second, side by side in one run.

Not pytest: ``python benchmarks/search_peers.py [--quick] [--out DIR] [--sides mctx,openspiel]
[--games tictactoe,connectx,othello]`` prints the tables of docs/search.md (and writes them with the
raw figures, ``search.md`` and ``search.json``, to DIR where given). Two comparisons:

**mctx with Pgx (JAX on the CPU).** ``mctx.muzero_policy`` (PUCT, no Dirichlet noise) searching N
positions of Pgx's ``tic_tac_toe``, ``connect_four`` and ``othello`` at once under ``jax.jit``, its
``recurrent_fn`` Pgx's ``step`` with uniform prior logits (masked to the legal moves, as Pgx's
AlphaZero example masks them) and a value of 0, against ``vecenv.search.MCTS(game, S,
selection="puct", evaluator="uniform")`` (uniform priors, every leaf worth 0) on ``tictactoe``,
``connectx`` and ``othello``: the same N, the same S, the same selection rule, the same leaf values,
from the games' start. Each round is one search of the N positions; the figure is simulations per
second, N x S divided by the round's time, the best of the rounds (on a shared machine other work
only adds time). The sides' rounds alternate. jax's threads are held to one CPU for the one-thread
figures (as vecenv's are), and run as jax runs by default (on every CPU) beside vecenv's two
threads. Each side's first call (jax's jit compile; numba's compile or its cache load, with the
search's shared arithmetic) is timed apart and reported, never counted in the rounds. Targets:
vecenv at least 10x mctx at N = 1024.

**OpenSpiel's ``MCTSBot``** (C++, through pyspiel) with ``RandomRolloutEvaluator(1)``, UCT with
``uct_c`` 2, ``solve=False``, S simulations a move, against ``MCTS(game, S)`` (UCT, c = 2, one
random rollout a leaf) on tictactoe, connect four and othello: P positions (random plies from the
start, the same in both: the games number their actions alike), searched one at a time by both
(vecenv: N = 1 a call), and by vecenv all at once (N = P). Figures: simulations per second over
the P searches, best of the rounds. Target: vecenv at least 5x OpenSpiel per game.

Where mctx, Pgx or OpenSpiel is missing (``pip install -e ".[bench]"``; OpenSpiel is in the test
extra), its comparison is left out with the reason. ``--quick`` runs everything with tiny N and S
and one round (its figures mean nothing: a check that the script runs; compiles dominate).
"""

import argparse
import contextlib
import datetime
import importlib.util
import os
import platform
import sys
import time

import numpy as np
from report import finish_run, load_average

import vecenv
from vecenv.search import MCTS

MCTX_GAMES = (
    ("tictactoe", "tic_tac_toe"),
    ("connectx", "connect_four"),
    ("othello", "othello"),
)
OPENSPIEL_GAMES = (
    ("tictactoe", "tic_tac_toe"),
    ("connectx", "connect_four"),
    ("othello", "othello"),
)
FULL = {"n": 1024, "simulations": 64, "rounds": 5, "positions": 32, "bot_simulations": 1000}
QUICK = {"n": 8, "simulations": 8, "rounds": 1, "positions": 2, "bot_simulations": 20}


def best_of(rounds, sides):
    """Time ``rounds`` rounds of every side, alternating (A B A B ...); the best per side."""
    best = {name: float("inf") for name in sides}
    for _ in range(rounds):
        for name, round_fn in sides.items():
            start = time.perf_counter()
            round_fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


@contextlib.contextmanager
def one_cpu():
    """Every thread of this process held to one CPU (as ``taskset -c``), as they were after."""
    tasks = "/proc/self/task"
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir(tasks):
        yield False
        return
    allowed = os.sched_getaffinity(0)
    saved = {}
    for tid in os.listdir(tasks):
        with contextlib.suppress(ProcessLookupError):
            saved[int(tid)] = os.sched_getaffinity(int(tid))
            os.sched_setaffinity(int(tid), {min(allowed)})
    try:
        yield True
    finally:
        for tid in os.listdir(tasks):
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(int(tid), saved.get(int(tid), allowed))


# -- vecenv ----------------------------------------------------------------------------------------


def vecenv_side(game, n, simulations, threads, **options):
    """A round function searching ``n`` start positions of ``game`` with vecenv, and the time
    of its first call."""
    engine = vecenv.make(game, num_envs=n, seed=0)
    mcts = MCTS(engine, simulations, num_threads=threads, **options)
    states = engine.get_state()
    seed = [0]

    def round_fn():
        seed[0] += 1
        mcts.search(states, seed=seed[0])

    start = time.perf_counter()
    round_fn()
    return round_fn, time.perf_counter() - start


# -- mctx with Pgx ---------------------------------------------------------------------------------


def mctx_modules():
    """(jax, mctx, pgx), or a reason they cannot be used here."""
    missing = [m for m in ("jax", "mctx", "pgx") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{', '.join(missing)} not installed (pip install -e '.[bench]')"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import mctx
    import pgx

    return jax, mctx, pgx


def mctx_side(modules, game, n, simulations):
    """A round function of ``mctx.muzero_policy`` over ``n`` start positions of Pgx's ``game``
    (uniform masked priors, leaf values 0), and the time of its first call (the jit compile)."""
    jax, mctx, pgx = modules
    jnp = jax.numpy
    env = pgx.make(game)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), n))
    minimum = jnp.finfo(jnp.float32).min

    def recurrent_fn(params, rng, action, state):
        mover = state.current_player
        state = jax.vmap(env.step)(state, action)
        logits = jnp.where(state.legal_action_mask, 0.0, minimum)
        reward = state.rewards[jnp.arange(n), mover]
        discount = jnp.where(state.terminated, 0.0, -1.0)
        out = mctx.RecurrentFnOutput(
            reward=reward, discount=discount, prior_logits=logits, value=jnp.zeros(n)
        )
        return out, state

    @jax.jit
    def search(states, key):
        root = mctx.RootFnOutput(
            prior_logits=jnp.where(states.legal_action_mask, 0.0, minimum),
            value=jnp.zeros(n),
            embedding=states,
        )
        out = mctx.muzero_policy(
            None,
            key,
            root,
            recurrent_fn,
            simulations,
            invalid_actions=~states.legal_action_mask,
            dirichlet_fraction=0.0,
        )
        return out.action

    key = [jax.random.key(1)]

    def round_fn():
        key[0], sub = jax.random.split(key[0])
        jax.block_until_ready(search(states, sub))

    start = time.perf_counter()
    round_fn()
    return round_fn, time.perf_counter() - start


def compare_mctx(settings, out, games):
    modules = mctx_modules()
    if isinstance(modules, str):
        out["mctx"] = {"skipped": modules}
        print(f"mctx: skipped, {modules}")
        return
    jax, mctx, pgx = modules
    n, s = settings["n"], settings["simulations"]
    rows = []
    for ours, theirs in MCTX_GAMES:
        if ours not in games:
            continue
        for threads in (1, 2):
            pinned = one_cpu() if threads == 1 else contextlib.nullcontext(False)
            with pinned as held:
                sides, first = {}, {}
                sides["vecenv"], first["vecenv"] = vecenv_side(
                    ours, n, s, threads, selection="puct", evaluator="uniform"
                )
                sides["mctx"], first["mctx"] = mctx_side(modules, theirs, n, s)
                best = best_of(settings["rounds"], sides)
            rate = {k: n * s / v for k, v in best.items()}
            row = {
                "game": ours,
                "pgx_game": theirs,
                "threads": threads,
                "jax_threads": "1 CPU" if held else "default (every CPU)",
                "n": n,
                "simulations": s,
                "sims_per_second": rate,
                "first_call_seconds": first,
                "ratio": rate["vecenv"] / rate["mctx"],
            }
            rows.append(row)
            print(
                f"mctx  {ours:9s} N={n} S={s} T={threads}: vecenv {rate['vecenv']:,.0f} sims/s, "
                f"mctx {rate['mctx']:,.0f} sims/s, {row['ratio']:.1f}x (first calls: vecenv "
                f"{first['vecenv']:.2f} s, mctx {first['mctx']:.2f} s)"
            )
    out["mctx"] = {
        "versions": {"mctx": mctx.__version__, "jax": jax.__version__, "pgx": pgx.__version__},
        "target": 10.0,
        "rows": rows,
    }


# -- OpenSpiel -------------------------------------------------------------------------------------


def positions(game, count, seed=0):
    """``count`` running positions as action sequences: 0 to 7 random legal plies from the
    start (othello: 0 to 15)."""
    engine = vecenv.make(game, num_envs=1, seed=seed, autoreset="disabled")
    rng = np.random.default_rng(seed)
    top = 16 if game == "othello" else 8
    out = []
    while len(out) < count:
        engine.reset()
        moves = []
        for _ in range(int(rng.integers(0, top))):
            legal = np.flatnonzero(engine.obs["legal"][0])
            move = int(rng.choice(legal))
            mover = int(np.flatnonzero(engine.states["status"][0] == 1)[0])
            actions = np.zeros((1, 2), dtype=np.int64)
            actions[0, mover] = move
            engine.step(actions)
            if engine.terminated[0]:
                break
            moves.append(move)
        else:
            out.append(moves)
    return out


def vecenv_positions(game, lines):
    """An engine with one episode per line of moves."""
    engine = vecenv.make(game, num_envs=len(lines), seed=0, autoreset="disabled")
    for ply in range(max(len(m) for m in lines)):
        actions = np.zeros((len(lines), 2), dtype=np.int64)
        live = np.array([ply < len(m) for m in lines])
        mover = np.argmax(engine.states["status"] == 1, axis=1)
        for i, moves in enumerate(lines):
            if ply < len(moves):
                actions[i, mover[i]] = moves[ply]
        frozen = engine.get_state()
        engine.step(actions)
        kept = engine.get_state()
        kept[~live] = frozen[~live]
        engine.set_state(kept)
    return engine


def compare_openspiel(settings, out, games):
    if importlib.util.find_spec("pyspiel") is None:
        out["openspiel"] = {"skipped": "OpenSpiel not installed (pip install open_spiel)"}
        print("openspiel: skipped, not installed")
        return
    import pyspiel

    s, count = settings["bot_simulations"], settings["positions"]
    rows = []
    with one_cpu() as held:
        for ours, theirs in OPENSPIEL_GAMES:
            if ours not in games:
                continue
            lines = positions(ours, count)
            game = pyspiel.load_game(theirs)
            starts = []
            for moves in lines:
                state = game.new_initial_state()
                for move in moves:
                    state.apply_action(move)
                starts.append(state)
            bot = pyspiel.MCTSBot(
                game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, s, 10_000, False, 0, False
            )
            engine = vecenv_positions(ours, lines)
            mcts = MCTS(engine, s)
            batch = engine.get_state()
            one = MCTS(engine, s, max_trees=1)
            seed = [0]

            def openspiel(bot=bot, starts=starts):
                for state in starts:
                    bot.step(state)

            def vecenv_each(one=one, batch=batch, seed=seed):
                seed[0] += 1
                for i in range(len(batch)):
                    one.search(batch[i : i + 1], seed=seed[0])

            def vecenv_all(mcts=mcts, batch=batch, seed=seed):
                seed[0] += 1
                mcts.search(batch, seed=seed[0])

            start = time.perf_counter()
            vecenv_all()
            first = time.perf_counter() - start
            best = best_of(
                settings["rounds"],
                {
                    "openspiel": openspiel,
                    "vecenv N=1": vecenv_each,
                    f"vecenv N={count}": vecenv_all,
                },
            )
            rate = {k: count * s / v for k, v in best.items()}
            row = {
                "game": ours,
                "openspiel_game": theirs,
                "positions": count,
                "simulations": s,
                "threads": 1 if held else "unpinned",
                "sims_per_second": rate,
                "vecenv_first_call_seconds": first,
                "ratio_one_at_a_time": rate["vecenv N=1"] / rate["openspiel"],
                "ratio_batched": rate[f"vecenv N={count}"] / rate["openspiel"],
            }
            rows.append(row)
            print(
                f"spiel {ours:9s} S={s} x {count} positions: OpenSpiel {rate['openspiel']:,.0f} "
                f"sims/s, vecenv N=1 {rate['vecenv N=1']:,.0f} ({row['ratio_one_at_a_time']:.1f}x)"
                f", N={count} {rate[f'vecenv N={count}']:,.0f} ({row['ratio_batched']:.1f}x)"
            )
    out["openspiel"] = {"version": "open_spiel 2.0.1", "target": 5.0, "rows": rows}


# -- the report ------------------------------------------------------------------------------------


def markdown(report):
    lines = [
        f"Measured {report['date']} on {report['machine']['cores']} CPUs "
        f"({report['machine']['platform']}), load average {report['load_before']} before and "
        f"{report['load_after']} after; `{report['command']}`.",
        "",
    ]
    m = report.get("mctx", {})
    if "rows" in m:
        lines += [
            "| game | N | S | threads | vecenv sims/s | mctx + Pgx sims/s | vecenv / mctx |"
            " first call vecenv / mctx |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in m["rows"]:
            f = r["first_call_seconds"]
            lines.append(
                f"| {r['game']} | {r['n']} | {r['simulations']} | {r['threads']} (jax: "
                f"{r['jax_threads']}) | {r['sims_per_second']['vecenv']:,.0f} | "
                f"{r['sims_per_second']['mctx']:,.0f} | {r['ratio']:.1f}x | "
                f"{f['vecenv']:.2f} s / {f['mctx']:.2f} s |"
            )
        lines.append("")
    elif m:
        lines += [f"mctx: {m['skipped']}", ""]
    o = report.get("openspiel", {})
    if "rows" in o:
        lines += [
            "| game | S | positions | OpenSpiel MCTSBot sims/s | vecenv N=1 sims/s | vecenv "
            "batched sims/s | N=1 / OpenSpiel | batched / OpenSpiel |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in o["rows"]:
            rate = r["sims_per_second"]
            batched = rate[f"vecenv N={r['positions']}"]
            lines.append(
                f"| {r['game']} | {r['simulations']} | {r['positions']} | {rate['openspiel']:,.0f}"
                f" | {rate['vecenv N=1']:,.0f} | {batched:,.0f} | "
                f"{r['ratio_one_at_a_time']:.1f}x | {r['ratio_batched']:.1f}x |"
            )
    elif o:
        lines.append(f"OpenSpiel: {o['skipped']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny settings, one round")
    parser.add_argument("--out", default=None, help="a folder for search.json and search.md")
    parser.add_argument("--sides", default="mctx,openspiel", help="comparisons to run")
    parser.add_argument(
        "--games", default="tictactoe,connectx,othello", help="games to compare (vecenv's names)"
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    report = {
        "date": datetime.date.today().isoformat(),
        "quick": args.quick,
        "settings": settings,
        "machine": {"cores": os.cpu_count(), "platform": platform.platform()},
        "load_before": load_average(),
        "python": sys.version.split()[0],
        "command": " ".join(["python benchmarks/search_peers.py", *(argv or sys.argv[1:])]),
    }
    sides = args.sides.split(",")
    games = args.games.split(",")
    report["games"] = games
    if "mctx" in sides:
        compare_mctx(settings, report, games)
    if "openspiel" in sides:
        compare_openspiel(settings, report, games)
    return finish_run(report, markdown, args.out, "search")


if __name__ == "__main__":
    main()
