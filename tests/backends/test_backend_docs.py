"""The tools match the dataset's function docs one to one."""

from __future__ import annotations

import inspect

import pytest
from backend_helpers import env_for

from pytest_bfcl.backends import BACKENDS
from pytest_bfcl.dataset.load import FUNC_DOC_FILES


@pytest.mark.parametrize("class_name", sorted(BACKENDS))
def test_public_methods_match_function_docs(dataset, class_name):
    docs = {doc.name: doc for doc in dataset.function_docs(class_name)}
    cls = BACKENDS[class_name]
    assert set(cls.public_methods()) == set(docs), FUNC_DOC_FILES[class_name]
    for name, doc in docs.items():
        params = inspect.signature(getattr(cls, name)).parameters
        names = [p for p in params if p != "self"]
        assert set(names) == set(doc.parameters.properties), name
        required = {p for p in names if params[p].default is inspect.Parameter.empty}
        assert required == set(doc.parameters.required), name


def test_every_public_attribute_is_state_and_private_ones_are_not():
    env = env_for("VehicleControlAPI")
    state = env.instances["VehicleControlAPI"]._state()
    assert "fuelLevel" in state and "doorStatus" in state
    assert not any(name.startswith("_") for name in state)


def test_scenario_data_is_copied_deeply_and_anything_else_as_deepcopy_does():
    from pytest_bfcl.backends.base import state_copy

    shared = {"a": [1, 2.5, None, True]}
    value = {"x": shared, "y": shared, "z": ("t", {"s"})}
    copied = state_copy(value)
    assert copied == value and copied["x"] is not shared
    copied["x"]["a"].append(3)
    assert shared["a"] == [1, 2.5, None, True]
    assert copied["y"]["a"][-1] == 3  # shared parts stay shared, as deepcopy keeps them

    class Custom:
        pass

    odd = {"c": Custom()}
    assert state_copy(odd)["c"] is not odd["c"]  # marshal refuses it: deep-copied
