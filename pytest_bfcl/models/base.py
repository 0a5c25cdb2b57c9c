"""The model interface: something that answers a task with a generation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.dataset.models import Answer, Entry
from pytest_bfcl.redact import redact_strings
from pytest_bfcl.scoring import ScoringOptions


@dataclass(frozen=True)
class Task:
    """One entry to answer. ``answer`` is the ground truth; only the oracle may look at it."""

    entry: Entry
    answer: Answer | None
    # Which of the entry's repeated samples this is (--bfcl-samples; 0 for the first). A
    # model that caches answers keeps each sample apart; a deterministic one may ignore it.
    sample: int = 0


class Generation(BaseModel):
    """A model's raw output for one entry, in the reference's stored form, with measurements."""

    model_config = ConfigDict(frozen=True)

    id: str
    result: Any
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning: str | None = None  # reasoning content, when the server returns it
    finish_reason: str | None = None
    cached: bool = False  # answered from the response cache
    steps: int | None = None  # model queries made (multi-step categories)
    # Multi-step categories: per-turn latencies and token counts, and the inference log.
    details: dict[str, Any] | None = None

    def masked(self) -> Generation:
        """This generation with every secret in the model's output masked (a key or bearer
        token a server echoed, whichever model client read it): what is scored and written."""
        result, reasoning = redact_strings(self.result), redact_strings(self.reasoning)
        if result == self.result and reasoning == self.reasoning:
            return self
        return self.model_copy(update={"result": result, "reasoning": reasoning})

    def without_inference_log(self) -> Generation:
        """This generation without its conversation's inference log: conversations are
        generated longest first and wait for their items, and their logs were most of a
        4,441-entry run's growth in memory when nothing would read them."""
        if not self.details or "inference_log" not in self.details:
            return self
        kept = {key: value for key, value in self.details.items() if key != "inference_log"}
        return self.model_copy(update={"details": kept})


def masked_outcome(outcome: Any) -> Any:
    """A model's outcome with its answer's secrets masked when it is a generation (a
    project's model may hand back something else, which is reported as it was)."""
    return outcome.masked() if isinstance(outcome, Generation) else outcome


@dataclass(frozen=True)
class Sampled:
    """An entry asked several times (``--bfcl-samples``): one generation per sample, and their
    measurements added up (every sample cost its requests)."""

    id: str
    generations: tuple[Generation, ...]

    @property
    def latency(self) -> float | None:
        return _total(g.latency for g in self.generations)

    @property
    def input_tokens(self) -> int | None:
        total = _total(g.input_tokens for g in self.generations)
        return None if total is None else int(total)

    @property
    def output_tokens(self) -> int | None:
        total = _total(g.output_tokens for g in self.generations)
        return None if total is None else int(total)

    @property
    def steps(self) -> int | None:
        total = _total(g.steps for g in self.generations)
        return None if total is None else int(total)

    @property
    def details(self) -> dict[str, Any]:
        """The web tools that failed over all samples (what the item reports of details)."""
        failures: dict[str, int] = {}
        for generation in self.generations:
            for tool, count in ((generation.details or {}).get("tool_failures") or {}).items():
                failures[tool] = failures.get(tool, 0) + int(count)
        return {"tool_failures": failures} if failures else {}


def _total(values: Any) -> float | None:
    numbers = [v for v in values if v is not None]
    return sum(numbers) if numbers else None


@dataclass(frozen=True)
class StepRequest:
    """One query in a multi-step conversation: the full history so far and the functions the
    model has been shown (raw docs, language hints applied; held-out ones once added). Both are
    shared with the conversation: read them, copy before changing."""

    task: Task
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    mode: str  # "fc" or "prompt"
    turn: int
    step: int


class StepReply(BaseModel):
    """The model's answer to one step. ``result`` is stored like a single-turn result: tool
    calls as ``[{name: arguments_json}]`` or the text."""

    model_config = ConfigDict(frozen=True)

    result: Any
    tool_call_ids: list[str] = []
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning: str | None = None
    cached: bool = False
    # Set when the step is no answer of the model's to score (a context refusal ends the
    # conversation as a failure: pytest_bfcl.scoring.CONTEXT_EXCEEDED).
    finish_reason: str | None = None
    # The messages or items the answer adds to the history, as the leaderboard's handler for
    # the model adds them (a client of a wire format sets it: chat messages, or the Responses
    # API's output items as returned); None: the calls or text in standard form.
    echo: list[dict[str, Any]] | None = None


