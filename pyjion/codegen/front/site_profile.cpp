#include "front/site_profile.h"

#include "front/opcodes.h"

namespace pyjion {

namespace {

// The specialised forms 3.11 quickens each profiled opcode to, with the type
// each stands for. (Superinstructions such as LOAD_FAST__LOAD_FAST are not
// sites: they only fuse dispatch.)
struct Specialisation {
    int quickened;
    int base;
    SeenType type;
    const char *name;
};

#define SPEC(name, base, type) {name, base, SeenType::type, #name}
constexpr Specialisation kSpecialisations[] = {
    SPEC(BINARY_OP_ADAPTIVE, BINARY_OP, kObject),
    SPEC(BINARY_OP_ADD_INT, BINARY_OP, kInt),
    SPEC(BINARY_OP_SUBTRACT_INT, BINARY_OP, kInt),
    SPEC(BINARY_OP_MULTIPLY_INT, BINARY_OP, kInt),
    SPEC(BINARY_OP_ADD_FLOAT, BINARY_OP, kFloat),
    SPEC(BINARY_OP_SUBTRACT_FLOAT, BINARY_OP, kFloat),
    SPEC(BINARY_OP_MULTIPLY_FLOAT, BINARY_OP, kFloat),
    SPEC(BINARY_OP_ADD_UNICODE, BINARY_OP, kStr),
    SPEC(BINARY_OP_INPLACE_ADD_UNICODE, BINARY_OP, kStr),
    SPEC(COMPARE_OP_ADAPTIVE, COMPARE_OP, kObject),
    SPEC(COMPARE_OP_INT_JUMP, COMPARE_OP, kInt),
    SPEC(COMPARE_OP_FLOAT_JUMP, COMPARE_OP, kFloat),
    SPEC(COMPARE_OP_STR_JUMP, COMPARE_OP, kStr),
    SPEC(BINARY_SUBSCR_ADAPTIVE, BINARY_SUBSCR, kObject),
    SPEC(BINARY_SUBSCR_LIST_INT, BINARY_SUBSCR, kList),
    SPEC(BINARY_SUBSCR_TUPLE_INT, BINARY_SUBSCR, kTuple),
    SPEC(BINARY_SUBSCR_DICT, BINARY_SUBSCR, kDict),
    SPEC(BINARY_SUBSCR_GETITEM, BINARY_SUBSCR, kObject),
    SPEC(STORE_SUBSCR_ADAPTIVE, STORE_SUBSCR, kObject),
    SPEC(STORE_SUBSCR_LIST_INT, STORE_SUBSCR, kList),
    SPEC(STORE_SUBSCR_DICT, STORE_SUBSCR, kDict),
    SPEC(UNPACK_SEQUENCE_ADAPTIVE, UNPACK_SEQUENCE, kObject),
    SPEC(UNPACK_SEQUENCE_TWO_TUPLE, UNPACK_SEQUENCE, kTuple),
    SPEC(UNPACK_SEQUENCE_TUPLE, UNPACK_SEQUENCE, kTuple),
    SPEC(UNPACK_SEQUENCE_LIST, UNPACK_SEQUENCE, kList),
    SPEC(LOAD_ATTR_ADAPTIVE, LOAD_ATTR, kObject),
    SPEC(LOAD_ATTR_INSTANCE_VALUE, LOAD_ATTR, kObject),
    SPEC(LOAD_ATTR_MODULE, LOAD_ATTR, kObject),
    SPEC(LOAD_ATTR_SLOT, LOAD_ATTR, kObject),
    SPEC(LOAD_ATTR_WITH_HINT, LOAD_ATTR, kObject),
    SPEC(STORE_ATTR_ADAPTIVE, STORE_ATTR, kObject),
    SPEC(STORE_ATTR_INSTANCE_VALUE, STORE_ATTR, kObject),
    SPEC(STORE_ATTR_SLOT, STORE_ATTR, kObject),
    SPEC(STORE_ATTR_WITH_HINT, STORE_ATTR, kObject),
    SPEC(LOAD_METHOD_ADAPTIVE, LOAD_METHOD, kObject),
    SPEC(LOAD_METHOD_CLASS, LOAD_METHOD, kObject),
    SPEC(LOAD_METHOD_MODULE, LOAD_METHOD, kObject),
    SPEC(LOAD_METHOD_NO_DICT, LOAD_METHOD, kObject),
    SPEC(LOAD_METHOD_WITH_DICT, LOAD_METHOD, kObject),
    SPEC(LOAD_METHOD_WITH_VALUES, LOAD_METHOD, kObject),
    SPEC(LOAD_GLOBAL_ADAPTIVE, LOAD_GLOBAL, kObject),
    SPEC(LOAD_GLOBAL_MODULE, LOAD_GLOBAL, kObject),
    SPEC(LOAD_GLOBAL_BUILTIN, LOAD_GLOBAL, kObject),
    SPEC(PRECALL_ADAPTIVE, PRECALL, kObject),
    SPEC(PRECALL_BOUND_METHOD, PRECALL, kObject),
    SPEC(PRECALL_BUILTIN_CLASS, PRECALL, kObject),
    SPEC(PRECALL_BUILTIN_FAST_WITH_KEYWORDS, PRECALL, kObject),
    SPEC(PRECALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_BUILTIN_FAST, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_BUILTIN_O, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_ISINSTANCE, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_LEN, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_LIST_APPEND, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_METHOD_DESCRIPTOR_FAST, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_METHOD_DESCRIPTOR_NOARGS, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_METHOD_DESCRIPTOR_O, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_STR_1, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_TUPLE_1, PRECALL, kObject),
    SPEC(PRECALL_NO_KW_TYPE_1, PRECALL, kObject),
    SPEC(PRECALL_PYFUNC, PRECALL, kObject),
    SPEC(CALL_ADAPTIVE, CALL, kObject),
    SPEC(CALL_PY_EXACT_ARGS, CALL, kObject),
    SPEC(CALL_PY_WITH_DEFAULTS, CALL, kObject),
};
#undef SPEC

const Specialisation *specialisation(int quickened)
{
    for (const auto &s : kSpecialisations) {
        if (s.quickened == quickened) return &s;
    }
    return nullptr;
}

bool is_adaptive(int quickened)
{
    switch (quickened) {
    case BINARY_OP_ADAPTIVE: case COMPARE_OP_ADAPTIVE: case BINARY_SUBSCR_ADAPTIVE:
    case STORE_SUBSCR_ADAPTIVE: case UNPACK_SEQUENCE_ADAPTIVE: case LOAD_ATTR_ADAPTIVE:
    case STORE_ATTR_ADAPTIVE: case LOAD_METHOD_ADAPTIVE: case LOAD_GLOBAL_ADAPTIVE:
    case PRECALL_ADAPTIVE: case CALL_ADAPTIVE:
        return true;
    default:
        return false;
    }
}

// The low bits of an adaptive instruction's counter (its first inline cache
// entry) count the specialisations tried: 0 until the site first runs after
// quickening (Python/specialize.c, ADAPTIVE_BACKOFF_BITS).
constexpr int kBackoffBits = 4;

}  // namespace

bool is_profile_site(int opcode)
{
    switch (opcode) {
    case BINARY_OP: case COMPARE_OP: case BINARY_SUBSCR: case STORE_SUBSCR: case UNPACK_SEQUENCE:
    case LOAD_ATTR: case STORE_ATTR: case LOAD_METHOD: case LOAD_GLOBAL: case PRECALL: case CALL:
    case FOR_ITER:
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
    if (ins.opcode == FOR_ITER) {
        p.state = SiteState::kUnprofiled;
        return p;
    }
    // co_warmup counts up to 0, where the code is quickened (and stays 0).
    if (code->co_warmup != 0) return p;
    if (quickened == ins.opcode) {
        // Quickened code keeps the plain opcode where the interpreter gave
        // the site up (3.11 leaves BINARY_OP for operators it never specialises).
        p.state = SiteState::kGeneric;
        return p;
    }
    const Specialisation *s = specialisation(quickened);
    if (s == nullptr || s->base != ins.opcode) return p;   // not this site's form: nothing learnt
    if (is_adaptive(quickened)) {
        uint16_t counter = units[ins.index + 1];
        p.state = (counter & ((1 << kBackoffBits) - 1)) == 0 ? SiteState::kUnseen : SiteState::kGeneric;
        return p;
    }
    p.state = SiteState::kSpecialised;
    p.type = s->type;
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
