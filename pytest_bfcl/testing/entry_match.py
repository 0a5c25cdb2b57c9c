"""Which entry a request to the fake server asks, among the single-turn entries that share its
question: a simple entry and the same question among several functions, or with none that fits
(irrelevance), are told apart by the functions the request offers."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.models.base import Task

Reply = TypeVar("Reply")
TOOL_RESULTS_PREFIX = "[{'role': 'tool'"  # prompting mode feeds results back as user messages


def asked_entry(candidates: list[tuple[Entry, Reply]], body: dict[str, Any]) -> tuple[Entry, Reply]:
    """The candidate whose functions the request offers, all of them, the most of them and
    the most like them; the first where none fits (entries that repeat a request exactly,
    functions included, cannot be told apart)."""
    if len(candidates) == 1:
        return candidates[0]
    shown = json.dumps(body.get("tools", [])) + " ".join(
        str(m.get("content")) for m in body["messages"] if m.get("role") == "system"
    )
    fitting = [c for c in candidates if all(offers(shown, d.name) for d in c[0].function)]
    return max(fitting, key=lambda c: likeness(shown, c[0])) if fitting else candidates[0]


def offers(shown: str, name: str) -> bool:
    """Whether a request's tools or system prompt name a function (as sent: dots become
    underscores where the endpoint's names allow no dots)."""
    return any(f'"{n}"' in shown or f"'{n}'" in shown for n in {name, name.replace(".", "_")})


def likeness(shown: str, entry: Entry) -> tuple[int, int]:
    """How much of an entry's functions a request shows: how many, then how many of their
    descriptions and their parameters' descriptions."""
    texts = [d.description for d in entry.function]
    for doc in entry.function:
        texts += [str(p.get("description", "")) for p in doc.parameters.properties.values()]
    return len(entry.function), sum(json.dumps(t)[1:-1] in shown for t in texts if t)


def asked_conversation(candidates: list[Task], body: dict[str, Any]) -> Task:
    """The conversation asked, of those sharing its first message (the categories of
    ``multi_turn`` repeat their conversations with a parameter or a function held back): the
    one whose turns so far are the request's and whose functions it offers; the first where
    none is (a long-context copy answered like its original cannot be told apart)."""
    shown = json.dumps(body.get("tools", [])) + str(body["messages"][0].get("content"))
    asked = user_turns(body["messages"])
    best, best_score = candidates[0], (-1, -1)
    for task in candidates:
        alike = _turns_alike(task, asked)
        if alike is None or not all(offers(shown, d.name) for d in task.entry.function):
            continue
        score = (alike, len(task.entry.function))  # the most functions: none held back
        if score > best_score:
            best, best_score = task, score
    return best


def user_turns(messages: list[dict[str, Any]]) -> list[str]:
    """The user messages that open a turn (not tool results fed back as text)."""
    return [
        str(m.get("content"))
        for m in messages
        if m.get("role") == "user" and not str(m.get("content")).startswith(TOOL_RESULTS_PREFIX)
    ]


def _turns_alike(task: Task, asked: list[str]) -> int | None:
    """How many of the request's turns are the entry's; None where one differs (a turn that
    adds held-back functions is asked with the harness's text, not the entry's)."""
    alike = 0
    for turn, text in enumerate(asked):
        if turn >= len(task.entry.question):
            return None
        questions = [m.content for m in task.entry.question[turn] if m.role == "user"]
        if not questions:  # a turn that adds held-back functions
            if str(turn) not in task.entry.held_out_functions:
                return None
            continue
        if questions[-1] != text:
            return None
        alike += 1
    return alike


def conversation_position(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(turn, step) of a multi-turn request: turns are the user's own messages, steps the
    assistant messages since the last of them."""
    turn, step = -1, 0
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "user" and not str(content).startswith(TOOL_RESULTS_PREFIX):
            turn, step = turn + 1, 0
        elif role == "assistant":
            step += 1
    return turn, step


def named_as_shown(result: Any, body: dict[str, Any]) -> Any:
    """Calls ``[{name: arguments}]`` named as the request's tools show the functions: a
    docs name whose tool is sent with underscores for dots is answered with underscores, as a
    model answers with the names it sees."""
    if not isinstance(result, list):
        return result
    shown = {tool.get("function", tool).get("name") for tool in body.get("tools") or [] if tool}
    renamed = []
    for call in result:
        name, arguments = next(iter(call.items()))
        if name not in shown and name.replace(".", "_") in shown:
            name = name.replace(".", "_")
        renamed.append({name: arguments})
    return renamed


def question_key(messages: list[dict[str, Any]]) -> str:
    """Identify a request by its non-system messages."""
    return json.dumps([m for m in messages if m.get("role") != "system"], sort_keys=True)
