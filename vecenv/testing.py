"""The contract every game meets, bundled or a user's: ``check_game(name)`` for a user's pytest,
``vecenv check NAME_OR_PATH`` on the command line, and the bundled games' own suite
(``tests/test_contract.py``) all run these checks.

Each check takes the game's name and raises ``CheckFailed`` (an AssertionError) saying what broke,
or returns a short note; ``run_checks`` runs them all and returns one ``Result`` per check. The
fuzzing checks need hypothesis (the ``game`` extra); without it they report that they were skipped.
"""

import contextlib
import os
import time
from dataclasses import dataclass

import numpy as np

import vecenv

from . import memory, protocol, registry
from .engine import PARALLEL_MIN_ENVS
from .kernels.precision import declared as precision_names

SPEED_SIZES = (1, 64, 4096)


class CheckFailed(AssertionError):
    """A game broke the contract: the message says which rule and where."""


class Skipped(Exception):
    """A check that does not apply to the game, or cannot run here (the reason)."""


@dataclass
class Result:
    check: str
    status: str  # "pass", "fail" or "skip"
    detail: str
    seconds: float


def _require(condition, message):
    if not condition:
        raise CheckFailed(message)


def random_actions(engine, rng, n=None):
    """Actions inside the action space for ``n`` episodes (default: all)."""
    spec = engine.action
    n = engine.num_envs if n is None else n
    head = (n,) if engine.num_agents == 1 else (n, engine.num_agents)
    if spec.discrete:
        return rng.integers(spec.low[0], spec.high[0] + 1, size=head, dtype=np.int64)
    low, high = spec.low.reshape(spec.shape), spec.high.reshape(spec.shape)
    return rng.uniform(low, high, size=head + spec.shape)


def _engine(game, n, **kwargs):
    kwargs.setdefault("max_episode_steps", 50)
    return vecenv.make(game, num_envs=n, seed=kwargs.pop("seed", 0), **kwargs)


def _inside_spaces(engine):
    for f in engine.observation:
        arr = engine.obs[f.name]
        _require(arr.dtype == f.dtype, f"observation {f.name!r} has dtype {arr.dtype}")
        if arr.dtype.kind == "f":
            _require(not np.isnan(arr).any(), f"observation {f.name!r} holds NaN")
        below, above = arr < f.low, arr > f.high
        if below.any() or above.any():
            index = tuple(int(i) for i in np.argwhere(below | above)[0])
            raise CheckFailed(
                f"observation {f.name!r}{list(index)} = {arr[index]} is outside its space "
                f"[{f.low.min()}, {f.high.max()}]"
            )


# ---- the checks --------------------------------------------------------------------------------


def check_spec(game):
    """The specification parses, one episode's observation fits in the memory budget (checked
    from the shapes, before anything of that size is made), and the rules define what the
    protocol asks."""
    spec = registry.get_spec(game)
    _require(spec.num_agents >= 1, "agents must be a positive count")
    need = memory.observation_bytes(spec.observation, spec.num_agents)
    limit = memory.budget()
    _require(
        need <= limit,
        f"one episode's observation takes {memory.show(need)}, over the memory budget of "
        f"{memory.show(limit)} ({memory.ENV_VAR} raises it): no episode could be made",
    )
    registry.rules(game)
    for f in spec.observation:
        _require(_at_most(f.low, f.high), f"observation {f.name!r} has low > high")
    return f"{spec.num_agents} agent(s), {len(spec.observation)} observation field(s)"


def _at_most(low, high):
    """``(low <= high).all()``, a bound given once for every cell (a broadcast) compared once."""

    def one(a):
        return a.ravel()[:1] if a.size and all(k == 0 for k in a.strides) else a

    return bool(np.all(one(low) <= one(high))) if low.size else True


def check_batch(game, precision="float64"):
    """reset, step and observe over a batch: shapes, dtypes, observations inside their spaces,
    states the rules accept, rewards finite, the time limit honoured."""
    n = 7
    engine = _engine(game, n, max_episode_steps=30, precision=precision)
    rng = np.random.default_rng(0)
    _inside_spaces(engine)
    ended = 0
    for _ in range(60):
        obs, rewards, terminated, truncated = engine.step(random_actions(engine, rng))
        _require(rewards.shape == (n, engine.num_agents), f"rewards have shape {rewards.shape}")
        _require(np.isfinite(rewards).all(), "a reward is not finite")
        _require(terminated.shape == truncated.shape == (n,), "flags must have shape (N,)")
        _inside_spaces(engine)
        engine.check_state(engine.get_state())
        _require((engine.states["step"] <= 30).all(), "an episode ran past its time limit")
        ended += int((terminated | truncated).sum())
    return f"{60 * n} steps, {ended} episodes ended"


