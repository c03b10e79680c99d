"""Pgx replaying games played by ours: every ply of many games in one compiled call.

Ours plays first (random legal moves, now and then an illegal one), recording at every ply what
it shows; Pgx then replays the same actions inside one ``jax.jit`` of a ``lax.scan`` over
``jax.vmap(env.step)`` (Pgx's own public ``init`` and ``step``: its legal mask, rules, rewards and
ends), and the two records are compared ply by ply. A game's test module says what to read off
Pgx's state (``shown``: a function of a batched state returning a tuple of arrays) and turns it
into its own terms.

XLA's most expensive optimisations can be off while the replay compiles and runs (``quick``: a
quicker compile and a slower run, integers coming out the same), as ``chess_pgx`` does: it pays
where compiling takes longer than running.

Pgx draws which player id moves first: ``first_players`` gives, per game, the player id of the
first mover, whose rewards are agent 0's.
"""

import contextlib

import numpy as np

from tests.envs.reference import need


def pgx():
    """(jax, pgx), or a skip (a failure in CI) where they are missing."""
    return need("jax", "jax (Pgx's)"), need("pgx", "Pgx")


@contextlib.contextmanager
def quick_compiles(jax):
    """XLA's most expensive optimisations off, for as long as the block runs."""
    flag = "jax_disable_most_optimizations"
    previous = jax.config.values[flag]
    jax.config.update(flag, True)
    try:
        yield
    finally:
        jax.config.update(flag, previous)


class Replay:
    """``run(actions)``: Pgx's games from ``init`` with keys ``0..width-1`` of ``seed`` through
    ``actions`` (plies, width), giving ``shown`` of the start and of every ply, stacked (plies +
    1, width, ...) as numpy arrays."""

    def __init__(self, env_id, shown, width, seed=0, quick=True):
        jax, _ = pgx()
        self.quick = quick
        with self._compiling(jax):
            self._build(env_id, shown, width, seed)

    def _compiling(self, jax):
        return quick_compiles(jax) if self.quick else contextlib.nullcontext()

    def _build(self, env_id, shown, width, seed):
        jax, pgx_module = pgx()
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        env = pgx_module.make(env_id)
        self.env = env
        self.keys = jax.random.split(jax.random.key(seed), width)

        def replay(keys, actions):
            state = jax.vmap(env.init)(keys)
            step = jax.vmap(env.step)

            def body(state, action):
                state = step(state, action)
                return state, shown(state)

            _, plies = jax.lax.scan(body, state, actions)
            return shown(state), plies

        self._replay = jax.jit(replay)
        self.first_players = np.asarray(jax.jit(jax.vmap(env.init))(self.keys).current_player)

    def run(self, actions):
        with self._compiling(self.jax):
            first, plies = self._replay(self.keys, self.jnp.asarray(actions, dtype=np.int32))
        return tuple(
            np.concatenate([np.asarray(a)[None], np.asarray(b)])
            for a, b in zip(first, plies, strict=True)
        )


def play_ours(engine, plies, rng, illegal=None, keep=None, scripts=None, restrict=None):
    """Random games in ``engine`` (autoreset disabled, just reset) until all end, within
    ``plies``: game i plays the actions of ``scripts[i]`` first (a dict; each must be legal),
    then a uniformly chosen legal action (among those ``restrict(legal)`` leaves in a copy of
    the legal masks, where given), or with probability ``illegal[i]`` any action.
    ``keep(t)`` is called at the start and after each ply. Returns the actions (plies, N) int32
    (0 once a game is over) and the ply each game ended."""
    n = engine.num_envs
    actions = np.zeros((plies, n), dtype=np.int32)
    chance = np.zeros(n) if illegal is None else np.asarray(illegal, dtype=float)
    size = engine.obs["legal"].shape[1]
    ended = np.full(n, -1)
    if keep is not None:
        keep(0)
    for t in range(plies):
        if engine.terminated.all():
            break
        legal = engine.obs["legal"]
        if restrict is not None:
            legal = legal.copy()
            restrict(legal)
        noise = rng.random((n, size))
        chosen = np.argmax(np.where(legal, noise, -1.0), axis=1)
        wild = rng.random(n) < chance
        chosen[wild] = rng.integers(0, size, size=int(wild.sum()))
        for i, script in (scripts or {}).items():
            if t < len(script) and not engine.terminated[i]:
                assert legal[i, script[t]], f"game {i}, ply {t}: {script[t]} is not legal"
                chosen[i] = script[t]
        chosen[engine.terminated] = 0
        actions[t] = chosen
        turn = (engine.states["status"][:, 1] == 1).astype(np.int64)  # ACTIVE: agent 1 moves
        both = np.zeros((n, 2), dtype=np.int64)
        both[np.arange(n), turn] = chosen
        running = ~engine.terminated
        engine.step(both)
        ended[running & engine.terminated] = t + 1
        if keep is not None:
            keep(t + 1)
    assert engine.terminated.all(), "a game outlasted the replay"
    return actions, ended
