"""A game of several agents as a one-agent engine: the agent being trained against fixed
opponents.

``OpponentEngine`` has the engine's interface with one agent, so the Gymnasium faces take it as
they take any engine. The trained agent sits in ``seat``; the opponent (a built-in agent of the
game, or a batched Python policy, seated by ``vecenv.seats``) plays every other seat inside
``step``, as Kaggle's ``train([None, opponent])`` does: after the agent's move, the opponents move
until it is the agent's turn again or the game is over; in a simultaneous game all move in the
same step.
The agent's reward is the sum of its rewards over those moves. A move the game refuses (a full
column) ends the game as Kaggle rules it: the agent INVALID, with reward -1.
"""

import numpy as np

from vecenv.kernels.state import TERMINATED
from vecenv.kernels.turns import ACTIVE

from .engine import Engine
from .inputs import action_array, autoreset_mode, fresh_seed
from .seats import Seats
from .spec import is_integer

# Opponent replies in one step, at most: a game where the opponent keeps the move longer is
# refused rather than looped on.
MAX_REPLIES = 64


class OpponentEngine:
    """N episodes of a game of several agents seen by the agent in ``seat``."""

    num_agents = 1

    def __init__(
        self,
        game,
        num_envs=1,
        seed=None,
        num_threads=1,
        autoreset="next_step",
        max_episode_steps=None,
        opponent="random",
        seat=0,
        **configuration,
    ):
        if max_episode_steps is not None and not (
            is_integer(max_episode_steps) and max_episode_steps >= 0
        ):
            raise ValueError("max_episode_steps must be a non-negative integer or None")
        seed = fresh_seed() if seed is None else seed
        # The game ends episodes by its own rules (episodeSteps included); the time limit given
        # here counts the agent's steps.
        self.inner = Engine(
            game,
            num_envs=num_envs,
            seed=seed,
            num_threads=num_threads,
            autoreset="disabled",
            max_episode_steps=0,
            **configuration,
        )
        inner = self.inner
        agents = inner.num_agents
        if agents < 2:
            raise ValueError(f"{inner.name} is a one-agent game: it takes no opponent")
        if not is_integer(seat) or not 0 <= seat < agents:
            raise ValueError(f"seat must be an integer in [0, {agents - 1}], got {seat!r}")
        self.name, self.spec, self.config = inner.name, inner.spec, inner.config
        self.num_envs, self.num_threads = inner.num_envs, inner.num_threads
        self.observation, self.action = inner.observation, inner.action
        self.autoreset = autoreset_mode(autoreset)
        self.max_episode_steps = max_episode_steps or None
        self.seat = int(seat)
        self.others = [k for k in range(agents) if k != self.seat]  # the opponent's seats
        self.other = self.others[0]
        self.opponent = opponent
        n = self.num_envs
        self.seats = Seats(inner)
        for other in self.others:
            self.seats.assign(opponent, np.full(n, other))
        self._all = np.ones(n, dtype=np.bool_)
        self.obs = {f.name: np.zeros(self._shape(f), dtype=f.dtype) for f in self.observation}
        self.final_obs = (
            {k: np.zeros_like(v) for k, v in self.obs.items()}
            if self.autoreset == "same_step"
            else None
        )
        self._rewards = np.zeros((n, 1), dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._finished = np.zeros(n, dtype=np.bool_)  # ended at an earlier call
        self._steps = np.zeros(n, dtype=np.int64)
        self._actions = np.zeros((n, agents), dtype=np.int64)
        self.reset()

    def _shape(self, field):
        head = (self.num_envs,) if field.shared else (self.num_envs, 1)
        return head + field.shape

    # -- the engine's interface ----------------------------------------------------------------

    @property
    def rewards(self):
        return self._rewards

    @property
    def terminated(self):
        return self._terminated

    @property
    def truncated(self):
        return self._truncated

    def reset(self, seed=None, mask=None, position=None):
        """As the engine's; a ``position`` is the game's, and where an opponent is to move in it,
        the opponents move before the agent's first observation."""
        mask = self._all if mask is None else np.asarray(mask, dtype=np.bool_)
        self.inner.reset(seed=seed, mask=mask, position=position)
        if seed is not None:
            self.seats.reseed(mask)
        self._begin(mask, redeal=position is None)
        self._rewards[mask] = 0.0
        self._terminated[mask] = False
        self._truncated[mask] = False
        self._copy_obs(self.obs)
        return self.obs

    def step(self, actions):
        a = action_array(self.name, actions)
        if a.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise ValueError(
                f"actions must have shape ({self.num_envs},) or ({self.num_envs}, 1), got {a.shape}"
            )
        if a.dtype.kind not in "iu":
            raise ValueError(f"{self.name} actions must be integers, got {a.dtype}")
        a = a.reshape(self.num_envs)
        low, high = int(self.action.low[0]), int(self.action.high[0])
        bad = np.flatnonzero((a < low) | (a > high))
        if bad.size:
            raise ValueError(f"action of env {bad[0]} is out of range [{low}, {high}]: {a[bad[0]]}")
        return self._step(a)

    def step_flat(self, flat):
        return self.step(flat.reshape(self.num_envs))

    def _step(self, a):
        live = ~self._finished
        acts = self._actions
        self.seats.moves(acts)  # the opponent's move where it moves at the same time
        acts[:, self.seat] = a
        self.inner.step_only(acts, live)
        self._rewards[:, 0] = self.inner.rewards[:, self.seat]
        self._replies(live)
        done_bits = self.inner.states["done"]
        term = live & ((done_bits & TERMINATED) != 0)
        self._steps[live] += 1
        limit = self.max_episode_steps
        trunc = live & ~term & (self._steps >= limit) if limit else np.zeros_like(term)
        self._terminated[:] = term
        self._truncated[:] = trunc
        ended = term | trunc
        restart = self._finished.copy() if self.autoreset == "next_step" else None
        if self.autoreset == "same_step" and ended.any():
            self._copy_obs(self.final_obs)
            self._restart(ended)
        else:
            self._finished |= ended
        if restart is not None and restart.any():
            self._restart(restart)
            self._rewards[restart] = 0.0
            self._terminated[restart] = False
            self._truncated[restart] = False
        self._copy_obs(self.obs)
        return self.obs, self._rewards, self._terminated, self._truncated

    # -- the opponent --------------------------------------------------------------------------

    def _opponent_to_move(self, among):
        status = self.inner.states["status"]
        running = self.inner.states["done"] == 0
        theirs = (status[:, self.others] == ACTIVE).any(axis=1)
        return among & running & theirs & (status[:, self.seat] != ACTIVE)

    def _replies(self, among):
        """The opponents move until the agent is to move or the game is over."""
        for _ in range(MAX_REPLIES):
            rows = self._opponent_to_move(among)
            if not rows.any():
                return
            self.seats.moves(self._actions)
            self.inner.step_only(self._actions, rows)
            self._rewards[rows, 0] += self.inner.rewards[rows, self.seat]
        raise RuntimeError(f"the opponent kept the move for {MAX_REPLIES} steps")

    def _begin(self, mask, redeal=True):
        """New matches where ``mask``: the opponents' opening moves, where they move first. A
        game they end before the agent's first move (a game of three agents: one opponent
        wins on another's discard) holds no decision of the agent's: it starts again (a new
        deal from the episode's stream; not from a given position), its rewards uncounted."""
        kept = self._rewards[:, 0].copy()
        for _ in range(MAX_REPLIES):
            self.seats.new_matches(mask)
            self._finished[mask] = False
            self._steps[mask] = 0
            self._replies(mask)
            over = mask & (self.inner.states["done"] != 0)
            if not redeal or not over.any():
                break
            self.inner.reset(mask=over)
            mask = over
        else:
            raise RuntimeError(
                f"the opponents ended {MAX_REPLIES} games in a row before the agent's first move"
            )
        self._rewards[:, 0] = kept

    def _restart(self, mask):
        self.inner.reset(mask=mask)
        self._begin(mask)

    def _copy_obs(self, out):
        for f in self.observation:
            src = self.inner.obs[f.name]
            if f.shared:
                out[f.name][...] = src
            else:
                out[f.name][:, 0] = src[:, self.seat]

    # -- state and views -----------------------------------------------------------------------

    def get_state(self, idx=None):
        return self.inner.get_state(idx)

    def set_state(self, state, idx=None):
        self.inner.set_state(state, idx)
        self._copy_obs(self.obs)

    @property
    def states(self):
        return self.inner.states

    def render(self, index=0, mode="rgb_array"):
        return self.inner.render(index, mode)

    def __repr__(self):
        return (
            f"OpponentEngine({self.name!r}, num_envs={self.num_envs}, seat={self.seat}, "
            f"opponent={self.opponent!r}, autoreset={self.autoreset!r})"
        )


def engine_for(game, opponent=None, seat=0, **kwargs):
    """The engine a single-agent face runs: the game's own for a one-agent game; for a game of
    several agents an ``OpponentEngine`` (``opponent`` defaults to the game's first built-in
    agent)."""
    from vecenv import registry

    if registry.get_spec(game).num_agents == 1:
        if opponent is not None or seat != 0:
            raise ValueError(f"{game} is a one-agent game: it takes no opponent or seat")
        return Engine(game, **kwargs)
    if opponent is None:
        module = registry.game_module(game, "agents")
        opponent = module.NAMES[0]
    return OpponentEngine(game, opponent=opponent, seat=seat, **kwargs)
