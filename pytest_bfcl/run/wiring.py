"""What conversations need from a run, built lazily and once: the benchmark's texts, the
long-context tables, the backends' services (embedding model, web access), and the memory
flow with its snapshots. Multi-turn, memory and web-search entries all get their
conversations from here."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.long_context import LongContext, load_long_context
from pytest_bfcl.dataset.fetch import DataSource
from pytest_bfcl.dataset.layout import model_dir_name
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.dataset.texts import ProtocolTexts, load_texts
from pytest_bfcl.models.base import Generation, ModelSpecError, StepModel, Task
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.leaderboard import registered_model
from pytest_bfcl.run.memory_flow import MemoryFlow
from pytest_bfcl.run.results_dir import ResultsWriter
from pytest_bfcl.settings import Settings


class ConversationWiring:
    def __init__(
        self,
        settings: Settings,
        dataset: Dataset,
        model: Any,
        session: str,
        results: ResultsWriter | None,
    ) -> None:
        self.settings = settings
        self.dataset = dataset
        self.model = model
        self.session = session
        self.results = results
        self._texts: ProtocolTexts | None = None
        self._services: BackendServices | None = None
        self._memory: MemoryFlow | None = None
        self._lock = threading.Lock()

    @property
    def source(self) -> DataSource:
        return self.dataset.source

    # -- what conversations read --------------------------------------------------------------

    def texts(self) -> ProtocolTexts:
        """The benchmark's model-facing texts (needed to hold conversations)."""
        if self._texts is None:
            root = self.source.unpacked_root
            if root is None:
                raise ModelSpecError(
                    "multi-step categories need the benchmark's prompt texts, read from the "
                    "pinned release; use it (no --bfcl-data) or an unpacked bfcl-eval root"
                )
            self._texts = load_texts(root)
        return self._texts

    def long_context_for(self, entry: Entry) -> LongContext | None:
        """The long-context tables when the entry's category asks for them."""
        if "long_context" not in entry.category and "composite" not in entry.category:
            return None
        root = self.source.unpacked_root
        if root is None:
            raise ModelSpecError(
                f"{entry.id}: long-context tables are read from the pinned release's sources"
            )
        return load_long_context(root)

    def services(self) -> BackendServices:
        """What the agentic backends need: the embedding model and the run's web access."""
        with self._lock:
            if self._services is None:
                self._services = BackendServices(
                    embedding_model=self.settings.embedding_model,
                    web=self._web_access(),
                    fetch_error_templates=self.texts().fetch_error_templates,
                )
            return self._services

    def _web_access(self) -> Any:
        if self.settings.web == "off":
            return None
        from pytest_bfcl.web.access import WebAccess, WebSettings  # only runs with web search

        s = self.settings
        return WebAccess(
            WebSettings(
                mode=s.web,
                cassette=s.web_cassette,
                provider=s.web_provider,
                search_url=s.web_search_url,
                allow_private=s.web_allow_private,
                failure_rate=s.web_failure_rate,
            )
        )

    # -- conversations ------------------------------------------------------------------------

    def conversation(
        self, task: Task, model: StepModel, memory: dict[str, Any] | None = None
    ) -> Conversation:
        """A conversation for the entry; a memory snapshot, when given, is loaded into the
        entry's memory backend."""
        entry = task.entry
        config = None
        if memory is not None:
            config = {cls: {"snapshot": memory} for cls in entry.involved_classes}
        return Conversation(
            task,
            model,
            self.model.scoring.mode,
            self.texts(),
            self.long_context_for(entry),
            self.services(),
            config,
            budget=self.settings.max_entry_bytes,
            rewrite_model=self.rewrite_model(),
        )

    def rewrite_model(self) -> str | None:
        """The model name the leaderboard's call-string rewrite uses (the leaderboard model's
        API name, else the model's); None with ``--bfcl-exact-call-text``."""
        if self.settings.exact_call_text:
            return None
        if self.settings.leaderboard_model:
            registered = registered_model(self.settings, self.source)
            return registered.api_model_name or registered.name
        return str(self.model.name)

    def question_snapshot(self, entry: Entry) -> dict[str, Any] | None:
        """The memory a memory question starts from (its scenario's prerequisites run first,
        once per session)."""
        return self.memory_flow().final_snapshot(entry.category, entry.scenario or "")

    # -- memory -------------------------------------------------------------------------------

    def memory_root(self) -> Path:
        """Where memory snapshots are kept: with the results, or in ``.bfcl-memory``."""
        if self.settings.memory_dir is not None:
            return Path(self.settings.memory_dir) / model_dir_name(self.model.name)
        if self.results is not None:
            return self.results.root
        return Path(".bfcl-memory") / model_dir_name(self.model.name)

    def memory_flow(self) -> MemoryFlow:
        with self._lock:
            if self._memory is None:
                self._memory = MemoryFlow(
                    self.dataset.memory_prerequisites,
                    self._run_prerequisite,
                    self.memory_root(),
                    self.session,
                    self._record_prerequisite,
                )
            return self._memory

    def _run_prerequisite(
        self, entry: Entry, snapshot: dict[str, Any] | None
    ) -> tuple[Generation, dict[str, Any]]:
        """One prerequisite conversation: it starts from the snapshot and gives the next."""
        if not isinstance(self.model, StepModel):
            raise ModelSpecError(f"{self.model.name} cannot hold the memory conversations")
        conversation = self.conversation(Task(entry, None), self.model, snapshot)
        generation = conversation.run()
        memory = conversation.memory_backend()
        if memory is None:
            raise ModelSpecError(f"{entry.id} involves no memory backend")
        return generation, memory._snapshot()

    def _record_prerequisite(self, generation: Generation, category: str) -> None:
        """Prerequisite conversations go to their own result file, as in the reference."""
        if self.results is not None:
            self.results.write(generation, self.results.layout.prerequisite_file(category))
