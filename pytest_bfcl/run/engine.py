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
import uuid
from pathlib import Path
from typing import Any

from pytest_bfcl import __version__
from pytest_bfcl.check.oversized import oversized_answer_verdict
from pytest_bfcl.check.verdict import Verdict, combine_samples
from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.clusters import clusters_of
from pytest_bfcl.dataset.fetch import DatasetError, DataSource, resolve_data_source
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Answer, Entry
from pytest_bfcl.hookspecs import plugin_manager
from pytest_bfcl.kinds import kind_of
from pytest_bfcl.models.base import (
    Generation,
    ModelBase,
    ModelSpecError,
    NotGenerated,
    Sampled,
    Skip,
    StepModel,
    Task,
    with_defaults,
)
from pytest_bfcl.redact import redact_data, register_secret_env
from pytest_bfcl.report.detection import plan
from pytest_bfcl.run.leaderboard import as_leaderboard_scores, leaderboard_note
from pytest_bfcl.run.preflight import left_out_for_extras
from pytest_bfcl.run.results_dir import ResultsWriter, sample_dir
from pytest_bfcl.run.sampling import sample_counts, stratified_sample
from pytest_bfcl.run.scheduler import Progress, Scheduler, expected_requests, start_order
from pytest_bfcl.run.wiring import ConversationWiring
from pytest_bfcl.scoring import SCORING_RULES_VERSION, ScoringOptions
from pytest_bfcl.settings import Settings

__all__ = ["BfclRun", "Skip", "make_model"]

# Separates an entry id from its sample number in the scheduler's job keys (never in an id).
_SAMPLE_SEP = "\x1f"


def job_key(entry_id: str, sample: int) -> str:
    """The scheduler's key of one sample of an entry (the id itself for the first)."""
    return entry_id if sample == 0 else f"{entry_id}{_SAMPLE_SEP}{sample}"


def split_job_key(key: str) -> tuple[str, int]:
    entry_id, _, sample = key.partition(_SAMPLE_SEP)
    return entry_id, int(sample) if sample else 0


def make_model(
    spec: str,
    scoring: ScoringOptions,
    settings: Settings | None = None,
    source: DataSource | None = None,
    hook: Any = None,
) -> ModelBase:
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
    return with_defaults(model)


