// CPython 3.13's frame, thread state and code fields that machine code reads
// and writes (included by cpython/frame_layout.h). Names are shared with
// py311/frame.h where the meaning is the same.
#pragma once

#include "internal/pycore_global_objects.h"   // the small-int cache bounds
#include "opcode.h"

namespace pyjion::layout {

// _PyInterpreterFrame
constexpr int32_t kFrameCode = offsetof(_PyInterpreterFrame, f_executable);
constexpr int32_t kFrameFunc = offsetof(_PyInterpreterFrame, f_funcobj);
constexpr int32_t kFrameGlobals = offsetof(_PyInterpreterFrame, f_globals);
constexpr int32_t kFrameBuiltins = offsetof(_PyInterpreterFrame, f_builtins);
constexpr int32_t kFrameLocals = offsetof(_PyInterpreterFrame, f_locals);
constexpr int32_t kFrameObject = offsetof(_PyInterpreterFrame, frame_obj);
constexpr int32_t kFramePrevious = offsetof(_PyInterpreterFrame, previous);
// instr_ptr: the instruction executing, or the one to begin with when the
// interpreter takes the frame (3.11's prev_instr names the one before).
constexpr int32_t kFrameInstr = offsetof(_PyInterpreterFrame, instr_ptr);
constexpr int32_t kFrameStackTop = offsetof(_PyInterpreterFrame, stacktop);
constexpr int32_t kFrameReturnOffset = offsetof(_PyInterpreterFrame, return_offset);
constexpr int32_t kFrameOwner = offsetof(_PyInterpreterFrame, owner);
constexpr int32_t kFrameLocalsPlus = offsetof(_PyInterpreterFrame, localsplus);
// Where the interpreter goes on relative to kFrameInstr when it is handed a
// frame: at instr_ptr itself.
constexpr int kResumeUnitBias = 0;

// PyThreadState: the current frame is the thread's own field; Python frames
// and C calls count their recursion separately.
constexpr int32_t kTstateCurrentFrame = offsetof(PyThreadState, current_frame);
constexpr int32_t kTstatePyRecursionRemaining = offsetof(PyThreadState, py_recursion_remaining);
constexpr int32_t kTstateCRecursionRemaining = offsetof(PyThreadState, c_recursion_remaining);
// Pending events in the low bits (_PY_EVAL_EVENTS_MASK), the global
// instrumentation version above them.
constexpr int32_t kTstateEvalBreaker = offsetof(PyThreadState, eval_breaker);
constexpr int32_t kTstateExcInfo = offsetof(PyThreadState, exc_info);
constexpr uint32_t kEvalEventsMask = (1u << 8) - 1;   // _PY_EVAL_EVENTS_MASK (internal/pycore_ceval.h)

// PyCodeObject: the instrumentation version the code was last instrumented for.
constexpr int32_t kCodeInstrumentationVersion = offsetof(PyCodeObject, _co_instrumentation_version);

// Accessors for C++ (the runtime), by the same names in every version.
inline PyCodeObject *frame_code(const _PyInterpreterFrame *f) { return reinterpret_cast<PyCodeObject *>(f->f_executable); }
inline PyObject *frame_function(const _PyInterpreterFrame *f) { return f->f_funcobj; }
// The code unit of the instruction executing (tracebacks, handlers).
inline int frame_unit(const _PyInterpreterFrame *f) { return static_cast<int>(f->instr_ptr - _PyCode_CODE(frame_code(f))); }
inline void set_frame_unit(_PyInterpreterFrame *f, int unit) { f->instr_ptr = _PyCode_CODE(frame_code(f)) + unit; }
// Where the interpreter goes on when it takes the frame over.
inline int frame_resume_unit(const _PyInterpreterFrame *f) { return frame_unit(f) + kResumeUnitBias; }
inline _PyInterpreterFrame *current_frame(PyThreadState *ts) { return ts->current_frame; }
inline void set_current_frame(PyThreadState *ts, _PyInterpreterFrame *f) { ts->current_frame = f; }
}  // namespace pyjion::layout

namespace pyjion::py313 {
// py313/frame_runtime.cpp: the code's instrumentation version is behind the
// thread's. True (the version brought up to date) where _Py_Instrument would
// change nothing else.
bool instrumentation_caught_up(PyThreadState *ts, PyCodeObject *code);
}  // namespace pyjion::py313

namespace pyjion::layout {

// The interpreter must run this code for sys.monitoring (and settrace /
// setprofile, built on it): either the global instrumentation changed since
// the code was instrumented and instrumenting it now would change its
// bytecode (RESUME's comparison, then _Py_Instrument: machine code checks
// the version inline and the rest in py313::instrumentation_caught_up), or
// the code is instrumented for some event now (its bytecode carries the
// INSTRUMENTED_* forms that machine code does not have). Turning a tracer on
// instruments the code of every executing frame at once, so the version
// comparison alone would miss those.
inline bool code_monitored(PyCodeObject *code)
{
    const _PyCoMonitoringData *m = code->_co_monitoring;
    if (m == nullptr) return false;
    for (uint8_t tools : m->active_monitors.tools) {
        if (tools != 0) return true;
    }
    return false;
}
inline bool tracing_active(PyThreadState *ts, PyCodeObject *code)
{
    if ((ts->eval_breaker & ~static_cast<uintptr_t>(kEvalEventsMask)) != code->_co_instrumentation_version &&
        !py313::instrumentation_caught_up(ts, code)) {
        return true;
    }
    return code_monitored(code);
}
constexpr int32_t kCodeMonitoring = offsetof(PyCodeObject, _co_monitoring);
constexpr int32_t kMonitoringActive = offsetof(_PyCoMonitoringData, active_monitors);
constexpr int32_t kMonitoringActiveSize = sizeof(_Py_LocalMonitors);

}  // namespace pyjion::layout

namespace pyjion::layout {

// 3.13 has no code-wide warm-up: instructions specialise on their own
// counters, and C calls count their recursion level the same either way.
constexpr uint64_t kWarmupDelay = 0;
inline uint64_t warmup_count(PyCodeObject *) { return 0; }
// The code ran in the interpreter (its first RESUME became RESUME_CHECK), so
// its instructions have had their chance to specialise.
inline bool interpreter_specialised(PyCodeObject *code)
{
    int unit = code->_co_firsttraceable;
    return unit < Py_SIZE(code) && _PyCode_CODE(code)[unit].op.code == RESUME_CHECK;
}

}  // namespace pyjion::layout
