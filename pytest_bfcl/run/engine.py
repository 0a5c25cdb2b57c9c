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

from pytest_bfcl.check.oversized import oversized_answer_verdict
from pytest_bfcl.check.verdict import Verdict, combine_samples
from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.fetch import DataSource, resolve_data_source
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Answer, Entry
from pytest_bfcl.kinds import kind_of, open_dataset
from pytest_bfcl.models.base import (
    Generation,
    NotGenerated,
    Sampled,
    Skip,
    StepModel,
    Task,
    masked_outcome,
    with_defaults,
)
from pytest_bfcl.redact import redact_data, register_secret_env
from pytest_bfcl.run.leaderboard import as_leaderboard_scores, leaderboard_note, scoring_options
from pytest_bfcl.run.model_factory import make_model
from pytest_bfcl.run.preflight import left_out_for_extras
from pytest_bfcl.run.results_dir import ResultsWriter, sample_dir
from pytest_bfcl.run.run_metadata import run_metadata
from pytest_bfcl.run.scheduler import (
    Progress,
    Scheduler,
    job_key,
    split_job_key,
    start_order,
)
from pytest_bfcl.run.selection import Selection
from pytest_bfcl.run.wiring import ConversationWiring
from pytest_bfcl.settings import Settings

__all__ = ["BfclRun", "Skip", "make_model"]


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
        self.selection = Selection(settings, dataset)
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
        # Entries whose tools the start-of-session probe found unavailable (the executable
        # categories' public APIs), with the reason: skipped, so reported as missing.
        self.unavailable: dict[str, str] = {}
        self.progress = Progress()
        # Categories of the default selection left out: the extra each needs is not installed.
        self.left_out: dict[str, str] = {}
        # Whether generations keep conversations' inference logs once a results dir has them.
        self.keep_inference_logs = True
        self.settings_changes: list[str] = []  # declared differences from the baseline, measured
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
        scoring = scoring_options(settings, source)
        model = make_model(settings.model, scoring, settings, source, hook)
        left: dict[str, str] = {}
        if default_selection and isinstance(with_defaults(model), StepModel):
            left = left_out_for_extras(settings.categories, settings.web, settings.web_provider)
            kept = tuple(c for c in settings.categories if c not in left)
            settings = settings.model_copy(update={"categories": kept})
        run = cls(settings, open_dataset(source), model, session)
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

    # -- selection (run/selection.py) ----------------------------------------------------------

    @property
    def sampled(self) -> bool:
        return self.selection.sampled

    def entries_for(self, category: str) -> list[Entry]:
        return self.selection.entries_for(category)

    def entry(self, entry_id: str) -> Entry:
        return self.selection.entry(entry_id)

    def sampled_populations(self) -> dict[str, int]:
        return self.selection.sampled_populations()

    def expected_ids(self) -> dict[str, set[str]]:
        """What this run is asked to score: every selected (and sampled) entry that its own
        options do not exclude."""
        return self.selection.expected_ids(lambda category: kind_of(category).skip_reason(self))

    def clusters(self) -> dict[str, str]:
        return self.selection.clusters()

    def expected_requests(self, entry_id: str) -> int:
        return self.selection.expected_requests(entry_id)

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
            # Nothing will read the conversation's inference log (see keep_inference_logs).
            if not self.keep_inference_logs:
                outcome = outcome.without_inference_log()
            try:
                verdict = self._score_one(outcome)
            except Exception:  # raised again, and reported, when the item scores it
                return outcome
            with self._verdicts_lock:
                self._verdicts[key] = (outcome, verdict)
        return outcome

    def _generate(self, task: Task) -> Generation | Skip:
        try:  # masked whichever model answered (a replayed or a project's model too)
            return masked_outcome(kind_of(task.entry.category).solve(task, self))
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
        """The ground truth an entry is scored against, under the known-errors policy."""
        pinned = self.dataset.answers(entry.category).get(entry.id)
        return listed_errors.answer_under_policy(entry.id, pinned, self.settings.known_errors)

    def known_error_note(self, entry_id: str) -> str | None:
        """Why an entry's ground truth is known to be wrong upstream, or ``None``."""
        return listed_errors.note_under_policy(entry_id, self.settings.known_errors)

    # -- metadata (run/run_metadata.py) -------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The run's identity for every report; secrets (keys in serving flags, URLs or the
        environment) are masked here, the one place all reports take it from."""
        return redact_data(run_metadata(self))
