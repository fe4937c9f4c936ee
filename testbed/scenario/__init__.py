"""Failover scenarios: the YAML format, its loader, runs on the virtual or process
fabric, assertions, results and reports (docs/scenarios.md).

- :func:`testbed.scenario.load.load`: a bundled scenario by name, or a YAML file;
- :func:`testbed.scenario.runner.run_checked` / :func:`~testbed.scenario.runner.compare`;
- ``mrc-testbed run`` / ``mrc-testbed compare``: :mod:`testbed.scenario.cli`.
"""
