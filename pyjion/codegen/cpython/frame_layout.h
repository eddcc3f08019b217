// The version layer's interface to the frame, thread-state and code layout of
// the CPython being built against, as machine code and the runtime see them:
// offsets baked into emitted instructions and accessors. What differs between
// versions is in pyNNN/frame.h; objects are in object_layout.h.
#pragma once

#include "cpython/object_layout.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#include "py311/frame.h"
#elif PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
#include "py313/frame.h"
#endif

namespace pyjion::layout {

inline int32_t local_offset(int index) { return kFrameLocalsPlus + 8 * index; }

// A fast local that MAKE_CELL turns into a cell (an argument a closure uses).
inline bool local_is_cell(PyCodeObject *code, int index)
{
    return (_PyLocals_GetKind(code->co_localspluskinds, index) & CO_FAST_CELL) != 0;
}

}  // namespace pyjion::layout
