// CPython 3.13's object layouts that differ from other versions' (included
// by cpython/object_layout.h).
#pragma once

#include "internal/pycore_range.h"

namespace pyjion::layout {

// Ints: long_value.lv_tag holds the number of digits << 3 and the sign in
// its low two bits (0 positive, 1 zero, 2 negative; cpython/longintrepr.h);
// an int of at most one digit is "compact" (lv_tag < 2 << 3).
constexpr int32_t kLongTag = offsetof(PyLongObject, long_value.lv_tag);
constexpr int32_t kLongDigit0 = offsetof(PyLongObject, long_value.ob_digit);
constexpr int kLongNonSizeBits = _PyLong_NON_SIZE_BITS;
constexpr int kLongSignMask = _PyLong_SIGN_MASK;

// The value of an exact int of at most one digit (what the interpreter's
// BINARY_SUBSCR_*_INT forms index by); false for any other object.
inline bool one_digit_int(PyObject *v, Py_ssize_t *value)
{
    if (!PyLong_CheckExact(v) || !_PyLong_IsCompact(reinterpret_cast<PyLongObject *>(v))) return false;
    *value = _PyLong_CompactValue(reinterpret_cast<PyLongObject *>(v));
    return true;
}

// Immortal objects (PEP 683): ob_refcnt's low 32 bits are 0xFFFFFFFF (an
// int32 below zero), and Py_INCREF/Py_DECREF leave such an object alone; an
// increment only ever writes the low 32 bits (object.h). Machine code counts
// the same way (machine/emitter.cpp), else the counts of None, the small
// ints, interned strings and static types drift against C's.
constexpr bool kImmortalObjects = true;

// A thread's or generator's handled exception is NULL when there is none:
// POP_EXCEPT stores NULL for the None PUSH_EXC_INFO saved, and
// _PyErr_GetTopmostException skips only NULL entries (errors.c).
constexpr bool kNoHandledExceptionIsNull = true;

// The range iterator advances start itself (no index field since 3.12).
constexpr bool kRangeIterHasIndex = false;
constexpr int32_t kRangeIterStart = offsetof(_PyRangeIterObject, start);
constexpr int32_t kRangeIterStep = offsetof(_PyRangeIterObject, step);
constexpr int32_t kRangeIterLen = offsetof(_PyRangeIterObject, len);

constexpr int32_t kGenFrameStateFromFrame =
    static_cast<int32_t>(offsetof(PyGenObject, gi_frame_state)) - static_cast<int32_t>(offsetof(PyGenObject, gi_iframe));
constexpr int8_t kFrameSuspended = FRAME_SUSPENDED;

// MATCH_CLASS's TypeError when the pattern's callee is not a class.
constexpr const char *kMatchClassNotAType = "called match pattern must be a class";

}  // namespace pyjion::layout