def check_threads(game):
    """One and two threads give bit-identical episodes."""
    n = PARALLEL_MIN_ENVS + 3
    one, two = (
        _engine(game, n, seed=5, num_threads=t, max_episode_steps=30, parallel=t > 1)
        for t in (1, 2)
    )
    rng = np.random.default_rng(3)
    for k in range(30):
        actions = random_actions(one, rng)
        one.step(actions)
        two.step(actions)
        for name in one.obs:
            _require(np.array_equal(one.obs[name], two.obs[name]), f"{name} differs at step {k}")
        _require(np.array_equal(one.rewards, two.rewards), f"rewards differ at step {k}")
        _require(np.array_equal(one.get_state(), two.get_state()), f"states differ at step {k}")
    return f"N={n}, 30 steps"


def check_batch_sizes(game, precision="float64"):
    """Episode i is the same in a batch of any size (it depends on the seed, i and its
    actions)."""
    traces = {}
    for n in (40, 7, 1):
        engine = _engine(game, n, seed=123, precision=precision)
        rng = np.random.default_rng(7)
        trace = []
        for _ in range(60):
            engine.step(random_actions(engine, rng, 40)[:n])
            trace.append((engine.get_state(), engine.rewards.copy()))
        traces[n] = trace
    for n in (7, 1):
        for k, (big, small) in enumerate(zip(traces[40], traces[n], strict=True)):
            for x, y in zip(big, small, strict=True):
                _require(np.array_equal(x[:n], y), f"batch of {n} differs from 40 at step {k}")
    return "batch sizes 1, 7 and 40"


def check_state_round_trip(game, precision="float64"):
    """get_state, then set_state of it, gives back the same episodes, streams included."""
    engine = _engine(game, 5, seed=2, precision=precision)
    rng = np.random.default_rng(1)
    for _ in range(5):
        engine.step(random_actions(engine, rng))
    saved = engine.get_state()
    actions = [random_actions(engine, rng) for _ in range(8)]
    first = []
    for a in actions:
        engine.step(a)
        first.append(engine.get_state())
    engine.set_state(saved)
    _require(np.array_equal(engine.get_state(), saved), "set_state did not restore the state")
    for k, a in enumerate(actions):
        engine.step(a)
        _require(np.array_equal(engine.get_state(), first[k]), f"replay differs at step {k}")
    return "8 steps replayed"


def _hypothesis():
    try:
        import hypothesis
        from hypothesis import strategies
        from hypothesis.extra import numpy as hnp
    except ImportError:
        from . import extras

        raise Skipped(f"hypothesis is not installed: {extras.install_hint('game')}") from None
    return hypothesis, strategies, hnp


def check_fuzz_actions(game, examples=60):
    """Any array as actions is stepped or refused with ValueError, a refusal changing nothing."""
    hypothesis, st, hnp = _hypothesis()
    n = 4
    engine = _engine(game, n)
    dtypes = st.sampled_from(
        [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64, np.bool_]
    )
    shapes = st.sampled_from([(n,), (n, 1), (n, 1, 1), (n - 1,), (n, 2), (), (1,)])

    @hypothesis.settings(max_examples=examples, deadline=None, database=None)
    @hypothesis.given(data=st.data())
    def fuzz(data):
        shape = data.draw(shapes)
        if engine.action.shape and shape in ((n,), (n, engine.num_agents)):
            shape = shape + engine.action.shape if data.draw(st.booleans()) else shape
        actions = data.draw(hnp.arrays(data.draw(dtypes), shape))
        before = engine.get_state()
        try:
            engine.step(actions)
        except ValueError:
            if not np.array_equal(engine.get_state(), before):
                raise CheckFailed(f"a refused action changed the state: {actions!r}") from None
            return
        after = engine.states["step"]
        if not ((after == before["step"] + 1) | (after == 0)).all():
            raise CheckFailed(f"an accepted action did not step every episode: {actions!r}")

    fuzz()
    return f"{examples} action arrays"


