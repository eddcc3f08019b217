// CPython 3.13's frame bookkeeping done in C (py313/frame_runtime.h).
#include "py313/frame_runtime.h"

#include "cpython/interp_state.h"
#include "front/bytecode.h"

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

// What RESUME's _Py_Instrument (Python/instrumentation.c) does to code whose
// version is stale, when no tool monitors any event globally (interp->
// monitors; sys.settrace and sys.setprofile are tools too) nor locally in
// this code (sys.monitoring.set_local_events) and nothing is instrumented in
// it (its active monitors): events to add and to remove are both none, so it
// only stores the interpreter's version in the code (and allocates empty
// monitoring data, which nothing reads while empty). Every code object made or last run
// by the interpreter while a tracer or profiler was on is such once it is
// off: done here, machine code runs it from its first call on, as the
// interpreter does, instead of handing it to the interpreter until the
// interpreter has run it once. (Code CPython never instruments,
// CO_NO_MONITORING_EVENTS, keeps its version, and runs uninstrumented.)
bool instrumentation_caught_up(PyThreadState *ts, PyCodeObject *code)
{
    if (pyj_interp_monitors_any(ts)) return false;
    if (const _PyCoMonitoringData *m = code->_co_monitoring) {
        for (int i = 0; i < _PY_MONITORING_LOCAL_EVENTS; i++) {
            if (m->local_monitors.tools[i] != 0 || m->active_monitors.tools[i] != 0) return false;
        }
    }
    if (!(code->co_flags & CO_NO_MONITORING_EVENTS)) {
        code->_co_instrumentation_version = pyj_interp_instrumentation_version(ts);
    }
    return true;
}

namespace {

// Each opcode's inline cache entries (what pyj_code_remove_line_tools
// needs): CPython's table is not exported.
const uint8_t *cache_entries()
{
    static uint8_t table[256] = {};
    static bool made = [] {
        for (int op = 0; op < 256; op++) table[op] = static_cast<uint8_t>(opcode_caches(op));
        return true;
    }();
    (void)made;
    return table;
}

}  // namespace

int handoff_line_event(PyThreadState *ts, _PyInterpreterFrame *frame, int prev_unit)
{
    PyCodeObject *code = layout::frame_code(frame);
    int unit = layout::frame_unit(frame);
    _Py_CODEUNIT *units = _PyCode_CODE(code);
    // (inside a tool's callback the interpreter emits nothing either)
    if (ts->tracing || prev_unit < 0 || units[unit].op.code != INSTRUMENTED_LINE) return 0;
    int line = PyCode_Addr2Line(code, unit * static_cast<int>(sizeof(_Py_CODEUNIT)));
    int prev_line = PyCode_Addr2Line(code, prev_unit * static_cast<int>(sizeof(_Py_CODEUNIT)));
    int prev_op = units[prev_unit].op.code;
    if (line == prev_line && prev_op != RESUME && prev_op != INSTRUMENTED_RESUME) return 0;
    const _PyCoMonitoringData *m = code->_co_monitoring;
    uint8_t tools = m->line_tools != nullptr
                        ? m->line_tools[unit]
                        : static_cast<uint8_t>(pyj_interp_line_tools(ts) | m->local_monitors.tools[PY_MONITORING_EVENT_LINE]);
    if (tools == 0) return 0;
    // Each tool's callback in turn (sys.settrace's reads this frame, the
    // current one); a DISABLE answer clears the tool's bit.
    PyMonitoringState state = {tools, 0};
    int err = _PyMonitoring_FireLineEvent(&state, reinterpret_cast<PyObject *>(code), unit * 2, line);
    if (err < 0) return -1;
    uint8_t disabled = tools & static_cast<uint8_t>(~state.active);
    if (disabled != 0) pyj_code_remove_line_tools(code, unit, disabled, cache_entries());
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
