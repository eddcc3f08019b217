// Per-site data the machine code reads and the runtime fills: inline caches.
// Each lives as long as the compiled code (CompiledCode owns them), at a fixed
// address baked into the instructions.
#pragma once

#include <Python.h>
#include <cstdint>

namespace pyjion {

// LOAD_GLOBAL: the value found for one name while the globals and builtins
// dicts had these version tags. A dict's ma_version_tag changes on every
// mutation and is unique across dicts, so equal tags mean the lookup would
// give the same (borrowed, dict-owned) value.
struct GlobalCache {
    PyObject *globals = nullptr;
    uint64_t globals_version = 0;
    PyObject *builtins = nullptr;
    uint64_t builtins_version = 0;
    PyObject *value = nullptr;
};

struct SiteData {
    virtual ~SiteData() = default;
};

template <class T>
struct SiteDataOf : SiteData {
    T data;
};

}  // namespace pyjion
