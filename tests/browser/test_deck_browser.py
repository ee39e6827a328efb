"""A visitor's decks are theirs alone, along the path a person takes: two visitors in real Chromium (a
lecturer at 1280x720, a student on a phone at 390x844) on a server an operator set up without any
``POLARIZE_*`` variable, and on a hosted one (``POLARIZE_HOSTED=1``).

Each adds slides from the sidebar's box on two pages (a fragment's rerun), imports, presents, replaces
and deletes; neither sees the other's decks or any of their words, a deck of the same name is a deck of
one's own, and nothing is written to the server's disk (its home folder, where the decks' file would
go). The same through the proxy with two replicas: ``test_deploy_proxy``.
"""

from __future__ import annotations

import pytest
from support.browser import BROWSER, AppServer
from support.decks import two_visitors

pytestmark = BROWSER
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module", params=[{}, {"POLARIZE_HOSTED": "1"}], ids=["no-variables", "hosted"])
def server(request):
    """The app as an operator starts it: no ``POLARIZE_*`` variable at all, or the hosted switch on."""
    with AppServer(env=request.param) as running:
        yield running


def test_two_visitors_see_only_their_own_decks_and_the_server_writes_none(server, browser):
    two_visitors(browser, server.url)
    assert server.kept() == []
