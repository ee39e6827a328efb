"""The views every session shares: each computed once, and a value refused by ``keep`` never kept."""

from __future__ import annotations

import threading

from polarize.serve.cache import SharedCache


def test_a_value_is_computed_once_and_kept():
    cache, calls = SharedCache(2), []
    assert cache.get("a", lambda: calls.append(1) or "A") == "A"
    assert cache.get("a", lambda: calls.append(1) or "other") == "A" and calls == [1]


def test_a_refused_value_is_never_kept_not_even_for_a_caller_waiting_for_it():
    cache, started, release, calls = SharedCache(2), threading.Event(), threading.Event(), []

    def first():
        started.set()
        release.wait(10)
        calls.append("first")
        return "cut short"

    got, whole = {}, lambda value: value == "whole"
    one = threading.Thread(target=lambda: got.setdefault("one", cache.get("k", first, keep=whole)))
    one.start()
    started.wait(10)
    two = threading.Thread(target=lambda: got.setdefault("two", cache.get(
        "k", lambda: calls.append("second") or "whole", keep=whole)))
    two.start()  # waits for the first caller's value, then, refused, computes its own
    release.set()
    one.join(10)
    two.join(10)
    assert got == {"one": "cut short", "two": "whole"} and calls == ["first", "second"]
    assert cache.get("k", lambda: "again") == "whole" and len(cache) == 1
