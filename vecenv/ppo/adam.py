"""Gradient clipping and Adam in float32, as PyTorch's ``clip_grad_norm_`` and single-tensor
``torch.optim.Adam`` compute them (``CompiledUpdate``'s optimiser step)."""

import math

import numba as nb
import numpy as np

BETA1, BETA2, EPS = 0.9, 0.999, 1e-5  # the trainer's torch.optim.Adam(..., eps=1e-5)

_F = np.float32
_ONE = _F(1.0)
_NORM_EPS = _F(1e-6)
# Adam's constants as PyTorch's float32 kernels see the Python floats it passes them.
_LERP1 = _F(1.0 - BETA1)
_BETA2 = _F(BETA2)
_WEIGHT2 = _F(1.0 - BETA2)
_EPS = _F(EPS)


@nb.njit(cache=True, error_model="numpy")
def _sum_squares(x):
    """``sum(float64(x) ** 2)`` in eight interleaved partial sums (their order fixed): a single
    running sum would wait on each addition's latency."""
    n = x.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    whole = n - n % 8
    for i in range(0, whole, 8):
        v0, v1 = np.float64(x[i]), np.float64(x[i + 1])
        v2, v3 = np.float64(x[i + 2]), np.float64(x[i + 3])
        v4, v5 = np.float64(x[i + 4]), np.float64(x[i + 5])
        v6, v7 = np.float64(x[i + 6]), np.float64(x[i + 7])
        s0 += v0 * v0
        s1 += v1 * v1
        s2 += v2 * v2
        s3 += v3 * v3
        s4 += v4 * v4
        s5 += v5 * v5
        s6 += v6 * v6
        s7 += v7 * v7
    for i in range(whole, n):
        v = np.float64(x[i])
        s0 += v * v
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@nb.njit(cache=True, error_model="numpy")
def _adam(p, grad, exp_avg, exp_avg_sq, step_size, root2):
    """One Adam step on ``p`` in float32, operation for operation as PyTorch's single-tensor
    Adam: ``exp_avg.lerp_(g, 1 - beta1)``, ``exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2)``,
    ``p.addcdiv_(exp_avg, exp_avg_sq.sqrt() / root2 + eps, value=step_size)``."""
    for i in range(p.shape[0]):
        g = grad[i]
        m = exp_avg[i]
        m = m + _LERP1 * (g - m)
        v = exp_avg_sq[i] * _BETA2 + _WEIGHT2 * g * g
        exp_avg[i] = m
        exp_avg_sq[i] = v
        p[i] = p[i] + step_size * m / (np.sqrt(v) / root2 + _EPS)


@nb.njit(cache=True, error_model="numpy")
def clip_and_adam(params, grad, exp_avg, exp_avg_sq, max_norm, lr, step):
    """Clip ``grad`` (all parameters' gradients, flat) to ``max_norm`` and take Adam step
    number ``step`` on ``params`` (all parameters, flat, in ``grad``'s order). Returns the
    gradient's norm before clipping; where it is not finite nothing is changed."""
    norm = math.sqrt(_sum_squares(grad))
    if not math.isfinite(norm):
        return norm
    # max_norm / (norm + 1e-6) as PyTorch takes it: a float32 reciprocal times max_norm.
    coef = (_ONE / (_F(norm) + _NORM_EPS)) * _F(max_norm)
    if coef < _ONE:
        for i in range(grad.shape[0]):
            grad[i] = grad[i] * coef
    correction1 = 1.0 - BETA1**step
    correction2 = 1.0 - BETA2**step
    step_size = _F(-(lr / correction1))
    root2 = _F(correction2**0.5)
    _adam(params, grad, exp_avg, exp_avg_sq, step_size, root2)
    return norm
