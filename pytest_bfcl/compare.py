"""``python -m pytest_bfcl.compare BEFORE AFTER``: two stored runs compared without running a
model (two checkpoints, two serving stacks, a parser change): the gate's table with its
statistics and family-wise control, the entries that changed each way with both answers, and
the exit status the gate would give (1 on a significant drop, 0 otherwise, 2 on bad input:
see :data:`EXIT_DROP`).

A stored run is a baseline (``--bfcl-save-baseline``: any run can save one, a pull request's
as well as main's). Its stamps are checked as the gate checks them; the runs are compared on
the entries both scored (a sampled run against a full one). See docs/gating.md, "Reviewing a
red gate".
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import category_of_id, natural_key
from pytest_bfcl.dataset.known_errors import Policy
from pytest_bfcl.files import NotARegularFile, loads_bounded, read_problem, read_regular_file
from pytest_bfcl.gate import (
    Baseline,
    BaselineAnswers,
    BaselineError,
    GateResult,
    SignatureError,
    evaluate_gate,
    incompatibilities,
    load_baseline,
    measured_note,
    setting_differences,
    signing_key,
    stamp_differences,
)
from pytest_bfcl.printable import escaped, printable
from pytest_bfcl.redact import redact_data, redact_text
from pytest_bfcl.report.answers import baseline_lines, change_record
from pytest_bfcl.report.html.answer_diff import DiffBudget, answer_fields
from pytest_bfcl.report.html.facts import EntryRecord
from pytest_bfcl.report.render import gate_block, model_inputs
from pytest_bfcl.scores.board import ScoreBoard, Scores
from pytest_bfcl.settings import GateSettings

PROG = "python -m pytest_bfcl.compare"


class CompareError(ValueError):
    """Two stored runs that cannot be compared."""


# Exit statuses: the comparison passed; it found a drop (whatever else went wrong after it was
# printed: a script reading 1 as "a drop" is never told otherwise); nothing could be compared,
# or a passing comparison's page could not be written.
EXIT_PASSED, EXIT_DROP, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.html is not None and any(_same_file(args.html, p) for p in (args.before, args.after)):
        return _refuse(CompareError(f"--html {args.html} is one of the runs compared"))
    try:
        key = signing_key(args.key_env, "--key-env")
        before, after = (stored_run(path, key) for path in (args.before, args.after))
        settings = GateSettings(mode=args.gate, alpha=args.alpha, min_drop=args.min_drop)
        gate, scores = compare_runs(before, after, settings)
        lines = compare_lines(args, before, after, gate)
    except (BaselineError, SignatureError, CompareError, OSError, ValueError) as exc:
        return _refuse(exc)  # (a UnicodeError is a ValueError: a lone surrogate in a field)
    for line in lines:
        _say(line)
    verdict = EXIT_DROP if gate.failed else EXIT_PASSED
    if args.html is not None:
        try:  # after the comparison is printed: an unwritable page loses nothing of it
            write_compare_html(args.html, before, after, scores, gate)
        except (OSError, ValueError) as exc:
            if isinstance(exc, NotARegularFile):
                why = read_problem(exc)
            else:
                why = "it is a directory" if args.html.is_dir() else _why(exc)
            _refuse(CompareError(f"cannot write the HTML report {args.html}: {why}"))
            return verdict if gate.failed else EXIT_BAD_INPUT
    return verdict


def _why(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _say(line: str, file: Any = None) -> None:
    """One line of output, as data: secrets masked, control and bidirectional characters and
    lone surrogates escaped (a baseline is anyone's file; its fields can forge a line)."""
    stream = file or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"  # an ASCII console: escaped too
    text = escaped(redact_text(line)).encode(encoding, "backslashreplace").decode(encoding)
    print(text, file=stream)


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.samefile(other)
    except OSError:  # one is missing: they are not the same
        return False


# Characters of a refusal: one line, however long what it quotes from the runs.
REFUSAL_LIMIT = 1000


def _refuse(exc: Exception) -> int:
    _say(printable(f"compare: {' '.join(str(exc).split())}", REFUSAL_LIMIT), sys.stderr)
    return EXIT_BAD_INPUT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Compare two stored runs (baselines saved with --bfcl-save-baseline) as "
        "the regression gate would, without running a model.",
    )
    parser.add_argument("before", type=Path, help="the run compared with (main's baseline)")
    parser.add_argument("after", type=Path, help="the run under review")
    parser.add_argument("--gate", choices=("significant", "any", "off"), default="significant")
    parser.add_argument("--alpha", type=_share, default=0.05, help="family-wise error rate")
    parser.add_argument(
        "--min-drop", type=_points, default=1.0, help="points a drop needs to fail (significant)"
    )
    parser.add_argument(
        "--show",
        type=_count,
        metavar="N",
        help="changed entries shown each way (default: as many as fit in 150 lines, at most 8)",
    )
    parser.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report")
    parser.add_argument(
        "--key-env",
        metavar="VAR",
        help="environment variable with the baseline signing key: both runs must be signed",
    )
    return parser


