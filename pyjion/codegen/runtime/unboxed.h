// The run-time half of the optimising tier's unboxed values: moving values
// between the frame's slots (boxed, as the interpreter keeps them) and the
// machine frame's shadow slots (raw int64 / double), and the named counters
// of its side exits. Called from machine code (opt/unboxed_frame.cpp).
#pragma once

#include <Python.h>
#include <cstdint>
#include <vector>

struct _PyInterpreterFrame;

namespace pyjion::unboxed {

// Why machine code of the optimising tier left for the interpreter.
enum ExitKind : int {
    kExitGuardInt,      // an input the profile said was an int was not (or not int64-sized)
    kExitGuardFloat,    // an input the profile said was a float was not
    kExitIntOverflow,   // an int64 result overflowed: the interpreter makes the big int
    kExitZeroDivisor,   // // or % by 0, float / by 0.0: the interpreter raises
    kExitNotRangeIter,  // `range` was not the builtin, or its iterator not a range_iterator
    kExitTracing,       // tracing or profiling started while values were unboxed
    kExitOsrTypes,      // an interpreted frame's values at a loop header were not the types compiled for
    kExitNotList,       // a subscript the profile said was of a list was not, or its index out of range
    kExitArgTypes,      // an argument the hook's profile said was an int (int64-sized) or a float was not
    kExitFloatPow,      // float ** with a base <= 0, NaN or infinity, or a result that overflows: the generic operator
    kExitKinds
};
const char *exit_name(int kind);
// Exits taken by all machine code since start-up (stats()["jit"]["exits"]).
extern uint64_t g_exits[kExitKinds];

// One slot to move: a fast local or value-stack slot (its index in
// localsplus) and its shadow slot (the byte offset from the machine frame's
// shadow area).
//
// Spare boxes: a fast local held unboxed has in its frame slot either NULL
// or a spare box, an exact float no one else references (refcount 1) whose
// value is stale. Nothing reads the slot while the local is unboxed
// (whatever observes the frame boxes it first); boxing the local's double
// again writes the value into the spare instead of allocating a float, so a
// float local that a loop boxes and unboxes on every turn allocates nothing.
enum MoveOp : uint8_t {
    kBoxInt,        // shadow int64 -> a new int in the frame slot (a local's spare released)
    kBoxFloat,      // shadow double -> the local's spare box, or a new float, in the frame slot
    kUnboxInt,      // the frame slot's exact int (int64-sized) -> shadow; the slot released
    kUnboxFloat,    // the frame slot's exact float -> shadow; the slot released (a local's kept as its spare)
    kRelease,       // release the frame slot's object (its value is in the shadow slot too)
    // A stack value that was a copy of an unboxed local the same plan boxes
    // before it: a new reference to that local's box (`shadow` holds the
    // local's slot), one object for both, as the interpreter has.
    kCopyBox,
    // Checks only (enter_loop): the frame slot holds an exact int (int64-sized),
    // an exact float, a range_iterator.
    kCheckInt,
    kCheckFloat,
    kCheckRangeIter,
};
// A local's old float that may stay in its frame slot as the spare box.
inline bool spare_box(PyObject *v) { return v != nullptr && Py_REFCNT(v) == 1 && PyFloat_CheckExact(v); }

struct SlotMove {
    int32_t slot;
    int32_t shadow;
    MoveOp op;
    bool local;     // a fast local: left NULL after an unbox or release (a stack slot: left as is)
};
using MovePlan = std::vector<SlotMove>;

// Applies `n` moves in order. Boxing can fail only for memory: the slot then
// holds None, the other slots are still filled, MemoryError is set and -1
// returned (the caller raises it where it stands, with a frame the
// interpreter can unwind). Returns 0 otherwise.
int apply_moves(_PyInterpreterFrame *frame, char *shadow, const SlotMove *moves, int n);

// On-stack replacement into a loop header of the optimising tier: checks
// that the interpreter's values are of the types the machine code there
// takes for granted (every move's, unboxes included), then unboxes. 0, or -1
// with nothing changed if a check fails.
int enter_loop(_PyInterpreterFrame *frame, char *shadow, const SlotMove *moves, int n);

// Side exits one code object's optimised code may take before it is given up.
constexpr uint64_t kRetireAfter = 64;
// Gives up the optimised code of the frame's code object (its exits passed
// kRetireAfter): the hook's record goes back to the interpreter's warm-up
// with PYJION_CODE_NO_OPT, so its next compile is baseline code. Frames
// running the old code go on (the hook keeps it alive).
void retire(_PyInterpreterFrame *frame);
// base ** exp as float.__pow__ computes it, where that is the C library's pow
// (base positive and finite, exp finite, the result finite): 0 and *out;
// else -1 (the generic operator decides: complex, ZeroDivisionError,
// OverflowError, the special cases of NaN and infinities).
int float_pow(double base, double exp, double *out);
// Runs a frame a side exit (or a failed entry check) left, boxed, before
// the instruction to run next (3.11: prev_instr + 1; 3.13: instr_ptr): in
// the baseline fallback's resume entry (PyjionCodeView.fallback_resume), or
// the interpreter (tracing on 3.11; on 3.13 monitoring, or code whose
// instrumentation is not current).
PyObject *resume_fallback(PyThreadState *ts, _PyInterpreterFrame *frame);

// An exact int's value if it fits int64: 0 and *out set, else -1 (no error set).
int long_to_int64(PyObject *v, int64_t *out);

}  // namespace pyjion::unboxed
