"""A short run of the numeric fuzzer (tests/fuzz_numeric.py): hot int/float
loops warmed up with one set of types (in the interpreter, or by calls
through the hook, which profiles the arguments), compiled by the optimising tier, then
called with values near 2**63, huge ints, bools, NaN/inf/-0.0, zero,
subclasses and None; every call's outcome equal to stock. `make fuzz` runs
a longer one (PYJION_FUZZ_NUMERIC_N sets the count here)."""
import os

import fuzz_numeric

N = int(os.environ.get("PYJION_FUZZ_NUMERIC_N", "200"))


def test_numeric_fuzz_matches_stock_call_by_call():
    summary = fuzz_numeric.run(N, os.environ.get("PYJION_FUZZ_SEED", "1"), keep_going=True)
    assert not summary["mismatches"], summary["mismatches"][0]["message"]
    # The tier compiled every one of them (a compile the tier refuses, e.g.
    # a representation it cannot move, shows here first), and the calls took
    # every kind of exit the fuzzer aims at: the paths out of unboxed code ran.
    assert summary["tier"] == N, "%d of %d in the optimising tier" % (summary["tier"], N)
    for name in ("guard_int", "guard_float", "int_overflow", "zero_divisor", "arg_types", "not_list"):
        assert summary["exits"].get(name, 0) > 0, summary["exits"]
