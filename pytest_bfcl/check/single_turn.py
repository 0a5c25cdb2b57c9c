"""Score one single-turn output: decode it, then run the AST or relevance checker."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.check.ast_checker import CheckOptions, check_calls
from pytest_bfcl.check.call_format import is_call_list, is_empty_output
from pytest_bfcl.check.own_decoder import handler_decoder
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import CATEGORIES, Kind, category_of_id
from pytest_bfcl.dataset.models import AstAnswer, Entry
from pytest_bfcl.decode import DecodeError, decode_fc_ast, decode_prompting_ast
from pytest_bfcl.decode.limits import clip
from pytest_bfcl.scoring import ScoringOptions


def decode_single_turn(result: Any, entry: Entry, options: ScoringOptions) -> Any:
    """Decode a raw output with the model's decoder; raises :class:`DecodeError`."""
    try:
        own = handler_decoder(options.handler, result)
        if own is not None:  # a leaderboard handler's own decoder reads its text answers
            return own.decode_ast(result, entry.language, entry.prompt_format)
        if options.mode == "fc":
            return decode_fc_ast(result)
        return decode_prompting_ast(result, entry.prompt_format, entry.language)
    except DecodeError:
        raise
    except Exception as exc:  # whatever the output makes a decoder raise is the model's failure
        raise DecodeError(f"{type(exc).__name__}: {clip(str(exc))}") from exc


def evaluate_single_turn(
    entry: Entry, answer: Any, result: Any, options: ScoringOptions
) -> Verdict:
    """Score a single-turn entry by its category's declared kind: relevance and irrelevance
    by whether a call was made, the rest (AST, format sensitivity) by the AST rules. The
    single-turn kinds (:mod:`pytest_bfcl.kinds.single_turn`) score through here."""
    kind = CATEGORIES[entry.category].kind
    if kind in (Kind.IRRELEVANCE, Kind.RELEVANCE):
        return evaluate_relevance(entry, result, options, expects_call=kind is Kind.RELEVANCE)
    if not isinstance(answer, AstAnswer):
        raise ValueError(f"{entry.id}: AST checking needs the ground truth")
    return evaluate_ast(entry, answer, result, options)


def ast_rules(entry: Entry) -> str:
    """The AST rules an entry is checked under: its category's, or for a format-sensitivity
    copy, those of the category it was copied from."""
    category = category_of_id(entry.source_id) if entry.format_config else entry.category
    rules = CATEGORIES[category].checker
    if rules is None:
        raise ValueError(f"category {category!r} declares no AST rules")
    return rules


def evaluate_ast(entry: Entry, answer: AstAnswer, result: Any, options: ScoringOptions) -> Verdict:
    base = {"id": entry.id, "category": entry.category, "model_output": result}
    expected = answer.ground_truth
    try:
        decoded = decode_single_turn(result, entry, options)
    except DecodeError as exc:
        return Verdict(
            **base,
            valid=False,
            error_type="ast_decoder:decoder_failed",
            errors=[f"Invalid syntax. Failed to decode AST. {exc}"],
            expected=expected,
        )
    if not is_call_list(decoded):
        return Verdict(
            **base,
            valid=False,
            error_type="ast_decoder:decoder_wrong_output_format",
            errors=["Did not output in the specified format."],
            decoded=decoded,
            expected=expected,
        )
    check_options = CheckOptions(
        language=entry.language,
        underscore_to_dot=options.mode == "fc" and options.underscore_to_dot,
    )
    try:
        outcome = check_calls(entry.function, decoded, expected, ast_rules(entry), check_options)
    except (KeyError, ValueError) as exc:
        # Data the checker cannot read (an unknown type, a ground-truth name without a doc):
        # a failure of this entry with the cause, not an aborted run.
        return Verdict(
            **base,
            valid=False,
            error_type="ast_checker:unsupported",
            errors=[str(exc)],
            decoded=decoded,
            expected=expected,
        )
    except Exception as exc:  # a decoded value the checker cannot compare: still a verdict
        return Verdict(
            **base,
            valid=False,
            error_type="ast_checker:unreadable_value",
            errors=[f"the checker could not read the output: {type(exc).__name__}: {exc}"],
            decoded=decoded,
            expected=expected,
        )
    return Verdict(
        **base,
        valid=outcome.valid,
        error_type=outcome.error_type,
        errors=outcome.errors,
        decoded=decoded,
        expected=expected,
    )


def evaluate_relevance(
    entry: Entry, result: Any, options: ScoringOptions, *, expects_call: bool
) -> Verdict:
    """Relevance (``expects_call``): success means at least one call, the arguments are not
    checked. Irrelevance: success means no call."""
    decoded: Any = None
    failure: str | None = None
    try:
        decoded = decode_single_turn(result, entry, options)
        has_call = not is_empty_output(decoded)
    except DecodeError as exc:
        has_call = False
        failure = str(exc)
    base = {"id": entry.id, "category": entry.category, "model_output": result, "decoded": decoded}
    if not expects_call:
        if not has_call:
            return Verdict(**base, valid=True)
        return Verdict(
            **base,
            valid=False,
            error_type="irrelevance_error:decoder_success",
            errors=["Valid syntax. Successfully decode AST when it should not."],
        )
    if has_call:
        return Verdict(**base, valid=True)
    return Verdict(
        **base,
        valid=False,
        error_type="relevance_error:decoder_failed",
        errors=[f"Invalid syntax. Failed to decode AST when it should have. {failure}"],
    )
