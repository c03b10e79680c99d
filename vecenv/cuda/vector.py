"""What Gymnasium's ``VectorEnv`` (``vecenv.gym``) needs to run on the GPU engine.

The face finds this module through ``vecenv.variants`` (``find("cuda", "gym.vector")``): the
package registers it on import. It imports numba.cuda only when used, as the package does.
"""

from vecenv import registry

from .dlpack import DeviceArray


def engine_for_device(game, device, **kwargs):
    """The GPU engine of a one-agent game (two-agent games' opponents run on the CPU engine)."""
    if device != "cuda":
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if registry.get_spec(game).num_agents != 1:
        raise ValueError(f"{game} is played by several agents: its VectorEnv runs on the CPU")
    from .engine import CudaEngine

    return CudaEngine(game, **kwargs)


def copy_buffers(arr):
    """A fresh device copy of a device array (exporting DLPack too), or of each array of a dict
    of them."""
    if isinstance(arr, dict):
        return {k: copy_buffers(v) for k, v in arr.items()}
    from numba import cuda

    arr = arr.array if isinstance(arr, DeviceArray) else arr
    out = cuda.device_array(arr.shape, arr.dtype)
    out.copy_to_device(arr)
    return DeviceArray(out)


def to_host(arr):
    """A host copy of a device array, or of each array of a dict of them."""
    if isinstance(arr, dict):
        return {k: to_host(v) for k, v in arr.items()}
    return arr.copy_to_host()
