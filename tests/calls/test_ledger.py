"""The ledger answers a call from the store, counted as cached; commits a reply sent for,
counted as a call; and finds a judge call of a chatjudge 0.1 store under its version-1 key."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from chatjudge.calls import KeyMaker, Ledger, LegacyKeyMaker
from chatjudge.chat.types import Reply
from chatjudge.errors import ServerError
from chatjudge.store import Store

IDENTITY = {"provider": "openai", "model": "m", "base_urls": ["http://a/v1"]}
SETTINGS = {"temperature": 0.0, "max_tokens": 100, "seed": None}
SCHEMA = {"type": "object"}
MESSAGES = [{"role": "user", "content": "rate this"}]


def test_commit_then_find_counts_one_call_then_one_cached_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "calls.sqlite")
    ledger = Ledger(store, lookup=True)
    assert ledger.find("k") is None and ledger.usage.cached_calls == 0
    ledger.commit("k", "m", Reply("yes", 7, 2), 0.5, cap=100)
    assert store.get("k") is not None  # in the store at once, not at the end
    assert ledger.usage.as_dict() == {
        "calls": 1,
        "cached_calls": 0,
        "input_tokens": 7,
        "output_tokens": 2,
    }
    found = ledger.find("k")
    assert found is not None
    assert (found.raw, found.input_tokens, found.output_tokens, found.latency) == ("yes", 7, 2, 0.5)
    assert ledger.usage.cached_calls == 1 and ledger.usage.calls == 1
    store.close()


def test_a_reply_beyond_its_calls_cap_is_counted_by_model(tmp_path: Path) -> None:
    """A server that ignores `max_tokens`: its reply is counted over the cap, in the
    ledger's usage and its model's (which the role's cost record sums)."""
    store = Store(tmp_path / "calls.sqlite")
    ledger = Ledger(store, lookup=True)
    ledger.commit("a", "m", Reply("long", 5, 40), 0.1, cap=32)
    ledger.commit("b", "m", Reply("at the cap", 5, 32), 0.1, cap=32)
    ledger.commit("c", "n", Reply("no usage"), 0.1, cap=32)
    assert ledger.usage.over_cap == 1
    assert (ledger.by_model["m"].over_cap, ledger.by_model["n"].over_cap) == (1, 0)
    assert "over_cap" not in ledger.usage.as_dict()  # written in the role's cost record
    store.close()


def test_without_lookup_nothing_is_found_and_replies_are_still_committed(tmp_path: Path) -> None:
    store = Store(tmp_path / "calls.sqlite")
    store.put("k", "m", Reply("old"), 0.1)
    ledger = Ledger(store, lookup=False)  # --no-cache
    assert ledger.find("k") is None and ledger.usage.cached_calls == 0
    ledger.commit("k", "m", Reply("new"), 0.2, cap=100)
    got = store.get("k")
    assert got is not None and got.raw == "new"
    store.close()


def test_ledgers_on_one_store_share_replies_not_usage(tmp_path: Path) -> None:
    store = Store(tmp_path / "calls.sqlite")
    assistant, user = Ledger(store, lookup=True), Ledger(store, lookup=True)
    assistant.commit("k", "m", Reply("r", 1, 1), 0.1, cap=100)
    assert user.find("k") is not None
    assert (assistant.usage.calls, assistant.usage.cached_calls) == (1, 0)
    assert (user.usage.calls, user.usage.cached_calls) == (0, 1)
    store.close()


def _version_1_store(path: Path, key: str) -> None:
    """A store as chatjudge 0.1 wrote it (schema 1), holding one reply under `key`."""
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE calls (key TEXT PRIMARY KEY, judge TEXT NOT NULL, raw TEXT NOT NULL, "
        "input_tokens INTEGER, output_tokens INTEGER, latency REAL, created REAL NOT NULL) "
        "WITHOUT ROWID"
    )
    old.execute("INSERT INTO calls VALUES (?, 'j', 'old reply', 3, 4, 0.5, 0)", (key,))
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()


def test_a_version_1_store_answers_a_judge_call_under_its_version_1_key(tmp_path: Path) -> None:
    legacy = LegacyKeyMaker(IDENTITY, SETTINGS, SCHEMA)
    key = KeyMaker(IDENTITY, SETTINGS, SCHEMA).key(MESSAGES, 2)
    path = tmp_path / "calls.sqlite"
    _version_1_store(path, legacy.key("rate this", 2))
    store = Store(path)
    ledger = Ledger(store, lookup=True)
    assert ledger.find(key) is None  # a producer's lookup tries no version-1 key
    found = ledger.find(key, legacy, "rate this", 2)
    assert found is not None and found.raw == "old reply"
    assert ledger.find(key, legacy, "rate this", 1) is None  # another sample, another key
    assert ledger.usage.cached_calls == 1
    assert Ledger(store, lookup=False).find(key, legacy, "rate this", 2) is None
    store.close()


def test_a_current_store_is_never_searched_under_version_1_keys(tmp_path: Path) -> None:
    legacy = LegacyKeyMaker(IDENTITY, SETTINGS, SCHEMA)
    store = Store(tmp_path / "calls.sqlite")
    store.put(legacy.key("rate this", 0), "j", Reply("r"), 0.1)
    ledger = Ledger(store, lookup=True)
    assert not ledger.legacy
    assert ledger.find("another key", legacy, "rate this", 0) is None
    store.close()


async def _send_once(ledger: Ledger, key: str, sent: list[str], who: str, fail: bool = False):
    """`ledger.once` on `key`'s flight, sending after a pause (`who` recorded as sent)."""

    async def send() -> Reply:
        sent.append(who)
        await asyncio.sleep(0.05)
        if fail:
            raise ServerError("HTTP 500", status=500)
        reply = Reply(f"from {who}", 3, 1)
        ledger.commit(key, "m", reply, 0.05, cap=100)
        return reply

    return await ledger.once(ledger.flight(key), send)


def test_calls_under_one_key_in_flight_are_sent_once(tmp_path: Path) -> None:
    async def main() -> None:
        store = Store(tmp_path / "calls.sqlite")
        ledger, sent = Ledger(store, lookup=False, flights={}), []
        got = await asyncio.gather(*(_send_once(ledger, "k", sent, f"c{i}") for i in range(5)))
        assert sent == ["c0"] and ledger.usage.calls == 1
        assert [shared for _, shared in got] == [False, True, True, True, True]
        assert {reply.text for reply, _ in got} == {"from c0"}
        assert ledger.flights == {}  # landed: what comes next, the store answers
        assert ledger.find("k") is not None and ledger.lookup
        store.close()

    asyncio.run(main())


def test_a_twin_in_another_role_is_that_roles_use_and_its_later_calls_find_the_store(
    tmp_path: Path,
) -> None:
    """One model in two roles, a store empty at the start: the role whose call took the
    other's reply used it (its cost in all counts it, `Store.used_tokens`), and once the
    reply is in the store, that role's later calls under the key find it, not send it."""

    async def main() -> None:
        store, flights = Store(tmp_path / "calls.sqlite"), {}
        user = Ledger(store, lookup=False, flights=flights, role="simulated_user")
        assistant = Ledger(store, lookup=False, flights=flights, role="assistant")
        sent: list[str] = []
        (_, first), (_, twin) = await asyncio.gather(
            _send_once(user, "k", sent, "user"), _send_once(assistant, "k", sent, "assistant")
        )
        assert (first, twin, sent) == (False, True, ["user"])
        assistant.shared("k")
        roles = {role for role, *_ in store.used_tokens()}
        assert roles == {"simulated_user", "assistant"}
        assert assistant.find("k") is not None and assistant.usage.calls == 0
        store.close()

    asyncio.run(main())


def test_the_failure_of_the_call_sent_is_every_waiting_ones(tmp_path: Path) -> None:
    async def main() -> None:
        store = Store(tmp_path / "calls.sqlite")
        ledger, sent = Ledger(store, lookup=False, flights={}), []
        calls = [_send_once(ledger, "k", sent, f"c{i}", fail=True) for i in range(3)]
        got = await asyncio.gather(*calls, return_exceptions=True)
        assert sent == ["c0"] and all(isinstance(g, ServerError) for g in got)
        # Once landed, a later call under the key is sent again.
        reply, shared = await _send_once(ledger, "k", sent, "later")
        assert sent == ["c0", "later"] and not shared and reply.text == "from later"
        store.close()

    asyncio.run(main())


def test_a_cancelled_first_call_leaves_the_sending_to_one_waiting(tmp_path: Path) -> None:
    async def main() -> None:
        store = Store(tmp_path / "calls.sqlite")
        ledger, sent = Ledger(store, lookup=False, flights={}), []
        first = asyncio.create_task(_send_once(ledger, "k", sent, "first"))
        await asyncio.sleep(0.01)
        waiting = [asyncio.create_task(_send_once(ledger, "k", sent, f"w{i}")) for i in range(3)]
        await asyncio.sleep(0.01)
        first.cancel()
        got = await asyncio.gather(*waiting)
        assert sent == ["first", "w0"]
        assert [shared for _, shared in got] == [False, True, True]
        store.close()

    asyncio.run(main())


def test_without_flights_every_call_is_sent(tmp_path: Path) -> None:
    """`--no-cache`: every call is sent, twins included."""

    async def main() -> None:
        store = Store(tmp_path / "calls.sqlite")
        ledger, sent = Ledger(store, lookup=False), []
        await asyncio.gather(*(_send_once(ledger, "k", sent, f"c{i}") for i in range(3)))
        assert sent == ["c0", "c1", "c2"] and not ledger.lookup
        store.close()

    asyncio.run(main())


def test_a_reference_store_answers_what_the_own_store_misses(tmp_path: Path) -> None:
    """align's judgings read the aligned run's store: a call it holds is not sent again."""
    from chatjudge.store.reader import StoreReader

    run = Store(tmp_path / "run.sqlite")
    run.put("k", "m", Reply("the run's", 5, 1), 0.1)
    run.close()
    reference = StoreReader(tmp_path / "run.sqlite")
    store = Store(tmp_path / "calls.sqlite")
    ledger = Ledger(store, lookup=True, reference=reference)
    found = ledger.find("k")
    assert found is not None and found.raw == "the run's" and ledger.usage.cached_calls == 1
    assert ledger.find("other") is None and store.get("k") is None  # read, not copied
    store.close()
    reference.close()
