"""The oracle model: answers every entry with its ground truth, rendered the way a real model
would write it, so the whole pipeline (decoding included) is exercised without a network."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
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


WRONG_ANSWER_TEXT = "I do not know."


def _unit(tag: str, entry_id: str) -> float:
    """A number in [0, 1) fixed by the tag and the entry (the same in every process)."""
    digest = hashlib.sha256(f"{tag}:{entry_id}".encode()).hexdigest()
    return int(digest[:13], 16) / 16**13


@dataclass(frozen=True)
class Flakiness:
    """A noisy oracle, to try the gate offline (``oracle:flaky=0.1,fail=0.02,seed=3``).

    Which entries are flaky or broken is a property of the "model" (the same for every seed);
    a flaky entry passes each sample with its own probability between 0.2 and 0.8, drawn anew
    for each ``seed`` and sample. Two runs with different seeds are two runs of one unchanged
    model; raising ``fail`` is a regression. A sample that fails answers wrongly through the
    normal pipeline: no call where one is due, a call where none is, no calls in a turn, or a
    final answer that is not the expected one."""

    flaky: float = 0.0  # share of entries that are flaky
    fail: float = 0.0  # share of entries that always fail
    seed: int = 0  # the run: which samples of flaky entries pass

    @classmethod
    def parse(cls, options: str) -> Flakiness:
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in options.split(","))):
            name, sep, value = part.partition("=")
            if not sep or name not in ("flaky", "fail", "seed"):
                raise ValueError(
                    f"oracle option {part!r}: expected flaky=SHARE, fail=SHARE or seed=N"
                )
            try:
                values[name] = float(value)
            except ValueError:
                raise ValueError(f"oracle option {part!r}: {value!r} is not a number") from None
        for name in ("flaky", "fail"):
            if not 0 <= values.get(name, 0.0) <= 1:
                raise ValueError(f"oracle option {name}: a share from 0 to 1")
        seed = values.get("seed", 0.0)
        if seed != int(seed):
            raise ValueError("oracle option seed: a whole number")
        return cls(values.get("flaky", 0.0), values.get("fail", 0.0), int(seed))

    def passes(self, entry_id: str, sample: int) -> bool:
        if _unit("fail", entry_id) < self.fail:
            return False
        if _unit("flaky", entry_id) < self.flaky:
            chance = 0.2 + 0.6 * _unit("chance", entry_id)
            return _unit(f"draw:{self.seed}:{sample}", entry_id) < chance
        return True

    @property
    def active(self) -> bool:
        return bool(self.flaky or self.fail)


class OracleModel(ModelBase):
    name = "oracle"

    def __init__(self, scoring: ScoringOptions, flakiness: Flakiness | None = None) -> None:
        self.scoring = scoring
        self._known: dict[str, str] = project_json("oracle_known_failures.json")[scoring.mode]
        self.flakiness = flakiness or Flakiness()

    def _fails(self, task: Task) -> bool:
        return self.flakiness.active and not self.flakiness.passes(task.entry.id, task.sample)

    def known_failure(self, entry_id: str) -> str | None:
        """Why the ground truth itself fails this entry (a data error or a reference quirk),
        from ``data/oracle_known_failures.json``; ``None`` for an entry the oracle must pass."""
        return self._known.get(entry_id)

    def metadata(self) -> dict[str, Any]:
        if self.flakiness.active:
            f = self.flakiness
            return {"kind": "oracle", "flaky": f.flaky, "fail": f.fail, "seed": f.seed}
        return {"kind": "oracle"}

    def generate(self, task: Task) -> Generation:
        entry = task.entry
        kind = CATEGORIES[entry.category].kind
        if self._fails(task):
            return Generation(id=entry.id, result=self._wrong_answer(task))
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

    def _wrong_answer(self, task: Task) -> Any:
        """A failing sample's answer: a call where none is due, text where a call is."""
        entry = task.entry
        if CATEGORIES[entry.category].kind is not Kind.IRRELEVANCE or not entry.function:
            return NO_CALL_TEXT
        calls = [placeholder_call(entry.function[0])]
        if self.scoring.mode == "fc":
            return fc_tool_calls(
                calls,
                entry.function,
                entry.language,
                underscore_names=self.scoring.underscore_to_dot,
            )
        return prompting_text(calls, entry.function, entry.prompt_format, entry.language)

    def step(self, request: StepRequest) -> StepReply:
        """Multi-turn: the ground truth calls of the turn in its first step, then a plain answer
        that ends the turn. The calls go through the same decoding and execution as any model's."""
        entry = request.task.entry
        answer = request.task.answer
        failing = self._fails(request.task)
        if is_agentic(entry.id):
            if failing and not is_memory_prerequisite(entry.id):
                return StepReply(result=WRONG_ANSWER_TEXT)
            return self._agentic_step(request)
        if failing:
            return StepReply(result=TURN_DONE_TEXT)  # no calls in any turn
        if not isinstance(answer, MultiTurnAnswer):
            raise NotGenerated(f"{entry.id} has no multi-turn ground truth")
        truth = answer.ground_truth[request.turn] if request.turn < len(answer.ground_truth) else []
        if request.step > 0 or not truth:
            return StepReply(result=TURN_DONE_TEXT)
        calls = [keyword_call(call, entry.involved_classes) for call in truth]
        if self.scoring.mode == "fc":
            ids = [f"call_{request.turn}_{i}" for i in range(len(calls))]
            result = fc_tool_calls(
                calls, entry.function, underscore_names=self.scoring.underscore_to_dot
            )
            return StepReply(result=result, tool_call_ids=ids)
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
            result = fc_tool_calls(
                move, entry.function, underscore_names=self.scoring.underscore_to_dot
            )
            return StepReply(result=result, tool_call_ids=ids)
        return StepReply(result=prompting_text(move, entry.function, DEFAULT_FORMAT))
