"""The shared numba core: per-episode RNG, the state header and the batch drivers."""
