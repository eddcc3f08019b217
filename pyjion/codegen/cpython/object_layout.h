// The layout of the objects machine code reads and writes inline (ints,
// floats, lists, range iterators, generators), for the CPython being built
// against: the version-neutral part here, what differs in pyNNN/objects.h.
#pragma once

#include <Python.h>
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include <cstddef>
#include <cstdint>

namespace pyjion::layout {

constexpr int32_t kObjectType = offsetof(PyObject, ob_type);
constexpr int32_t kObjectRefcnt = offsetof(PyObject, ob_refcnt);
// A list's or tuple's length (PyVarObject); not an int's (see int_emit.h).
constexpr int32_t kVarSize = offsetof(PyVarObject, ob_size);
constexpr int32_t kFloatValue = offsetof(PyFloatObject, ob_fval);
constexpr int32_t kListItems = offsetof(PyListObject, ob_item);
static_assert(PyLong_SHIFT == 30, "fast paths assume 30-bit int digits");

}  // namespace pyjion::layout

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#include "py311/objects.h"
#elif PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
#include "py313/objects.h"
#else
#error "pyjion has layers for CPython 3.11 and 3.13 only"
#endif
