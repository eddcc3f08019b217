// The runtime helpers of CPython 3.13's own visitors (py313/visit_*.cpp) and
// frame bookkeeping, listed in py313/helpers.def.
#pragma once

#include "py313/frame_runtime.h"
