"""The browser tests' wait for a settled page fails in words: what kept the page, and its picture."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.browser import BROWSER, wait_until_settled

pytestmark = BROWSER


def test_a_page_that_never_settles_fails_naming_what_kept_it(browser):
    context = browser.new_context()
    page = context.new_page()
    # No Streamlit app: its script state is never "notRunning"; and an error the page did not catch.
    page.set_content("<h1>Not an app</h1><script>throw new Error('the frontend fell over')</script>")
    try:
        kept = r"not settled in 1 s: .*\"script\":null.*the frontend fell over.*Not an app.*picture: "
        with pytest.raises(AssertionError, match=kept) as failed:
            wait_until_settled(page, timeout=1)
    finally:
        context.close()
    picture = Path(re.search(r"picture: (\S+)\)$", str(failed.value))[1])
    assert picture.is_file() and picture.stat().st_size > 0
    picture.unlink()
