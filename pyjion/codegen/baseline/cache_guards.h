// The guards of the inline caches (inline_cache.h) as machine code, shared by
// the sites that carry them inline (visit_names.cpp) and the shared stubs that
// long functions call instead (site_stubs.cpp): one copy of each guard, so
// the two forms cannot drift apart.
//
// Attribute kinds: rdi = the owner, rcx = the AttrEntry; a guard that fails
// jumps to `fail`; rax (and rdx where said) are clobbered.
#pragma once

#include "machine/emitter.h"
#include "runtime/inline_cache.h"

#include "internal/pycore_dict.h"   // PyDictKeysObject

#include <asmjit/x86.h>
#include <cstddef>
#include <cstdint>

namespace pyjion::guards {

constexpr int32_t kTypeVersion = offsetof(PyTypeObject, tp_version_tag);
constexpr int32_t kKeysNentries = offsetof(PyDictKeysObject, dk_nentries);
constexpr int32_t kDictVersion = offsetof(PyDictObject, ma_version_tag);
constexpr int32_t kEntryType = offsetof(AttrEntry, type);
constexpr int32_t kEntryVersion = offsetof(AttrEntry, version);
constexpr int32_t kEntryKind = offsetof(AttrEntry, kind);
constexpr int32_t kEntryIndex = offsetof(AttrEntry, index);
constexpr int32_t kEntryGuard = offsetof(AttrEntry, guard);
constexpr int32_t kEntryGuardVersion = offsetof(AttrEntry, guard_version);
constexpr int32_t kEntryValue = offsetof(AttrEntry, value);

// The owner has managed-dict values, and the shared keys have not grown since
// the fill found the name absent from them: the instance cannot shadow.
void no_shadow_values(asmjit::x86::Assembler &a, const asmjit::Label &fail);

// rax = values->values[index], unless the values are gone or the slot is
// empty (rdx clobbered).
void instance_value(asmjit::x86::Assembler &a, const asmjit::Label &fail);

// rax = the __slots__ member at byte offset `index`, unless it is unset (rdx
// clobbered).
void slot_value(asmjit::x86::Assembler &a, const asmjit::Label &fail);

// LOAD_GLOBAL (rcx = the site's GlobalCache, rbx = the frame register): the
// frame's globals and builtins are the dicts the cache was filled from, both
// unchanged since; then rax = the value (borrowed). f_globals is always a
// dict (or a subclass: the struct is the same) and version tags are unique
// across dicts, so the tag alone identifies the globals; the builtins may be
// any mapping, so their identity is checked before their tag is read. rdx
// clobbered.
void global_value(asmjit::x86::Assembler &a, const asmjit::Label &fail);

}  // namespace pyjion::guards