def _share(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _points(text: str) -> float:
    # NaN would compare false with every drop: a run ten points worse would pass.
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a finite number at least 0")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a count (0 or more)")
    return value


def stored_run(path: Path, key: bytes | None) -> Baseline:
    """A run saved as a baseline; a results directory or a JSON report (which hold no
    verdicts to pair) is refused saying what to give instead."""
    if path.is_dir():
        raise CompareError(
            f"{path} is a directory: give runs saved with --bfcl-save-baseline (results "
            "directories are scored by a run: --bfcl-model=replay:DIR --bfcl-save-baseline=PATH)"
        )
    try:
        return load_baseline(path, key)
    except BaselineError as exc:
        if _is_json_report(path):
            raise CompareError(
                f"{path} is a JSON report (--bfcl-report), which holds no verdict per entry: "
                "give runs saved with --bfcl-save-baseline"
            ) from None
        raise exc from None


def _is_json_report(path: Path) -> bool:
    try:
        data = loads_bounded(read_regular_file(path, 256 * 2**20).decode("utf-8"), 64)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and {"overall", "categories", "gate"} <= set(data)


def compare_runs(
    before: Baseline, after: Baseline, settings: GateSettings
) -> tuple[GateResult, Scores]:
    """The gate's decision on ``after`` against ``before``, on the entries both scored, and
    ``after``'s scores on them. Runs whose verdicts are not comparable (other rules,
    sampling, request fields, data or mode) are refused, as the gate refuses them."""
    declared = declared_changes(after)
    problems = stamp_differences(before, after.metadata, declared) + [
        p
        for p in incompatibilities(before, after.metadata, declared)
        if not p.startswith("categories")
    ]
    if problems:
        raise CompareError(f"these runs cannot be compared: {'; '.join(dict.fromkeys(problems))}")
    common = set(before.verdicts) & set(after.verdicts)
    if not common:
        raise CompareError("these runs scored no entry in common")
    board = ScoreBoard()
    for entry_id in sorted(common, key=natural_key):
        passes, samples = after.rate(entry_id)
        valid = after.verdicts[entry_id]
        board.add_verdict(entry_id, category_of_id(entry_id), valid, passes, samples)
    recorded = after.metadata.get("known_errors")
    policy: Policy = recorded if recorded in ("include", "correct") else "exclude"
    gate = evaluate_gate(
        board.scores(),
        {i: after.rate(i) for i in common},
        {i: before.rate(i) for i in common},
        settings,
        common_only=True,
        exclude=listed_errors.gate_exclusions(common, policy),
    )
    assert gate is not None  # a baseline was given
    return gate, board.scores()


def declared_changes(after: Baseline) -> tuple[str, ...]:
    """The request settings the later run declared changed on purpose (its
    ``--bfcl-settings-change``): measured, as its gate measured them."""
    declared = after.metadata.get("settings_change")
    return tuple(str(d) for d in declared) if isinstance(declared, list) else ()


def run_differences(before: Baseline, after: Baseline) -> list[str]:
    """What a reviewer must know differs between the runs besides their answers: the model's
    inputs whose digest changed, and the request settings declared changed."""
    lines = []
    was, now = model_inputs(before.metadata), model_inputs(after.metadata)
    for path in sorted(set(was) | set(now)):
        if was.get(path) != now.get(path):
            lines.append(
                f"model input {path}: before {was.get(path, 'absent')}, "
                f"after {now.get(path, 'absent')}"
            )
    changes = [
        d
        for d in setting_differences(before.metadata, after.metadata)
        if d.name in declared_changes(after)
    ]
    return lines + ([measured_note(changes)] if changes else [])


def compare_lines(
    args: argparse.Namespace, before: Baseline, after: Baseline, gate: GateResult
) -> list[str]:
    """What the command prints: the two runs, the gate's table, the changed entries with both
    answers (``--show`` each way), and the verdict."""
    common = len(set(before.verdicts) & set(after.verdicts))
    lines = [
        f"before: {args.before}: {_run_line(before)}",
        f"after:  {args.after}: {_run_line(after)}",
        f"compared on the {common:,} entries both runs scored "
        f"(before alone: {len(before.verdicts) - common:,}, after alone: "
        f"{len(after.verdicts) - common:,})",
        *run_differences(before, after),
        "",
        *gate_block(gate),
    ]
    answers = BaselineAnswers.of(before)
    now = BaselineAnswers.of(after)
    worse, better = changed_entries(gate)
    show = args.show if args.show is not None else _fitting(len(lines), worse, better)
    for title, entry_ids in (("worse now", worse), ("better now", better)):
        if not entry_ids:
            continue
        lines += ["", f"{title}: {len(entry_ids)}"]
        for entry_id in entry_ids[:show]:
            lines.append(f"{printable(entry_id)} [{category_of_id(entry_id)}]")
            shown = baseline_lines(entry_id, answers, now.get(entry_id))
            if now.get(entry_id) is None:
                shown.append(f"  now:      (none: {now.missing(entry_id)})")
            lines += shown
        if len(entry_ids) > show:
            lines.append(f"... and {len(entry_ids) - show} more (--show N; all in --html)")
    lines += ["", f"compare: {'FAILED' if gate.failed else 'passed'}"]
    return lines


