"""``vecenv export kaggle``: a checkpoint as one self-contained Kaggle ``submission.py``."""

import argparse

from .common import CliError, check_output_file
from .ppo import _need_torch


def non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def cmd_export_kaggle(args, out):
    _need_torch("Reading a checkpoint")
    from vecenv import alphazero, tournament

    if not args.out.endswith(".py"):
        raise CliError(f"--out writes a Python file (FILE.py), got {args.out!r}")
    check_output_file(args.out, "--out")
    try:
        loaded = tournament.load(args.checkpoint)
        if isinstance(loaded, alphazero.Player):
            simulations = loaded.simulations if args.simulations is None else args.simulations
            text = loaded.kaggle_submission(simulations)
            game = loaded.game
            plays = f"searching {simulations} simulations a move" if simulations else "no search"
        elif args.simulations is not None:
            raise ValueError(
                f"--simulations: only an AlphaZero checkpoint (vecenv train alphazero) searches; "
                f"{args.checkpoint} is a PPO policy"
            )
        else:
            text = loaded.kaggle_submission()
            game, plays = loaded.env_id, "the policy's greedy moves"
    except (ValueError, ImportError) as e:
        message = str(e)
        if not message.startswith(args.checkpoint):
            message = f"{args.checkpoint}: {message}"
        raise CliError(message) from None
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"--out {args.out!r}: {e.strerror or e}") from None
    size = len(text.encode("utf-8"))
    print(f"wrote {args.out} ({size / 1024:.0f} KiB): a Kaggle agent for {game}, {plays}", file=out)
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "export",
        help="a trained checkpoint as a file of another system (a Kaggle submission)",
        description="Write a trained checkpoint as a file of another system.",
    )
    targets = p.add_subparsers(dest="target", metavar="TARGET")
    targets.required = True
    k = targets.add_parser(
        "kaggle",
        help="one self-contained submission.py for kaggle-environments",
        description="Write CHECKPOINT (FILE.pt of vecenv train alphazero or ppo, trained on "
        "connectx or tictactoe) as one Python file that kaggle-environments runs as an agent: "
        "the network's weights and its forward pass in numpy, the game's rules and, for an "
        "AlphaZero network, vecenv's search (numpy and the standard library alone: no "
        "PyTorch, numba or vecenv).",
    )
    k.add_argument("checkpoint", help="FILE.pt of vecenv train alphazero or vecenv train ppo")
    k.add_argument("--out", default="submission.py", help="the file (default submission.py)")
    k.add_argument(
        "--simulations",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="an AlphaZero network's simulations a move (default: those its run evaluated it "
        "with; 0: the network alone)",
    )
    k.set_defaults(func=cmd_export_kaggle)
    return p
