// CPython 3.11's frame and thread state (included by cpython/frame_layout.h).
#pragma once

#include "internal/pycore_global_objects.h"   // the small-int cache bounds

namespace pyjion::layout {

// _PyInterpreterFrame
constexpr int32_t kFrameFunc = offsetof(_PyInterpreterFrame, f_func);
constexpr int32_t kFrameGlobals = offsetof(_PyInterpreterFrame, f_globals);
constexpr int32_t kFrameBuiltins = offsetof(_PyInterpreterFrame, f_builtins);
constexpr int32_t kFramePrevious = offsetof(_PyInterpreterFrame, previous);
constexpr int32_t kFramePrevInstr = offsetof(_PyInterpreterFrame, prev_instr);
constexpr int32_t kFrameStackTop = offsetof(_PyInterpreterFrame, stacktop);
constexpr int32_t kFrameIsEntry = offsetof(_PyInterpreterFrame, is_entry);
constexpr int32_t kFrameLocalsPlus = offsetof(_PyInterpreterFrame, localsplus);

// PyThreadState and _PyCFrame
constexpr int32_t kTstateCFrame = offsetof(PyThreadState, cframe);
constexpr int32_t kTstateRecursionRemaining = offsetof(PyThreadState, recursion_remaining);
constexpr int32_t kCFrameCurrentFrame = offsetof(_PyCFrame, current_frame);
constexpr int32_t kCFrameUseTracing = offsetof(_PyCFrame, use_tracing);

}  // namespace pyjion::layout
