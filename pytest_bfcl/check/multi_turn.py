"""Checking a multi-turn entry (also used by the agentic categories' executors).

The model's steps are decoded and executed turn by turn against fresh backend instances; the
ground truth runs against another set with identical initial state. After each turn with a
non-empty ground truth, the public state of every ground-truth instance must equal the model's,
and every ground-truth result must be found among the model's results so far.

By default the rules match the reference evaluator, quirks included; ``strict`` turns on the
check the reference leaves disabled (calls made in a turn whose ground truth is empty fail).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.filesystem import Directory
from pytest_bfcl.backends.long_context import LongContext
from pytest_bfcl.check.own_decoder import handler_decoder
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.models import Entry, MultiTurnAnswer
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.fc import decode_fc_execute
from pytest_bfcl.decode.limits import clip
from pytest_bfcl.decode.prompting import decode_prompting_execute
from pytest_bfcl.errors import InfrastructureError


@dataclass(frozen=True)
class MultiTurnOptions:
    mode: str = "fc"  # "fc" or "prompt": how each step's raw output is decoded
    strict: bool = False  # fail calls made in a turn whose ground truth is empty
    handler: str | None = None  # a leaderboard handler whose own decoder reads text answers


def decode_step(raw: Any, mode: str, handler: str | None = None) -> list[str]:
    """One step's raw output as call strings. Raises DecodeError when it is not a call list,
    whatever odd shape the output has. ``handler``: a leaderboard handler whose own decoder
    reads a text answer (:mod:`pytest_bfcl.handlers`)."""
    try:
        own = handler_decoder(handler, raw)
        if own is not None:
            return own.decode_execute(raw)
        if mode == "fc":
            return decode_fc_execute(raw)
        return decode_prompting_execute(raw)
    except DecodeError:
        raise
    except Exception as exc:  # whatever the output makes a decoder raise is the model's failure
        raise DecodeError(f"{type(exc).__name__}: {clip(str(exc))}") from None


def is_empty_calls(calls: list[str]) -> bool:
    # As the reference: no calls, or a single empty call string.
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)


def decoded_turns(
    result: list[Any], mode: str, handler: str | None = None
) -> list[list[list[str]]]:
    """Per turn, the steps that decoded to a non-empty call list (others are dropped)."""
    turns: list[list[list[str]]] = []
    for turn in result:
        if isinstance(turn, str):
            # Quirk: the leaderboard walks a turn stored as a string (instead of a list of
            # steps) character by character; no single character decodes to a call, so the
            # turn has no steps. Followed without walking it (it may be megabytes long).
            turns.append([])
            continue
        steps = turn if isinstance(turn, list) else [turn]
        kept = []
        for step in steps:
            try:
                calls = decode_step(step, mode, handler)
            except DecodeError:
                continue
            if not is_empty_calls(calls):
                kept.append(calls)
        turns.append(kept)
    return turns


def missing_results(expected: list[str], produced: list[str]) -> list[str]:
    """Expected results not found in ``produced`` (multiset containment, order ignored)."""
    available = Counter(produced)
    missing = []
    for item in expected:
        if available[item] > 0:
            available[item] -= 1
        else:
            missing.append(item)
    return missing


def state_differences(model: Environment, truth: Environment) -> dict[str, dict[str, Any]]:
    """Per class, the public attributes whose values differ: ``{attr: {model, ground_truth}}``."""
    out: dict[str, dict[str, Any]] = {}
    for name, expected in truth.instances.items():
        actual = model.instances[name]
        diffs = {
            attr: {"model": getattr(actual, attr, None), "ground_truth": value}
            for attr, value in expected._state().items()
            if getattr(actual, attr, None) != value
        }
        if diffs:
            out[name] = diffs
    return out


def evaluate_multi_turn(
    entry: Entry,
    answer: MultiTurnAnswer,
    result: Any,
    options: MultiTurnOptions,
    long_context: LongContext | None = None,
) -> Verdict:
    try:
        return _evaluate_multi_turn(entry, answer, result, options, long_context)
    except InfrastructureError:
        raise  # the run's fault (a tool that cannot work), not the model's
    except Exception as exc:  # anything the output makes the checker raise is a verdict
        return Verdict(
            id=entry.id,
            category=entry.category,
            model_output=result,
            valid=False,
            error_type="multi_turn:unreadable_output",
            errors=[
                f"the checker could not read the output: {type(exc).__name__}: {clip(str(exc))}"
            ],
            expected=answer.ground_truth,
        )


def _evaluate_multi_turn(
    entry: Entry,
    answer: MultiTurnAnswer,
    result: Any,
    options: MultiTurnOptions,
    long_context: LongContext | None,
) -> Verdict:
    base = {"id": entry.id, "category": entry.category, "model_output": result}
    expected = answer.ground_truth
    if not isinstance(result, list):
        return Verdict(
            **base,
            valid=False,
            error_type="multi_turn:inference_error",
            errors=[
                "Error during inference phase. Model did not output a list of model responses."
            ],
            expected=expected,
        )
    if len(result) != len(expected):
        return Verdict(
            **base,
            valid=False,
            error_type="multi_turn:force_terminated",
            errors=[
                "Model was force-terminated during inference phase. The length of the model "
                f"result turns ({len(result)}) does not match the length of the ground truth "
                f"turns ({len(expected)})."
            ],
            expected=expected,
            report=[f"the model answered {len(result)} of {len(expected)} turns"],
        )
    turns = decoded_turns(result, options.mode, options.handler)
    model_env = Environment.create(entry.involved_classes, entry.initial_config, long_context)
    truth_env = Environment.create(entry.involved_classes, entry.initial_config, long_context)
    all_model_results: list[str] = []
    for index, (steps, truth_calls) in enumerate(zip(turns, expected, strict=True)):
        turn_results = [r for calls in steps for r in model_env.execute(calls)]
        all_model_results.extend(turn_results)
        truth_results = truth_env.execute(truth_calls)
        failure = _turn_failure(
            index, steps, turn_results, truth_calls, truth_results, all_model_results,
            model_env, truth_env, options,
        )  # fmt: skip
        if failure is not None:
            error_type, message, report = failure
            if isinstance(result[index], str) and error_type.endswith("empty_turn_model_response"):
                message += (
                    " (the turn was stored as a string, not a list of steps; the leaderboard "
                    "reads it character by character, and no character is a call)"
                )
            return Verdict(
                **base,
                valid=False,
                error_type=error_type,
                errors=[message],
                decoded=turns,
                expected=expected,
                report=report,
            )
    return Verdict(**base, valid=True, decoded=turns, expected=expected)


def _turn_failure(
    index: int,
    steps: list[list[str]],
    turn_results: list[str],
    truth_calls: list[str],
    truth_results: list[str],
    all_model_results: list[str],
    model_env: Environment,
    truth_env: Environment,
    options: MultiTurnOptions,
) -> tuple[str, str, list[str]] | None:
    calls = [c for step in steps for c in step]
    made = _calls_report(index, calls, turn_results, truth_calls)
    if truth_calls and not steps:
        return (
            "multi_turn:empty_turn_model_response",
            f"Model response list is empty for turn {index}",
            made,
        )
    if not truth_calls:
        if options.strict and steps:
            return (
                "multi_turn:irrelevance_error:decoder_success",
                f"Model made calls in turn {index}, where none should be made (strict mode)",
                made,
            )
        return None  # Quirk kept: calls in a turn whose ground truth is empty are not judged
    differences = state_differences(model_env, truth_env)
    if differences:
        name = next(iter(differences))
        lines = [*made, "  state differences (model vs ground truth):"]
        for cls, attrs in differences.items():
            for attr, pair in attrs.items():
                lines.append(f"    {cls}.{attr}:")
                lines += [f"      {line}" for line in describe_difference(**pair)]
        return (
            "multi_turn:instance_state_mismatch",
            f"Model instance for {name} does not match the state with ground truth instance.",
            lines,
        )
    missing = missing_results(truth_results, all_model_results)
    if missing:
        lines = [*made, "  results the ground truth obtained that the model never did:"]
        lines += [f"    {_short(item)}" for item in missing]
        return (
            "multi_turn:execution_response_mismatch",
            "Model response execution results so far does not contain all the ground truth "
            f"response execution results for turn {index}.",
            lines,
        )
    return None


def describe_difference(model: Any, ground_truth: Any) -> list[str]:
    """Readable lines for one differing attribute: for trees and mappings, only the paths or
    keys that differ."""
    if isinstance(model, Directory) and isinstance(ground_truth, Directory):
        model, ground_truth = (
            model._flatten("/" + model.name),
            ground_truth._flatten("/" + ground_truth.name),
        )
    if isinstance(model, dict) and isinstance(ground_truth, dict):
        lines = []
        for key in list(ground_truth) + [k for k in model if k not in ground_truth]:
            if key not in model:
                lines.append(f"missing in the model: {key!s} = {_short(ground_truth[key], 160)}")
            elif key not in ground_truth:
                lines.append(f"only in the model:    {key!s} = {_short(model[key], 160)}")
            elif model[key] != ground_truth[key]:
                lines.append(f"{key!s}: model {_short(model[key], 120)}")
                lines.append(
                    f"{' ' * len(str(key))}  ground truth {_short(ground_truth[key], 120)}"
                )
        if lines:
            return lines
    return [f"model:        {_short(model)}", f"ground truth: {_short(ground_truth)}"]


def _calls_report(
    index: int, calls: list[str], results: list[str], truth_calls: list[str]
) -> list[str]:
    lines = [f"  turn {index}: the model made {len(calls)} call(s)"]
    lines += [
        f"    {_short(c, 160)} -> {_short(r, 160)}" for c, r in zip(calls, results, strict=True)
    ]
    lines.append(f"  turn {index}: the ground truth makes {len(truth_calls)} call(s)")
    lines += [f"    {_short(c, 160)}" for c in truth_calls]
    return lines


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