class ModelSpecError(ValueError):
    """A ``--bfcl-model`` spelling that no handler can build."""


@dataclass(frozen=True)
class Skip:
    """An entry that is collected but not scored, with the reason. ``excluded``: the run's own
    options leave it out (web search off, format sensitivity in fc mode), so it is not counted
    as missing; any other skip (no stored result, say) leaves the run incomplete."""

    reason: str
    excluded: bool = False


class NotGenerated(Exception):
    """The model has no output for this entry (e.g. a replay directory without it); the item is
    skipped with this reason rather than scored."""


@runtime_checkable
class Model(Protocol):
    name: str
    scoring: ScoringOptions

    def generate(self, task: Task) -> Generation: ...

    def metadata(self) -> dict[str, Any]: ...


class ModelBase:
    """What the engine asks of every model beyond :class:`Model`, with the defaults that suit a
    local model. Built-in models derive from it; a project's own model (from the
    ``pytest_bfcl_make_model`` hook) may, or is given these defaults (:func:`with_defaults`)."""

    name: str
    scoring: ScoringOptions
    # Worth generating many entries at once (a remote server); a local model answers on demand.
    concurrent: bool = False

    def generate(self, task: Task) -> Generation:
        raise NotImplementedError(f"{type(self).__name__} does not answer single requests")

    def metadata(self) -> dict[str, Any]:
        """What the reports record about the model (no secrets: they are masked anyway)."""
        return {}

    def known_failure(self, entry_id: str) -> str | None:
        """Why this model is known to fail the entry for a cause outside the model (the oracle
        on data errors), or ``None``; such entries are reported as expected failures."""
        return None

    def preflight(self, categories: list[str]) -> None:
        """Before generation: raise :class:`~pytest_bfcl.errors.SetupError` if the model
        cannot answer these categories (an endpoint that refuses us, a broken result file)."""

    def close(self) -> None:
        """Release what the model holds (connections, a server it started)."""

    def replica_stats(self) -> list[dict[str, Any]]:
        """Per server replica this process sent requests to: requests, answers, errors,
        latencies, ejections (:meth:`pytest_bfcl.routing.balancer.Balancer.stats`)."""
        return []

    def out_of_rotation(self) -> dict[str, str]:
        """Replicas this process took out of rotation, by base URL, with why (handed to
        xdist workers, which do not run the checks before the run)."""
        return {}

    def take_out_of_rotation(self, reasons: dict[str, str]) -> None:
        """Start with these replicas out of rotation (what the controller found)."""


class _WithDefaults(ModelBase):
    """A project's model that does not derive from :class:`ModelBase`, with the defaults."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        self.scoring = model.scoring
        self.concurrent = bool(getattr(model, "concurrent", False))

    def __getattr__(self, name: str) -> Any:  # step, and anything else the model has
        return getattr(self.model, name)

    def generate(self, task: Task) -> Generation:
        generation: Generation = self.model.generate(task)
        return generation

    def metadata(self) -> dict[str, Any]:
        data: dict[str, Any] = self.model.metadata()
        return data

    def known_failure(self, entry_id: str) -> str | None:
        own = getattr(self.model, "known_failure", None)
        return own(entry_id) if own is not None else None

    def preflight(self, categories: list[str]) -> None:
        own = getattr(self.model, "preflight", None)
        if own is not None:
            own(categories)
        elif getattr(self.model, "probe", None) is not None:  # an endpoint: can it answer?
            self.model.probe()

    def close(self) -> None:
        own = getattr(self.model, "close", None)
        if own is not None:
            own()

    def replica_stats(self) -> list[dict[str, Any]]:
        own = getattr(self.model, "replica_stats", None)
        return list(own()) if own is not None else []

    def out_of_rotation(self) -> dict[str, str]:
        own = getattr(self.model, "out_of_rotation", None)
        return dict(own()) if own is not None else {}

    def take_out_of_rotation(self, reasons: dict[str, str]) -> None:
        own = getattr(self.model, "take_out_of_rotation", None)
        if own is not None:
            own(reasons)


def with_defaults(model: Any) -> ModelBase:
    """The model as a :class:`ModelBase` (itself when it already is one)."""
    return model if isinstance(model, ModelBase) else _WithDefaults(model)


@runtime_checkable
class StepModel(Protocol):
    """A model that can hold a multi-step conversation (multi-turn and agentic categories)."""

    def step(self, request: StepRequest) -> StepReply: ...
