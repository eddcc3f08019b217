// Slot helpers: one whole generic operation on the value stack per call. The
// machine code at a site only points the helper at the operands' stack slots
// and tests one status, instead of loading the operands, calling, releasing
// each operand and storing the result inline (~90 bytes per site down to
// ~30): compiled code that runs once per call is fetched cold each time, so
// its bytes, not its instructions, are what it costs (docs/tiering.md).
//
// Each takes sp = the address of the deepest operand's slot and the thread
// state. The operands are consumed (released in the order ceval releases
// them) and the result, a new reference, is left in sp[0]. The status is
// 0 = done, -1 = error (no result; the slots are dead), 1 = done and tracing
// was switched on meanwhile (the frame goes on in the interpreter).
#pragma once

#include <Python.h>

namespace pyjion {
namespace slots {

using BinaryHelper = int (*)(PyObject **sp, PyThreadState *ts);

// BINARY_OP's generic path for operator `nb` (NB_* of 3.11), and its name.
BinaryHelper binary_helper(int nb, const char **name);

// BINARY_SUBSCR's generic path: sp[0][sp[1]] (an exact dict as
// BINARY_SUBSCR_DICT: no __missing__ to consult).
int get_item(PyObject **sp, PyThreadState *ts);

// COMPARE_OP not followed by a conditional jump: the comparison's result.
int compare(PyObject **sp, PyThreadState *ts, int op);
// Whether two exact strs are equal (1) or not (0), as str's == decides;
// -1 where it cannot tell without work that may fail (3.11: a string whose
// canonical form is not made yet). Releases nothing.
int str_equal(PyObject *a, PyObject *b);

// COMPARE_OP fused with the POP_JUMP_IF that follows: the truth of the
// comparison, 1 or 0, or -1 on error (the result is consumed, no slot written).
// 3.13: 2 + the truth when the comparison turned tracing on (the caller
// hands the frame over at its conditional jump; see Compiler's fused
// comparison).
int compare_truth(PyObject **sp, int op, PyThreadState *ts);

// POP_JUMP_IF_TRUE/FALSE of anything but True and False: its truth (1, 0,
// or -1 on error), and the value released.
int truth_consume(PyObject *value);

}  // namespace slots
}  // namespace pyjion
