// CPython 3.13's frame bookkeeping done in C (py313/frame_runtime.h).
#include "py313/frame_runtime.h"

#include "cpython/interp_state.h"

namespace pyjion::py313 {

int recursion_overflow(PyThreadState *ts)
{
    // The C count, as _Py_EnterRecursiveCallTstate's slow path.
    if (ts->c_recursion_remaining < 0 && _Py_CheckRecursiveCall(ts, "")) {
        // (_Py_CheckRecursiveCall gave one unit back.)
        ts->c_recursion_remaining += kCStackUnits - 1;
        ts->py_recursion_remaining++;
        return -1;
    }
    // The Python count, as _Py_CheckRecursiveCallPy (not exported) does.
    if (ts->py_recursion_remaining < 0) {
        if (ts->recursion_headroom) {
            if (ts->py_recursion_remaining < -50) Py_FatalError("Cannot recover from Python stack overflow.");
        } else {
            ts->recursion_headroom++;
            PyErr_SetString(PyExc_RecursionError, "maximum recursion depth exceeded");
            ts->recursion_headroom--;
            ts->py_recursion_remaining++;
            ts->c_recursion_remaining += kCStackUnits;
            return -1;
        }
    }
    return 0;
}

void suspend_generator(PyThreadState *ts, _PyInterpreterFrame *frame, int oparg)
{
    PyGenObject *gen = reinterpret_cast<PyGenObject *>(reinterpret_cast<char *>(frame) - offsetof(PyGenObject, gi_iframe));
    gen->gi_frame_state = static_cast<int8_t>(FRAME_SUSPENDED + (oparg & 1));
    ts->exc_info = gen->gi_exc_state.previous_item;
    gen->gi_exc_state.previous_item = nullptr;
}

}  // namespace pyjion::py313
