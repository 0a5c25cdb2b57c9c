"""Starting a run's session: the settings from the options, the run, the baseline, and the
session plugin of this process (the controller's, or an xdist worker's); the handoff the
controller gives its workers."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.categories import CATEGORIES
from pytest_bfcl.dataset.custom import add_custom_categories
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.errors import SetupError
from pytest_bfcl.gate import (
    Baseline,
    BaselineError,
    category_noise,
    incompatibilities,
    load_baseline,
    measured_note,
    refusal_hint,
    setting_differences,
    signing_key,
    stamp_differences,
)
from pytest_bfcl.markers import register_markers
from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.models.replay import ReplayError
from pytest_bfcl.names import PLUGIN_NAME
from pytest_bfcl.option_rules import DECLARABLE_SETTINGS
from pytest_bfcl.perf import allow_freezing, quick_interpreter_exit
from pytest_bfcl.printable import printable_lines
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.run.run_metadata import extra_body
from pytest_bfcl.session.common import owns_process
from pytest_bfcl.session.handoff import WorkerHandoff, is_worker, model_state_input, session_id
from pytest_bfcl.session.signals import interrupted_at_start, stop_on_sigterm
from pytest_bfcl.settings import Settings, build_settings


def start(
    config: pytest.Config, values: dict[str, Any], names: dict[str, str] | None = None
) -> None:
    """Build the run from the option values and register the session plugin; a set-up problem
    is a usage error, said once. ``names``: the options set in the ini file, by their key."""
    if owns_process(config):
        allow_freezing()
        if not is_worker(config):  # the controller owns the servers; workers own none
            stop_on_sigterm(config)
    try:
        for categories in config.hook.pytest_bfcl_add_categories():
            added = add_custom_categories(list(categories or []))
            register_markers(config, (CATEGORIES[name] for name in added))
        settings = build_settings(values, names)
        handoff = WorkerHandoff.received(config)
        if handoff is not None and handoff.servers:
            settings = settings.model_copy(update=handoff.servers)
        default_selection = values.get("categories") in (None, "", [])
        run = BfclRun.create(
            settings, config.hook, session=session_id(config), default_selection=default_selection
        )
        if handoff is not None:
            run.selection.given_ids = handoff.collection
            run.unavailable.update(handoff.unavailable)
            if handoff.ejected:
                run.model.take_out_of_rotation(handoff.ejected)
        baseline = _load_compatible_baseline(settings, run, _ini_baseline(config))
    except ModelSpecError as exc:
        message = f"pytest-bfcl: {_model_named(exc, values, names)}"
        raise pytest.UsageError(printable_lines(message)) from None
    except (ValueError, DatasetError, ReplayError, SetupError) as exc:
        raise pytest.UsageError(printable_lines(f"pytest-bfcl: {exc}")) from None
    except KeyboardInterrupt as exc:  # pytest's terminal is not there yet to say it
        pytest.exit(interrupted_at_start(exc), returncode=pytest.ExitCode.INTERRUPTED)
    config.pluginmanager.register(_session_plugin(config, run, baseline), PLUGIN_NAME)
    quick_interpreter_exit()


def _session_plugin(config: pytest.Config, run: BfclRun, baseline: Baseline | None) -> Any:
    """This process's session plugin, its module imported here: an xdist worker does not
    load the controller's reports, gate and closing part, nor one process the worker's."""
    if is_worker(config):
        from pytest_bfcl.session.worker import WorkerPlugin

        return WorkerPlugin(config, run, baseline)
    from pytest_bfcl.session.controller import ControllerPlugin

    return ControllerPlugin(config, run, baseline)


def _model_named(exc: ModelSpecError, values: dict[str, Any], names: dict[str, str] | None) -> str:
    """A model problem, naming the ini key rather than the flag when the model came from the
    ini file."""
    where = (names or {}).get("model")
    if where is None:
        return str(exc)
    return str(exc).replace(
        f"--bfcl-model={values.get('model')}", f"{where} = {values.get('model')!r}"
    )


def worker_input(config: pytest.Config) -> dict[str, Any]:
    """The controller's handoff to each xdist worker (:class:`WorkerHandoff`)."""
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if plugin is None:
        return WorkerHandoff(session=session_id(config)).worker_input()
    model = plugin.run.model
    shared = getattr(model, "shared_server", None)
    handoff = WorkerHandoff(
        session=session_id(config),
        unavailable=plugin.run.unavailable,
        ejected=model.out_of_rotation(),
        servers=shared() if shared is not None else {},
        batched=getattr(plugin, "batched_events", False),
        collection=getattr(plugin, "worker_collection", {}),
    )
    return {**handoff.worker_input(), **model_state_input(model)}


