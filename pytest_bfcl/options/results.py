"""What a run reports and how it gates: the report files, baselines, the gate's rules, sampling
and the known ground-truth errors."""

from __future__ import annotations

from pytest_bfcl import option_rules as rules
from pytest_bfcl.options.base import Option

RESULTS_OPTIONS: tuple[Option, ...] = (
    Option(
        "--bfcl-report",
        "report_path",
        "write the JSON score report to this path",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-list-failures",
        "list_failures",
        "failing entries listed, a line each, at the end of the run (default 20; regressions "
        "first); pytest's own section per failure appears with -v or an explicit --tb",
        rule=rules.whole(0),
    ),
    Option(
        "--bfcl-explain",
        "explain",
        "ID: explain this entry's failure in full at the end of the run (repeatable)",
        "append",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-html",
        "html_path",
        "write a self-contained HTML report (scores, every entry with its output, expected "
        "answer and the checker's reasons, filters and search) to this path",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-baseline",
        "baseline_path",
        "compare with this baseline; gate on regressions",
        rule=rules.EXISTING_FILE,
    ),
    Option(
        "--bfcl-save-baseline",
        "save_baseline_path",
        "save this run's verdicts (and answers) as a baseline",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-settings-change",
        "settings_change",
        "request settings this change sets apart from the baseline's on purpose (max_tokens, "
        "temperature, extra_body, wire_format, history_echo, comma-separated): the gate "
        "measures their effect against the baseline instead of refusing it",
        rule=rules.SETTINGS_CHANGE,
    ),
    Option(
        "--bfcl-baseline-common",
        "baseline_common",
        "compare with a baseline from other data/categories/mode on the entries both have",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-partial-eval",
        "partial_eval",
        "score each category over the entries present, as the leaderboard's --partial-eval "
        "(default: a category with missing entries is 'not run' in the group scores); "
        "every report says so",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-allow-incomplete",
        "allow_incomplete",
        "let the gate decide on the entries scored even when some were not (no result, "
        "skipped, errored, not run); the reports say the run was incomplete",
        "flag",
        rule=rules.SWITCH,
    ),
    Option("--bfcl-gate", "gate_mode", "significant (default), any, or off", rule=rules.GATE_MODE),
    Option(
        "--bfcl-alpha",
        "gate_alpha",
        "significance level of the gate (default 0.05)",
        rule=rules.number(above=0, below=1),
    ),
    Option(
        "--bfcl-min-drop",
        "gate_min_drop",
        "smallest drop in points that fails (default 1)",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-min-score",
        "min_scores",
        "NAME=PERCENT: fail when a category, group or 'overall' scores below it (repeatable)",
        "append",
        rule=rules.THRESHOLD,
    ),
    Option(
        "--bfcl-sample",
        "sample",
        "run a stratified sample: a fraction of each category (0.1 or 10%), or a count (200): "
        "the whole sample's size, split in proportion to the categories' sizes, one entry of "
        "each at least",
        rule=rules.SAMPLE_SIZE,
    ),
    Option(
        "--bfcl-samples",
        "samples",
        "K: ask every entry K times (independent requests); an entry scores passes out of K, "
        "and the gate compares pass rates (default 1)",
        rule=rules.whole(1, 1000),
    ),
    Option(
        "--bfcl-detect",
        "detect",
        "POINTS: sample each category just large enough that the gate detects a drop of this "
        "many points (with 80 percent power; instead of --bfcl-sample)",
        rule=rules.number(above=0, below=100),
    ),
    Option(
        "--bfcl-sequential",
        "sequential",
        "the pull-request gate: start from 10 percent of each category and ask a category 30 "
        "percent, then all of it, while a comparison it belongs to cannot rule out the drop the "
        "full run detects; fails early on strong evidence (alpha spent across the stages, "
        "false alarms stay within alpha); stages drawn per commit; needs --bfcl-baseline, one "
        "process, no --bfcl-min-score",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-known-errors",
        "known_errors",
        "entries whose ground truth is known to be wrong upstream (data/"
        "known_ground_truth_errors.json): 'exclude' them from the gate (default), 'include' "
        "them, or 'correct' them (score them against the corrected answer)",
        rule=rules.KNOWN_ERRORS,
    ),
    Option(
        "--bfcl-seed",
        "seed",
        "seed of --bfcl-sample (0 when not given) and of --bfcl-sequential's stages (when not "
        "given: from the commit under test, GITHUB_SHA and the like or git HEAD; the reports "
        "record it)",
        rule=rules.whole(),
    ),
    Option(
        "--bfcl-csv",
        "csv_dir",
        "write the leaderboard's CSV score tables to this directory",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-chart",
        "chart_path",
        "write an SVG chart of category scores (vs baseline)",
        rule=rules.FILE_TO_WRITE,
    ),
)
