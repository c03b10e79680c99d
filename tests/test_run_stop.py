"""A run survives its stop: SIGTERM during ``vecenv train ppo`` or ``alphazero`` saves what Ctrl-C
saves; periodic checkpoints rotate (the latest K kept); every trainer's buffers are checked
against the memory budget before they are allocated."""

import json
import os
import signal

import pytest

from tests.envs.reference import need
from tests.test_cli import run

torch = need("torch", "PyTorch (vecenv[train])")

from vecenv import alphazero, ppo  # noqa: E402
from vecenv.checkpoints import Rotation  # noqa: E402
from vecenv.cli import ppo as cli_ppo  # noqa: E402

SMALL = ["--num-envs", "8", "--num-steps", "16"]
AZ = [
    "--env", "tictactoe", "--num-games", "4", "--simulations", "2", "--hidden", "8",
    "--updates", "1", "--batch-size", "4", "--eval-every", "0",
]  # fmt: skip


def sigterm_at(calls):
    """A function that sends this process a SIGTERM on its ``calls``-th call."""
    count = [0]

    def maybe(*args, **kwargs):
        count[0] += 1
        if count[0] == calls:
            os.kill(os.getpid(), signal.SIGTERM)

    return maybe


def test_sigterm_during_ppo_saves_what_ctrl_c_saves(capsys, tmp_path, monkeypatch):
    lines = cli_ppo.ProgressLines

    class Stopping(lines):
        stop = staticmethod(sigterm_at(3))

        def __call__(self, run, iteration):
            super().__call__(run, iteration)
            self.stop()

    monkeypatch.setattr(cli_ppo, "ProgressLines", Stopping)
    # Whatever held SIGTERM before (another library's handler in a shared test process) is
    # what holds it after.
    before = signal.getsignal(signal.SIGTERM)
    folder = tmp_path / "run"
    code, out, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, "--total-steps", "100000",
        "--run-dir", str(folder),
    )  # fmt: skip
    assert code == 143, err
    summary = json.loads((folder / "run.json").read_text())
    assert f"stopped (SIGTERM) at {summary['steps']} steps; saving what was learned" in out
    assert summary["interrupted"] is True and 0 < summary["steps"] <= 3 * 8 * 16
    assert ppo.load(str(folder / "policy.pt")).env_id == "CartPole-v1"
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back


def test_sigterm_during_alphazero_saves_what_ctrl_c_saves(capsys, tmp_path, monkeypatch):
    iteration = alphazero.Trainer.iteration
    stop = sigterm_at(2)

    def stopping(self):
        row = iteration(self)
        stop()
        return row

    monkeypatch.setattr(alphazero.Trainer, "iteration", stopping)
    folder = tmp_path / "az"
    code, out, err = run(
        capsys, "train", "alphazero", *AZ, "--iterations", "50", "--run-dir", str(folder)
    )
    assert code == 143, err
    assert "stopped (SIGTERM) after 1 iterations; saving what was learned" in out
    assert json.loads((folder / "run.json").read_text())["iterations"] == 1
    assert alphazero.load(str(folder / "model.pt")).game == "tictactoe"


def test_checkpoints_rotate(capsys, tmp_path):
    folder = tmp_path / "ppo"
    argv = ["train", "ppo", "--env", "CartPole-v1", *SMALL, "--total-steps", "768"]
    code, _, err = run(
        capsys, *argv, "--checkpoint-every", "1", "--keep-checkpoints", "2",
        "--run-dir", str(folder),
    )  # fmt: skip
    assert code == 0, err
    kept = sorted(p.name for p in folder.glob("checkpoint_*.pt"))
    assert kept == ["checkpoint_640.pt", "checkpoint_768.pt"]  # of six
    every = tmp_path / "every"
    code, _, _ = run(
        capsys, *argv, "--checkpoint-every", "1", "--keep-checkpoints", "0",
        "--run-dir", str(every),
    )  # fmt: skip
    assert code == 0 and len(list(every.glob("checkpoint_*.pt"))) == 6
    az = tmp_path / "az"
    code, _, err = run(
        capsys, "train", "alphazero", *AZ, "--iterations", "3", "--checkpoint-every", "1",
        "--keep-checkpoints", "1", "--run-dir", str(az),
    )  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in az.glob("checkpoint-*.pt")) == ["checkpoint-3.pt"]


def test_a_rotation_removes_only_what_its_run_wrote(tmp_path):
    mine = [tmp_path / f"c{k}.pt" for k in range(4)]
    other = tmp_path / "c-other.pt"
    other.write_bytes(b"x")
    rotation = Rotation(2)
    for path in mine:
        path.write_bytes(b"x")
        rotation.wrote(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c-other.pt", "c2.pt", "c3.pt"]
    with pytest.raises(ValueError, match="keep_checkpoints must be a non-negative integer"):
        Rotation(-1)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["alphazero", "--env", "connectx", "--config", "rows=1000", "--iterations", "1"],
         "a replay buffer of 100,000 positions"),
        (["ppo", "--env", "CartPole-v1", "--num-steps", "100000000"],
         "a rollout of 3,200,000,000 decisions"),
        (["ppo", "--env", "CartPole-v1", "--hidden", "60000,60000"], "the policy: a network"),
    ],
)  # fmt: skip
def test_buffers_past_the_memory_budget_are_refused_before_they_are_made(
    capsys, tmp_path, monkeypatch, argv, words
):
    monkeypatch.delenv("VECENV_MEMORY_BUDGET", raising=False)
    code, _, err = run(capsys, "train", *argv, "--run-dir", str(tmp_path / "run"))
    assert code == 2 and words in err and "over the memory budget" in err, err
    assert len(err.strip().splitlines()) == 1
