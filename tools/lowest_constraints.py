"""Print a pip constraints file that pins every dependency pyproject.toml declares (and those of
the extras named on the command line) to its lowest allowed version: ``name>=1.2`` becomes
``name==1.2``, an exact pin stays, a name without a lower bound is left to pip. pip has no
"lowest" resolution; with this file it installs the versions the package claims to support at
their oldest, so a lower bound the code outgrew fails CI.

    python tools/lowest_constraints.py [EXTRA...] > constraints.txt
    pip install -c constraints.txt -e '.[EXTRA,...]'
"""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own copy of tomli
    from pip._vendor import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def lowest_pins(requirements: list[str]) -> list[str]:
    """``name==lowest`` for each requirement that has a lower bound (or an exact pin)."""
    pins: dict[str, str] = {}
    for text in requirements:
        requirement = Requirement(text)
        if requirement.name == "pytest-bfcl":
            continue  # an extra naming other extras of this package
        lower = [s.version for s in requirement.specifier if s.operator in (">=", "==", "~=")]
        if lower:
            pins[requirement.name] = f"{requirement.name}=={lower[0]}"
    return sorted(pins.values(), key=str.lower)


def main(extras: list[str]) -> int:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        if extra not in project["optional-dependencies"]:
            print(f"lowest_constraints: no extra {extra!r} in {PYPROJECT}", file=sys.stderr)
            return 2
        wanted += project["optional-dependencies"][extra]
    print("\n".join(lowest_pins(wanted)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