def check_fuzz_states(game, examples=60, precision="float64"):
    """Any record is refused by set_state with ValueError (changing nothing) or is one the rules
    step without a crash."""
    hypothesis, st, _ = _hypothesis()
    n = 4
    engine = _engine(game, n, precision=precision)
    values = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(-10, 10),
        st.integers(-(2**63), 2**63 - 1),
    )
    rng = np.random.default_rng(0)

    @hypothesis.settings(max_examples=examples, deadline=None, database=None)
    @hypothesis.given(data=st.data())
    def fuzz(data):
        state = engine.get_state()
        for name in state.dtype.names:
            column = state[name]
            for i in range(n):
                if data.draw(st.booleans()):
                    with contextlib.suppress(OverflowError, ValueError, TypeError):
                        column[i] = data.draw(values)
        before = engine.get_state()
        try:
            engine.set_state(state)
        except ValueError:
            if not np.array_equal(engine.get_state(), before):
                raise CheckFailed("a refused state changed the engine") from None
            return
        for _ in range(3):  # no crash (floats may overflow: the rules' arithmetic, not a fault)
            engine.step(random_actions(engine, rng))
        engine.reset(seed=0)

    fuzz()
    return f"{examples} state records"


def check_float32(game):
    """A game that declares ``PRECISION`` meets the contract in float32 too (its batch, batch
    sizes, state round trip and fuzzed states), its declared fields float32."""
    rules = registry.rules(game)
    declared = precision_names(rules)
    if not declared:
        raise Skipped("the game declares no PRECISION: its rules run as written in any precision")
    engine = _engine(game, 1, precision="float32")
    for name in engine.state_dtype.names:
        if name in declared:
            dtype = engine.state_dtype[name].base
            _require(dtype == np.float32, f"declared field {name!r} is {dtype} in float32")
    notes = [
        check_batch(game, precision="float32"),
        check_batch_sizes(game, precision="float32"),
        check_state_round_trip(game, precision="float32"),
    ]
    with contextlib.suppress(Skipped):  # (without hypothesis)
        notes.append(check_fuzz_states(game, examples=20, precision="float32"))
    return "; ".join(notes)


