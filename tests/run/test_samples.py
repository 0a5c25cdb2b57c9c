"""Repeated samples end to end (--bfcl-samples with the seeded flaky oracle): per-entry passes
out of K in junit, the JSON report's figures per category, group and overall, replaying K
result sets, stamped baselines and their refusals, merged baselines, the detection plan, and
entries with a known ground-truth error."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.clusters import clusters_of
from pytest_bfcl.dataset.known_errors import KnownError, corrected_answer, known_errors
from pytest_bfcl.gate.detection import plan
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.merge_baselines import main as merge_main
from pytest_bfcl.models.oracle import Flakiness
from pytest_bfcl.scores.intervals import mean_interval

CATEGORIES = "simple_python,live_parallel,irrelevance"


def _run(pytester, data_source, *extra: str, model: str = "oracle:flaky=0.3,seed=1"):
    return pytester.runpytest(
        f"--bfcl-model={model}",
        f"--bfcl-data={data_source.data_dir}",
        f"--bfcl-category={CATEGORIES}",
        "-p",
        "no:cacheprovider",
        "--bfcl-list-failures=0",
        *extra,
    )


def _junit_rates(path: Path) -> dict[str, tuple[int, int]]:
    rates = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if "bfcl_passes" in props:
            rates[props["bfcl_id"]] = (int(props["bfcl_passes"]), int(props["bfcl_samples"]))
    return rates


def test_flaky_oracle_is_seeded_and_fixed_per_entry():
    noisy = Flakiness.parse("flaky=0.5,seed=3")
    again = Flakiness.parse("flaky=0.5,seed=3")
    other = Flakiness.parse("flaky=0.5,seed=4")
    ids = [f"simple_python_{i}" for i in range(400)]
    draws = [[noisy.passes(i, k) for k in range(4)] for i in ids]
    assert draws == [[again.passes(i, k) for k in range(4)] for i in ids]
    assert draws != [[other.passes(i, k) for k in range(4)] for i in ids]
    steady = [i for i, d in zip(ids, draws, strict=True) if all(d)]
    assert 150 <= len(steady) <= 260  # about half the entries are flaky
    broken = Flakiness.parse("fail=1")
    assert not any(broken.passes(i, 0) for i in ids)
    with pytest.raises(ValueError, match="flaky=SHARE"):
        Flakiness.parse("flakey=0.1")


def test_samples_reach_junit_and_the_json_report(pytester, data_source, tmp_path):
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    result = _run(pytester, data_source, "--bfcl-samples=3", f"--junitxml={junit}",
                  f"--bfcl-report={report}")  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # flaky entries fail some samples
    rates = _junit_rates(junit)
    data = json.loads(report.read_text())
    dataset = open_dataset(data_source)
    for name in CATEGORIES.split(","):
        cat = data["categories"][name]
        ids = [i for i in rates if _category(i) == name]
        mine = [rates[i] for i in ids]
        assert cat["samples"] == 3 and cat["total"] == len(mine)
        assert cat["mean"] == pytest.approx(sum(p for p, _ in mine) / (3 * len(mine)))
        assert cat["pass_all"] == pytest.approx(sum(p == 3 for p, _ in mine) / len(mine))
        assert cat["pass_any"] == pytest.approx(sum(p > 0 for p, _ in mine) / len(mine))
        flaky = sorted(i for i in rates if _category(i) == name and 0 < rates[i][0] < 3)
        assert cat["flaky"] == len(flaky) and sorted(cat["flaky_ids"]) == flaky
        clusters = clusters_of((name, e) for e in dataset.entries(name))
        keys = [clusters[i] for i in ids]
        low, high = mean_interval([p / 3 for p, _ in mine], 3, clusters=keys)
        assert cat["ci95"] == pytest.approx([low, high])
    assert data["categories"]["simple_python"]["flaky"] > 0
    group = data["groups"]["irrelevance_detection"]  # needs live_irrelevance: not run
    assert group["mean"] is None and group["samples"] == 3
    outcome = result.parseoutcomes()  # an entry fails unless every sample passed
    failing = sum(1 for p, k in rates.values() if p < k)
    assert outcome["failed"] + outcome.get("xfailed", 0) == failing


def _category(entry_id: str) -> str:
    from pytest_bfcl.dataset.categories import category_of_id

    return category_of_id(entry_id)


def test_one_sample_keeps_the_plain_verdicts_and_adds_intervals(pytester, data_source, tmp_path):
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    result = _run(pytester, data_source, f"--bfcl-report={report}", f"--junitxml={junit}",
                  model="oracle")  # fmt: skip
    assert result.ret == 0
    assert _junit_rates(junit) == {}  # no passes/samples properties with one sample
    cat = json.loads(report.read_text())["categories"]["simple_python"]
    assert cat["samples"] == 1 and cat["flaky"] == 0
    assert cat["mean"] == cat["accuracy"] == cat["pass_all"] == cat["pass_any"]
    assert cat["ci95"][0] < cat["accuracy"] <= cat["ci95"][1]
    assert "95% CI" in result.stdout.str()


def test_replay_reads_k_result_sets(pytester, data_source, tmp_path):
    results, first = tmp_path / "results", tmp_path / "first.json"
    generated = _run(pytester, data_source, "--bfcl-samples=2", f"--bfcl-results-dir={results}",
                     f"--bfcl-report={first}")  # fmt: skip
    assert generated.ret == pytest.ExitCode.TESTS_FAILED
    assert sorted(p.name for p in results.iterdir()) == ["sample-1", "sample-2"]
    again = tmp_path / "again.json"
    replayed = _run(pytester, data_source, "--bfcl-samples=2", f"--bfcl-report={again}",
                    model=f"replay:{results}")  # fmt: skip
    assert replayed.ret == pytest.ExitCode.TESTS_FAILED
    before = json.loads(first.read_text())["categories"]
    after = json.loads(again.read_text())["categories"]
    for name in before:
        for key in ("mean", "pass_all", "pass_any", "flaky", "flaky_ids", "ci95"):
            assert before[name][key] == after[name][key], (name, key)
    missing = _run(pytester, data_source, "--bfcl-samples=3", model=f"replay:{results}")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    err = missing.stderr.str()
    assert "sample-3 does not exist" in err and err.count("sample-3") <= 2


def test_an_unchanged_flaky_model_passes_the_gate_and_a_regression_fails(
    pytester, data_source, tmp_path
):
    baseline = tmp_path / "baseline.json"
    _run(pytester, data_source, "--bfcl-samples=3", f"--bfcl-save-baseline={baseline}")
    data = json.loads(baseline.read_text())
    assert data["format"] == "pytest-bfcl-baseline/3" and data["metadata"]["samples"] == 3
    assert data["rates"] and all(0 <= p <= k == 3 for p, k in data["rates"].values())
    assert data["metadata"]["scoring_rules"] >= 1
    same = _run(pytester, data_source, "--bfcl-samples=3", f"--bfcl-baseline={baseline}",
                model="oracle:flaky=0.3,seed=2")  # fmt: skip
    assert same.ret == 0, same.stdout.str()
    out = same.stdout.str()
    assert "BFCL gate: passed" in out and "Holm over" in out and "detects" in out
    worse = _run(pytester, data_source, "--bfcl-samples=3", f"--bfcl-baseline={baseline}",
                 model="oracle:flaky=0.3,fail=0.15,seed=2")  # fmt: skip
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    assert "BFCL gate: FAILED" in worse.stdout.str()
    # a run of one sample against the three-sample baseline is compared (a better reference)
    single = _run(pytester, data_source, f"--bfcl-baseline={baseline}", model="oracle")
    assert "does not fit" not in single.stderr.str()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["metadata"].update(scoring_rules=0), "scoring rules differ"),
        (lambda d: d["metadata"].update(temperature=0.7), "temperature differs"),
    ],
)
def test_stamped_baseline_is_refused_in_one_line(pytester, data_source, tmp_path, edit, message):
    baseline = tmp_path / "baseline.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={baseline}", model="oracle")
    data = json.loads(baseline.read_text())
    edit(data)
    baseline.write_text(json.dumps(data))
    for extra in ((), ("--bfcl-baseline-common",)):
        refused = _run(pytester, data_source, f"--bfcl-baseline={baseline}", *extra,
                       model="oracle")  # fmt: skip
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        lines = [line for line in refused.stderr.str().splitlines() if message in line]
        assert len(lines) == 1 and str(baseline) in lines[0]


def test_more_samples_than_the_baseline_recorded_is_refused(pytester, data_source, tmp_path):
    baseline = tmp_path / "baseline.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={baseline}", model="oracle")
    refused = _run(pytester, data_source, "--bfcl-samples=2", f"--bfcl-baseline={baseline}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "samples differ: this run asks 2 per entry, the baseline recorded 1" in (
        refused.stderr.str()
    )


def test_merged_baselines_add_up_passes(pytester, data_source, tmp_path, capsys):
    paths = []
    for seed in (1, 2, 3):
        path = tmp_path / f"b{seed}.json"
        _run(pytester, data_source, f"--bfcl-save-baseline={path}",
             model=f"oracle:flaky=0.3,seed={seed}")  # fmt: skip
        paths.append(path)
    merged = tmp_path / "merged.json"
    assert merge_main([str(merged), *map(str, paths)]) == 0
    assert "at least 3 samples each, from 3 baselines" in capsys.readouterr().out
    data = json.loads(merged.read_text())
    singles = [json.loads(p.read_text())["verdicts"] for p in paths]
    for entry_id, (passes, samples) in data["rates"].items():
        assert samples == 3 and passes == sum(v[entry_id] for v in singles)
    gated = _run(pytester, data_source, "--bfcl-samples=3", f"--bfcl-baseline={merged}",
                 model="oracle:flaky=0.3,seed=9")  # fmt: skip
    assert gated.ret == 0 and "BFCL gate: passed" in gated.stdout.str()
    other = tmp_path / "other.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={other}", "--bfcl-mode=prompt",
         model="oracle")  # fmt: skip
    assert merge_main([str(tmp_path / "x.json"), str(paths[0]), str(other)]) == 2
    assert "cannot be merged: mode differs" in capsys.readouterr().err


def test_detect_plans_each_category_and_says_what_it_can_detect(
    pytester, data_source, dataset, tmp_path
):
    sizes = {name: len(dataset.entries(name)) for name in CATEGORIES.split(",")}
    planned = plan(sizes, 25, {}, 0.05)
    assert all(1 <= planned[n] <= sizes[n] for n in sizes)
    assert planned["simple_python"] < sizes["simple_python"]
    run = _run(pytester, data_source, "--bfcl-detect=25", model="oracle")
    outcome = run.parseoutcomes()
    assert outcome.get("passed", 0) + outcome.get("xfailed", 0) == sum(planned.values())
    out = run.stdout.str()
    assert "what this sample can detect" in out and "sized to detect 25 points" in out
    assert f"simple_python: {planned['simple_python']} entries detect a drop of" in out


def test_sampled_run_says_what_it_cannot_detect(pytester, data_source):
    run = _run(pytester, data_source, "--bfcl-sample=0.1", model="oracle")
    out = run.stdout.str()
    assert "live_parallel: 2 entries cannot detect any drop (noise 0.100 assumed)" in out
    assert "simple_python: 40 entries detect a drop of" in out


def test_known_error_data_file_lists_real_entries_with_valid_fixes(dataset):
    listed = known_errors()
    for entry_id, error in listed.items():
        answers = dataset.answers(error.category)
        assert entry_id in answers, entry_id
        assert error.reference.startswith("https://github.com/ShishirPatil/gorilla/")
        fixed = corrected_answer(error, answers[entry_id])
        if fixed is not None:
            assert type(fixed) is type(answers[entry_id])
            assert fixed.ground_truth != answers[entry_id].ground_truth, entry_id


def _fake_known_errors(monkeypatch, entries: dict[str, KnownError]) -> None:
    monkeypatch.setattr(listed_errors, "known_errors", lambda: entries)


def test_known_errors_are_left_out_of_the_gate_and_marked(
    pytester, data_source, dataset, tmp_path, monkeypatch
):
    truth = dataset.answers("simple_python")["simple_python_3"]
    wrong = KnownError(
        id="simple_python_3",
        category="simple_python",
        reference="https://github.com/ShishirPatil/gorilla/pull/1",
        problem="a test's own error",
        fix={"ground_truth": [{"no_such_function": {}}]},
    )
    _fake_known_errors(monkeypatch, {"simple_python_3": wrong})
    baseline, report = tmp_path / "b.json", tmp_path / "r.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={baseline}", model="oracle")
    # corrected: judged against another truth than the baseline's, so refused in one line
    refused = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-gate=any",
                   "--bfcl-known-errors=correct", model="oracle")  # fmt: skip
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert refused.stderr.str().count("known-errors policy differs") == 1
    # with a baseline under the same policy: the oracle answers the pinned truth, so the
    # corrected entry fails in both, and an identical answer is no regression
    corrected_baseline = tmp_path / "bc.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={corrected_baseline}",
         "--bfcl-known-errors=correct", model="oracle")  # fmt: skip
    corrected = _run(pytester, data_source, f"--bfcl-baseline={corrected_baseline}",
                     "--bfcl-gate=any", "--bfcl-known-errors=correct",
                     f"--bfcl-report={report}", model="oracle")  # fmt: skip
    assert corrected.ret == pytest.ExitCode.OK, corrected.stdout.str()[-2000:]
    data = json.loads(report.read_text())
    assert data["known_errors"]["entries"] == [
        {"id": "simple_python_3", "reference": wrong.reference, "problem": wrong.problem,
         "corrected": True, "in_gate": True}
    ]  # fmt: skip
    assert truth.ground_truth != wrong.fix.ground_truth  # type: ignore[union-attr]
    # excluded (the default): the same failure does not reach the gate, and is marked
    junit = tmp_path / "j.xml"
    report.unlink()
    excluded = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-gate=any",
                    f"--bfcl-report={report}", f"--junitxml={junit}",
                    model="oracle")  # fmt: skip
    assert excluded.ret == 0
    assert json.loads(report.read_text())["known_errors"]["entries"][0]["in_gate"] is False
    props = {
        p.get("name"): p.get("value")
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.get("name") == "simple_python_3"
        for p in case.iter("property")
    }
    assert "pull/1" in props["bfcl_known_error"]


def test_each_sample_is_its_own_cached_request_with_its_own_seed(dataset, texts, tmp_path):
    from pytest_bfcl.models.base import Task
    from pytest_bfcl.models.cache import ResponseCache
    from pytest_bfcl.models.openai_chat import EndpointSettings, OpenAIChatModel
    from pytest_bfcl.scoring import ScoringOptions
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    entry = dataset.entries("live_relevance")[0]
    with FakeOpenAI(dataset, ["live_relevance"]) as fake:
        settings = EndpointSettings(model="m", base_urls=(fake.base_url,), seed=7)
        cache = ResponseCache(tmp_path / "cache")
        model = OpenAIChatModel(settings, ScoringOptions("fc", True), texts, cache=cache)
        seeds = []
        original = model._complete

        def complete(request, session=None):
            seeds.append(request.get("seed"))
            return original(request, session)

        model._complete = complete  # type: ignore[method-assign]
        first = [model.generate(Task(entry, None, k)) for k in range(3)]
        again = [model.generate(Task(entry, None, k)) for k in range(3)]
        assert fake.total_requests() == 3 and seeds == [7, 8, 9]
        assert not any(g.cached for g in first) and all(g.cached for g in again)
        request = model.build_request(Task(entry, None))
        one_sample_key = model.cache_identity(request)
        assert "sample" not in one_sample_key  # a one-sample run keeps its old cache keys
        assert model.cache_identity(request, 2)["sample"] == 2


def test_xdist_gives_the_same_sampled_scores(pytester, data_source, tmp_path):
    pytest.importorskip("xdist")
    reports = {}
    for workers in ("0", "2"):
        report = tmp_path / f"report-{workers}.json"
        _run(pytester, data_source, "--bfcl-samples=3", "-n", workers, f"--bfcl-report={report}")
        data = json.loads(report.read_text())
        reports[workers] = (data["categories"], data["groups"], data["overall"])
    assert reports["0"] == reports["2"]
    assert reports["0"][0]["simple_python"]["flaky"] > 0
