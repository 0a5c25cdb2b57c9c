"""What every backend shares: default state, scenario loading, the state that the checker
compares, and the set of methods a model may call."""

from __future__ import annotations

import copy
import inspect
import marshal
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pytest_bfcl.backends.long_context import LongContext

if TYPE_CHECKING:
    from pytest_bfcl.web.access import WebAccess


def state_copy(value: Any) -> Any:
    """A deep copy of scenario data: JSON-like values (dicts, lists, strings, numbers) are
    copied by :mod:`marshal`, in C, an order of magnitude faster than ``copy.deepcopy``
    (every multi-turn entry loads its scenario into two environments or more), shared parts
    shared as before; anything marshal refuses is deep-copied."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


@dataclass(frozen=True)
class BackendServices:
    """What some backends need from the run beyond their scenario: the long-context tables,
    the vector memory's embedding model, and the web access of the search tools."""

    long_context: LongContext | None = None
    embedding_model: str = "all-MiniLM-L6-v2"
    web: WebAccess | None = None
    fetch_error_templates: tuple[str, ...] = ()  # wording of simulated fetch failures


class Backend:
    """A simulated application. Public attributes are its *state* (compared by the checker);
    public methods are its tools. Each entry and each run gets its own instance."""

    # Public state fields and their defaults (deep-copied into every instance).
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    # Seed of the private random generator when the scenario gives no ``random_seed``.
    SEED: ClassVar[int | None] = None
    # Classes without a scenario (the calculator) are never loaded.
    STATELESS: ClassVar[bool] = False

    def __init__(self) -> None:
        for name, value in self.DEFAULTS.items():
            setattr(self, name, state_copy(value))
        self._long: LongContext | None = None
        self._random = random.Random(self.SEED)
        self._services = BackendServices()  # the environment sets the run's services

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        """Set every state field from the scenario, falling back to the default."""
        self._long = long_context
        for name, default in self.DEFAULTS.items():
            setattr(self, name, state_copy(config.get(name, default)))
        if self.SEED is not None:
            self._random = random.Random(config.get("random_seed", self.SEED))

    def _state(self) -> dict[str, Any]:
        """The public attributes, as the checker compares them."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @classmethod
    def public_methods(cls) -> frozenset[str]:
        """Names a model may call: public functions defined by the backend classes."""
        # mypy checks a class object against Hashable with its unbound __hash__ and rejects it.
        return _public_methods(cls)  # type: ignore[arg-type]


BackendType = TypeVar("BackendType", bound=type)


def named_as(reference: str) -> Callable[[BackendType], BackendType]:
    """Give a backend class's functions the qualified names they have in the leaderboard's
    class: Python writes it in the error of a call with a missing or unknown argument
    (``MemoryAPI_kv.core_memory_add() missing 1 required positional argument: 'value'``),
    which the model reads. The class keeps its own name (pickling finds it by that)."""

    def rename(cls: BackendType) -> BackendType:
        for member in vars(cls).values():
            if inspect.isfunction(member):
                member.__qualname__ = f"{reference}.{member.__name__}"
        return cls

    return rename


@cache
def _public_methods(cls: type[Backend]) -> frozenset[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass in (Backend, object):
            continue
        for name, member in vars(klass).items():
            if not name.startswith("_") and inspect.isfunction(member):
                names.add(name)
    return frozenset(names)
