// The runtime helpers of CPython 3.11's own visitors (py311/visit_*.cpp),
// listed in py311/helpers.def.
#pragma once

#include "cpython/frame_layout.h"
