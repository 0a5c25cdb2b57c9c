"""The simulated applications of the multi-turn categories, written from their documented
behaviour. Each class's public methods are the tools the model sees; everything else is
private (underscore) and never reachable from a model's call."""

from pytest_bfcl.backends.registry import BACKENDS, backend_class

__all__ = ["BACKENDS", "backend_class"]
