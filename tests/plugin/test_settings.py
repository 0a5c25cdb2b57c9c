"""Every option value is checked at start-up, with messages that name the option as the user
typed it and say what it accepts; good values, ini spellings and Python use still work."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from pytest_bfcl.options import OPTIONS, RULES
from pytest_bfcl.settings import GateSettings, Settings, build_settings


def rejection(**values: object) -> str:
    with pytest.raises(ValueError) as info:
        build_settings({"model": "oracle", **values})
    return str(info.value)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("concurrency", "0", "--bfcl-concurrency must be a whole number of at least 1 (got 0)"),
        ("concurrency", "-3", "--bfcl-concurrency must be a whole number of at least 1 (got -3)"),
        ("concurrency", "eight", "--bfcl-concurrency must be a whole number of at least 1"),
        ("concurrency", "2.5", "--bfcl-concurrency must be a whole number of at least 1"),
        ("retries", "-1", "--bfcl-retries must be a whole number of at least 0 (got -1)"),
        ("timeout", "0", "--bfcl-timeout must be a finite number greater than 0 (got 0)"),
        ("timeout", "inf", "--bfcl-timeout must be a finite number greater than 0 (got inf)"),
        ("timeout", "nan", "--bfcl-timeout must be a finite number greater than 0 (got nan)"),
        ("progress_interval", "-1", "--bfcl-progress must be a finite number at least 0"),
        ("temperature", "-0.5", "--bfcl-temperature must be a finite number at least 0"),
        ("temperature", "nan", "--bfcl-temperature must be a finite number at least 0"),
        ("max_tokens", "0", "--bfcl-max-tokens must be a whole number of at least 1 (got 0)"),
        ("max_response_bytes", "0", "--bfcl-max-response-bytes must be a whole number of at"),
        ("sampling_seed", "1.5", "--bfcl-sampling-seed must be a whole number (got 1.5)"),
        ("seed", "x", "--bfcl-seed must be a whole number (got x)"),
        ("sample", "0", "--bfcl-sample must be a count of at least 1"),
        ("sample", "-3", "--bfcl-sample must be a count of at least 1"),
        ("sample", "1.5", "or a fraction greater than 0 and at most 1"),
        ("sample", "lots", "--bfcl-sample must be a count"),
        ("gate_alpha", "0", "--bfcl-alpha must be a finite number greater than 0 and less than 1"),
        ("gate_alpha", "1", "--bfcl-alpha must be a finite number greater than 0 and less than 1"),
        ("gate_min_drop", "-1", "--bfcl-min-drop must be a finite number at least 0 (got -1)"),
        ("vllm_port", "0", "--bfcl-vllm-port must be a whole number from 1 to 65535 (got 0)"),
        ("vllm_port", "65536", "--bfcl-vllm-port must be a whole number from 1 to 65535"),
        ("vllm_startup_timeout", "0", "--bfcl-vllm-startup-timeout must be a finite number"),
        ("web_failure_rate", "1.5", "--bfcl-web-failure-rate must be a finite number from 0 to 1"),
        ("web_failure_rate", "-0.1", "--bfcl-web-failure-rate must be a finite number from 0 to 1"),
        ("price_input", "-1", "--bfcl-price-input must be a finite number at least 0 (got -1)"),
        ("price_output", "inf", "--bfcl-price-output must be a finite number at least 0"),
        ("mode", "chat", "--bfcl-mode must be one of fc, prompt (got chat)"),
        ("gate_mode", "strict", "--bfcl-gate must be one of significant, any, off (got strict)"),
        ("web", "sometimes", "--bfcl-web must be one of live, record, replay, off"),
        ("web_provider", "google", "--bfcl-web-provider must be one of auto, serpapi, duckduckgo"),
        ("min_scores", ["overall=120"], "--bfcl-min-score must be NAME=PERCENT with PERCENT"),
        ("min_scores", ["overall"], "(got overall)"),
        ("base_urls", ["localhost:8000/v1"], "--bfcl-base-url must be an http:// or https:// URL"),
        ("web_search_url", "serpapi.com", "--bfcl-web-search-url must be an http:// or https://"),
        ("api_key_env", "MY-KEY", "--bfcl-api-key-env must be the name of an environment"),
        ("vllm_args", "--chat-template 'x", "--bfcl-vllm-args: cannot be split into flags"),
        ("categories", "simple_pyhton", "--bfcl-category: unknown BFCL category 'simple_pyhton'"),
        ("strict_multi_turn", "maybe", "--bfcl-strict-multi-turn must be true or false"),
    ],
)
def test_a_bad_value_names_the_option_and_what_it_accepts(name, value, message):
    assert message in rejection(**{name: value})


def test_paths_known_up_front_are_checked(tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    missing = tmp_path / "missing"
    cases = {
        "data_dir": (missing, "--bfcl-data must be an existing directory"),
        "baseline_path": (tmp_path, "--bfcl-baseline must be an existing file"),
        "report_path": (tmp_path, "--bfcl-report must be a file path (not a directory)"),
        "save_baseline_path": (
            tmp_path,
            "--bfcl-save-baseline must be a file path (not a directory)",
        ),
        "csv_dir": (a_file, "--bfcl-csv must be a directory path (not a file)"),
        "results_dir": (a_file, "--bfcl-results-dir must be a directory path (not a file)"),
        "vllm_log": (tmp_path, "--bfcl-vllm-log must be a file path (not a directory)"),
    }
    for name, (value, message) in cases.items():
        assert f"{message} (got {value})" in rejection(**{name: str(value)}), name
    assert "--bfcl-data must be an existing directory" in rejection(data_dir=str(a_file))
    assert "--bfcl-baseline" in rejection(baseline_path=str(missing))
    # paths to be written need not exist yet
    settings = build_settings(
        {"model": "oracle", "report_path": str(missing / "r.json"), "csv_dir": str(missing)}
    )
    assert settings.csv_dir == missing


def test_every_problem_is_reported_at_once_one_line_each():
    message = rejection(concurrency="0", timeout="-1", mode="chat")
    lines = message.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("--bfcl-concurrency") and "got 0" in lines[0]
    assert lines[1].startswith("--bfcl-timeout") and "got -1" in lines[1]
    assert lines[2].startswith("--bfcl-mode")


def test_web_replay_needs_an_existing_cassette_when_web_search_runs(tmp_path):
    message = rejection(categories="web_search", web="replay")
    assert "--bfcl-web=replay needs --bfcl-web-cassette=DIR" in message
    missing = tmp_path / "cassette"
    message = rejection(categories="web_search", web="replay", web_cassette=str(missing))
    assert "--bfcl-web-cassette must be an existing directory with --bfcl-web=replay" in message
    # without web-search categories the cassette is not needed
    assert build_settings({"model": "oracle", "categories": "simple_python", "web": "replay"})


def test_a_secret_in_a_rejected_value_is_not_repeated():
    message = rejection(base_urls=["ftp://gateway.example/v1?api_key=SENTINEL-SECRET-7f3a9c"])
    assert "--bfcl-base-url must be" in message
    assert "SENTINEL-SECRET-7f3a9c" not in message


def test_good_values_as_typed_on_the_command_line(tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{}")
    settings = build_settings(
        {
            "model": "Qwen/Qwen3-8B",
            "mode": "prompt",
            "categories": "simple_python,live_simple",
            "concurrency": "16",
            "retries": "0",
            "timeout": "2.5",
            "progress_interval": "0",
            "temperature": "0.7",
            "max_tokens": "512",
            "sampling_seed": "-7",
            "sample": "10%",
            "seed": "3",
            "gate_mode": "any",
            "gate_alpha": "0.01",
            "gate_min_drop": "0",
            "min_scores": ["overall=80", "simple_python=90.5%"],
            "vllm_port": "65535",
            "vllm_startup_timeout": "30",
            "web": "off",
            "web_failure_rate": "1",
            "price_input": "0",
            "price_output": "1.25",
            "base_urls": ["http://127.0.0.1:8000/v1/", "https://b.example/v1"],
            "api_key_env": "MY_GATEWAY_KEY",
            "vllm_args": "--tool-call-parser hermes --chat-template '{{ x }}'",
            "baseline_path": str(baseline),
            "data_dir": str(tmp_path),
            "strict_multi_turn": True,
        }
    )
    assert (settings.mode, settings.concurrency, settings.retries) == ("prompt", 16, 0)
    assert (settings.timeout, settings.progress_interval, settings.temperature) == (2.5, 0, 0.7)
    assert (settings.max_tokens, settings.sampling_seed, settings.seed) == (512, -7, 3)
    assert settings.sample == pytest.approx(0.1)
    assert (settings.gate.mode, settings.gate.alpha, settings.gate.min_drop) == ("any", 0.01, 0)
    assert settings.min_scores == (("overall", 80.0), ("simple_python", 90.5))
    assert (settings.vllm_port, settings.web_failure_rate, settings.price_output) == (
        65535,
        1,
        1.25,
    )
    assert settings.base_urls == ("http://127.0.0.1:8000/v1", "https://b.example/v1")
    assert settings.categories == ("simple_python", "live_simple")
    assert settings.strict_multi_turn and not settings.underscore_to_dot
    assert build_settings({"model": "oracle", "sample": "200"}).sample == 200
    assert build_settings({"model": "oracle", "gate_mode": "OFF"}).gate.mode == "off"


def test_python_values_are_held_to_the_same_rules():
    settings = build_settings({"model": "oracle", "concurrency": 4, "timeout": 1, "sample": 0.5})
    assert (settings.concurrency, settings.timeout, settings.sample) == (4, 1.0, 0.5)
    # 0 from Python is a value, not "not given"
    assert "--bfcl-concurrency" in rejection(concurrency=0)
    assert "--bfcl-retries" in rejection(retries=-1)
    assert "--bfcl-timeout" in rejection(timeout=math.inf)
    assert "--bfcl-concurrency" in rejection(concurrency=True)
    # False is a value for a setting that is not a switch, and "left off" for a switch
    assert (
        build_settings({"model": "oracle", "underscore_to_dot": False}).underscore_to_dot is False
    )
    assert (
        build_settings({"model": "oracle", "strict_multi_turn": False}).strict_multi_turn is False
    )


def test_settings_built_in_python_keep_working_and_are_checked():
    settings = Settings(model="oracle")
    assert (settings.concurrency, settings.mode, settings.timeout) == (8, "fc", 120.0)
    assert Settings(model="oracle", categories="simple_python", sample=20).sample == 20
    for bad in ({"concurrency": 0}, {"temperature": -1.0}, {"web_failure_rate": 2.0}):
        with pytest.raises(ValidationError) as info:
            Settings(model="oracle", **bad)
        assert "must be" in str(info.value)


def test_every_option_fills_a_settings_field_under_its_own_rule():
    fields = set(Settings.model_fields) | {f"gate_{f}" for f in GateSettings.model_fields}
    assert [opt.flag for opt in OPTIONS if opt.name not in fields] == []
    assert len({opt.name for opt in OPTIONS}) == len(OPTIONS)  # one option per field
    assert all(RULES[opt.name] is opt.rule for opt in OPTIONS)


def test_the_plugin_reports_a_bad_value_as_a_usage_error(pytester):
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-concurrency=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--bfcl-concurrency must be a whole number of at least 1 (got 0)" in err
    assert "INTERNALERROR" not in err + result.stdout.str()


def test_ini_spellings_are_checked_like_the_command_line(pytester):
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\nbfcl_model = "oracle"\nbfcl_concurrency = "0"\n'
        'bfcl_timeout = "-2"\n'
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    ini = str(pytester.path / "pyproject.toml")
    assert f"bfcl_concurrency (in {ini}) must be a whole number of at least 1 (got 0)" in err
    assert f"bfcl_timeout (in {ini}) must be a finite number greater than 0 (got -2)" in err
    assert "--bfcl-concurrency" not in err


def test_a_flag_overriding_the_ini_is_named_as_the_flag(pytester):
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\nbfcl_model = "oracle"\nbfcl_category = "simple_pyhton"\n'
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--bfcl-concurrency=0")
    err = result.stderr.str()
    assert "--bfcl-concurrency must be a whole number of at least 1 (got 0)" in err
    assert "bfcl_category (in " in err and "did you mean 'simple_python'" in err


def test_a_misspelt_category_gets_the_closest_names():
    with pytest.raises(ValueError, match=r"did you mean 'multi_turn'"):
        build_settings({"model": "oracle", "categories": "multi_trun"})
    with pytest.raises(ValueError) as info:
        build_settings({"model": "oracle", "categories": "zzzz"})
    assert "did you mean" not in str(info.value) and "known names: all" in str(info.value)


def test_oracle_or_replay_with_a_base_url_is_refused():
    for model in ("oracle", "oracle:flaky=0.1", "replay:results"):
        with pytest.raises(ValueError, match="sends no request") as info:
            build_settings({"model": model, "base_urls": ["http://localhost:8000/v1"]})
        assert "--bfcl-base-url" in str(info.value)
    build_settings({"model": "oracle-7b", "base_urls": ["http://localhost:8000/v1"]})


def test_good_ini_spellings_are_accepted(pytester, data_source):
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\n"
        'bfcl_model = "oracle"\n'
        'bfcl_category = "live_relevance"\n'
        f'bfcl_data = "{data_source.data_dir}"\n'
        'bfcl_concurrency = "4"\n'
        "bfcl_retries = 2\n"
        'bfcl_timeout = "2.5"\n'
        'bfcl_sample = "50%"\n'
        'bfcl_gate = "off"\n'
        'bfcl_alpha = "0.1"\n'
        'bfcl_min_score = ["overall=0"]\n'
        'bfcl_strict_multi_turn = "true"\n'
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)  # half of live_relevance's 16 entries


def test_problems_of_options_set_in_the_ini_name_their_keys(pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nbfcl_model = "Oracle"\n')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    ini = str(pytester.path / "pyproject.toml")
    assert f"bfcl_model (in {ini}) = 'Oracle': built-in model names are lower case" in (
        result.stderr.str()
    )
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\nbfcl_model = "oracle"\nbfcl_web = "replay"\n'
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    err = result.stderr.str()
    assert "--bfcl-web=replay needs --bfcl-web-cassette=DIR" in err
    assert f"(set in the ini file: bfcl_web (in {ini}))" in err
