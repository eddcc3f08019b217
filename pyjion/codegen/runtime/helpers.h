// The table of the C functions machine code calls (helpers.def), as the
// specialisations of HelperEntry that Emitter::call<&fn> looks fn up in
// (machine/helper_call.h): a function not listed fails to build.
#pragma once

#include "cpython/interp_state.h"   // _Py_CheckRecursiveCall
#include "machine/helper_call.h"
#include "runtime/attr_cache.h"
#include "runtime/direct_call.h"
#include "runtime/runtime.h"
#include "runtime/runtime_names.h"
#include "runtime/runtime_objects.h"
#include "runtime/runtime_slots.h"
#include "runtime/unboxed.h"
#if PY_VERSION_HEX >= 0x030D0000
#include "py313/runtime313.h"
#else
#include "py311/runtime311.h"
#endif

namespace pyjion {

#define HELPER(fn)                                  \
    template <>                                     \
    struct HelperEntry<&fn> {                       \
        static constexpr const char *name = #fn;    \
    };
#include "runtime/helpers.def"
#undef HELPER

}  // namespace pyjion
