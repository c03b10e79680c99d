"""Performance regression checks that survive a noisy, shared machine.

- ``calibrate``: the calibration kernel timed before every benchmark round;
- ``rounds``: interleaved rounds of several targets, each after a calibration round;
- ``compare``: steady rounds, the change between two runs with its bootstrap interval, the verdict;
- ``runs``: a saved run (figures, rounds, machine, versions) as JSON, and the history of a folder;
- ``plot``: the figures of saved runs over time;
- ``pytest_plugin``: the same check for pytest-benchmark suites (``--vecenv-fail-over``);
- ``worktree``, ``ab``, ``ab_worker``, ``paired``: a git revision and the code now timed in one
  run, in two worker processes, rounds alternating, judged on the pairs of rounds
  (``vecenv bench --compare-ref REV``, ``vecenv.cli.bench_ref``).

The ``vecenv bench --save/--compare/--history`` command (``vecenv.cli.bench_gate``) and the plugin
both use these modules.
"""
