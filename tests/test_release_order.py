"""The order in which compiled code releases an instruction's operands is
ceval's: __del__ methods (and weakref callbacks) observe it. BINARY_OP,
COMPARE_OP and BINARY_SUBSCR release the left operand, then the right one,
whether the operation succeeds, raises, or (COMPARE_OP) feeds a fused jump.
Found by tests/fuzz_programs_run.py (seed 16, program 40)."""
import pytest

from jitcheck import differential

CLASSES = """
LOG = []

class D:
    def __init__(self, n):
        self.n = n
    def __del__(self):
        LOG.append(self.n)
    def __lt__(self, other):
        return True
    def __eq__(self, other):
        return False
    def __add__(self, other):
        return 0
    def __getitem__(self, i):
        return 0
    def __contains__(self, x):
        return True
    def __setitem__(self, i, v):
        pass
"""

# (statement, an opcode it must compile to)
CASES = {
    "compare": ("x = D(1) < D(2)", "COMPARE_OP"),
    "compare ==": ("x = D(1) == D(2)", "COMPARE_OP"),
    "compare and jump": ("if D(1) < D(2):\n            LOG.append('then')", "COMPARE_OP"),
    "compare raises": ("try:\n            D(1) > D(2)\n        except TypeError:\n            LOG.append('caught')",
                       "COMPARE_OP"),
    "binary op": ("x = D(1) + D(2)", "BINARY_OP"),
    "binary op raises": ("try:\n            D(1) - D(2)\n        except TypeError:\n"
                         "            LOG.append('caught')", "BINARY_OP"),
    "subscript": ("x = D(1)[D(2)]", "BINARY_SUBSCR"),
    # already in ceval's order; kept so that they stay so
    "contains": ("x = D(1) in D(2)", "CONTAINS_OP"),
    "is": ("x = D(1) is D(2)", "IS_OP"),
    "store subscript": ("D(1)[D(2)] = D(3)", "STORE_SUBSCR"),
    "store attribute": ("D(1).a = D(2)", "STORE_ATTR"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_operands_are_released_in_ceval_order(name):
    statement, opcode = CASES[name]
    src = CLASSES + """
def f():
    LOG.clear()
    for i in range(3):
        %s
        x = None
        LOG.append('-')
    return list(LOG)
""" % statement
    # f is compiled and contains the opcode; three rounds: cold and warm code
    outcomes = differential(src, [(), ()], name="f", opcodes=[opcode], expect="return")
    log = [v for _, v in outcomes[0][1][1]]
    assert log.count("'-'") == 3 and "1" in log and "2" in log, log