def check_gymnasium(game):
    """gymnasium's own env checker passes on the game's Env (games of several agents: against
    their first built-in agent in every other seat)."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from .gym.env import GameEnv

    spec = registry.get_spec(game)
    if spec.num_agents >= 2 and registry.game_module(game, "agents") is None:
        raise Skipped("a game of several agents without built-in agents has no one-agent Env")
    check_env(GameEnv(game=game), skip_render_check=True)
    envs = gymnasium.make_vec(f"vecenv/{spec.gym['id']}", num_envs=3) if "id" in spec.gym else None
    if envs is not None:
        obs, _ = envs.reset(seed=0)
        _require(envs.observation_space.contains(obs), "make_vec's first observation is outside")
    return "gymnasium's check_env" + (" and make_vec" if envs is not None else "")


def check_kaggle(game):
    """A Kaggle game runs through the Kaggle face to Kaggle's end: every agent DONE or failed,
    rewards numbers or None, and a move off the board makes its agent INVALID."""
    spec = registry.get_spec(game)
    if spec.kaggle is None:
        raise Skipped("not a Kaggle game (its spec has no kaggle section)")
    from . import kaggle

    env = kaggle.make(game, configuration={"episodeSteps": 40})
    agents = list(kaggle.builtin_callables(game)) or [None]
    names = [agents[0]] * spec.num_agents
    if names[0] is None:
        raise Skipped("no built-in agents to play with")
    steps = env.run(names)
    final = steps[-1]
    _require(env.done, "run returned before the game was done")
    for k, state in enumerate(final):
        _require(
            state.status in ("DONE", "ERROR", "INVALID", "TIMEOUT"), f"agent {k} is {state.status}"
        )
    env.reset()
    mover = next(k for k, s in enumerate(env.state) if s.status == "ACTIVE")
    actions = [None] * spec.num_agents
    actions[mover] = int(spec.action.high[0]) + 1
    env.step(actions)
    _require(env.state[mover].status == "INVALID", "a move off the board was not INVALID")
    _require(env.state[mover].reward is None, "an INVALID agent's reward is not None")
    return f"{len(steps)} steps with {names[0]}"


def check_render(game):
    """Each renderer the game has returns its kind of frame: an (H, W, 3) uint8 array, text."""
    renderer = registry.game_module(game, "render")
    if renderer is None:
        raise Skipped("the game has no render.py")
    engine = _engine(game, 2)
    engine.step(random_actions(engine, np.random.default_rng(0)))
    done = []
    if hasattr(renderer, "rgb_array"):
        frame = engine.render(1, mode="rgb_array")
        _require(
            isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3,
            f"rgb_array returned {type(frame).__name__} {getattr(frame, 'shape', '')}",
        )
        _require(frame.shape[2] == 3, f"rgb_array frame has shape {frame.shape}")
        done.append(f"rgb_array {frame.shape[1]}x{frame.shape[0]}")
    if hasattr(renderer, "ansi"):
        text = engine.render(1, mode="ansi")
        _require(isinstance(text, str) and text, "ansi returned no text")
        done.append("ansi")
    if not done:
        raise Skipped("render.py has neither rgb_array nor ansi")
    return ", ".join(done)


def legal_actions(engine, rng):
    """Actions for every episode and agent, each drawn among the agent's legal moves where the
    game has a ``legal`` field (a shared one is the mover's), else anywhere in the space."""
    actions = random_actions(engine, rng)
    field = next((f for f in engine.observation if f.name == "legal"), None)
    if field is None or not engine.action.discrete:
        return actions
    legal = engine.obs["legal"]
    low = int(engine.action.low[0])
    rows = actions.reshape(engine.num_envs, engine.num_agents)  # a view: one agent's (N,) too
    for i in range(engine.num_envs):
        for k in range(engine.num_agents):
            mask = legal[i] if field.shared or engine.num_agents == 1 else legal[i, k]
            moves = np.flatnonzero(mask)
            if moves.size:
                rows[i, k] = low + moves[rng.integers(moves.size)]
    return actions


def _act_all(module, kind, obs, engine, seat, words):
    """Built-in agent ``kind``'s move for ``seat`` in every episode where that seat is to move
    (-2 elsewhere), on observation arrays ``obs``, each from a copy of its stream word."""
    from .kernels.agents import AGENT_RNG, memory_words
    from .kernels.turns import ACTIVE

    memory = np.zeros(memory_words(module, engine.config), dtype=np.int64)
    moves = np.full(engine.num_envs, -2, dtype=np.int64)
    status = engine.states["status"]
    step = engine.states["step"]
    for i in np.flatnonzero(status[:, seat] == ACTIVE):
        r = np.zeros(1, dtype=AGENT_RNG)
        r["rng"] = words[i]
        memory[:] = 0
        moves[i] = module.act(kind, obs, i, seat, int(step[i]), engine._cfg[0], memory, r[0])
    return moves


def check_hidden_information(game, steps=8, n=16):
    """A game that declares hidden information (its rules' ``redraw_hidden``): drawing again what
    agent k cannot see gives records ``set_state`` accepts, changes some of them, and leaves
    agent k's observation byte for byte as it was (its row of every per-agent field, every shared
    field), and so the moves its built-in agents make for it, over random legal play."""
    redraw = getattr(registry.rules(game), protocol.HIDDEN_INFORMATION, None)
    if redraw is None:
        raise Skipped("the game declares no hidden information (no redraw_hidden)")
    engine = _engine(game, n, seed=11)
    twin = _engine(game, n, seed=11)
    agents = registry.game_module(game, "agents")
    rng = np.random.default_rng(5)
    changed = 0
    for ply in range(steps):
        records = engine.get_state()
        words = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        for k in range(engine.num_agents):
            other = records.copy()
            redraw(other, engine.config, k, rng)
            try:
                twin.check_state(other)
            except ValueError as exc:
                raise CheckFailed(f"ply {ply}: redraw_hidden for agent {k} gave {exc}") from None
            changed += int((other != records).sum())
            views = []
            for state in (records, other):
                twin.set_state(state)
                obs = tuple(a.copy() for a in twin._obs)
                moves = []
                if agents is not None:
                    moves = [
                        _act_all(agents, kind, obs, twin, k, words)
                        for kind in range(len(agents.NAMES))
                    ]
                views.append((obs, moves))
            (seen, moves), (seen_again, moves_again) = views
            for f, a, b in zip(engine.observation, seen, seen_again, strict=True):
                mine = (a, b) if f.shared else (a[:, k], b[:, k])
                if mine[0].tobytes() != mine[1].tobytes():
                    where = "shared" if f.shared else f"agent {k}'s"
                    raise CheckFailed(
                        f"ply {ply}: {where} observation {f.name!r} changed with what agent "
                        f"{k} cannot see (redraw_hidden)"
                    )
            for kind, (a, b) in enumerate(zip(moves, moves_again, strict=True)):
                if not np.array_equal(a, b):
                    raise CheckFailed(
                        f"ply {ply}: built-in agent {agents.NAMES[kind]!r} moved otherwise for "
                        f"agent {k} with what it cannot see changed: it reads another's view"
                    )
        engine.step(legal_actions(engine, rng))
    _require(changed > 0, "redraw_hidden never changed a record: it hides nothing")
    return f"{steps} plies of {n} episodes, each agent's view redrawn"


def check_chance(game, steps=20, n=16):
    """A game's ``step`` draws from the episode's stream only where the game declares it (its
    rules' ``CHANCE``): a search then gives every record it steps a stream of its own; undeclared,
    it would read what the episode will draw."""
    declared = registry.chance(game)
    engine = _engine(game, n, seed=4)
    rng = np.random.default_rng(4)
    drew = 0
    for _ in range(steps):
        before, started = engine.states["rng"].copy(), engine.states["step"].copy()
        engine.step(legal_actions(engine, rng))
        moved = engine.states["step"] == started + 1  # a step of play, not a reset
        drew += int(((engine.states["rng"] != before) & moved).sum())
    if drew and not declared:
        raise CheckFailed(
            f"step drew from the episode's stream in {drew} of {steps * n} steps: declare "
            "CHANCE = True in the rules (a search would read what the episode will draw)"
        )
    if declared:
        return f"declares CHANCE; step drew in {drew} of {steps * n} steps"
    return f"step draws nothing in {steps * n} steps"


def steps_per_second(game, sizes=SPEED_SIZES, seconds=0.2, num_threads=1):
    """Env-steps per second at each batch size (random actions drawn in advance)."""
    rates = {}
    for n in sizes:
        engine = _engine(game, n, num_threads=num_threads, max_episode_steps=None)
        rng = np.random.default_rng(0)
        actions = [random_actions(engine, rng) for _ in range(8)]
        engine.step(actions[0])  # compile or load, outside the timing
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            engine.step(actions[calls % 8])
            calls += 1
        rates[n] = calls * n / (time.perf_counter() - start)
    return rates


def check_speed(game):
    """Env-steps per second at N = 1, 64, 4096 on one thread (reported, never failed)."""
    rates = steps_per_second(game)
    return ", ".join(f"N={n}: {rate / 1e6:.2f} M/s" for n, rate in rates.items())


CHECKS = {
    "spec": check_spec,
    "batch": check_batch,
    "threads": check_threads,
    "batch sizes": check_batch_sizes,
    "state round trip": check_state_round_trip,
    "fuzz actions": check_fuzz_actions,
    "fuzz states": check_fuzz_states,
    "float32": check_float32,
    "gymnasium": check_gymnasium,
    "kaggle": check_kaggle,
    "render": check_render,
    "hidden information": check_hidden_information,
    "chance": check_chance,
    "speed": check_speed,
}


def is_folder(game):
    """Whether ``game`` names a game folder by its path rather than a game by its name: a path
    (it holds a separator), or the name of a folder here that no known game has."""
    if isinstance(game, os.PathLike) or (isinstance(game, str) and os.sep in game):
        return True
    if not isinstance(game, str) or not os.path.isdir(game):
        return False
    try:
        registry.resolve(game)
    except ValueError:
        return True
    return False


def named(game):
    """A game's name, registering it first where ``game`` is a folder (``is_folder``)."""
    if is_folder(game):
        return vecenv.register(game)
    return registry.resolve(game)


def run_checks(game, checks=None):
    """Every check (or those named) on ``game``: a ``Result`` each, in order."""
    game = named(game)
    results = []
    for name in checks or CHECKS:
        start = time.perf_counter()
        try:
            detail, status = CHECKS[name](game), "pass"
        except Skipped as exc:
            detail, status = str(exc), "skip"
        except Exception as exc:  # a failed check, or the game raising where it should not
            detail, status = f"{type(exc).__name__}: {exc}", "fail"
        results.append(Result(name, status, detail, time.perf_counter() - start))
    return results


def check_game(game, checks=None):
    """Run the contract on ``game`` (a name, or a folder to register first) in a user's test:
    raises ``CheckFailed`` listing every check that failed."""
    failed = [r for r in run_checks(game, checks) if r.status == "fail"]
    if failed:
        raise CheckFailed("\n".join(f"{r.check}: {r.detail}" for r in failed))


def table(game, results):
    """The results as the text table ``vecenv check`` prints."""
    rows = [("check", "result", "seconds", "detail")]
    rows += [(r.check, r.status.upper(), f"{r.seconds:.2f}", r.detail) for r in results]
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    lines = [f"{game}:"]
    for row in rows:
        detail = row[3].splitlines()[0] if row[3] else ""
        cells = (cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True))
        lines.append("  ".join(cells) + "  " + detail)
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "skip", "fail")}
    lines.append(
        f"{game}: {counts['pass']} of {len(results)} checks passed "
        f"({counts['skip']} skipped), {counts['fail']} failed"
    )
    return "\n".join(lines)
