"""The multi-step conversation loop of the multi-turn categories.

Per turn: the user's messages (or, on a held-out turn, the stock message announcing newly
available functions), then model steps until the model answers without a call. Each step's calls
are executed against the entry's own inference backends and the results are fed back in the
form the mode uses (tool messages in function-calling mode; one user message with a list of tool
results when prompting). A turn allows ``max_steps + 1`` executed steps; past that the entry is
force-terminated and no further turns are attempted.

The agentic categories run through the same loop: their first turn starts with the answer-format
instruction (questions) and, for memory, an instruction holding the memory's current content;
their backends (memory stores, web search) come from the run's services.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.long_context import LongContext
from pytest_bfcl.backends.memory import MemoryBackend
from pytest_bfcl.check.multi_turn import decode_step, is_empty_calls
from pytest_bfcl.dataset.categories import is_agentic, is_memory_prerequisite
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.reasoning import joined_reasoning
from pytest_bfcl.models.base import Generation, StepModel, StepReply, StepRequest, Task
from pytest_bfcl.models.cache_journal import forget, journal
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    with_language_hints,
)
from pytest_bfcl.run.excerpts import ANSWERS_KEPT_WHOLE, excerpt, with_reasoning_excerpts
from pytest_bfcl.scoring import CONTEXT_EXCEEDED, ENTRY_BUDGET_EXCEEDED


def _assistant_message(reply: StepReply, mode: str) -> dict[str, Any]:
    if mode != "fc" or not isinstance(reply.result, list):
        return {"role": "assistant", "content": reply.result if reply.result is not None else ""}
    tool_calls = []
    for index, item in enumerate(reply.result):
        name, arguments = next(iter(item.items())) if isinstance(item, dict) and item else ("", "")
        call_id = (
            reply.tool_call_ids[index] if index < len(reply.tool_call_ids) else f"call_{index}"
        )
        tool_calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def _result_messages(
    reply: StepReply, calls: list[str], results: list[str], mode: str
) -> list[dict[str, Any]]:
    if mode == "fc":
        ids = list(reply.tool_call_ids) + [
            f"call_{i}" for i in range(len(reply.tool_call_ids), len(results))
        ]
        return [
            {"role": "tool", "content": result, "tool_call_id": call_id}
            for result, call_id in zip(results, ids, strict=False)
        ]
    payload = [
        {"role": "tool", "name": call, "content": result}
        for call, result in zip(calls, results, strict=True)
    ]
    return [{"role": "user", "content": repr(payload)}]


class Conversation:
    """Runs one entry's turns against a step model and records what happened."""

    def __init__(
        self,
        task: Task,
        model: StepModel,
        mode: str,
        texts: ProtocolTexts,
        long_context: LongContext | None = None,
        services: BackendServices | None = None,
        initial_config: dict[str, Any] | None = None,
        budget: int | None = None,
        rewrite_model: str | None = None,
    ) -> None:
        """``initial_config`` replaces the entry's own (a memory conversation's snapshot);
        ``budget``: the bytes the conversation may hold and resend (``--bfcl-max-entry-bytes``);
        ``rewrite_model``: the model name with which calls are rewritten as the leaderboard's
        inference rewrites them (None: executed as written)."""
        self.task = task
        self.model = model
        self.mode = mode
        # The completions route: the leaderboard handler's family renders, reads and decodes
        # (pytest_bfcl.handlers); it holds the conversation as the handler does.
        self.family = getattr(model, "family", None)
        self.handler = self.family.handlers[0] if self.family is not None else None
        self.texts = texts
        entry = task.entry
        config = initial_config if initial_config is not None else entry.initial_config
        rewrite_for = (rewrite_model, entry.id) if rewrite_model is not None else None
        self.env = Environment.create(
            entry.involved_classes, config, long_context, services, rewrite_for
        )
        self.functions = with_language_hints(entry.function_sources(), "python", texts)
        self.history: list[dict[str, Any]] = []
        self.results: list[list[Any]] = []
        self.latency: list[list[float | None]] = []
        self.input_tokens: list[list[int | None]] = []
        self.output_tokens: list[list[int | None]] = []
        self.log: list[dict[str, Any]] = []
        # Per turn, per step: the reasoning text ("" for none), as the reference records it.
        self.reasoning: list[list[str]] = []
        self.force_quit = False
        self.all_cached = True
        # Why the conversation ended as the model's failure before its end (a context refusal).
        self.finish_reason: str | None = None
        self.refusal: Any = None
        self.budget = budget
        self.held = 0  # bytes of the history so far (as JSON), counted against the budget
        # bytes of the answers (as echoed) and their reasoning: what the record would keep
        self.answered = 0

    def run(self) -> Generation:
        with journal() as cached:
            for turn, messages in enumerate(self.task.entry.question):
                self._run_turn(turn, [m.model_dump() for m in messages])
                if self.force_quit:
                    break
        generation = self._generation()
        if self.finish_reason != ENTRY_BUDGET_EXCEEDED:
            if self.answered <= ANSWERS_KEPT_WHOLE:
                return generation
            # under its budget, but answering megabytes (reasoning echoed step after step):
            # scored as it is, its reasoning kept as excerpts and its answers not cached
            forget(cached)
            return with_reasoning_excerpts(generation)
        # a flood, the model's failure whatever it said: an excerpt of it is kept, and its
        # answers leave the cache (a rerun asks again)
        self.history, self.results, self.log = [], [], []
        forget(cached)
        reasoning = excerpt(generation.reasoning)
        return generation.model_copy(
            update={"details": excerpt(generation.details), "reasoning": reasoning}
        )

    # -- one turn -------------------------------------------------------------------------------

    def _turn_messages(self, turn: int, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        added = self.task.entry.held_out_sources_for(turn)
        if added is not None:
            self.functions = self.functions + added  # held-out docs get no language hint
            if self.mode == "fc" and self.family is None:
                messages = [{"role": "user", "content": self.texts.added_functions_fc}]
            else:
                text = self.texts.added_functions_prompting.format(functions=repr(added))
                messages = [{"role": "user", "content": text}]
        if turn == 0:
            messages = self._agentic_instructions(messages)
        prompted = self.family.system_prompt if self.family is not None else self.mode != "fc"
        if turn == 0 and prompted:
            # Built once from the docs shown at the start; held-out docs arrive as messages.
            prompt = system_prompt(self.functions, self.task.entry.prompt_format, self.texts)
            messages = insert_system_prompt(messages, prompt)
        if self.family is not None and added is None:
            messages = self.family.prepare_turn(messages)
        return messages

    def _agentic_instructions(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answer format first (questions of the agentic categories), then the memory
        instruction in front of it; the prompting system prompt goes in front of both."""
        entry = self.task.entry
        if not is_agentic(entry.id):
            return messages
        if not is_memory_prerequisite(entry.id):
            messages = [{"role": "system", "content": self.texts.agentic_answer_format}, *messages]
        memory = self.memory_backend()
        if memory is not None:
            instruction = self.texts.memory_instruction(
                memory.UNIFIED, entry.scenario or "", memory._context_dump()
            )
            messages = insert_system_prompt(messages, instruction)
        return messages

    def memory_backend(self) -> MemoryBackend | None:
        """The entry's memory store, when it has one."""
        return next((b for b in self.env.instances.values() if isinstance(b, MemoryBackend)), None)

    def _over_budget(self, messages: list[dict[str, Any]], answer: bool = False) -> bool:
        """Count messages about to join the history against the entry's budget, before they
        do; when they would take it over, the conversation ends as the model's failure (a
        model answering megabytes a step would otherwise have its growing history held and
        resent at every step). ``answer``: the messages are the model's (counted apart)."""
        if self.budget is None:
            return False
        try:
            size = sum(len(json.dumps(m, ensure_ascii=True, default=str)) for m in messages)
        except (ValueError, RecursionError):
            size = self.budget + 1
        if answer:
            self.answered += size
        return self._exceeds(size)

    def _exceeds(self, size: int) -> bool:
        """Whether ``size`` more bytes take the history over its budget (which ends the
        conversation as the model's failure); counted as held when they do not."""
        assert self.budget is not None
        if self.held + size <= self.budget:
            self.held += size
            return False
        self.force_quit, self.finish_reason = True, ENTRY_BUDGET_EXCEEDED
        self.refusal = (
            f"[the conversation was ended: it outgrew its budget of {self.budget} bytes "
            f"(--bfcl-max-entry-bytes): {self.held} bytes held, {size} more to add; not scored]"
        )
        return True

    def _run_turn(self, turn: int, messages: list[dict[str, Any]]) -> None:
        messages = self._turn_messages(turn, messages)
        if self._over_budget(messages):
            return
        self.history.extend(messages)
        turn_log: dict[str, Any] = {"begin_of_turn_query": copy.deepcopy(messages)}
        steps: list[Any] = []
        timing: list[tuple[float | None, int | None, int | None]] = []
        thoughts: list[str] = []
        step = 0
        while True:
            # Shallow copies: messages and docs are never changed once added, and models must
            # not change them either (deep copies cost more than the step itself).
            request = StepRequest(
                task=self.task,
                messages=list(self.history),
                functions=list(self.functions),
                mode=self.mode,
                turn=turn,
                step=step,
            )
            reply = self.model.step(request)
            self.all_cached = self.all_cached and reply.cached
            steps.append(reply.result)
            timing.append((reply.latency, reply.input_tokens, reply.output_tokens))
            thoughts.append(reply.reasoning or "")
            if reply.finish_reason == CONTEXT_EXCEEDED:  # the history outgrew the window
                self.force_quit, self.finish_reason = True, CONTEXT_EXCEEDED
                self.refusal = reply.result
                turn_log[f"step_{step}"] = [{"role": "handler_log", "content": reply.result}]
                break
            # As the model's client echoes it (the leaderboard handler's form), else the calls
            # or text alone (the reasoning is recorded, not sent back).
            echoed = (
                reply.echo if reply.echo is not None else [_assistant_message(reply, self.mode)]
            )
            self.answered += len(reply.reasoning or "")
            if self._over_budget(echoed, answer=True):
                break
            self.history.extend(echoed)
            said: dict[str, Any] = {"role": "assistant", "content": reply.result}
            if reply.reasoning:
                said["reasoning_content"] = reply.reasoning
            step_log: list[dict[str, Any]] = [said]
            turn_log[f"step_{step}"] = step_log
            try:
                calls = decode_step(reply.result, self.mode, self.handler)
            except DecodeError as exc:
                step_log.append(_undecoded_log(reply.result, self.mode, exc))
                break
            if is_empty_calls(calls):
                step_log.append({"role": "handler_log", "content": "no calls", "decoded": calls})
                break
            results = self._execute(calls)
            if results is None:  # their results alone would outgrow the budget
                break
            step_log.append({"role": "handler_log", "content": "decoded", "decoded": calls})
            step_log.extend({"role": "tool", "content": r} for r in results)
            if self.family is not None:
                fed_back = self.family.tool_results(calls, results)
            else:
                fed_back = _result_messages(reply, calls, results, self.mode)
            if self._over_budget(fed_back):
                break
            self.history.extend(fed_back)
            step += 1
            if step > self.texts.maximum_steps:
                self.force_quit = True
                step_log.append(
                    {"role": "handler_log", "content": f"forced to quit after {step} steps"}
                )
                break
        self.results.append(steps)
        self.reasoning.append(thoughts)
        self.latency.append([t[0] for t in timing])
        self.input_tokens.append([t[1] for t in timing])
        self.output_tokens.append([t[2] for t in timing])
        self.log.append(turn_log)

    def _execute(self, calls: list[str]) -> list[str] | None:
        """The calls' results, run one by one and counted against the budget as they come:
        a step of a thousand searches answered with megabytes each is stopped at the budget
        instead of held whole first. None when they outgrow it (the conversation ends)."""
        if self.budget is None:
            return self.env.execute(calls)
        results: list[str] = []
        size = 0
        for call in calls:
            result = self.env.execute_one(call)
            size += len(json.dumps(result, ensure_ascii=True))
            if self.held + size > self.budget:
                self._exceeds(size)
                return None
            results.append(result)
        return results

    # -- the record -----------------------------------------------------------------------------

    def _tool_failures(self) -> dict[str, Any]:
        """Web-search entries: how many searches and fetches failed (shown in the reports, so
        an answer made without working tools is visible)."""
        web = self.env.instances.get("WebSearchAPI")
        failures = getattr(web, "tool_failures", None)
        return {"tool_failures": failures} if failures else {}

    def _generation(self) -> Generation:
        def total(rows: list[list[Any]]) -> Any:
            values = [v for row in rows for v in row if v is not None]
            return sum(values) if values else None

        latency = total(self.latency)
        refused = self.finish_reason is not None
        return Generation(
            id=self.task.entry.id,
            # a context refusal or an outgrown budget: its note is the result, as the
            # leaderboard stores an error
            result=self.refusal if refused else self.results,
            finish_reason=self.finish_reason,
            latency=round(latency, 4) if latency is not None else None,
            input_tokens=total(self.input_tokens),
            output_tokens=total(self.output_tokens),
            reasoning=joined_reasoning(self.reasoning),
            cached=self.all_cached,
            steps=sum(len(steps) for steps in self.results),
            details={
                "latency": self.latency,
                "input_token_count": self.input_tokens,
                "output_token_count": self.output_tokens,
                "inference_log": self.log,
                "force_terminated": self.force_quit,
                # recorded only when any step had reasoning, as the reference does
                **({"reasoning_content": self.reasoning} if any(map(any, self.reasoning)) else {}),
                **self._tool_failures(),
            },
        )


# What the log says of a step that holds no calls to run: in fc mode a text answer is how a
# model ends its turn (its final answer), not a decoding failure.
FINAL_TEXT_LOG = "answer in text (no calls): the turn ends here"


def _undecoded_log(result: Any, mode: str, exc: DecodeError) -> dict[str, Any]:
    if mode == "fc" and isinstance(result, str):
        return {"role": "handler_log", "content": FINAL_TEXT_LOG}
    return {"role": "handler_log", "content": "decode failed", "error": str(exc)}
