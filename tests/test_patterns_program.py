"""bench/patterns.py, which tools/pattern_cycles.py times: every pattern
compiles by its forced sample and gives stock's result (CPython 3.13, whose
warm-up by samples it uses)."""
import json

import pytest

from jitcheck import PY313, REPO, check_python

DRIVER = """
import json, sys
sys.path.insert(0, %r)
import patterns
# (no turns: runs, as pattern_cycles' baseline does; its result may differ,
# the JIT side having made one more call, the compiling one)
print(json.dumps({name: [patterns.main(sys.argv[1], name, 0) is not None,
                         repr(patterns.main(sys.argv[1], name, 300))] for name in patterns.PATTERNS}))
""" % (REPO + "/bench",)


@pytest.mark.skipif(not PY313, reason="the patterns compile by warm-up by samples (3.13)")
def test_every_pattern_compiles_and_gives_stocks_result():
    stock = json.loads(check_python(DRIVER, args=["stock"]))
    jit = json.loads(check_python(DRIVER, args=["jit"], env={"PYJION": "1"}))
    assert len(stock) >= 20
    assert jit == stock
