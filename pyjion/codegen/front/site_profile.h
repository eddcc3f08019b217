// Type profiles per instruction site: what CPython's specialising
// interpreter learnt where the code ran interpreted, read off the quickened
// instructions in co_code_adaptive and their adaptive counters (the forms
// per version: pyNNN/site_forms.h). Code compiled
// once warm (the default) has run there first, so its sites say which types
// they met. The optimising tier speculates on these; info(f) shows them.
#pragma once

#include <Python.h>
#include <vector>

#include "front/bytecode.h"

namespace pyjion {

// What a site's quickened instruction says about the site.
enum class SiteState : uint8_t {
    kNotQuickened,   // the code was never warm in the interpreter (3.13: never ran
                     // there), or the site is instrumented: nothing learnt
    kUnseen,         // quickened, but the site has not run since
    kGeneric,        // the interpreter tried to specialise and could not (other
                     // or mixed types), or gave a specialisation up after misses
    kSpecialised,    // the interpreter runs a specialised form (quickened)
    kUnprofiled,     // 3.11 has no specialised form of this opcode (FOR_ITER)
};

// The type a specialisation stands for: the operands' of BINARY_OP and
// COMPARE_OP (3.13: TO_BOOL's operand), the container's of BINARY_SUBSCR,
// STORE_SUBSCR, UNPACK_SEQUENCE (3.13: FOR_ITER, CONTAINS_OP); kObject for
// every other specialisation (attribute kinds, call kinds: `quickened` tells
// which) and for unspecialised sites.
enum class SeenType : uint8_t { kObject, kInt, kFloat, kStr, kList, kTuple, kDict };

struct SiteProfile {
    int unit;           // code unit of the instruction (the opcode itself, after any EXTENDED_ARG)
    int opcode;         // the instruction's own opcode (BINARY_OP, ...)
    int quickened;      // the opcode co_code_adaptive holds there
    SiteState state;
    SeenType type;
};

// Whether the interpreter has made the code's sites adaptive and run it, so
// its sites tell what they saw (3.11: co_warmup reached 0 and the code was
// quickened; 3.13, which quickens code when it is made: it ran, its RESUME
// became RESUME_CHECK). What "warm in the interpreter" means per version.
bool code_was_quickened(PyCodeObject *code);
// Whether `opcode` is a site the profile covers.
bool is_profile_site(int opcode);
// The profile of one instruction (which must be a profile site).
SiteProfile site_profile(PyCodeObject *code, const Instr &ins);
// Every profile site of the code, in bytecode order.
std::vector<SiteProfile> site_profiles(PyCodeObject *code, const Bytecode &bytecode);

const char *site_state_name(SiteState state);
const char *seen_type_name(SeenType type);
// The name of a quickened opcode (specialised forms included), for display.
const char *quickened_name(int opcode);

}  // namespace pyjion
