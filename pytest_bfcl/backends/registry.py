"""Backend classes by the names the dataset uses in ``involved_classes``."""

from __future__ import annotations

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.filesystem import GorillaFileSystem
from pytest_bfcl.backends.math_api import MathAPI
from pytest_bfcl.backends.memory import MemoryKV, MemoryRecSum
from pytest_bfcl.backends.memory_vector import MemoryVector
from pytest_bfcl.backends.message import MessageAPI
from pytest_bfcl.backends.posting import TwitterAPI
from pytest_bfcl.backends.ticket import TicketAPI
from pytest_bfcl.backends.trading import TradingBot
from pytest_bfcl.backends.travel import TravelAPI
from pytest_bfcl.backends.vehicle import VehicleControlAPI
from pytest_bfcl.backends.web_search import WebSearchAPI

BACKENDS: dict[str, type[Backend]] = {
    cls.__name__: cls
    for cls in (
        GorillaFileSystem,
        MathAPI,
        MessageAPI,
        TwitterAPI,
        TicketAPI,
        TradingBot,
        TravelAPI,
        VehicleControlAPI,
        WebSearchAPI,
    )
}
# The memory classes' dataset names carry the backend after an underscore.
BACKENDS.update(
    {"MemoryAPI_kv": MemoryKV, "MemoryAPI_vector": MemoryVector, "MemoryAPI_rec_sum": MemoryRecSum}
)
MEMORY_BACKENDS = ("MemoryAPI_kv", "MemoryAPI_vector", "MemoryAPI_rec_sum")


class UnknownBackend(KeyError):
    pass


def backend_class(name: str) -> type[Backend]:
    try:
        return BACKENDS[name]
    except KeyError:
        raise UnknownBackend(f"no backend named {name!r}; known: {', '.join(BACKENDS)}") from None
