"""Per-episode random numbers that live inside the state record.

Each episode owns one 64-bit word ``rng`` in its record and draws with splitmix64 (a Weyl counter
run through a strong mixer). Episode ``i`` of seed ``S`` starts from ``seed_word(S, i)``, so its
stream depends only on ``(S, i)``: identical for any thread count, batch size or batch split, and
checkpointed with the rest of the state.
"""

import numba as nb
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53
# A second, fixed key keeps stream starts away from the plain Weyl sequence of the seed.
_STREAM = np.uint64(0xD1B54A32D192ED03)


@nb.njit(cache=True, inline="always")
def mix64(z):
    """splitmix64's finaliser: a bijection on 64-bit words with full avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@nb.njit(cache=True)
def seed_word(seed, i):
    """The starting word of episode ``i``'s stream under ``seed`` (both non-negative ints)."""
    return mix64(mix64(np.uint64(seed) ^ _STREAM) + np.uint64(i) * GOLDEN)


@nb.njit(cache=True)
def seed_words(seed, out, mask, first=0):
    """Fill ``out[i]`` with episode ``first + i``'s starting word where ``mask[i]`` (``first``:
    where a slice of a larger batch starts)."""
    base = mix64(np.uint64(seed) ^ _STREAM)
    for i in range(out.shape[0]):
        if mask[i]:
            out[i] = mix64(base + (np.uint64(first) + np.uint64(i)) * GOLDEN)


@nb.njit(cache=True, inline="always")
def next_u64(s):
    """Advance the record's stream and return 64 random bits."""
    s.rng = s.rng + GOLDEN
    return mix64(s.rng)


@nb.njit(cache=True, inline="always")
def uniform(s):
    """A float64 uniform on [0, 1) with 53 random bits."""
    return np.float64(next_u64(s) >> _S11) * _INV53


@nb.njit(cache=True, inline="always")
def uniform_range(s, low, high):
    """A float64 uniform on [low, high)."""
    return low + (high - low) * uniform(s)


@nb.njit(cache=True, inline="always")
def integer(s, n):
    """A uniform integer in [0, n) for 0 < n <= 2**32 (multiply-shift, unbiased enough)."""
    return np.int64((next_u64(s) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))
