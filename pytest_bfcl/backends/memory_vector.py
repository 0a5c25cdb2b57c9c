"""Vector memory (``MemoryAPI_vector``): core and archival stores of texts, searched by meaning.

Texts are embedded with a sentence-transformers model (unit vectors) and kept in a faiss
inner-product index with explicit ids, so a search ranks by cosine similarity. numpy, faiss and
the model are loaded on first use: the other backends never need them.

Vectors are computed when a search needs them, not when a text is stored. A store remembers the
changes to its index since the last search (a snapshot's texts as one batch, each added text on
its own, removals) and replays them in order before searching. An embedding depends only on its
batch, so the index a search sees is the one that embedding every change as it happened would
have built, bit for bit; a conversation that stores without searching embeds nothing.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, NamedTuple

from pytest_bfcl.backends.base import named_as
from pytest_bfcl.backends.embedding import EmbeddingUnavailable, embedder
from pytest_bfcl.backends.memory import (
    ARCHIVAL_ENTRY_LENGTH,
    ARCHIVAL_SIZE,
    CORE_ENTRY_LENGTH,
    CORE_SIZE,
    MemoryBackend,
)


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the vector memory backend needs faiss-cpu: pip install 'pytest-bfcl[memory]' ({exc})"
        ) from exc
    return faiss


class _IndexChange(NamedTuple):
    """A change to a store's index, kept until a search needs the vectors: the texts embedded
    as one batch under the ids, or (no texts) the ids' vectors removed."""

    ids: list[int]
    texts: list[str] | None


class VectorStore:
    """Texts by integer id, with their vectors in an id-mapped inner-product index."""

    def __init__(self, size: int, entry_length: int, model: str) -> None:
        self.size, self.entry_length, self.model = size, entry_length, model
        self.store: dict[int, str] = {}
        self.next_id = 0
        self._index: Any = None  # built by the first search
        self._unindexed: list[_IndexChange] = []  # changes the index has not seen yet

    def _current_index(self) -> Any:
        """The index with every pending change applied, in the order the changes were made."""
        import numpy as np

        if self._index is None:
            faiss = _faiss()
            self._index = faiss.IndexIDMap(faiss.IndexFlatIP(embedder(self.model).dimension))
        while self._unindexed:
            change = self._unindexed[0]
            ids = np.array(change.ids, dtype=np.int64)
            if change.texts is None:
                self._index.remove_ids(ids)
            else:
                self._index.add_with_ids(embedder(self.model).embed(change.texts), ids)
            self._unindexed.pop(0)
        return self._index

    def _add_vectors(self, ids: list[int], texts: list[str]) -> None:
        """Embed the texts (one batch) into the index under their ids, at the next search."""
        self._unindexed.append(_IndexChange(ids, texts))

    def _embed_now_unless_text(self, value: Any) -> None:
        """A model may pass a list or a number as the text. Only strings wait for a search:
        anything else is embedded at once, so that it fails (and is not stored) where the
        benchmark's store, which embeds on every change, fails."""
        if not isinstance(value, str):
            embedder(self.model).embed([value])

    def _drop(self, vec_id: int) -> None:
        # An id is added alone at most once while pending (ids are never reused, and an update
        # cancels the pending addition it replaces); a restored one-text batch counts as alone.
        added_alone = _IndexChange([vec_id], [self.store[vec_id]])
        if added_alone in self._unindexed:
            # Never searched since it was added: dropping the addition leaves the other vectors
            # in the same order, as adding and then removing it would.
            self._unindexed.remove(added_alone)
        else:
            self._unindexed.append(_IndexChange([vec_id], None))

    def add(self, text: str) -> dict[str, Any]:
        if len(text) > self.entry_length:
            return {"error": self._too_long}
        if len(self.store) >= self.size:
            return {"error": f"Memory size exceeds maximum size of {self.size} entries."}
        vec_id = self.next_id
        self.next_id += 1  # taken even when embedding fails, as in the benchmark
        self._embed_now_unless_text(text)
        self._add_vectors([vec_id], [text])
        self.store[vec_id] = text
        return {"id": vec_id}

    @property
    def _too_long(self) -> str:
        return f"Entry length exceeds maximum length of {self.entry_length} characters."

    def remove(self, vec_id: int) -> dict[str, Any]:
        if vec_id not in self.store:
            return {"error": f"ID {vec_id} not present in store."}
        self._drop(vec_id)
        del self.store[vec_id]
        return {"status": f"ID {vec_id} removed from store."}

    def update(self, vec_id: int, new_text: str) -> dict[str, Any]:
        if vec_id not in self.store:
            return {"error": f"ID {vec_id} not present in store."}
        if len(new_text) > self.entry_length:
            return {"error": self._too_long}
        self._drop(vec_id)  # gone from the index even when embedding fails, as in the benchmark
        self._embed_now_unless_text(new_text)
        self._add_vectors([vec_id], [new_text])
        self.store[vec_id] = new_text
        return {"status": f"ID {vec_id} updated."}

    def clear(self) -> dict[str, Any]:
        if self._index is not None:
            self._index.reset()
        self._unindexed.clear()
        self.store.clear()
        self.next_id = 0
        return {"status": "Memory cleared."}

    def retrieve(self, query: str, top_k: int = 5) -> list[dict[str, Any]]:
        if not self.store:
            return []
        index = self._current_index()
        scores, ids = index.search(embedder(self.model).embed([query]), min(top_k, len(self.store)))
        return [
            {"id": int(i), "similarity_score": float(s), "text": self.store[int(i)]}
            for s, i in zip(scores[0], ids[0], strict=True)
            if i != -1
        ]

    def retrieve_all(self) -> list[dict[str, Any]]:
        return [{"id": i, "text": text} for i, text in self.store.items()]

    def export(self) -> dict[str, Any]:
        return {"next_id": self.next_id, "store": dict(self.store)}

    def restore(self, data: dict[str, Any]) -> None:
        """Load an exported store (ids come back from JSON as strings); its texts are embedded
        as one batch, in id order, when a search first needs them."""
        self.next_id = int(data["next_id"])
        self.store = {int(k): str(v) for k, v in data["store"].items()}
        self._index = None
        ids = sorted(self.store)
        self._unindexed = [_IndexChange(ids, [self.store[i] for i in ids])] if ids else []


