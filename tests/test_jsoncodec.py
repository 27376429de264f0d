"""The hot-path JSON codec: orjson's speed, `json`'s acceptance, output that is always JSON."""

from __future__ import annotations

import datetime
import decimal
import json
import math

import numpy as np
import pytest

from chatjudge import jsoncodec


def test_reads_what_json_reads_including_what_orjson_refuses() -> None:
    assert jsoncodec.loads(b'{"a": [1, 2.5, "x\\u00e9"]}') == {"a": [1, 2.5, "xé"]}
    assert math.isnan(jsoncodec.loads('{"a": NaN}')["a"])  # orjson refuses NaN literals
    assert jsoncodec.loads(f"[{2**63 - 1}, {-(2**63)}, {2**64 - 1}]") == [
        2**63 - 1,
        -(2**63),
        2**64 - 1,
    ]
    assert jsoncodec.loads('"\\ud800"') == "\ud800"  # a lone surrogate escape
    assert jsoncodec.loads('{"a": NaN}', parse_constant=lambda _: None) == {"a": None}


def test_invalid_json_is_a_value_error_with_json_s_message() -> None:
    with pytest.raises(ValueError) as caught:
        jsoncodec.loads('{"a": ')
    with pytest.raises(ValueError) as expected:
        json.loads('{"a": ')
    assert str(caught.value) == str(expected.value)


def test_writes_compact_utf8_json_that_json_reads_back() -> None:
    value = {"id": "é<>", "n": [1, 2.5, None, True], "nested": {"k": "v"}}
    encoded = jsoncodec.dumps(value)
    assert encoded == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    assert json.loads(encoded) == value


def test_values_that_are_not_json_never_stop_a_write() -> None:
    value = {
        "nan": float("nan"),
        1: "int key",
        "when": datetime.date(2026, 1, 2),
        "price": decimal.Decimal("1.50"),
        "count": np.int64(3),
        "scores": np.array([1.5, 2.0]),
    }
    assert json.loads(jsoncodec.dumps(value)) == {
        "nan": None,
        "1": "int key",
        "when": "2026-01-02",
        "price": "1.50",
        "count": 3,
        "scores": [1.5, 2.0],
    }


def test_a_lone_surrogate_is_written_escaped() -> None:
    encoded = jsoncodec.dumps({"rationale": "cut \ud83d"})
    assert b"\\ud83d" in encoded
    assert json.loads(encoded) == {"rationale": "cut \ud83d"}


def test_a_record_that_falls_back_to_json_holds_no_nan_or_infinity() -> None:
    """A lone surrogate sends the write to `json`, which would write `NaN`: null instead."""
    value = {"rationale": "cut \ud83d", "score": float("nan"), "ci": [float("inf"), 1.0]}
    encoded = jsoncodec.dumps(value)
    assert b"NaN" not in encoded and b"Infinity" not in encoded
    assert json.loads(encoded) == {"rationale": "cut \ud83d", "score": None, "ci": [None, 1.0]}
