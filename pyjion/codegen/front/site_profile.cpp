#include "front/site_profile.h"

#include "cpython/object_layout.h"   // (3.13: the backoff counters of pycore_code.h)
#include "front/opcodes.h"

#if PY_VERSION_HEX >= 0x030D0000
#define SITE_FORMS "py313/site_forms.h"
#else
#define SITE_FORMS "py311/site_forms.h"
#endif

namespace pyjion {

namespace {

// The specialised forms each profiled opcode is quickened to, with the type
// each stands for: the version's table (pyNNN/site_forms.h).
struct Specialisation {
    int quickened;
    int base;
    SeenType type;
    const char *name;
};

#define PROFILE_SITE(op)
#define ADAPTIVE_FORM(op)
#define SITE_FORM(name, base, type) {name, base, SeenType::type, #name},
constexpr Specialisation kSpecialisations[] = {
#include SITE_FORMS
};
#undef SITE_FORM
#undef ADAPTIVE_FORM
#undef PROFILE_SITE

const Specialisation *specialisation(int quickened)
{
    for (const auto &s : kSpecialisations) {
        if (s.quickened == quickened) return &s;
    }
    return nullptr;
}

#if PY_VERSION_HEX < 0x030D0000
bool is_adaptive(int quickened)
{
    switch (quickened) {
#define PROFILE_SITE(op)
#define SITE_FORM(name, base, type)
#define ADAPTIVE_FORM(op) case op:
#include SITE_FORMS
#undef ADAPTIVE_FORM
#undef SITE_FORM
#undef PROFILE_SITE
        return true;
    default:
        return false;
    }
}

// The low bits of an adaptive instruction's counter (its first inline cache
// entry) count the specialisations tried: 0 until the site first runs after
// quickening (Python/specialize.c, ADAPTIVE_BACKOFF_BITS).
constexpr int kBackoffBits = 4;

// The profile of a site of code the interpreter quickened (co_warmup
// reached 0): the adaptive form with its counter, a specialised form, or
// the plain opcode where the interpreter gave the site up.
void read_site(const _Py_CODEUNIT *units, const Instr &ins, int quickened, SiteProfile &p)
{
    if (quickened == ins.opcode) {
        // Quickened code keeps the plain opcode where the interpreter gave
        // the site up (3.11 leaves BINARY_OP for operators it never specialises).
        p.state = SiteState::kGeneric;
        return;
    }
    const Specialisation *s = specialisation(quickened);
    if (s == nullptr || s->base != ins.opcode) return;   // not this site's form: nothing learnt
    if (is_adaptive(quickened)) {
        uint16_t counter = units[ins.index + 1];
        p.state = (counter & ((1 << kBackoffBits) - 1)) == 0 ? SiteState::kUnseen : SiteState::kGeneric;
        return;
    }
    p.state = SiteState::kSpecialised;
    p.type = s->type;
}

#else
// A site holds a specialised form, or its base opcode whose first cache
// entry is a backoff counter: still at the warm-up value and exponent it
// was made with (ADAPTIVE_WARMUP_*) until the interpreter first tries to
// specialise, then backed off after each failure. (A site whose
// specialisation was dropped once and that failed to specialise again has
// the warm-up counter too: it reads as unseen; nothing decides on the
// difference between unseen and generic.)
void read_site(const _Py_CODEUNIT *units, const Instr &ins, int quickened, SiteProfile &p)
{
    if (quickened == ins.opcode) {
        _Py_BackoffCounter counter = units[ins.index + 1].counter;
        bool tried = counter.backoff != ADAPTIVE_WARMUP_BACKOFF || counter.value > ADAPTIVE_WARMUP_VALUE;
        p.state = tried ? SiteState::kGeneric : SiteState::kUnseen;
        return;
    }
    const Specialisation *s = specialisation(quickened);
    if (s == nullptr || s->base != ins.opcode) return;   // instrumented, or not this site's form: nothing learnt
    p.state = SiteState::kSpecialised;
    p.type = s->type;
}
#endif

}  // namespace

bool code_was_quickened(PyCodeObject *code)
{
#if PY_VERSION_HEX >= 0x030D0000
    // 3.13 quickens code when it is made; its RESUME becomes RESUME_CHECK
    // the first time the interpreter runs it. Only instructions that never
    // specialise (and have no caches) come before the first RESUME.
    const auto *units = reinterpret_cast<const _Py_CODEUNIT *>(code->co_code_adaptive);
    Py_ssize_t n = Py_SIZE(code);
    for (Py_ssize_t i = 0; i < n && i < 64; i++) {
        int op = units[i].op.code;
        if (op == RESUME) return false;
        if (op == RESUME_CHECK || op == INSTRUMENTED_RESUME || op == ENTER_EXECUTOR) return true;
    }
    return true;
#else
    return code->co_warmup == 0;   // counts up to 0, then quickens
#endif
}

bool is_profile_site(int opcode)
{
    switch (opcode) {
#define SITE_FORM(name, base, type)
#define ADAPTIVE_FORM(op)
#define PROFILE_SITE(op) case op:
#include SITE_FORMS
#undef PROFILE_SITE
#undef ADAPTIVE_FORM
#undef SITE_FORM
        return true;
    default:
        return false;
    }
}

SiteProfile site_profile(PyCodeObject *code, const Instr &ins)
{
    const auto *units = reinterpret_cast<const _Py_CODEUNIT *>(code->co_code_adaptive);
    int quickened = _Py_OPCODE(units[ins.index]);
    SiteProfile p{ins.index, ins.opcode, quickened, SiteState::kNotQuickened, SeenType::kObject};
#if PY_VERSION_HEX < 0x030D0000
    if (ins.opcode == FOR_ITER) {
        p.state = SiteState::kUnprofiled;
        return p;
    }
#endif
    if (!code_was_quickened(code)) return p;
    read_site(units, ins, quickened, p);
    return p;
}

std::vector<SiteProfile> site_profiles(PyCodeObject *code, const Bytecode &bytecode)
{
    std::vector<SiteProfile> out;
    for (const Instr &ins : bytecode.instrs()) {
        if (is_profile_site(ins.opcode)) out.push_back(site_profile(code, ins));
    }
    return out;
}

const char *site_state_name(SiteState state)
{
    switch (state) {
    case SiteState::kNotQuickened: return "not quickened";
    case SiteState::kUnseen: return "unseen";
    case SiteState::kGeneric: return "generic";
    case SiteState::kSpecialised: return "specialised";
    case SiteState::kUnprofiled: return "unprofiled";
    }
    return "?";
}

const char *seen_type_name(SeenType type)
{
    switch (type) {
    case SeenType::kObject: return "object";
    case SeenType::kInt: return "int";
    case SeenType::kFloat: return "float";
    case SeenType::kStr: return "str";
    case SeenType::kList: return "list";
    case SeenType::kTuple: return "tuple";
    case SeenType::kDict: return "dict";
    }
    return "?";
}

const char *quickened_name(int opcode)
{
    if (const Specialisation *s = specialisation(opcode)) return s->name;
    return opcode_name(opcode);
}

}  // namespace pyjion