class BfclRun:
    """Everything one session needs: settings, data, the model, and how to score. Scheduling
    lives in :mod:`pytest_bfcl.run.scheduler`, what conversations need in
    :mod:`pytest_bfcl.run.wiring`."""

    def __init__(
        self, settings: Settings, dataset: Dataset, model: Any, session: str | None = None
    ) -> None:
        """``session``: the name shared by the processes of one run (an xdist controller and its
        workers), which share the memory snapshots made in it; a new one by default."""
        self.settings = settings
        self.dataset = dataset
        self.model = with_defaults(model)
        self.scoring = self.model.scoring
        self.session = session or uuid.uuid4().hex
        self._entry_maps: dict[str, dict[str, Entry]] = {}
        self._sample: dict[str, set[str]] | None = None
        # Per category, the noise between two runs measured in the baseline (set by the
        # caller that loaded one): what --bfcl-detect plans with.
        self.plan_noise: dict[str, float] = {}
        # One result set per sample: DIR/<model> with one sample, DIR/sample-<k>/<model> with
        # several (what replay:DIR reads back with as many samples).
        self.result_writers: list[ResultsWriter] = []
        if settings.results_dir is not None:
            root = Path(settings.results_dir)
            self.result_writers = [
                ResultsWriter(sample_dir(root, k, settings.samples), self.model.name)
                for k in range(settings.samples)
            ]
        self.results: ResultsWriter | None = self.result_writers[0] if self.result_writers else None
        # Entries whose tools the start-of-session probe found unavailable, with the reason
        # (the executable categories' public APIs); skipped, and so reported as missing.
        self.unavailable: dict[str, str] = {}
        self.progress = Progress()
        # Categories of the default selection left out: the extra each needs is not installed.
        self.left_out: dict[str, str] = {}
        # Whether generations keep their conversations' inference logs once any results
        # directory has them (the HTML report and result observers read them; the pytest glue
        # says, after collection, when nothing will).
        self.keep_inference_logs = True
        # Verdicts worked out on the generating thread, by entry id, with their generation.
        self._verdicts: dict[str, tuple[Generation, Verdict]] = {}
        self._verdicts_lock = threading.Lock()
        self.scheduler: Scheduler[Generation | Skip] = Scheduler(
            self._generate_and_score,
            lambda key: start_order(self.entry(split_job_key(key)[0])),
            settings.concurrency,
            enabled=self.model.concurrent,
        )
        self.wiring = ConversationWiring(settings, dataset, self.model, self.session, self.results)

    @classmethod
    def create(
        cls,
        settings: Settings,
        hook: Any = None,
        session: str | None = None,
        default_selection: bool = False,
    ) -> BfclRun:
        """``hook``: pytest's ``config.hook`` (or any manager's relay with the hooks of
        :mod:`pytest_bfcl.hookspecs`); by default the built-in models only.
        ``default_selection``: the categories are the default ones, not asked for, so those
        this install lacks an extra for are left out (:attr:`left_out`) rather than refused."""
        register_secret_env(settings.api_key_env)  # masked in everything the run writes
        source = resolve_data_source(settings.data_dir)
        if settings.leaderboard_model:
            settings = as_leaderboard_scores(settings, source)
        scoring = ScoringOptions(settings.mode, settings.underscore_to_dot, settings.reasoning)
        model = make_model(settings.model, scoring, settings, source, hook)
        left: dict[str, str] = {}
        if default_selection and isinstance(with_defaults(model), StepModel):
            left = left_out_for_extras(settings.categories, settings.web, settings.web_provider)
            kept = tuple(c for c in settings.categories if c not in left)
            settings = settings.model_copy(update={"categories": kept})
        run = cls(settings, Dataset(source), model, session)
        run.left_out = left
        return run

    def leaderboard_note(self) -> str | None:
        """How this run reproduces a leaderboard model's scoring (``--bfcl-leaderboard-model``)."""
        if not self.settings.leaderboard_model:
            return None
        return leaderboard_note(self.settings, self.source)

    @property
    def source(self) -> DataSource:
        return self.dataset.source

    # -- selection ----------------------------------------------------------------------------

    def entries_for(self, category: str) -> list[Entry]:
        """The entries of a selected category that this run scores (all, or the sample)."""
        entries = self.dataset.entries(category)
        if not self.sampled:
            return entries
        if self._sample is None:
            ids = {c: [e.id for e in self.dataset.entries(c)] for c in self.settings.categories}
            if self.settings.detect is not None:
                self._sample = sample_counts(ids, self.planned_sizes(), self.settings.seed)
            else:
                assert self.settings.sample is not None
                self._sample = stratified_sample(ids, self.settings.sample, self.settings.seed)
        chosen = self._sample.get(category, set())
        return [e for e in entries if e.id in chosen]

    @property
    def sampled(self) -> bool:
        """Whether the run scores a sample of each category (--bfcl-sample, --bfcl-detect)."""
        return self.settings.sample is not None or self.settings.detect is not None

    def planned_sizes(self) -> dict[str, int]:
        """``--bfcl-detect``: per category, the fewest entries whose comparison detects the
        drop, with the noise the baseline measured (:attr:`plan_noise`) or the assumed one."""
        sizes = {c: len(self.dataset.entries(c)) for c in self.settings.categories}
        if self.settings.detect is None:
            return sizes
        gate = self.settings.gate
        return plan(sizes, self.settings.detect, self.plan_noise, gate.alpha, gate.min_drop)

    def expected_ids(self) -> dict[str, set[str]]:
        """What this run is asked to score: every selected (and sampled) entry that its own
        options do not exclude."""
        expected: dict[str, set[str]] = {}
        for category in self.settings.categories:
            ids = {e.id for e in self.entries_for(category) if self.skip_reason(e) is None}
            if ids:
                expected[category] = ids
        return expected

    def clusters(self) -> dict[str, str]:
        """Entry id -> cluster, over the entries this run scores (for the intervals)."""
        return clusters_of((c, e) for c in self.settings.categories for e in self.entries_for(c))

    def sampled_populations(self) -> dict[str, int]:
        """For a sampled run, the size of each selected category (what its sample stands
        for); empty otherwise."""
        if not self.sampled:
            return {}
        return {c: len(self.dataset.entries(c)) for c in self.settings.categories}

    def entry(self, entry_id: str) -> Entry:
        return self._entries_of(category_of_id(entry_id))[entry_id]

    def expected_requests(self, entry_id: str) -> int:
        """The scheduler's rough count of the entry's requests (1 for an id this run does not
        know): what the entry weighs when entries are shared out between processes."""
        try:
            return expected_requests(self.entry(entry_id)) * self.settings.samples
        except (KeyError, DatasetError):
            return 1

    def _entries_of(self, category: str) -> dict[str, Entry]:
        if category not in self._entry_maps:
            self._entry_maps[category] = self.dataset.entry_map(category)
        return self._entry_maps[category]

    # -- generation ---------------------------------------------------------------------------

    def skip_reason(self, entry: Entry) -> str | None:
        """Why this entry cannot be scored in this run (its kind says), or ``None``."""
        return kind_of(entry.category).skip_reason(self)

    @property
    def holds_conversations(self) -> bool:
        """Whether the model answers step by step (multi-turn and agentic entries are then
        conversations run here; otherwise the model answers them whole, as replay does)."""
        return isinstance(self.model, StepModel)

    def generate(self, entry_id: str, sample: int = 0) -> Generation | Skip:
        """The model's output for an entry (one of its samples). Infrastructure problems
        raise."""
        entry = self.entry(entry_id)
        reason = self.skip_reason(entry)
        if reason:
            return Skip(reason, excluded=True)
        if entry_id in self.unavailable:
            return Skip(self.unavailable[entry_id])
        answer = self.dataset.answers(entry.category).get(entry_id)
        task = Task(entry, answer, sample)
        self.progress.started()
        try:
            outcome = self._generate(task)
        except BaseException:
            self.progress.finished(failed=True)
            raise
        self.progress.finished(failed=False)
        if self.result_writers and isinstance(outcome, Generation):
            self.result_writers[sample].write(outcome)
        return outcome

    def finalize_results(self) -> None:
        """Rewrite every result file in dataset order (see :meth:`ResultsWriter.finalize`)."""
        for writer in self.result_writers:
            writer.finalize()

    def _generate_and_score(self, key: str) -> Generation | Skip:
        """Generate, then score on the same thread: the item that reports the entry finds its
        verdict ready. Items report in pytest's order while generation runs longest first, so
        without this the conversations' scoring piled up behind the last answer (0.8 s of a
        4,441-entry run). A scoring error is left for the item to raise. ``key``: an entry id,
        or one of its samples (:func:`job_key`)."""
        entry_id, sample = split_job_key(key)
        outcome = self.generate(entry_id, sample)
        if isinstance(outcome, Generation):
            outcome = self._without_unwanted_log(outcome)
            try:
                verdict = self._score_one(outcome)
            except Exception:  # raised again, and reported, when the item scores it
                return outcome
            with self._verdicts_lock:
                self._verdicts[key] = (outcome, verdict)
        return outcome

    def _without_unwanted_log(self, generation: Generation) -> Generation:
        """The generation without its conversation's inference log when nothing will read it
        (:attr:`keep_inference_logs`): generated longest first, conversations wait for their
        items, and their logs were most of a 4,441-entry run's growth in memory."""
        details = generation.details
        if self.keep_inference_logs or not details or "inference_log" not in details:
            return generation
        kept = {key: value for key, value in details.items() if key != "inference_log"}
        return generation.model_copy(update={"details": kept})

    def _generate(self, task: Task) -> Generation | Skip:
        try:
            return kind_of(task.entry.category).solve(task, self)
        except NotGenerated as exc:
            return Skip(str(exc))

    def expected_failure(self, entry_id: str) -> str | None:
        """A reason when the model is known to fail this entry for a cause outside the model
        (the oracle on data errors); such entries are reported as expected failures."""
        return self.model.known_failure(entry_id)

    def prefetch(self, entry_ids: list[str], concurrency: int | None = None) -> None:
        """Start generating these entries (each of their samples) ahead of their items (see
        :class:`Scheduler`)."""
        samples = self.settings.samples
        keys = [job_key(i, k) for i in entry_ids for k in range(samples)]
        self.scheduler.prefetch(keys, concurrency)

    def generation_for(self, entry_id: str) -> Generation | Sampled | Skip:
        """The prefetched generation of an entry (waiting for it), or a new one; with several
        samples, all of them (or the first sample's skip)."""
        if self.settings.samples == 1:
            return self.scheduler.result(entry_id)
        outcomes = [
            self.scheduler.result(job_key(entry_id, k)) for k in range(self.settings.samples)
        ]
        skipped = next((o for o in outcomes if isinstance(o, Skip)), None)
        if skipped is not None:
            return skipped
        return Sampled(entry_id, tuple(o for o in outcomes if isinstance(o, Generation)))

    def close(self) -> None:
        """Stop generating; a model that owns a server stops it."""
        self.scheduler.close()
        self.model.close()

    # -- scoring ------------------------------------------------------------------------------

    def score(self, generation: Generation | Sampled) -> Verdict:
        """The verdict on an entry: its generation's, or passes out of its samples."""
        if isinstance(generation, Sampled):
            verdicts = [
                self._score_one(g, job_key(generation.id, k))
                for k, g in enumerate(generation.generations)
            ]
            return combine_samples(verdicts)
        return self._score_one(generation)

    def _score_one(self, generation: Generation, key: str | None = None) -> Verdict:
        with self._verdicts_lock:
            scored = self._verdicts.pop(key or generation.id, None)
        if scored is not None and scored[0] is generation:
            return scored[1]
        entry = self.entry(generation.id)
        oversized = oversized_answer_verdict(generation, entry.category)
        if oversized is not None:  # an answer cut at --bfcl-max-response-bytes
            return oversized
        answer = self.answer_for(entry)
        return kind_of(entry.category).score(entry, answer, generation.result, self)

    def answer_for(self, entry: Entry) -> Answer | None:
        """The ground truth an entry is scored against: the pinned one, or its correction for
        an entry with a known ground-truth error under ``--bfcl-known-errors=correct``."""
        answer = self.dataset.answers(entry.category).get(entry.id)
        if self.settings.known_errors == "correct":
            error = listed_errors.known_errors().get(entry.id)
            if error is not None and error.fix is not None:
                return listed_errors.corrected_answer(error, answer)
        return answer

    def known_error_note(self, entry_id: str) -> str | None:
        """Why an entry's ground truth is known to be wrong upstream, or ``None``."""
        error = listed_errors.known_errors().get(entry_id)
        if error is None:
            return None
        if self.settings.known_errors == "correct" and error.fix is not None:
            return f"{error.note()}; scored against the corrected answer"
        return error.note()

    # -- metadata -----------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The run's identity for every report; secrets (keys in serving flags, URLs or the
        environment) are masked here, the one place all reports take it from."""
        return redact_data(self._metadata())

    def _temperature(self) -> float | None:
        """The sampling temperature of models that sample (an endpoint); None otherwise."""
        sampling = self.model.metadata().get("sampling")
        if isinstance(sampling, dict) and "temperature" in sampling:
            value = sampling["temperature"]
            return float(value) if isinstance(value, int | float) else None
        return None

    def _metadata(self) -> dict[str, Any]:
        return {
            "model": self.model.name,
            "model_info": self.model.metadata(),
            "mode": self.scoring.mode,
            "underscore_to_dot": self.scoring.underscore_to_dot,
            "reasoning": self.scoring.reasoning,
            "leaderboard_model": self.settings.leaderboard_model,
            "leaderboard_note": self.leaderboard_note(),
            "categories": list(self.settings.categories),
            "dataset": {
                "version": self.source.version,
                "sha256": self.source.sha256,
                "data_dir": str(self.source.data_dir),
            },
            "plugin_version": __version__,
            "sample": self.settings.sample,
            "partial_eval": self.settings.partial_eval,
            "seed": self.settings.seed if self.sampled else None,
            "detect": self.settings.detect,
            "samples": self.settings.samples,
            "temperature": self._temperature(),
            "scoring_rules": SCORING_RULES_VERSION,
            "known_errors": self.settings.known_errors,
            "gate": self.settings.gate.model_dump(),
        }
