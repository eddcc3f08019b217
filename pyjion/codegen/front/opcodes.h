// The opcode numbers of the CPython compiled against (its opcode.h) and the
// generated opcode list (opcodes.def), checked against each other at compile time.
#pragma once

#include <Python.h>
#include "opcode.h"

#define OPCODE(name, num, caches, jump) \
    static_assert((name) == (num), "opcodes.def is out of step with CPython's opcode.h: " #name);
#include "front/opcodes.def"
#undef OPCODE
