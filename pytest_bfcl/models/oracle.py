"""The oracle model: answers every entry with its ground truth, rendered the way a real model
would write it, so the whole pipeline (decoding included) is exercised without a network."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.dataset.categories import CATEGORIES, Kind, is_agentic, is_memory_prerequisite
from pytest_bfcl.dataset.models import AstAnswer, MultiTurnAnswer
from pytest_bfcl.decode.prompting import DEFAULT_FORMAT
from pytest_bfcl.models.base import (
    Generation,
    ModelBase,
    NotGenerated,
    StepReply,
    StepRequest,
    Task,
)
from pytest_bfcl.models.encode import (
    fc_tool_calls,
    ground_truth_calls,
    keyword_call,
    placeholder_call,
    prompting_text,
)
from pytest_bfcl.models.oracle_agentic import prerequisite_move, question_move
from pytest_bfcl.resources import project_json
from pytest_bfcl.scoring import ScoringOptions

NO_CALL_TEXT = "None of the available functions fits this request, so I will not call any."
TURN_DONE_TEXT = "I have completed this request."


class OracleModel(ModelBase):
    name = "oracle"

    def __init__(self, scoring: ScoringOptions) -> None:
        self.scoring = scoring
        self._known: dict[str, str] = project_json("oracle_known_failures.json")[scoring.mode]

    def known_failure(self, entry_id: str) -> str | None:
        """Why the ground truth itself fails this entry (a data error or a reference quirk),
        from ``data/oracle_known_failures.json``; ``None`` for an entry the oracle must pass."""
        return self._known.get(entry_id)

    def metadata(self) -> dict[str, Any]:
        return {"kind": "oracle"}

    def generate(self, task: Task) -> Generation:
        entry = task.entry
        kind = CATEGORIES[entry.category].kind
        if kind is Kind.EXECUTABLE:
            from pytest_bfcl.models.oracle_executable import executable_output  # opt-in only

            return Generation(id=entry.id, result=executable_output(task, self.scoring))
        if kind is Kind.IRRELEVANCE:
            return Generation(id=entry.id, result=NO_CALL_TEXT)
        if kind is Kind.RELEVANCE:
            if not entry.function:
                raise NotGenerated(f"{entry.id} offers no function to call")
            calls = [placeholder_call(entry.function[0])]
        elif isinstance(task.answer, AstAnswer):
            calls = ground_truth_calls(task.answer.ground_truth)
        else:
            raise NotGenerated(f"the oracle cannot answer {entry.category} entries yet")
        language = entry.language
        if self.scoring.mode == "fc":
            result: Any = fc_tool_calls(
                calls, entry.function, language, underscore_names=self.scoring.underscore_to_dot
            )
        else:
            result = prompting_text(calls, entry.function, entry.prompt_format, language)
        return Generation(id=entry.id, result=result)

    def step(self, request: StepRequest) -> StepReply:
        """Multi-turn: the ground truth calls of the turn in its first step, then a plain answer
        that ends the turn. The calls go through the same decoding and execution as any model's."""
        entry = request.task.entry
        answer = request.task.answer
        if is_agentic(entry.id):
            return self._agentic_step(request)
        if not isinstance(answer, MultiTurnAnswer):
            raise NotGenerated(f"{entry.id} has no multi-turn ground truth")
        truth = answer.ground_truth[request.turn] if request.turn < len(answer.ground_truth) else []
        if request.step > 0 or not truth:
            return StepReply(result=TURN_DONE_TEXT)
        calls = [keyword_call(call, entry.involved_classes) for call in truth]
        if self.scoring.mode == "fc":
            ids = [f"call_{request.turn}_{i}" for i in range(len(calls))]
            return StepReply(result=fc_tool_calls(calls, entry.function), tool_call_ids=ids)
        return StepReply(result=prompting_text(calls, entry.function, DEFAULT_FORMAT))

    def _agentic_step(self, request: StepRequest) -> StepReply:
        entry = request.task.entry
        if is_memory_prerequisite(entry.id):
            move = prerequisite_move(request)
        else:
            move = question_move(request)
        if isinstance(move, str):
            return StepReply(result=move)
        if self.scoring.mode == "fc":
            ids = [f"call_{request.turn}_{request.step}_{i}" for i in range(len(move))]
            return StepReply(result=fc_tool_calls(move, entry.function), tool_call_ids=ids)
        return StepReply(result=prompting_text(move, entry.function, DEFAULT_FORMAT))
