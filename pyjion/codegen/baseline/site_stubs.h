// Shared stubs for the inline-cache sites of long functions: one
// process-wide copy of LOAD_ATTR's and LOAD_METHOD's cache lookup (every
// entry, the kinds the guards of inline_cache.h prove with a few loads) and of
// LOAD_GLOBAL's, which such a site calls instead of carrying its own copy of
// the guards (~25 bytes instead of ~70-110). Code that runs once per call is
// fetched from beyond the level-1 instruction cache every time, so its bytes
// cost more than the call and return; a stub that every site shares stays in
// the cache. Short functions, called often enough to stay cached, keep their
// inline paths (visit_names.cpp; Compiler::compact_site). The guards are
// cache_guards.h's, as the inline paths'.
#pragma once

#include <cstdint>

namespace pyjion::site_stubs {

// The contract (the stubs run in the caller's context and touch only
// caller-saved registers):
//   in:  rsi = the address of the owner's value-stack slot,
//        rdx = the site's AttrCache
//   out: eax = one of the statuses below.
// LOAD_ATTR: on a hit the slot holds the attribute (a new reference) and the
// owner's reference is released. LOAD_METHOD: on a hit slot[0], slot[1]
// become [method, owner] or [NULL, attribute] (the owner released).
enum Status : int32_t {
    kHit = 0,
    // Nothing changed: no entry's guards held for a kind the stub checks;
    // the site asks rtn::pyj_attr_probe (every kind), then its miss helper.
    kMiss = 1,
    // A hit, but the owner's reference was its last: rdi = the owner, for the
    // site to deallocate with its prev_instr set (a __del__ may look).
    kOwnerDies = 2,
};

// The stubs, made at the first compile that asks (GIL held) and kept for the
// life of the process; nullptr if one could not be made (then sites keep
// their inline paths).
const void *load_attr();
const void *load_method();

// LOAD_GLOBAL: in: rcx = the site's GlobalCache (rbx = the frame register, as
// in the caller). out: rax = the value as a new reference when the frame's
// globals and builtins still have the versions the cache was filled with,
// else 0 with rcx unchanged (the site's miss path looks the name up).
const void *load_global();

}  // namespace pyjion::site_stubs
