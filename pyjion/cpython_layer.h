/* The hook's view of the CPython it is built against: one header per
 * version (cpython311.h, cpython313.h) with the same accessors, so the hook
 * (_eval.pyx, tiering.h, hook_entry.h) is written once. */
#ifndef PYJION_CPYTHON_LAYER_H
#define PYJION_CPYTHON_LAYER_H

#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#include "cpython311.h"
#elif PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
#include "cpython313.h"
#else
#error "pyjion has layers for CPython 3.11 and 3.13 only"
#endif

#endif
