"""Fixtures of pyjion's core test suite; the helpers live in jitcheck.py
(re-exported here, so `from conftest import ...` and `from jitcheck import ...`
both work)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyjion  # noqa: E402
from jitcheck import *  # noqa: E402,F401,F403
from jitcheck import SITE_FORMS, SIZE_LIMIT, _restore, _snapshot, jit_off, max_instructions, site_form  # noqa: E402


@pytest.fixture
def jit():
    """pyjion.enable(threshold=0) for one test; disabled and statistics reset afterwards
    (and the hook's state from before the test restored)."""
    snap = _snapshot()
    pyjion.enable(threshold=0)
    try:
        yield pyjion
    finally:
        pyjion.disable()
        pyjion.reset_stats()
        _restore(snap)


@pytest.fixture
def nojit():
    """The hook removed for one test (stock CPython)."""
    with jit_off():
        yield


@pytest.fixture
def size_limit():
    """config(max_instructions=SIZE_LIMIT) for one test (every opcode compiles:
    the size limit is what leaves a code object to the interpreter); the
    previous limit is restored afterwards. Yields the limit."""
    with max_instructions(SIZE_LIMIT) as limit:
        yield limit


@pytest.fixture(params=SITE_FORMS)
def each_site_form(request):
    """The test once per form of inline-cache site: each site its own guards,
    and sites calling the shared stubs (jitcheck.site_form). A module that
    wants every test both ways says pytestmark = pytest.mark.usefixtures(...)."""
    with site_form(request.param):
        yield request.param
