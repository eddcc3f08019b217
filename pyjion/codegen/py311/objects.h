// CPython 3.11's object layouts that differ from other versions' (included
// by cpython/object_layout.h).
#pragma once

namespace pyjion::layout {

// Ints are sign-magnitude: ob_size is the number of 30-bit digits times the
// sign (0 for zero), the digits follow.
constexpr int32_t kLongSize = offsetof(PyVarObject, ob_size);
constexpr int32_t kLongDigit0 = offsetof(PyLongObject, ob_digit);

// The value of an exact int of at most one digit (what the interpreter's
// BINARY_SUBSCR_*_INT forms index by); false for any other object.
inline bool one_digit_int(PyObject *v, Py_ssize_t *value)
{
    if (!PyLong_CheckExact(v)) return false;
    Py_ssize_t size = Py_SIZE(v);
    if (size < -1 || size > 1) return false;
    *value = size * static_cast<Py_ssize_t>(reinterpret_cast<PyLongObject *>(v)->ob_digit[0]);
    return true;
}

// No immortal objects: a reference count is a plain 64-bit counter.
constexpr bool kImmortalObjects = false;

// POP_EXCEPT restores the None PUSH_EXC_INFO saved as it is (3.11 skips
// NULL and None entries alike looking for the handled exception).
constexpr bool kNoHandledExceptionIsNull = false;

// range_iterator (Objects/rangeobject.c keeps the struct private): the
// optimising tier steps it inline in FOR_ITER.
struct RangeIterLayout {
    PyObject_HEAD
    long index, start, step, len;
};
constexpr bool kRangeIterHasIndex = true;
constexpr int32_t kRangeIterIndex = offsetof(RangeIterLayout, index);
constexpr int32_t kRangeIterStart = offsetof(RangeIterLayout, start);
constexpr int32_t kRangeIterStep = offsetof(RangeIterLayout, step);
constexpr int32_t kRangeIterLen = offsetof(RangeIterLayout, len);

// A generator's frame is embedded in the generator object (gi_iframe).
constexpr int32_t kGenFrameStateFromFrame =
    static_cast<int32_t>(offsetof(PyGenObject, gi_frame_state)) - static_cast<int32_t>(offsetof(PyGenObject, gi_iframe));
constexpr int8_t kFrameSuspended = FRAME_SUSPENDED;

// MATCH_CLASS's TypeError when the pattern's callee is not a class.
constexpr const char *kMatchClassNotAType = "called match pattern must be a type";

}  // namespace pyjion::layout