# The output's length without --show: a reviewer reads it in one screenful of a CI log.
MAX_LINES = 150
DEFAULT_SHOWN = 8


def _fitting(used: int, worse: list[str], better: list[str]) -> int:
    """How many changed entries each way fit in :data:`MAX_LINES` (three lines each), after
    the ``used`` lines above them, their titles, the lines saying how many more, and the
    verdict."""
    ways = sum(1 for ids in (worse, better) if ids)
    room = MAX_LINES - used - 3 * ways - 2
    return max(1, min(DEFAULT_SHOWN, room // (3 * max(ways, 1))))


def changed_entries(gate: GateResult) -> tuple[list[str], list[str]]:
    """The entries worse now (regressions first, then those flaky before) and better now."""
    categories = [c for c in gate.comparisons if c.kind == "category"]
    worse = [i for c in categories for i in c.regressions]
    worse += [i for c in categories for i in c.flaky_before]
    better = [i for c in categories for i in c.improvements]
    return worse, better


def _run_line(run: Baseline) -> str:
    """A stored run in one line; its fields are the file's, shown as data, bounded."""
    meta = run.metadata
    info = meta.get("model_info")
    info = info if isinstance(info, dict) else {}
    identity = info.get("identity") or meta.get("model_revision")
    model = printable(meta.get("model")) + (f" [{printable(identity)}]" if identity else "")
    answers = "with answers" if run.answers is not None else "without answers"
    when = printable(meta.get("finished_at") or "time not recorded", 64)
    return f"{model}, {len(run.verdicts):,} entries, {answers}, recorded {when}"


def write_compare_html(
    path: Path, before: Baseline, after: Baseline, scores: Scores, gate: GateResult
) -> None:
    """The page the plugin writes, with an entry per compared entry: the verdicts of both
    runs and their answers side by side."""
    from pytest_bfcl.report.html.entries import HtmlEntries
    from pytest_bfcl.report.html.page import write_html

    entries = HtmlEntries()
    answers, now = BaselineAnswers.of(before), BaselineAnswers.of(after)
    common = set(before.verdicts) & set(after.verdicts)
    budget = DiffBudget()  # the plugin's page's bound on the time its answer diffs take
    for entry_id in sorted(common, key=natural_key):
        entries.add_record(
            comparison_record(
                entry_id,
                category_of_id(entry_id),
                before.verdicts[entry_id],
                after.verdicts[entry_id],
                answers.get(entry_id),
                now.get(entry_id),
                budget,
            )
        )
    # the runs' stamps as data: secrets masked, lone surrogates escaped
    metadata: dict[str, Any] = redact_data(
        _encodable({**after.metadata, "compared_with": before.metadata})
    )
    worse, _ = changed_entries(gate)
    answers.all()  # read now, so the note below is known
    changes = {
        "note": answers.why_none,
        "regressions": [change_record(i, category_of_id(i), answers, now.get(i)) for i in worse],
    }
    write_html(path, entries, scores, gate, metadata, changes=redact_data(_encodable(changes)))


def _encodable(data: Any) -> Any:
    """JSON-like data whose every text can be encoded (lone surrogates escaped)."""
    if isinstance(data, str):
        return data.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(data, dict):
        return {_encodable(k): _encodable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_encodable(item) for item in data]
    return data


def comparison_record(
    entry_id: str,
    category: str,
    before: bool,
    after: bool,
    before_answer: str | None,
    after_answer: str | None,
    budget: DiffBudget | None = None,
) -> EntryRecord:
    """An entry of two stored runs: the later run's verdict, the earlier's as its baseline,
    and both answers (marked where they differ, for an entry that changed, while the page's
    ``budget`` for marking lasts)."""
    fields: dict[str, Any] = {"output": after_answer or ""}
    if before != after:
        fields.update(answer_fields(before_answer, after_answer, budget))
    return EntryRecord(
        id=printable(entry_id),
        category=category,
        outcome="passed" if after else "failed",
        valid=after,
        baseline_valid=before,
        regression=before and not after,
        improvement=after and not before,
        **fields,
    )


if __name__ == "__main__":
    sys.exit(main())
