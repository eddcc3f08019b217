/* The interpreter-state fields the machine code and runtime helpers read.
 * CPython 3.11's pycore_interp.h uses C11 atomics, which C++ cannot include,
 * so these few accessors are compiled as C. */
#include <Python.h>
#define Py_BUILD_CORE 1
#include "internal/pycore_interp.h"
#include "internal/pycore_ceval.h"
#include "interp_state.h"

const void *pyj_eval_breaker_address(void)
{
    return &PyInterpreterState_Get()->ceval.eval_breaker;
}

int pyj_gil_drop_requested(PyThreadState *ts)
{
    return _Py_atomic_load_relaxed(&ts->interp->ceval.gil_drop_request) != 0;
}
