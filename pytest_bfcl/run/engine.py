"""The engine: select entries, obtain a model's generation for each, and score it.

Usable without pytest::

    run = BfclRun.create(Settings(model="oracle", categories="single_turn"))
    for category in run.settings.categories:
        for entry in run.entries_for(category):
            generation = run.generate(entry.id)  # a Generation, or a Skip with its reason
            if isinstance(generation, Generation):
                verdict = run.score(generation)
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_bfcl import __version__
from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.long_context import LongContext, load_long_context
from pytest_bfcl.check.agentic import evaluate_agentic
from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn
from pytest_bfcl.check.single_turn import ScoringOptions, evaluate_single_turn
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import CATEGORIES, Kind, category_of_id
from pytest_bfcl.dataset.fetch import DataSource, resolve_data_source
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import AgenticAnswer, AstAnswer, Entry, MultiTurnAnswer
from pytest_bfcl.dataset.texts import ProtocolTexts, load_texts
from pytest_bfcl.hookspecs import plugin_manager
from pytest_bfcl.models.base import (
    Generation,
    Model,
    ModelSpecError,
    NotGenerated,
    StepModel,
    Task,
)
from pytest_bfcl.redact import redact_data, register_secret_env
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.memory_flow import MemoryFlow
from pytest_bfcl.run.results_dir import ResultsWriter, model_dir_name
from pytest_bfcl.run.sampling import stratified_sample
from pytest_bfcl.settings import Settings
from pytest_bfcl.web.access import WebAccess, WebSettings

# Kinds that run as multi-step conversations when the model can hold one.
CONVERSATION_KINDS = (Kind.MULTI_TURN, Kind.MEMORY, Kind.WEB_SEARCH)
WEB_OFF_REASON = "web search is off in this run (--bfcl-web=off); not counted in the scores"


def make_model(
    spec: str,
    scoring: ScoringOptions,
    settings: Settings | None = None,
    source: DataSource | None = None,
    hook: Any = None,
) -> Model:
    """Build a model from its ``--bfcl-model`` spelling through the ``pytest_bfcl_make_model``
    hook: a project's own handlers first, then the built-in ones (``oracle``, ``replay:DIR``,
    an endpoint's model name)."""
    if hook is None:
        hook = plugin_manager().hook
    model = hook.pytest_bfcl_make_model(
        spec=spec, settings=settings, scoring=scoring, source=source, hook=hook
    )
    if model is None:
        raise ModelSpecError(f"unknown model {spec!r}: use 'oracle', 'replay:DIR' or an endpoint")
    return model


