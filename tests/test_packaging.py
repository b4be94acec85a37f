"""Packaged as a library: ranges for users, exact versions only for the test runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
# Extras for working on the library rather than using it; [all] installs the others.
NOT_IN_ALL = {"all", "docs", "dev"}


def project() -> dict[str, Any]:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def requirements() -> list[Requirement]:
    """Every requirement of the core and of every extra, but extras naming this package."""
    meta = project()
    found = [Requirement(r) for r in meta["dependencies"]]
    for extra in meta["optional-dependencies"].values():
        found += [Requirement(r) for r in extra]
    return [r for r in found if canonicalize_name(r.name) != "chatlas-like"]


def constraints() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_the_license_is_an_spdx_string() -> None:
    assert project()["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_no_dependency_is_pinned_to_one_version() -> None:
    pinned = [str(r) for r in requirements() if any(s.operator == "==" for s in r.specifier)]
    assert not pinned


def test_every_dependency_declares_the_floor_it_is_tested_at() -> None:
    no_floor = [str(r) for r in requirements() if not any(s.operator == ">=" for s in r.specifier)]
    assert not no_floor


def test_a_ceiling_is_declared_only_with_the_break_that_needs_it() -> None:
    # tomllib drops comments: read the lines, where each ceiling must carry its reason.
    lines = PYPROJECT.read_text(encoding="utf-8").splitlines()
    ceilings = [line for line in lines if re.search(r'^\s*"[^"]*<[^"=]', line)]
    assert all("#" in line for line in ceilings), ceilings


def test_the_all_extra_installs_every_extra_for_users() -> None:
    extras = project()["optional-dependencies"]
    (everything,) = extras["all"]
    named = set(Requirement(everything).extras)
    assert named == set(extras) - NOT_IN_ALL


def test_the_notebooks_extra_installs_a_kernel_and_pandas() -> None:
    names = {
        canonicalize_name(Requirement(r).name)
        for r in project()["optional-dependencies"]["notebooks"]
    }
    assert {"ipykernel", "pandas"} <= names


def test_the_constraints_pin_every_dependency_inside_its_declared_range() -> None:
    pins = constraints()
    outside = {
        str(r): str(pins.get(canonicalize_name(r.name)))
        for r in requirements()
        if pins.get(canonicalize_name(r.name)) not in r.specifier
    }
    assert not outside


def test_the_constraints_hold_exact_versions_and_no_download_address() -> None:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert "://" not in text and "@" not in text
    assert constraints()  # every line parsed as name==version
