"""The bundled failover scenarios (YAML files beside this module).

``mrc-testbed run NAME`` finds them by name through :mod:`importlib.resources`, in an
editable install and in a regular one alike. Format: docs/scenarios.md.
"""
