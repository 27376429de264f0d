"""The llama.cpp build: one safe recipe, used by the set-up and quoted by the error messages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import llama_cpp

from chatjudge.models.llama_build import CMAKE_ARGS, LLAMA_CPP_PYTHON_VERSION, SAFE_INSTALL
from chatjudge.models.llama_worker import has_amx

ROOT = Path(__file__).parents[2]
SCRIPT = (ROOT / "scripts" / "llama-wheel.sh").read_text()


def test_the_wheel_script_builds_the_pinned_version_with_the_safe_flags() -> None:
    assert f"LLAMA_CPP_PYTHON_VERSION={LLAMA_CPP_PYTHON_VERSION}\n" in SCRIPT
    flags = re.search(r'^CMAKE_FLAGS="([^"]*)"', SCRIPT, re.M)
    assert flags and flags.group(1).startswith(CMAKE_ARGS)
    assert "-DGGML_NATIVE=OFF" in CMAKE_ARGS and "AMX" not in CMAKE_ARGS
    assert "--no-cache-dir" in SCRIPT  # never a natively built wheel from pip's cache


def test_pyproject_pins_the_tested_version_for_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    pins = [d for deps in extras.values() for d in deps if d.startswith("llama-cpp-python")]
    assert pins and all(d.endswith(f"=={LLAMA_CPP_PYTHON_VERSION}") for d in pins)


def test_the_installed_llama_cpp_is_the_safe_build() -> None:
    """The suite's own llama.cpp (the local judge's and the server fixture's) has no AMX."""
    assert llama_cpp.__version__ == LLAMA_CPP_PYTHON_VERSION
    assert not has_amx(llama_cpp.llama_print_system_info().decode())


def test_the_fix_is_one_command_that_bypasses_pips_wheel_cache() -> None:
    assert SAFE_INSTALL.startswith(f'CMAKE_ARGS="{CMAKE_ARGS}" pip install ')
    assert "--no-cache-dir" in SAFE_INSTALL and "--no-binary llama-cpp-python" in SAFE_INSTALL
    assert f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}" in SAFE_INSTALL
