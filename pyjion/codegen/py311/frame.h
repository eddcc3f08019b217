// CPython 3.11's frame and thread state (included by cpython/frame_layout.h).
#pragma once

#include "internal/pycore_global_objects.h"   // the small-int cache bounds

namespace pyjion::layout {

// _PyInterpreterFrame
constexpr int32_t kFrameCode = offsetof(_PyInterpreterFrame, f_code);
constexpr int32_t kFrameFunc = offsetof(_PyInterpreterFrame, f_func);
constexpr int32_t kFrameGlobals = offsetof(_PyInterpreterFrame, f_globals);
constexpr int32_t kFrameBuiltins = offsetof(_PyInterpreterFrame, f_builtins);
constexpr int32_t kFrameLocals = offsetof(_PyInterpreterFrame, f_locals);
constexpr int32_t kFrameObject = offsetof(_PyInterpreterFrame, frame_obj);
constexpr int32_t kFramePrevious = offsetof(_PyInterpreterFrame, previous);
// prev_instr: the instruction executing (the last one started); the
// interpreter, handed the frame, goes on at the one after it.
constexpr int32_t kFrameInstr = offsetof(_PyInterpreterFrame, prev_instr);
constexpr int32_t kFramePrevInstr = kFrameInstr;
constexpr int32_t kFrameStackTop = offsetof(_PyInterpreterFrame, stacktop);
constexpr int32_t kFrameIsEntry = offsetof(_PyInterpreterFrame, is_entry);
constexpr int32_t kFrameOwner = offsetof(_PyInterpreterFrame, owner);
constexpr int32_t kFrameLocalsPlus = offsetof(_PyInterpreterFrame, localsplus);
// Where the interpreter goes on relative to kFrameInstr when handed a frame.
constexpr int kResumeUnitBias = 1;

// PyThreadState and _PyCFrame
constexpr int32_t kTstateCFrame = offsetof(PyThreadState, cframe);
constexpr int32_t kTstateRecursionRemaining = offsetof(PyThreadState, recursion_remaining);
constexpr int32_t kCFrameCurrentFrame = offsetof(_PyCFrame, current_frame);
constexpr int32_t kCFrameUseTracing = offsetof(_PyCFrame, use_tracing);

// Accessors for C++ (the runtime), by the same names in every version.
inline PyCodeObject *frame_code(const _PyInterpreterFrame *f) { return f->f_code; }
inline PyObject *frame_function(const _PyInterpreterFrame *f) { return reinterpret_cast<PyObject *>(f->f_func); }
// The code unit of the instruction executing (tracebacks, handlers).
inline int frame_unit(const _PyInterpreterFrame *f) { return static_cast<int>(f->prev_instr - _PyCode_CODE(f->f_code)); }
inline void set_frame_unit(_PyInterpreterFrame *f, int unit) { f->prev_instr = _PyCode_CODE(f->f_code) + unit; }
// Where the interpreter goes on when it takes the frame over.
inline int frame_resume_unit(const _PyInterpreterFrame *f) { return frame_unit(f) + kResumeUnitBias; }
inline _PyInterpreterFrame *current_frame(PyThreadState *ts) { return ts->cframe->current_frame; }
inline void set_current_frame(PyThreadState *ts, _PyInterpreterFrame *f) { ts->cframe->current_frame = f; }
// A tracer or profiler wants to see this code run in the interpreter.
inline bool tracing_active(PyThreadState *ts, PyCodeObject *) { return ts->cframe->use_tracing != 0; }

}  // namespace pyjion::layout

namespace pyjion::layout {

// The interpreter's warm-up (Compiler::kWarmupDelay): RESUMEs and backward
// jumps before it quickens a code object.
constexpr uint64_t kWarmupDelay = QUICKENING_WARMUP_DELAY;
// How far the interpreter's count got (co_warmup counts up from -delay to 0).
inline uint64_t warmup_count(PyCodeObject *code)
{
    int n = static_cast<int>(kWarmupDelay) + code->co_warmup;
    return static_cast<uint64_t>(n > 0 ? n : 0);
}
// The interpreter has specialised the code (its quickened opcodes are a profile).
inline bool interpreter_specialised(PyCodeObject *code) { return code->co_warmup == 0; }

}  // namespace pyjion::layout
