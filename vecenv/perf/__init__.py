"""Performance regression checks that survive a noisy, shared machine.

Every timed round of a benchmark is paired with a round of a fixed calibration kernel measured just
before it (``calibrate``); the run keeps the per-round ratios, the raw times, the machine and the
versions (``runs``); two runs are compared on those ratios with a bootstrap interval (``compare``);
saved runs are drawn over time (``plot``). The ``vecenv bench`` command and the pytest plugin
(``pytest_plugin``) both use these modules.
"""