@named_as("MemoryAPI_vector")
class MemoryVector(MemoryBackend):
    """Core and archival vector stores with the same bounds as the key-value memory."""

    EMPTY_CONTEXT = "There is no content in the core memory at this point."
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        super().__init__()
        self._core: VectorStore | None = None
        self._archival: VectorStore | None = None

    def _stores(self) -> tuple[VectorStore, VectorStore]:
        if self._core is None or self._archival is None:
            model = self._services.embedding_model
            self._core = VectorStore(CORE_SIZE, CORE_ENTRY_LENGTH, model)
            self._archival = VectorStore(ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH, model)
        return self._core, self._archival

    @property
    def core(self) -> VectorStore:
        return self._stores()[0]

    @property
    def archival(self) -> VectorStore:
        return self._stores()[1]

    def _restore(self, snapshot: dict[str, Any]) -> None:
        self.core.restore(snapshot["core_memory"])
        self.archival.restore(snapshot["archival_memory"])

    def _snapshot(self) -> dict[str, Any]:
        return {"core_memory": self.core.export(), "archival_memory": self.archival.export()}

    def _context_dump(self) -> str:
        # The benchmark always shows the core store as JSON here, "{}" when it is empty: its
        # emptiness test looks at the store object, which is never falsy.
        return json.dumps({str(k): v for k, v in self.core.store.items()}, indent=4)

    def core_memory_add(self, text: str) -> dict[str, Any]:
        return self.core.add(text)

    def core_memory_remove(self, vec_id: int) -> dict[str, Any]:
        return self.core.remove(vec_id)

    def core_memory_update(self, vec_id: int, new_text: str) -> dict[str, Any]:
        return self.core.update(vec_id, new_text)

    def core_memory_clear(self) -> dict[str, Any]:
        return self.core.clear()

    def core_memory_retrieve(self, query: str, top_k: int = 5) -> dict[str, Any]:
        return {"result": self.core.retrieve(query, top_k)}

    def core_memory_retrieve_all(self) -> dict[str, Any]:
        return {"result": self.core.retrieve_all()}

    def archival_memory_add(self, text: str) -> dict[str, Any]:
        return self.archival.add(text)

    def archival_memory_remove(self, vec_id: int) -> dict[str, Any]:
        return self.archival.remove(vec_id)

    def archival_memory_update(self, vec_id: int, new_text: str) -> dict[str, Any]:
        return self.archival.update(vec_id, new_text)

    def archival_memory_clear(self) -> dict[str, Any]:
        return self.archival.clear()

    def archival_memory_retrieve(self, query: str, top_k: int = 5) -> dict[str, Any]:
        return {"result": self.archival.retrieve(query, top_k)}

    def archival_memory_retrieve_all(self) -> dict[str, Any]:
        return {"result": self.archival.retrieve_all()}
