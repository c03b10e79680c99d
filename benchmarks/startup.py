"""Seconds to a first step: every game cold and warm, beside gymnax's and Pgx's first jitted step.

A new process does what a user's first script does, timed from its first line: ``import
vecenv``, ``vecenv.make(game, num_envs=64)`` (which resets), one step of valid actions.

- **cold**: an empty cache (a fresh ``VECENV_CACHE_DIR``): everything the step needs compiles;
- **warm**: a second process on the same cache: everything loads;
- **import**: ``import vecenv`` alone (the median of ``--repeats`` processes).

The peers do the same in their own terms, N = 64 too: gymnax's CartPole-v1 (``jax.jit`` of the
vmapped reset and step), Pgx's connect_four, go_9x9 and chess (``jax.jit`` of the vmapped init
and step); cold with JAX's persistent compilation cache off, warm with it on and filled by the
cold run. A peer that is not installed is left out, saying so. The games run one after another
(each process alone on the machine: run it on a quiet one); ``--games`` picks some.

    python benchmarks/startup.py                          # every game and peer
    python benchmarks/startup.py --games cartpole chess --no-peers
    python benchmarks/startup.py --out docs/performance   # and write startup.json / startup.md
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from report import finish_run, load_average  # noqa: E402

N = 64

VECENV = """
import json, time
t0 = time.perf_counter()
import numpy as np
import vecenv
t1 = time.perf_counter()
engine = vecenv.make({game!r}, num_envs={n}, seed=0)
t2 = time.perf_counter()
action = engine.action
low = np.asarray(action.low, dtype=np.float64).reshape(action.shape)
shape = (engine.num_envs, engine.num_agents) + tuple(action.shape)
actions = np.broadcast_to(low, shape).astype(action.kernel_dtype)
engine.step(actions[:, 0] if engine.num_agents == 1 else actions)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "make": t2 - t1, "step": t3 - t2, "total": t3 - t0}}))
"""

IMPORT = """
import json, time
t0 = time.perf_counter()
import vecenv
print(json.dumps({"import": time.perf_counter() - t0}))
"""

GYMNAX = """
import json, time
t0 = time.perf_counter()
import jax, gymnax
t1 = time.perf_counter()
env, params = gymnax.make("CartPole-v1")
keys = jax.random.split(jax.random.PRNGKey(0), {n})
reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
obs, state = reset(keys, params)
t2 = time.perf_counter()
out = step(keys, state, jax.numpy.zeros({n}, dtype=jax.numpy.int32), params)
jax.block_until_ready(out)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "make": t2 - t1, "step": t3 - t2, "total": t3 - t0}}))
"""

PGX = """
import json, time
t0 = time.perf_counter()
import jax, pgx
t1 = time.perf_counter()
env = pgx.make({game!r})
keys = jax.random.split(jax.random.PRNGKey(0), {n})
init = jax.jit(jax.vmap(env.init))
step = jax.jit(jax.vmap(env.step))
state = init(keys)
t2 = time.perf_counter()
action = jax.numpy.argmax(state.legal_action_mask, axis=-1)
state = step(state, action, keys)
jax.block_until_ready(state)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "make": t2 - t1, "step": t3 - t2, "total": t3 - t0}}))
"""

PEERS = (
    ("gymnax CartPole-v1", "gymnax", GYMNAX.format(n=N)),
    ("Pgx connect_four", "pgx", PGX.format(game="connect_four", n=N)),
    ("Pgx go_9x9", "pgx", PGX.format(game="go_9x9", n=N)),
    ("Pgx chess", "pgx", PGX.format(game="chess", n=N)),
)


def _process(code, env, python=None):
    """The figures a child process printed (of ``python``, default this one), with its wall
    time."""
    start = time.perf_counter()
    done = subprocess.run(
        [python or sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["wall"] = wall
    return figures


def _environment(**extra):
    env = dict(os.environ, PYTHONWARNINGS="ignore", **extra)
    env.pop("VECENV_TESTS_SCRATCH", None)
    return env


def game_startup(game):
    """Cold then warm figures of ``game``, each in a new process on one fresh cache."""
    with tempfile.TemporaryDirectory(prefix="vecenv-startup-") as root:
        env = _environment(VECENV_CACHE_DIR=os.path.join(root, "cache"))
        code = VECENV.format(game=game, n=N)
        return {"cold": _process(code, env), "warm": _process(code, env)}


def peer_startup(code, python=None):
    """Cold (JAX's persistent cache off) then warm (on, filled by a first run) figures."""
    with tempfile.TemporaryDirectory(prefix="vecenv-startup-jax-") as root:
        off = _environment(JAX_ENABLE_COMPILATION_CACHE="false", JAX_PLATFORMS="cpu")
        on = _environment(
            JAX_PLATFORMS="cpu",
            JAX_COMPILATION_CACHE_DIR=root,
            JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
            JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        )
        cold = _process(code, off, python)
        _process(code, on, python)  # fills the cache
        return {"cold": cold, "warm": _process(code, on, python)}


def import_time(repeats):
    times = [_process(IMPORT, _environment())["import"] for _ in range(repeats)]
    return statistics.median(times)


def _importable(module, python):
    done = subprocess.run([python or sys.executable, "-c", f"import {module}"], capture_output=True)
    return done.returncode == 0


def run(games, peers, repeats, out=sys.stdout, peer_python=None):
    import vecenv

    games = games or vecenv.list_envs()
    report = {
        "run": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "load_before": load_average(),
        "n": N,
        "import_vecenv": import_time(repeats),
        "games": {},
        "peers": {},
    }
    for game in games:
        report["games"][game] = game_startup(game)
        cold, warm = (report["games"][game][k]["total"] for k in ("cold", "warm"))
        print(f"{game}: cold {cold:.2f} s, warm {warm:.2f} s", file=out, flush=True)
    for label, module, code in PEERS if peers else ():
        if not _importable(module, peer_python):
            report["peers"][label] = {"missing": f"{module} does not import"}
            continue
        report["peers"][label] = peer_startup(code, peer_python)
        print(f"{label}: cold {report['peers'][label]['cold']['total']:.2f} s", file=out)
    return report


def markdown(report):
    lines = [
        f"Run of {report['run']} ({report['machine']}; load {report['load_before']} before, "
        f"{report.get('load_after', '?')} after), N = {report['n']}; seconds from a new "
        f"process's first line to its first step's return. `import vecenv` alone: "
        f"{report['import_vecenv']:.3f} s (median of its processes).",
        "",
        "| game | cold | of which make + step | warm | of which import |",
        "|---|---|---|---|---|",
    ]
    for game, f in report["games"].items():
        cold, warm = f["cold"], f["warm"]
        lines.append(
            f"| `{game}` | {cold['total']:.2f} | {cold['make'] + cold['step']:.2f} | "
            f"{warm['total']:.2f} | {warm['import']:.2f} |"
        )
    for label, f in report["peers"].items():
        if "missing" in f:
            lines.append(f"| {label} | not installed | | | |")
            continue
        cold, warm = f["cold"], f["warm"]
        lines.append(
            f"| {label} | {cold['total']:.2f} | {cold['make'] + cold['step']:.2f} | "
            f"{warm['total']:.2f} | {warm['import']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", help="games (default: every one)")
    parser.add_argument("--no-peers", action="store_true", help="leave gymnax and Pgx out")
    parser.add_argument("--repeats", type=int, default=5, help="processes timing the import")
    parser.add_argument("--out", help="a folder for startup.json and startup.md")
    parser.add_argument(
        "--peer-python",
        help="the Python that runs gymnax and Pgx (a virtualenv of their own: gymnax pins an "
        "older gymnasium than vecenv's tests use); default this one",
    )
    args = parser.parse_args(argv)
    report = run(args.games, not args.no_peers, args.repeats, peer_python=args.peer_python)
    return finish_run(report, markdown, args.out, "startup")


if __name__ == "__main__":
    main()
