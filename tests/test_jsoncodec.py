"""The hot-path JSON codec: orjson's speed, `json`'s acceptance, output that is always JSON."""

from __future__ import annotations

import datetime
import decimal
import json
import math

import numpy as np
import orjson
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


def test_keys_that_are_not_text_are_written_wherever_they_are() -> None:
    """A write tries without orjson's option for such keys first (it doubles every write's
    time): a record with one deep inside, or with numpy values beside text keys only, is
    written as with the option."""
    day = datetime.date(2026, 1, 2)
    text_keys = {"count": np.int64(3), "scores": np.array([1.5, 2.0]), "day": day}
    assert jsoncodec.dumps(text_keys) == b'{"count":3,"scores":[1.5,2.0],"day":"2026-01-02"}'
    deep = {"fields": {"rows": [{"ok": True}, {2: "b", "a": np.float64(0.5)}]}}
    assert jsoncodec.dumps(deep) == b'{"fields":{"rows":[{"ok":true},{"2":"b","a":0.5}]}}'


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


def test_deep_nesting_is_a_value_error_never_a_recursion_error() -> None:
    """orjson stops at 1,024 levels and `json` then runs out of stack: a ValueError."""
    deep = "[" * 10_000 + "]" * 10_000
    with pytest.raises(ValueError, match="nested too deeply"):
        jsoncodec.loads(deep)
    with pytest.raises(ValueError, match="nested more than 200 levels deep"):
        jsoncodec.loads(deep.encode(), max_depth=jsoncodec.INPUT_DEPTH)


def test_input_depth_is_what_a_record_can_carry_back_out() -> None:
    """Input is read up to INPUT_DEPTH levels, and what is read is written by orjson (which
    stops at 254 levels) inside a record, and read back the same."""
    limit = jsoncodec.INPUT_DEPTH
    deepest = "[" * limit + "]" * limit
    value = jsoncodec.loads(deepest, max_depth=limit)
    record = {"status": "ok", "fields": {"extra": value}}
    assert orjson.loads(orjson.dumps(record)) == record  # orjson itself, no fallback
    assert jsoncodec.loads(jsoncodec.dumps(record)) == record
    for deeper in ('{"a": ' * (limit + 1) + "1" + "}" * (limit + 1), "[" + deepest + "]"):
        with pytest.raises(ValueError, match=f"nested more than {limit} levels deep"):
            jsoncodec.loads(deeper, max_depth=limit)
    brackets = json.dumps({"text": "[{" * 5_000, "list": [[1]] * 300})  # many brackets, flat
    assert jsoncodec.loads(brackets, max_depth=limit)["text"] == "[{" * 5_000


def test_exact_ints_keep_every_digit_of_an_integer_beyond_64_bits() -> None:
    big = 123456789012345678901234567890
    for text in (f'{{"n": {big}}}', f'[{{"a": [{big}]}}, 1.5]'.encode(), f'{{"n": -{big}}}'):
        plain, exact = jsoncodec.loads(text), jsoncodec.loads(text, exact_ints=True)
        assert exact == json.loads(text) and exact != plain  # orjson's float lost digits
    assert jsoncodec.loads('{"n": 18446744073709551615}', exact_ints=True) == {
        "n": 18446744073709551615  # within 64 bits: orjson's own, exact
    }
    long_text = json.dumps({"pad": "x" * 600, "n": big})  # a long text: the digits scanned
    assert jsoncodec.loads(long_text, exact_ints=True)["n"] == big
