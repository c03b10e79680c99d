"""A hand-written numba CartPole batch loop: the bar the engine is measured against.

Structure-of-arrays float64 state (one array per variable), same-step autoreset, actions read from a
pre-made integer array, observations written as float32 (N, 4), and the dynamics, termination and
500-step time limit of ``vecenv/envs/cartpole/rules.py`` (gymnasium's CartPoleEnv, explicit Euler).
It is compiled with error_model="numpy", as the engine's drivers are. It does no action validation,
keeps no per-episode record and has no protocol between driver and rules: everything the engine
adds on top of this is its overhead.

Two variants: ``step_serial`` (a plain loop) and ``step_prange`` (the same body under ``prange``).
"""

import functools
import math

import numba as nb
import numpy as np

GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
MAX_STEPS = 500

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_INV53 = 1.0 / 9007199254740992.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def _uniform(rng, i, low, high):
    """splitmix64 draw from episode ``i``'s word, as a float64 uniform on [low, high)."""
    z = rng[i] + _GOLDEN
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return low + (high - low) * (np.float64(z >> np.uint64(11)) * _INV53)


@nb.njit(cache=True, error_model="numpy")
def _reset_one(i, x, x_dot, theta, theta_dot, steps, rng):
    x[i] = _uniform(rng, i, -0.05, 0.05)
    x_dot[i] = _uniform(rng, i, -0.05, 0.05)
    theta[i] = _uniform(rng, i, -0.05, 0.05)
    theta_dot[i] = _uniform(rng, i, -0.05, 0.05)
    steps[i] = 0


# The step body is written out in both loops on purpose: moved into a helper taking the arrays
# (inlined or not), numba's serial loop runs about 3x slower.
@nb.njit(cache=True, error_model="numpy")
def step_serial(
    x, x_dot, theta, theta_dot, steps, rng, obs, rewards, terminated, truncated, actions
):
    for i in range(x.shape[0]):
        force = FORCE_MAG if actions[i] == 1 else -FORCE_MAG
        th = theta[i]
        th_dot = theta_dot[i]
        costheta = math.cos(th)
        sintheta = math.sin(th)
        temp = (force + POLEMASS_LENGTH * (th_dot * th_dot) * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS)
        )
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        nx = x[i] + TAU * x_dot[i]
        x[i] = nx
        x_dot[i] = x_dot[i] + TAU * xacc
        nth = th + TAU * th_dot
        theta[i] = nth
        theta_dot[i] = th_dot + TAU * thetaacc
        steps[i] += 1
        term = (
            nx < -X_THRESHOLD or nx > X_THRESHOLD or nth < -THETA_THRESHOLD or nth > THETA_THRESHOLD
        )
        trunc = steps[i] >= MAX_STEPS
        rewards[i] = 1.0
        terminated[i] = term
        truncated[i] = trunc
        if term or trunc:
            _reset_one(i, x, x_dot, theta, theta_dot, steps, rng)
        obs[i, 0] = x[i]
        obs[i, 1] = x_dot[i]
        obs[i, 2] = theta[i]
        obs[i, 3] = theta_dot[i]


@nb.njit(cache=True, error_model="numpy", parallel=True)
def step_prange(
    x, x_dot, theta, theta_dot, steps, rng, obs, rewards, terminated, truncated, actions
):
    for i in nb.prange(x.shape[0]):
        force = FORCE_MAG if actions[i] == 1 else -FORCE_MAG
        th = theta[i]
        th_dot = theta_dot[i]
        costheta = math.cos(th)
        sintheta = math.sin(th)
        temp = (force + POLEMASS_LENGTH * (th_dot * th_dot) * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS)
        )
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        nx = x[i] + TAU * x_dot[i]
        x[i] = nx
        x_dot[i] = x_dot[i] + TAU * xacc
        nth = th + TAU * th_dot
        theta[i] = nth
        theta_dot[i] = th_dot + TAU * thetaacc
        steps[i] += 1
        term = (
            nx < -X_THRESHOLD or nx > X_THRESHOLD or nth < -THETA_THRESHOLD or nth > THETA_THRESHOLD
        )
        trunc = steps[i] >= MAX_STEPS
        rewards[i] = 1.0
        terminated[i] = term
        truncated[i] = trunc
        if term or trunc:
            _reset_one(i, x, x_dot, theta, theta_dot, steps, rng)
        obs[i, 0] = x[i]
        obs[i, 1] = x_dot[i]
        obs[i, 2] = theta[i]
        obs[i, 3] = theta_dot[i]


@nb.njit(cache=True, error_model="numpy")
def reset_all(x, x_dot, theta, theta_dot, steps, rng, obs, seed):
    for i in range(x.shape[0]):
        rng[i] = np.uint64(seed) + np.uint64(i) * _GOLDEN
        _reset_one(i, x, x_dot, theta, theta_dot, steps, rng)
        obs[i, 0] = x[i]
        obs[i, 1] = x_dot[i]
        obs[i, 2] = theta[i]
        obs[i, 3] = theta_dot[i]


class HandwrittenCartPole:
    """N CartPole episodes over SoA arrays; ``step(actions)`` is one call of the chosen loop.

    ``step`` is the kernel with every array pre-bound (``functools.partial``), so a call costs the
    numba dispatch and nothing else.
    """

    def __init__(self, num_envs, parallel=False, seed=0):
        n = num_envs
        self.num_envs = n
        self.x = np.zeros(n)
        self.x_dot = np.zeros(n)
        self.theta = np.zeros(n)
        self.theta_dot = np.zeros(n)
        self.steps = np.zeros(n, dtype=np.int64)
        self.rng = np.zeros(n, dtype=np.uint64)
        self.obs = np.zeros((n, 4), dtype=np.float32)
        self.rewards = np.zeros(n)
        self.terminated = np.zeros(n, dtype=np.bool_)
        self.truncated = np.zeros(n, dtype=np.bool_)
        state = (self.x, self.x_dot, self.theta, self.theta_dot, self.steps, self.rng)
        reset_all(*state, self.obs, seed)
        kernel = step_prange if parallel else step_serial
        self.step = functools.partial(
            kernel, *state, self.obs, self.rewards, self.terminated, self.truncated
        )