class Progress:
    """Generation counters, updated from any thread: done, in flight, failed, rate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = self.in_flight = self.failed = 0
        self.first: float | None = None

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1
            if self.first is None:
                self.first = time.perf_counter()

    def finished(self, failed: bool) -> None:
        with self._lock:
            self.in_flight -= 1
            self.done += 1
            self.failed += int(failed)

    def line(self, total: int) -> str:
        with self._lock:
            elapsed = time.perf_counter() - self.first if self.first is not None else 0.0
            rate = self.done / elapsed if elapsed > 0 else 0.0
            return (
                f"bfcl: {self.done}/{total} generated, {self.in_flight} in flight, "
                f"{self.failed} failed, {rate:.1f} entries/s"
            )


@dataclass(frozen=True)
class Skip:
    """An entry that is collected but not scored, with the reason. ``excluded``: the run's own
    options leave it out (web search off, format sensitivity in fc mode), so it is not counted
    as missing; any other skip (no stored result, say) leaves the run incomplete."""

    reason: str
    excluded: bool = False


class BfclRun:
    """Everything one session needs: settings, data, the model, and how to score."""

    def __init__(
        self, settings: Settings, dataset: Dataset, model: Model, session: str | None = None
    ) -> None:
        """``session``: the name shared by the processes of one run (an xdist controller and its
        workers), which share the memory snapshots made in it; a new one by default."""
        self.settings = settings
        self.dataset = dataset
        self.model = model
        self.scoring = model.scoring
        self._entry_maps: dict[str, dict[str, Entry]] = {}
        self._sample: dict[str, set[str]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[str, Future[Generation | Skip]] = {}
        self._texts: ProtocolTexts | None = None
        self._submitted: set[str] = set()
        self.results: ResultsWriter | None = None
        self.progress = Progress()
        self.session = session or uuid.uuid4().hex
        self._services: BackendServices | None = None
        self._memory: MemoryFlow | None = None
        self._lazy = threading.Lock()
        if settings.results_dir is not None:
            self.results = ResultsWriter(Path(settings.results_dir), model.name)

    @classmethod
    def create(cls, settings: Settings, hook: Any = None, session: str | None = None) -> BfclRun:
        """``hook``: pytest's ``config.hook`` (or any manager's relay with the hooks of
        :mod:`pytest_bfcl.hookspecs`); by default the built-in models only."""
        register_secret_env(settings.api_key_env)  # masked in everything the run writes
        scoring = ScoringOptions(settings.mode, settings.underscore_to_dot)
        source = resolve_data_source(settings.data_dir)
        model = make_model(settings.model, scoring, settings, source, hook)
        return cls(settings, Dataset(source), model, session)

    @property
    def source(self) -> DataSource:
        return self.dataset.source

    # -- selection ----------------------------------------------------------------------------

    def entries_for(self, category: str) -> list[Entry]:
        """The entries of a selected category that this run scores (all, or the sample)."""
        entries = self.dataset.entries(category)
        if self.settings.sample is None:
            return entries
        if self._sample is None:
            ids = {c: [e.id for e in self.dataset.entries(c)] for c in self.settings.categories}
            self._sample = stratified_sample(ids, self.settings.sample, self.settings.seed)
        chosen = self._sample.get(category, set())
        return [e for e in entries if e.id in chosen]

    def expected_ids(self) -> dict[str, set[str]]:
        """What this run is asked to score: every selected (and sampled) entry that its own
        options do not exclude."""
        expected: dict[str, set[str]] = {}
        for category in self.settings.categories:
            ids = {e.id for e in self.entries_for(category) if self.skip_reason(e) is None}
            if ids:
                expected[category] = ids
        return expected

    def sampled_populations(self) -> dict[str, int]:
        """For a sampled run, the size of each selected category (what its sample stands
        for); empty otherwise."""
        if self.settings.sample is None:
            return {}
        return {c: len(self.dataset.entries(c)) for c in self.settings.categories}

    def entry(self, entry_id: str) -> Entry:
        return self._entries_of(category_of_id(entry_id))[entry_id]

    def _entries_of(self, category: str) -> dict[str, Entry]:
        if category not in self._entry_maps:
            self._entry_maps[category] = self.dataset.entry_map(category)
        return self._entry_maps[category]

    # -- generation and scoring ---------------------------------------------------------------

    def skip_reason(self, entry: Entry) -> str | None:
        """Why this entry cannot be scored in this run, or ``None``."""
        kind = CATEGORIES[entry.category].kind
        if kind is Kind.WEB_SEARCH and self.settings.web == "off" and self._runs_conversations:
            return WEB_OFF_REASON
        if kind is Kind.FORMAT_SENSITIVITY and self.scoring.mode == "fc":
            return "format sensitivity measures prompting models; run it with --bfcl-mode=prompt"
        return None

    def generate(self, entry_id: str) -> Generation | Skip:
        """The model's output for an entry. Infrastructure problems raise."""
        entry = self.entry(entry_id)
        reason = self.skip_reason(entry)
        if reason:
            return Skip(reason, excluded=True)
        answer = self.dataset.answers(entry.category).get(entry_id)
        task = Task(entry, answer)
        self.progress.started()
        try:
            outcome = self._generate(task)
        except BaseException:
            self.progress.finished(failed=True)
            raise
        self.progress.finished(failed=False)
        if self.results is not None and isinstance(outcome, Generation):
            self.results.write(outcome)
        return outcome

    @property
    def _runs_conversations(self) -> bool:
        return isinstance(self.model, StepModel)

    def _generate(self, task: Task) -> Generation | Skip:
        entry = task.entry
        kind = CATEGORIES[entry.category].kind
        try:
            if kind in CONVERSATION_KINDS and isinstance(self.model, StepModel):
                snapshot = self._question_snapshot(entry) if kind is Kind.MEMORY else None
                return self._conversation(task, self.model, snapshot).run()
            return self.model.generate(task)
        except NotGenerated as exc:
            return Skip(str(exc))

    # -- agentic ------------------------------------------------------------------------------

    def services(self) -> BackendServices:
        """What the agentic backends need: the embedding model and the run's web access."""
        with self._lazy:
            if self._services is None:
                web = None
                if self.settings.web != "off":
                    web = WebAccess(
                        WebSettings(
                            mode=self.settings.web,
                            cassette=self.settings.web_cassette,
                            provider=self.settings.web_provider,
                            search_url=self.settings.web_search_url,
                            allow_private=self.settings.web_allow_private,
                            failure_rate=self.settings.web_failure_rate,
                        )
                    )
                self._services = BackendServices(
                    embedding_model=self.settings.embedding_model,
                    web=web,
                    fetch_error_templates=self.texts().fetch_error_templates,
                )
            return self._services

    def memory_root(self) -> Path:
        """Where memory snapshots are kept: with the results, or in ``.bfcl-memory``."""
        if self.settings.memory_dir is not None:
            return Path(self.settings.memory_dir) / model_dir_name(self.model.name)
        if self.results is not None:
            return self.results.root
        return Path(".bfcl-memory") / model_dir_name(self.model.name)

    def memory_flow(self) -> MemoryFlow:
        with self._lazy:
            if self._memory is None:
                self._memory = MemoryFlow(
                    self.dataset.memory_prerequisites,
                    self._run_prerequisite,
                    self.memory_root(),
                    self.session,
                    self._record_prerequisite,
                )
            return self._memory

    def _conversation(
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
            self.scoring.mode,
            self.texts(),
            self.long_context_for(entry),
            self.services(),
            config,
        )

    def _question_snapshot(self, entry: Entry) -> dict[str, Any] | None:
        return self.memory_flow().final_snapshot(entry.category, entry.scenario or "")

    def _run_prerequisite(
        self, entry: Entry, snapshot: dict[str, Any] | None
    ) -> tuple[Generation, dict[str, Any]]:
        """One prerequisite conversation: it starts from the snapshot and gives the next."""
        if not isinstance(self.model, StepModel):
            raise ModelSpecError(f"{self.model.name} cannot hold the memory conversations")
        conversation = self._conversation(Task(entry, None), self.model, snapshot)
        generation = conversation.run()
        memory = conversation.memory_backend()
        if memory is None:
            raise ModelSpecError(f"{entry.id} involves no memory backend")
        return generation, memory._snapshot()

    def _record_prerequisite(self, generation: Generation, path: Path) -> None:
        """Prerequisite conversations go to their own result file, as in the reference."""
        if self.results is not None:
            relative = path.relative_to(self.memory_root())
            self.results.write(generation, self.results.root / relative)

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

    def expected_failure(self, entry_id: str) -> str | None:
        """A reason when the model is known to fail this entry for a cause outside the model
        (the oracle on data errors); such entries are reported as expected failures."""
        known = getattr(self.model, "known_failure", None)
        return known(entry_id) if known else None

    # -- pipelining --------------------------------------------------------------------------

    def prefetch(self, entry_ids: list[str], concurrency: int | None = None) -> None:
        """Start generating these entries, ``concurrency`` at a time, so a server sees many
        requests in flight while items report one by one in their own order. May be called
        again with more entries (an xdist worker learns its items in batches).

        Conversations (several requests in a row each) start first, longest first, and single
        requests fill the gaps: a long conversation started last would leave the server idle
        while it finishes."""
        if not getattr(self.model, "concurrent", False):
            return
        new = [i for i in entry_ids if i not in self._submitted]
        if not new:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=concurrency or self.settings.concurrency,
                thread_name_prefix="bfcl-generate",
            )
        for entry_id in sorted(new, key=self._start_order):
            self._submitted.add(entry_id)
            self._futures[entry_id] = self._pool.submit(self.generate, entry_id)

    def _start_order(self, entry_id: str) -> tuple[int, int]:
        """Longest first; memory questions interleaved by scenario (the k-th question of each
        scenario before any (k+1)-th), so the first wave starts every scenario's
        prerequisites at once instead of queueing behind one scenario."""
        rank = 0
        if CATEGORIES[category_of_id(entry_id)].kind is Kind.MEMORY:
            tail = entry_id.rsplit("-", 1)[-1]
            rank = int(tail) if tail.isdigit() else 0
        return (-self.expected_requests(entry_id), rank)

    def expected_requests(self, entry_id: str) -> int:
        """A rough count of the requests an entry needs (turns, for a conversation)."""
        entry = self.entry(entry_id)
        kind = CATEGORIES[entry.category].kind
        if kind is Kind.MULTI_TURN:
            return 2 * len(entry.question)
        if kind in (Kind.MEMORY, Kind.WEB_SEARCH):
            return 3
        return 1

    def generation_for(self, entry_id: str) -> Generation | Skip:
        """The prefetched generation of an entry (waiting for it), or a new one."""
        future = self._futures.pop(entry_id, None)
        return future.result() if future is not None else self.generate(entry_id)

    def close(self) -> None:
        """Stop generating; a model that owns a server stops it."""
        closer = getattr(self.model, "close", None)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._futures.clear()
        if closer is not None:
            closer()

    def score(self, generation: Generation) -> Verdict:
        entry = self.entry(generation.id)
        answer = self.dataset.answers(entry.category).get(entry.id)
        if isinstance(answer, MultiTurnAnswer):
            options = MultiTurnOptions(self.scoring.mode, strict=self.settings.strict_multi_turn)
            return evaluate_multi_turn(
                entry, answer, generation.result, options, self.long_context_for(entry)
            )
        if CATEGORIES[entry.category].kind in (Kind.MEMORY, Kind.WEB_SEARCH):
            agentic = answer if isinstance(answer, AgenticAnswer) else None
            return evaluate_agentic(entry, agentic, generation.result, self.scoring.mode)
        if answer is not None and not isinstance(answer, AstAnswer):
            raise TypeError(f"{entry.id}: unexpected ground truth type {type(answer).__name__}")
        return evaluate_single_turn(entry, answer, generation.result, self.scoring)

    # -- metadata -----------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The run's identity for every report; secrets (keys in serving flags, URLs or the
        environment) are masked here, the one place all reports take it from."""
        return redact_data(self._metadata())

    def _metadata(self) -> dict[str, Any]:
        return {
            "model": self.model.name,
            "model_info": self.model.metadata(),
            "mode": self.scoring.mode,
            "underscore_to_dot": self.scoring.underscore_to_dot,
            "categories": list(self.settings.categories),
            "dataset": {
                "version": self.source.version,
                "sha256": self.source.sha256,
                "data_dir": str(self.source.data_dir),
            },
            "plugin_version": __version__,
            "sample": self.settings.sample,
            "partial_eval": self.settings.partial_eval,
            "seed": self.settings.seed if self.settings.sample is not None else None,
            "gate": self.settings.gate.model_dump(),
        }
