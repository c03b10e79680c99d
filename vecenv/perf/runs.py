"""A saved run: its figures (per-round samples), raw round times, machine and versions, as JSON.

    {"format": "vecenv-perf/1", "created": "2026-01-01T12:00:00+00:00", "label": "...",
     "machine": {...}, "versions": {...}, "settings": {...},
     "figures": {name: {"samples": [...], "calibration": [...], "value": median of the steady
                        rounds, "gate": true, "what": "..."}},
     "raw": {name: {"seconds": [...], "calls": k}}}

``history(folder)`` reads every run saved in a folder, oldest first.
"""

import datetime
import importlib.metadata
import json
import os
import platform
from pathlib import Path

import numpy as np

from . import compare

FORMAT = "vecenv-perf/1"
VERSIONED = ("vecenv", "numpy", "numba", "gymnasium", "llvmlite")


def machine_info():
    """What a saved run was measured on (compare runs of the same machine)."""
    return {
        "node": platform.node(),
        "system": platform.system(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def versions():
    found = {}
    for name in VERSIONED:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def new_run(label="", settings=None):
    return {
        "format": FORMAT,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "label": label,
        "machine": machine_info(),
        "versions": versions(),
        "settings": dict(settings or {}),
        "figures": {},
        "raw": {},
    }


def add_figure(run, name, samples, gate=True, what="", calibration=None):
    """A figure: its per-round samples and, when the samples are times over a reference time
    measured beside each round (the calibration round's, or a peer's), those reference times
    (``vecenv.perf.compare.steady`` then leaves the disturbed rounds out)."""
    samples = [float(s) for s in samples]
    fig = {"samples": samples, "value": None, "gate": gate, "what": what}
    if calibration is not None:
        fig["calibration"] = [float(c) for c in calibration]
        if len(fig["calibration"]) != len(samples):
            raise ValueError(f"{len(samples)} samples but {len(calibration)} calibration times")
    kept = compare.steady(samples, fig.get("calibration"))
    fig["value"] = float(np.median(kept)) if kept.size else None
    run["figures"][name] = fig


def save(run, path):
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(run, indent=1, allow_nan=False))
    os.replace(tmp, path)


def load(path):
    """A saved run, checked enough that a wrong file gives a clear ValueError."""
    path = Path(path)
    try:
        run = json.loads(path.read_text())
    except OSError as e:
        raise ValueError(f"cannot read the run {str(path)!r}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{str(path)!r} is not JSON: {e}") from None
    if not isinstance(run, dict) or run.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a vecenv bench run (format {FORMAT!r})")
    figures = run.get("figures")
    if not isinstance(figures, dict) or not all(
        isinstance(f, dict) and isinstance(f.get("samples"), list) for f in figures.values()
    ):
        raise ValueError(f"{str(path)!r} has no valid figures")
    return run


def history(folder):
    """Every run saved in ``folder`` (``*.json``), oldest first; files of other kinds skipped."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a folder")
    runs = []
    for path in sorted(folder.glob("*.json")):
        try:
            runs.append((path, load(path)))
        except ValueError:
            continue
    runs.sort(key=lambda pr: (pr[1].get("created", ""), pr[0].name))
    return runs
