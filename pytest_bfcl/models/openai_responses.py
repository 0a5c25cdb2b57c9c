"""A model served on OpenAI's Responses API (``POST /responses``), the wire format the
leaderboard runs its GPT entries through: everything of :class:`OpenAIChatModel` (the cache,
retries, failover, the server-down rule, the probe), with the requests of
:mod:`.responses_request` and the answers read by :mod:`.responses_response`. Each answer's
output items (calls, text, reasoning with its encrypted content) are echoed into the
conversation's history as returned, as the leaderboard's handler does."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode.reasoning import apply_reasoning_mode
from pytest_bfcl.models.base import Generation, ModelSpecError, StepReply, StepRequest, Task
from pytest_bfcl.models.cache import ResponseCache
from pytest_bfcl.models.endpoint_request import EndpointSettings
from pytest_bfcl.models.endpoint_response import answer_record, generation_fields
from pytest_bfcl.models.openai_chat import OpenAIChatModel
from pytest_bfcl.models.responses_request import ResponsesRequestBuilder
from pytest_bfcl.models.responses_response import responses_record
from pytest_bfcl.routing.balancer import Replica, endpoint_url
from pytest_bfcl.scoring import ScoringOptions

WIRE_FORMAT = "responses"


class ResponsesReplica(Replica):
    """A replica whose generation route is ``/responses`` (the client posts every generation
    and probe request to ``chat_url``)."""

    @property
    def chat_url(self) -> str:
        return endpoint_url(self.base_url, "/responses")


def responses_answer_record(
    body: bytes, latency: float, cut: bool, length: int | None, limit: int
) -> dict[str, Any]:
    """The record of a 2xx Responses answer read up to ``limit`` bytes; an answer cut there is
    the chat client's note (echoed into a history as a text answer)."""
    return (
        answer_record(body, latency, cut, length, limit) if cut else responses_record(body, latency)
    )


class OpenAIResponsesModel(OpenAIChatModel):
    read_answer = staticmethod(responses_answer_record)

    def __init__(
        self,
        settings: EndpointSettings,
        scoring: ScoringOptions,
        texts: ProtocolTexts,
        reasoning: bool,
        cache: ResponseCache | None = None,
        hook: Any = None,
    ) -> None:
        """``reasoning``: the model is of a reasoning family (no temperature; its encrypted
        reasoning and summaries asked for and carried through the history)."""
        requests = ResponsesRequestBuilder(settings, scoring, texts, reasoning)
        if (problem := requests.extra_body_problem()) is not None:
            raise ModelSpecError(problem)
        super().__init__(settings, scoring, texts, cache, hook)
        self.requests = requests  # type: ignore[assignment]

    def _replica(self, base_url: str | None) -> Replica:
        chat = super()._replica(base_url)
        return ResponsesReplica(chat.base_url, chat.headers)

    def metadata(self) -> dict[str, Any]:
        data = super().metadata()
        data["wire_format"] = WIRE_FORMAT
        builder = self.requests
        assert isinstance(builder, ResponsesRequestBuilder)
        data["reasoning_family"] = builder.reasoning
        return data

    def cache_identity(
        self, request: dict[str, Any], sample: int = 0, entry: str | None = None
    ) -> dict[str, Any]:
        # The wire format is part of the key: a chat completion of the same entry is another
        # answer (and its record has no items to echo).
        return {**super().cache_identity(request, sample, entry), "wire_format": WIRE_FORMAT}

    def step(self, step: StepRequest) -> StepReply:
        # The record's ``echo`` is the answer's output items, carried back as returned.
        record, cached = self._answer(self.requests.for_step(step), step.task, conversation=True)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        return StepReply(cached=cached, **record)

    def generate(self, task: Task) -> Generation:
        # (A single answer has no history to echo its items into.)
        record, cached = self._answer(self.build_request(task), task)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        fields = {k: v for k, v in generation_fields(record).items() if k != "echo"}
        return Generation(id=task.entry.id, cached=cached, **fields)
