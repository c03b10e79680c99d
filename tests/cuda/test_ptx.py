"""Every game's GPU code compiles to PTX (sm_90; cartpole's for sm_80 too, tictactoe's search
too) without a GPU: every kernel for cartpole and connectx, the kernel that runs all of its rules
for every other game (``compiled.game_kernels``); and fits a device: their constant data (read
from the PTX) stays under the 64 KB of constant memory a kernel has, and where a GPU is here every
kernel of every game links and loads. A construct CUDA cannot compile is reported naming the game,
the function and the construct; ``import vecenv`` stays free of numba.cuda."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vecenv
from vecenv import registry

from . import require_numba_cuda
from .compiled import SEARCHED, TRAINED, capabilities, game_kernels

require_numba_cuda()

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "tests" / "games" / "walk"


@pytest.fixture(scope="module")
def compiled(cuda_workers):
    """Each game's row from ``tests.cuda.compiled`` (run by ``conftest.py``)."""
    return {row["game"]: row for worker in cuda_workers["compiled"] for row in worker.rows()}


@pytest.mark.parametrize("game", vecenv.list_envs())
def test_kernels_compile_to_ptx(compiled, game):
    row = compiled[game]
    assert row["error"] is None, row["error"]
    labels = {"reset", "observe", "restore", "step"}
    if registry.game_module(game, "agents") is not None:
        labels |= {"step_agents", "act_agents"}
    if registry.get_spec(game).num_agents == 1:
        labels.add("rollout")
    chosen = game_kernels(game)
    if chosen is not None:
        assert chosen <= labels
        labels = chosen
    got = {(label, arch) for label, arch, size, _ in row["kernels"] if size > 0}
    archs = [f"sm_{major}{minor}" for major, minor in capabilities(game)]
    expected = {(label, arch) for label in labels for arch in archs}
    if game == SEARCHED:
        expected.add(("search", "sm_90"))
    if game == TRAINED:
        expected.add(("rollout_mlp", "sm_90"))
    assert got == expected


@pytest.mark.parametrize("game", vecenv.list_envs())
def test_kernels_fit_constant_memory(compiled, game):
    """A kernel whose constant data pass 64 KB does not link on any GPU (chess's tables did,
    before large tables moved to global memory: ``vecenv.cuda.tables``)."""
    from vecenv.cuda.tables import CONSTANT_LIMIT

    row = compiled[game]
    assert row["error"] is None, row["error"]
    over = {label: const for label, _, _, const in row["kernels"] if const >= CONSTANT_LIMIT}
    assert not over, f"{game}: constant data over {CONSTANT_LIMIT} bytes: {over}"


def test_const_bytes_reads_ptx_declarations():
    from vecenv.cuda.tables import const_bytes

    ptx = """
.const .align 8 .b8 _cudapy_cmem[512] = {0, 1};
.const .align 1 .b8 _cudapy_cmem$9[64] = {4};
.visible .const .align 4 .u32 flag;
.weak .global .align 8 .b8 _vecenv_table_ab_37376[37376] = {255};
    ld.const.u64 %rd1, [_cudapy_cmem];
"""
    assert const_bytes(ptx) == 512 + 64 + 4


def _gpu_expected():
    """Whether this run must have a GPU (``VECENV_REQUIRE_GPU=1``): then a missing one fails the
    link checks instead of skipping them."""
    return os.environ.get("VECENV_REQUIRE_GPU", "") not in ("", "0")


@pytest.mark.parametrize("game", vecenv.list_envs())
def test_kernels_link_on_a_gpu(game):
    from vecenv.cuda import gpu_available

    if not gpu_available():
        if _gpu_expected():
            pytest.fail("VECENV_REQUIRE_GPU is set and no CUDA GPU is usable here")
        pytest.skip("no CUDA GPU here: linking needs one")
    from vecenv.cuda.ptx import link

    linked = link(game)
    assert linked and all(const < 64 * 1024 for const in linked.values()), linked


def test_an_unsupported_construct_names_game_function_and_construct(tmp_path):
    from vecenv.cuda.compile import UnsupportedConstruct
    from vecenv.cuda.ptx import ptx

    folder = tmp_path / "scratchwalk"
    shutil.copytree(WALK, folder)
    (folder / "walk.json").rename(folder / "scratchwalk.json")
    spec = json.loads((folder / "scratchwalk.json").read_text())
    spec["name"], spec["gym"]["id"] = "scratchwalk", "ScratchWalk-v0"
    (folder / "scratchwalk.json").write_text(json.dumps(spec))
    rules = folder / "rules.py"
    source = rules.read_text()
    allocating = "    scratch = np.zeros(3)  # CUDA code cannot allocate\n"
    source = source.replace(
        "def step(s, cfg, actions, rewards):\n",
        "def step(s, cfg, actions, rewards):\n" + allocating + "    rewards[0] = scratch[0]\n",
    )
    rules.write_text(source)
    name = vecenv.register(folder)
    try:
        with pytest.raises(UnsupportedConstruct) as info:
            ptx(name, only=["step"])
    finally:
        vecenv.unregister(name)
    first = str(info.value).splitlines()[0]
    line = source.splitlines().index(allocating.rstrip("\n")) + 1
    assert first.startswith("scratchwalk: the rules do not compile for CUDA: function step (")
    assert f"rules.py, line {line}): `scratch = np.zeros(3)" in first
    assert "zeros" in first.split("`: ", 1)[1]


def test_target_capability_is_given_back():
    from numba.cuda import dispatcher

    from vecenv.cuda.compile import target_capability

    before = dispatcher.get_current_device
    with target_capability((8, 6)):
        assert dispatcher.get_current_device().compute_capability == (8, 6)
    assert dispatcher.get_current_device is before
    with pytest.raises(RuntimeError), target_capability((9, 0)):
        raise RuntimeError
    assert dispatcher.get_current_device is before


def test_import_vecenv_leaves_numba_cuda_alone():
    code = "import sys, vecenv; vecenv.make('cartpole', 2); print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
