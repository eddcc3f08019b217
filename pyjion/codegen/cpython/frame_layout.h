// CPython 3.11's frame, thread-state and code layout, as the machine code sees
// it: the offsets and addresses baked into emitted instructions. Porting to
// 3.12 starts here (and in ../cpython311.h for the hook).
#pragma once

#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyjion's code generator is written against CPython 3.11's frame layout"
#endif
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_global_objects.h"   // the small-int cache bounds
#include <cstddef>
#include <cstdint>

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

// Objects with inline fast paths (specialize.cpp): 3.11 ints are sign-magnitude
// with 30-bit digits, ob_size = number of digits times the sign.
constexpr int32_t kObjectType = offsetof(PyObject, ob_type);
constexpr int32_t kObjectRefcnt = offsetof(PyObject, ob_refcnt);
constexpr int32_t kVarSize = offsetof(PyVarObject, ob_size);
constexpr int32_t kLongDigit0 = offsetof(PyLongObject, ob_digit);
constexpr int32_t kFloatValue = offsetof(PyFloatObject, ob_fval);
constexpr int32_t kListItems = offsetof(PyListObject, ob_item);
static_assert(PyLong_SHIFT == 30, "fast paths assume 30-bit int digits");

// range_iterator (Objects/rangeobject.c keeps the struct private): the
// optimising tier steps it inline in FOR_ITER.
struct RangeIterLayout {
    PyObject_HEAD
    long index, start, step, len;
};
constexpr int32_t kRangeIterIndex = offsetof(RangeIterLayout, index);
constexpr int32_t kRangeIterStart = offsetof(RangeIterLayout, start);
constexpr int32_t kRangeIterStep = offsetof(RangeIterLayout, step);
constexpr int32_t kRangeIterLen = offsetof(RangeIterLayout, len);

// A generator's frame is embedded in the generator object (gi_iframe).
constexpr int32_t kGenFrameStateFromFrame =
    static_cast<int32_t>(offsetof(PyGenObject, gi_frame_state)) - static_cast<int32_t>(offsetof(PyGenObject, gi_iframe));
constexpr int8_t kFrameSuspended = FRAME_SUSPENDED;

inline int32_t local_offset(int index) { return kFrameLocalsPlus + 8 * index; }

// A fast local that MAKE_CELL turns into a cell (an argument a closure uses).
inline bool local_is_cell(PyCodeObject *code, int index)
{
    return (_PyLocals_GetKind(code->co_localspluskinds, index) & CO_FAST_CELL) != 0;
}

}  // namespace pyjion::layout
