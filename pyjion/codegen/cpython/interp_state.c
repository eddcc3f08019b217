/* The interpreter-state fields the machine code and runtime helpers read.
 * CPython 3.11's pycore_interp.h uses C11 atomics, which C++ cannot include,
 * so these few accessors are compiled as C. */
#include <Python.h>
#include <stddef.h>
#define Py_BUILD_CORE 1
#include "internal/pycore_interp.h"
#include "internal/pycore_ceval.h"
#include "internal/pycore_pystate.h"
#include "internal/pycore_runtime.h"
#if PY_VERSION_HEX >= 0x030D0000
#include "opcode.h"   // INSTRUMENTED_LINE
#endif
#include "cpython/interp_state.h"

const void *pyj_eval_breaker_address(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return &PyThreadState_Get()->eval_breaker;
#else
    return &PyInterpreterState_Get()->ceval.eval_breaker;
#endif
}

PyObject *pyj_builtin_len(void)
{
    return _PyInterpreterState_GET()->callable_cache.len;
}

PyObject *pyj_builtin_isinstance(void)
{
    return _PyInterpreterState_GET()->callable_cache.isinstance;
}

PyObject *pyj_list_append_descr(void)
{
    return _PyInterpreterState_GET()->callable_cache.list_append;
}

PyObject *pyj_small_ints(void)
{
    return (PyObject *)&_Py_SINGLETON(small_ints)[0];
}

size_t pyj_small_int_size(void)
{
    return sizeof(_Py_SINGLETON(small_ints)[0]);
}

PyObject *pyj_ascii_chars(void)
{
    return (PyObject *)&_Py_SINGLETON(strings).ascii[0];
}

size_t pyj_ascii_char_size(void)
{
    return sizeof(_Py_SINGLETON(strings).ascii[0]);
}

unsigned int pyj_compact_ascii_state(void)
{
    PyASCIIObject probe;
    unsigned int bits = 0;
    memset(&probe, 0, sizeof(probe));
    probe.state.compact = 1;
    probe.state.ascii = 1;
    memcpy(&bits, &probe.state, sizeof(bits));
    return bits;
}

Py_ssize_t pyj_interp_eval_frame_offset(void)
{
    return offsetof(PyInterpreterState, eval_frame);
}

#if PY_VERSION_HEX >= 0x030D0000
int pyj_interp_monitors_any(PyThreadState *ts)
{
    const uint8_t *tools = ts->interp->monitors.tools;
    for (int i = 0; i < _PY_MONITORING_UNGROUPED_EVENTS; i++) {
        if (tools[i] != 0) return 1;
    }
    return 0;
}

uintptr_t pyj_interp_instrumentation_version(PyThreadState *ts)
{
    return _Py_atomic_load_uintptr_relaxed(&ts->interp->ceval.instrumentation_version);
}

uint8_t pyj_interp_line_tools(PyThreadState *ts)
{
    return ts->interp->monitors.tools[PY_MONITORING_EVENT_LINE];
}

// The instruction's own opcode back in place of INSTRUMENTED_LINE (what
// the line data kept of it), its inline cache counter warming up again.
static void de_instrument_line(PyCodeObject *code, int unit, const uint8_t *caches)
{
    _Py_CODEUNIT *instr = &_PyCode_CODE(code)[unit];
    if (instr->op.code != INSTRUMENTED_LINE) return;
    _PyCoMonitoringData *m = code->_co_monitoring;
    int original = m->lines[unit].original_opcode;
    if (original == INSTRUMENTED_INSTRUCTION) {
        /* per-instruction monitoring stays: the line data now names the real opcode */
        m->lines[unit].original_opcode = m->per_instruction_opcodes[unit];
    }
    instr->op.code = (uint8_t)original;
    if (caches[original]) instr[1].counter = adaptive_counter_warmup();
}

void pyj_code_remove_line_tools(PyCodeObject *code, int unit, uint8_t tools, const uint8_t *caches)
{
    _PyCoMonitoringData *m = code->_co_monitoring;
    if (m->line_tools != NULL) {
        m->line_tools[unit] &= (uint8_t)~tools;
        if (m->line_tools[unit] == 0) de_instrument_line(code, unit, caches);
    } else {
        /* one tool: its events are the instruction's */
        uint8_t single = m->active_monitors.tools[PY_MONITORING_EVENT_LINE];
        if ((single & tools) == single) de_instrument_line(code, unit, caches);
    }
}
#endif

int pyj_gil_drop_requested(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
    return (_Py_atomic_load_uintptr_relaxed(&ts->eval_breaker) & _PY_GIL_DROP_REQUEST_BIT) != 0;
#else
    return _Py_atomic_load_relaxed(&ts->interp->ceval.gil_drop_request) != 0;
#endif
}

/* Takes the thread's pending asynchronous exception (PyThreadState_SetAsyncExc)
 * and, as the interpreter does, clears the interpreter-wide request for it
 * and recomputes eval_breaker: left set, every check would fire forever. */
PyObject *pyj_take_async_exc(PyThreadState *ts)
{
    PyObject *exc = ts->async_exc;
    if (exc == NULL) return NULL;
    ts->async_exc = NULL;
#if PY_VERSION_HEX >= 0x030D0000
    /* 3.13 keeps the request in this thread's own eval_breaker. */
    _Py_unset_eval_breaker_bit(ts, _PY_ASYNC_EXCEPTION_BIT);
    return exc;
#else
    PyInterpreterState *interp = ts->interp;
    struct _ceval_state *ceval2 = &interp->ceval;
    ceval2->pending.async_exc = 0;
    _Py_atomic_store_relaxed(
        &ceval2->eval_breaker,
        _Py_atomic_load_relaxed(&ceval2->gil_drop_request) |
            (_Py_atomic_load_relaxed(&_PyRuntime.ceval.signals_pending) && _Py_ThreadCanHandleSignals(interp)) |
            (_Py_atomic_load_relaxed(&ceval2->pending.calls_to_do) && _Py_ThreadCanHandlePendingCalls()) |
            ceval2->pending.async_exc);
    return exc;
#endif
}

PyObject *pyj_eval_frame(PyThreadState *ts, struct _PyInterpreterFrame *frame)
{
    return _PyEval_EvalFrame(ts, frame, 0);
}