def _load_compatible_baseline(
    settings: Settings, run: BfclRun, home: str | None = None
) -> Baseline | None:
    """The baseline, when it fits the run: verdicts under other rules or sampling, or of a
    stand-in model, compare with nothing; request settings declared changed are measured
    (the run's reports say which). ``home``: where the project keeps its baseline (the ini's
    ``bfcl_baseline``), named by a refusal rather than a copy the command line points at."""
    key = signing_key(settings.baseline_key_env)  # an unset key: found before the run
    if settings.baseline_path is None:
        return None
    baseline = load_baseline(settings.baseline_path, key)
    metadata = run.metadata()
    extra = extra_body(run)
    changes = setting_differences(baseline.metadata, metadata, extra)
    declared = settings.settings_change
    stamps = stand_in_difference(baseline, metadata) + stamp_differences(
        baseline, metadata, declared, extra
    )
    if stamps:
        declarable = [c.line for c in changes if c.name in DECLARABLE_SETTINGS]
        if declarable and set(stamps) <= set(declarable):
            fix = refusal_hint(changes, declared)
        else:
            fix = f"Record this model's first baseline: {first_baseline_command(settings, home)}"
        raise BaselineError(
            f"baseline {settings.baseline_path} does not fit this run: "
            + "; ".join(stamps)
            + f". {fix[0].upper()}{fix[1:]}"
        )
    measured = [c for c in changes if c.name in declared]
    run.settings_changes = [measured_note(measured)] if measured else []
    run.selection.plan_noise = category_noise(baseline.rates, settings.samples)
    problems = incompatibilities(baseline, metadata, declared, extra)
    if problems and not settings.baseline_common:
        raise BaselineError(
            f"baseline {settings.baseline_path} does not fit this run: "
            + "; ".join(problems)
            + f". Record a new baseline ({first_baseline_command(settings, home)}), or pass "
            "--bfcl-baseline-common to compare the entries both runs have."
        )
    return baseline


def _ini_baseline(config: pytest.Config) -> str | None:
    try:
        value = config.getini("bfcl_baseline")
    except ValueError:  # the plugin's ini keys not registered (a bare config in a test)
        return None
    return str(value) if value else None


def stand_in_difference(baseline: Baseline, metadata: dict[str, Any]) -> list[str]:
    """A baseline of the oracle (the stand-in that answers from the ground truth, as the
    template's committed one) says nothing about a real model, nor a real model's about it."""
    kinds = [(m.get("model_info") or {}).get("kind") for m in (baseline.metadata, metadata)]
    if (kinds[0] == "oracle") == (kinds[1] == "oracle"):
        return []
    return [
        f"model differs: baseline {baseline.metadata.get('model')!r}, this run "
        f"{metadata.get('model')!r} (one of them the oracle, a stand-in)"
    ]


def first_baseline_command(settings: Settings, home: str | None = None) -> str:
    """The command docs/model-repo.md gives for a team's first baseline, for the path the
    project keeps it at (``home``), else the one given."""
    path = Path(home) if home else settings.baseline_path
    assert path is not None
    with contextlib.suppress(ValueError):
        path = path.resolve().relative_to(Path.cwd().resolve())
    return f"pytest bfcl --bfcl-baseline= --bfcl-save-baseline={path}"
