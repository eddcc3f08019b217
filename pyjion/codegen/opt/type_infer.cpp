#include "opt/type_infer.h"

#include <algorithm>
#include <climits>
#include <cstdio>

#include "codegen_api.h"
#include "cpython/frame_layout.h"
#include "front/number_ops.h"
#include "front/opcodes.h"
#include "front/site_profile.h"

namespace pyjion::opt {

VType join(VType a, VType b)
{
    if (a == b || b == VType::kNone) return a;
    if (a == VType::kNone) return b;
    return VType::kObject;
}

const char *vtype_name(VType t)
{
    switch (t) {
    case VType::kNone: return "-";
    case VType::kInt: return "int";
    case VType::kFloat: return "float";
    case VType::kRange: return "range";
    case VType::kRangeIter: return "range_iter";
    case VType::kRangeFunc: return "range_func";
    case VType::kObject: return "obj";
    }
    return "?";
}

const char *op_kind_name(OpKind k)
{
    switch (k) {
    case OpKind::kGeneric: return "generic";
    case OpKind::kIntArith: return "int_arith";
    case OpKind::kFloatArith: return "float_arith";
    case OpKind::kIntCompare: return "int_compare";
    case OpKind::kFloatCompare: return "float_compare";
    case OpKind::kRangeIter: return "range_iter";
    case OpKind::kRangeCall: return "range_call";
    case OpKind::kListItem: return "list_item";
    case OpKind::kListStore: return "list_store";
    }
    return "?";
}

namespace {

VType const_type(PyObject *v)
{
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        PyLong_AsLongLongAndOverflow(v, &overflow);
        return overflow == 0 ? VType::kInt : VType::kObject;
    }
    if (PyFloat_CheckExact(v)) return VType::kFloat;
    return VType::kObject;
}

// Opcodes that leave the entries under what they pop as they were (pure
// pushes, stores, jumps): every other generic opcode is taken to rewrite one
// entry more than its net stack effect pops. Over-counting only loses types;
// the list must never hold an opcode that replaces an entry it does not pop.
bool keeps_entries_below(int opcode)
{
    switch (opcode) {
    case CACHE: case NOP: case RESUME: case EXTENDED_ARG:
    case POP_TOP: case PUSH_NULL: case GET_LEN: case MATCH_MAPPING: case MATCH_SEQUENCE: case MATCH_KEYS:
    case LOAD_CONST: case LOAD_NAME: case LOAD_GLOBAL: case LOAD_FAST: case LOAD_DEREF:
    case LOAD_BUILD_CLASS: case LOAD_ASSERTION_ERROR:
    case STORE_SUBSCR: case DELETE_SUBSCR: case STORE_NAME: case DELETE_NAME: case STORE_ATTR:
    case DELETE_ATTR: case STORE_GLOBAL: case DELETE_GLOBAL: case STORE_FAST: case DELETE_FAST:
    case STORE_DEREF: case DELETE_DEREF: case MAKE_CELL: case COPY_FREE_VARS: case SETUP_ANNOTATIONS:
    case POP_EXCEPT: case RETURN_VALUE: case RERAISE: case RAISE_VARARGS:
    case JUMP_FORWARD: case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
    case LIST_APPEND: case SET_ADD: case MAP_ADD: case LIST_EXTEND: case SET_UPDATE: case DICT_MERGE:
    case DICT_UPDATE:
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_CHECK: case LOAD_FAST_AND_CLEAR: case LOAD_FAST_LOAD_FAST: case LOAD_LOCALS:
    case STORE_FAST_STORE_FAST: case STORE_SLICE: case RETURN_CONST: case END_FOR: case EXIT_INIT_CHECK:
    case POP_JUMP_IF_FALSE: case POP_JUMP_IF_TRUE: case POP_JUMP_IF_NONE: case POP_JUMP_IF_NOT_NONE:
#else
    case KW_NAMES: case PRECALL: case LOAD_CLOSURE: case LOAD_CLASSDEREF: case PRINT_EXPR: case IMPORT_STAR:
    case JUMP_IF_FALSE_OR_POP: case JUMP_IF_TRUE_OR_POP:
    case POP_JUMP_FORWARD_IF_FALSE: case POP_JUMP_FORWARD_IF_TRUE: case POP_JUMP_FORWARD_IF_NONE:
    case POP_JUMP_FORWARD_IF_NOT_NONE: case POP_JUMP_BACKWARD_IF_FALSE: case POP_JUMP_BACKWARD_IF_TRUE:
    case POP_JUMP_BACKWARD_IF_NONE: case POP_JUMP_BACKWARD_IF_NOT_NONE:
#endif
        return true;
    default:
        return false;
    }
}

// The name LOAD_GLOBAL loads (3.11 and 3.13: oparg >> 1 indexes co_names).
bool loads_global_named(PyCodeObject *code, const Instr &ins, const char *name)
{
    if (ins.opcode != LOAD_GLOBAL) return false;
    PyObject *n = PyTuple_GetItem(code->co_names, ins.oparg >> 1);
    return n != nullptr && PyUnicode_Check(n) && PyUnicode_CompareWithASCIIString(n, name) == 0;
}

VType top(const AbstractState &s, int n = 0)
{
    int i = static_cast<int>(s.stack.size()) - 1 - n;
    return i >= 0 ? s.stack[i] : VType::kObject;
}

}  // namespace

TypeInference::TypeInference(PyCodeObject *code, const Bytecode &bytecode, bool speculate, unsigned arg_types)
    : code_(code), bc_(bytecode), speculate_(speculate)
{
    // Only plain arguments: one a closure uses becomes a cell at MAKE_CELL.
    int nargs = std::min<int>(code->co_argcount + code->co_kwonlyargcount, PYJION_MAX_TYPED_ARGS);
    for (int a = 0; a < nargs && a < code->co_nlocalsplus; a++) {
        unsigned t = (arg_types >> (PYJION_ARG_TYPE_BITS * a)) & ((1u << PYJION_ARG_TYPE_BITS) - 1);
        if ((t != PYJION_ARG_INT && t != PYJION_ARG_FLOAT) || layout::local_is_cell(code, a)) continue;
        args_.emplace_back(a, t == PYJION_ARG_INT ? VType::kInt : VType::kFloat);
    }
    size_t n = bc_.instrs().size();
    states_.assign(n, AbstractState());
    reached_.assign(n, false);
    decisions_.assign(n, Decision());
    queued_.assign(n, false);
    run();
}

void TypeInference::flow_into(int k, const AbstractState &in)
{
    if (k < 0 || k >= (int)states_.size()) return;
    AbstractState &s = states_[k];
    bool changed = false;
    if (!reached_[k]) {
        s = in;
        reached_[k] = true;
        changed = true;
    } else {
        for (size_t i = 0; i < s.locals.size(); i++) {
            VType j = join(s.locals[i], in.locals[i]);
            if (j != s.locals[i]) s.locals[i] = j, changed = true;
        }
        // The decoder checked that every path reaches an instruction at one depth.
        for (size_t i = 0; i < s.stack.size() && i < in.stack.size(); i++) {
            VType j = join(s.stack[i], in.stack[i]);
            if (j != s.stack[i]) s.stack[i] = j, changed = true;
        }
    }
    if (changed && !queued_[k]) {
        queued_[k] = true;
        work_.push_back(k);
    }
}

Decision TypeInference::decide(int k, const AbstractState &s) const
{
    const Instr &ins = bc_.instrs()[k];
    Decision d;
    auto guarded = [](VType have, VType want) { return have == VType::kObject && want != VType::kObject; };
    switch (ins.opcode) {
    case BINARY_OP: {
        VType l = top(s, 1), r = top(s, 0);
        SiteProfile p = site_profile(code_, ins);
        bool said_int = p.state == SiteState::kSpecialised && p.type == SeenType::kInt;
        bool said_float = p.state == SiteState::kSpecialised && p.type == SeenType::kFloat;
        auto numeric = [](VType t) { return t == VType::kInt || t == VType::kFloat || t == VType::kObject; };
        if (int64_operator(ins.oparg) && (l == VType::kInt || (said_int && l == VType::kObject)) &&
            (r == VType::kInt || (said_int && r == VType::kObject))) {
            d.kind = OpKind::kIntArith;
            d.guards = (guarded(l, VType::kInt) ? 1 : 0) | (guarded(r, VType::kInt) ? 2 : 0);
        } else if ((double_operator(ins.oparg) || double_power(ins.oparg)) && numeric(l) && numeric(r) &&
                   (l == VType::kFloat || r == VType::kFloat) &&
                   (speculate_ || (l != VType::kObject && r != VType::kObject))) {
            // A float operand makes the result a float whatever the other
            // number is (int.__add__(float) converts the int): an operand of
            // unknown type is checked to be a float or an int64-sized int
            // (only where speculating is wanted: code compiled at its first
            // call has shown nothing to speculate on).
            d.kind = OpKind::kFloatArith;
            d.guards = (l == VType::kObject ? 1 | 4 : 0) | (r == VType::kObject ? 2 | 8 : 0);
        } else if (double_operator(ins.oparg) && said_float && numeric(l) && numeric(r)) {
            // The site saw floats: one operand is checked to be a float (so
            // the result is one), the other to be a number.
            d.kind = OpKind::kFloatArith;
            if (l == VType::kObject) {
                d.guards = 1 | (r == VType::kObject ? 2 | 8 : 0);
            } else {
                d.guards = 2;   // l is an int: r must be the float
            }
        }
        break;
    }
    case UNARY_NEGATIVE:
        if (top(s) == VType::kInt) d.kind = OpKind::kIntArith;
        if (top(s) == VType::kFloat) d.kind = OpKind::kFloatArith;
        break;
    case COMPARE_OP: {
        VType l = top(s, 1), r = top(s, 0);
        SiteProfile p = site_profile(code_, ins);
        bool said_int = p.state == SiteState::kSpecialised && p.type == SeenType::kInt;
        bool said_float = p.state == SiteState::kSpecialised && p.type == SeenType::kFloat;
        // Mixed int/float comparisons stay generic: Python compares them
        // exactly, not through a conversion to double.
        if ((l == VType::kInt || (said_int && l == VType::kObject)) &&
            (r == VType::kInt || (said_int && r == VType::kObject))) {
            d.kind = OpKind::kIntCompare;
            d.guards = (guarded(l, VType::kInt) ? 1 : 0) | (guarded(r, VType::kInt) ? 2 : 0);
        } else if ((l == VType::kFloat || (said_float && l == VType::kObject)) &&
                   (r == VType::kFloat || (said_float && r == VType::kObject))) {
            d.kind = OpKind::kFloatCompare;
            d.guards = (guarded(l, VType::kFloat) ? 1 : 0) | (guarded(r, VType::kFloat) ? 2 : 0);
        }
        break;
    }
#if PY_VERSION_HEX >= 0x030D0000
    case CALL: {   // [callable, self or NULL, arguments]
#else
    case PRECALL: {   // [NULL or method, callable or self, arguments]
#endif
        // range(stop), range(start, stop), range(start, stop, step): a range
        // object whatever the arguments are (or an exception). That the
        // global is the builtin is speculation, checked where GET_ITER
        // finds the iterator it expects.
        int n = ins.oparg;
#if PY_VERSION_HEX >= 0x030D0000
        VType callable = top(s, n + 1);
#else
        VType callable = top(s, n);
#endif
        if (n >= 1 && n <= 3 && callable == VType::kRangeFunc) d.kind = OpKind::kRangeCall;
        break;
    }
    case GET_ITER:
        if (top(s) == VType::kRange) d.kind = OpKind::kRangeIter;
        break;
    case BINARY_SUBSCR:
    case STORE_SUBSCR: {
        // xs[i] (xs[i] = v) with i an int and a site that saw lists: the
        // item is read (v, unboxed or not, is stored) in place, the index
        // never boxed (the container is checked: input 0 of BINARY_SUBSCR,
        // 1 of STORE_SUBSCR).
        SiteProfile p = site_profile(code_, ins);
        if (top(s) == VType::kInt && top(s, 1) == VType::kObject && p.state == SiteState::kSpecialised &&
            p.type == SeenType::kList) {
            bool load = ins.opcode == BINARY_SUBSCR;
            d.kind = load ? OpKind::kListItem : OpKind::kListStore;
            d.guards = load ? 1 : 2;
        }
        break;
    }
    case FOR_ITER:
        if (top(s) == VType::kRangeIter) d.kind = OpKind::kRangeIter;
        break;
    default:
        break;
    }
    return d;
}

void TypeInference::transfer(int k, const AbstractState &before, AbstractState &after, const Decision &d) const
{
    const Instr &ins = bc_.instrs()[k];
    auto &st = after.stack;
    auto pop = [&]() {
        VType t = st.empty() ? VType::kObject : st.back();
        if (!st.empty()) st.pop_back();
        return t;
    };
    auto local = [&](int i) { return i < (int)after.locals.size() ? after.locals[i] : VType::kObject; };
    auto store = [&](int i) {
        VType v = pop();
        if (i < (int)after.locals.size()) after.locals[i] = v;
    };
    switch (ins.opcode) {
    case BUILD_TUPLE: case BUILD_LIST: case BUILD_SET: case BUILD_STRING: case BUILD_MAP: {
        // Exactly their operands replaced by a new object (what is below them
        // stays: an inlined comprehension's BUILD_LIST 0 keeps its iterator's
        // type; `[0] * n`'s list is not the int constant it was built from).
        int n = ins.opcode == BUILD_MAP ? 2 * ins.oparg : ins.oparg;
        for (int i = 0; i < n; i++) pop();
        st.push_back(VType::kObject);
        return;
    }
    case LOAD_FAST:
        st.push_back(local(ins.oparg));
        return;
    case STORE_FAST:
        store(ins.oparg);
        return;
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_CHECK:
        st.push_back(local(ins.oparg));
        return;
    case LOAD_FAST_AND_CLEAR:   // the saved value; the local unbound until it is stored back
        st.push_back(local(ins.oparg));
        if (ins.oparg < (int)after.locals.size()) after.locals[ins.oparg] = VType::kObject;
        return;
    case LOAD_FAST_LOAD_FAST:
        st.push_back(local(ins.oparg >> 4));
        st.push_back(local(ins.oparg & 15));
        return;
    case STORE_FAST_LOAD_FAST:
        store(ins.oparg >> 4);
        st.push_back(local(ins.oparg & 15));
        return;
    case STORE_FAST_STORE_FAST:   // the top value into oparg >> 4, the next into oparg & 15
        store(ins.oparg >> 4);
        store(ins.oparg & 15);
        return;
#endif
    case DELETE_FAST:
        if (ins.oparg < (int)after.locals.size()) after.locals[ins.oparg] = VType::kObject;
        return;
    case LOAD_CONST:
        st.push_back(const_type(PyTuple_GET_ITEM(code_->co_consts, ins.oparg)));
        return;
    case COPY:
        st.push_back(top(before, ins.oparg - 1));
        return;
    case SWAP:
        if (ins.oparg <= (int)st.size()) std::swap(st[st.size() - 1], st[st.size() - ins.oparg]);
        return;
    case LOAD_GLOBAL:   // 3.11: [NULL,] global; 3.13: global[, NULL]
#if PY_VERSION_HEX >= 0x030D0000
        st.push_back(loads_global_named(code_, ins, "range") ? VType::kRangeFunc : VType::kObject);
        if (ins.oparg & 1) st.push_back(VType::kObject);
#else
        if (ins.oparg & 1) st.push_back(VType::kObject);
        st.push_back(loads_global_named(code_, ins, "range") ? VType::kRangeFunc : VType::kObject);
#endif
        return;
    case BINARY_OP:
        pop();
        pop();
        st.push_back(d.kind == OpKind::kIntArith ? VType::kInt
                     : d.kind == OpKind::kFloatArith ? VType::kFloat : VType::kObject);
        return;
    case UNARY_NEGATIVE:
        pop();
        st.push_back(d.kind == OpKind::kIntArith ? VType::kInt
                     : d.kind == OpKind::kFloatArith ? VType::kFloat : VType::kObject);
        return;
    case CALL: {
#if PY_VERSION_HEX >= 0x030D0000
        bool range = d.kind == OpKind::kRangeCall;
        for (int i = 0; i < ins.oparg + 2; i++) pop();
#else
        const auto &instrs = bc_.instrs();
        bool range = k > 0 && instrs[k - 1].opcode == PRECALL && decisions_[k - 1].kind == OpKind::kRangeCall;
        pop();
        pop();
#endif
        st.push_back(range ? VType::kRange : VType::kObject);
        return;
    }
    case GET_ITER:
        pop();
        st.push_back(d.kind == OpKind::kRangeIter ? VType::kRangeIter : VType::kObject);
        return;
    case FOR_ITER:
        st.push_back(d.kind == OpKind::kRangeIter ? VType::kInt : VType::kObject);   // the fallthrough
        return;
    default:
        break;
    }
    int effect = stack_effect(ins.opcode, ins.oparg, false);
    int pops = std::max(0, -effect) + (keeps_entries_below(ins.opcode) ? 0 : 1);
    pops = std::min<int>(pops, static_cast<int>(st.size()));
    for (int i = 0; i < pops; i++) st.pop_back();
    for (int i = 0; i < pops + effect; i++) st.push_back(VType::kObject);
}

void TypeInference::run()
{
    const auto &instrs = bc_.instrs();
    if (instrs.empty()) return;
    AbstractState entry;
    entry.locals.assign(code_->co_nlocalsplus, VType::kObject);
    for (const auto &[local, type] : args_) entry.locals[local] = type;
    flow_into(0, entry);
    while (!work_.empty()) {
        int k = work_.back();
        work_.pop_back();
        queued_[k] = false;
        const Instr &ins = instrs[k];
        const AbstractState before = states_[k];
        decisions_[k] = decide(k, before);
        // An exception reaches its handler with the locals of any point in
        // the covered range: they are taken as anything there.
        if (const ExceptionEntry *e = bc_.exceptions().find(ins.index)) {
            int h = bc_.instr_at(e->handler);
            if (h >= 0 && instrs[h].depth >= 0) {
                AbstractState in;
                in.locals.assign(before.locals.size(), VType::kObject);
                in.stack.assign(instrs[h].depth, VType::kObject);
                flow_into(h, in);
            }
        }
        AbstractState after = before;
        transfer(k, before, after, decisions_[k]);
        if (ins.target >= 0) {
            AbstractState jumped = before;
            if (ins.opcode == FOR_ITER) {
#if PY_VERSION_HEX >= 0x030D0000
                // 3.13's compiler has the jump land on END_FOR with the
                // iterator and a value (the interpreter skips END_FOR and
                // the POP_TOP after).
                jumped.stack.push_back(VType::kObject);
#else
                jumped.stack.pop_back();   // the iterator, exhausted
#endif
            } else {
                int effect = stack_effect(ins.opcode, ins.oparg, true);
                for (int i = 0; i < -effect && !jumped.stack.empty(); i++) jumped.stack.pop_back();
                for (int i = 0; i < effect; i++) jumped.stack.push_back(VType::kObject);
            }
            flow_into(bc_.instr_at(ins.target), jumped);
        }
        if (!ends_block(ins.opcode) && k + 1 < (int)instrs.size()) flow_into(k + 1, after);
    }
    for (size_t k = 0; k < instrs.size(); k++) {
        if (!reached_[k]) continue;
        OpKind kind = decisions_[k].kind;
        if (kind == OpKind::kIntArith || kind == OpKind::kFloatArith || kind == OpKind::kIntCompare ||
            kind == OpKind::kFloatCompare || (kind == OpKind::kRangeIter && instrs[k].opcode == FOR_ITER)) {
            unboxes_ = true;
        }
    }
}

std::string TypeInference::describe() const
{
    std::string out;
    const auto &instrs = bc_.instrs();
    PyObject *names = code_->co_localsplusnames;
    if (!args_.empty()) {
        out += "entry checks:";
        for (const auto &[local, type] : args_) {
            PyObject *n = PyTuple_GetItem(names, local);
            out += std::string(" ") + (n ? PyUnicode_AsUTF8(n) : "?") + ":" + vtype_name(type);
        }
        out += "\n";
    }
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &ins = instrs[k];
        char head[96];
        std::snprintf(head, sizeof head, "%4d %-22s", ins.offset(), opcode_name(ins.opcode));
        out += head;
        if (!reached_[k]) {
            out += " unreached\n";
            continue;
        }
        const Decision &d = decisions_[k];
        if (d.kind != OpKind::kGeneric) {
            out += std::string(" ") + op_kind_name(d.kind);
            // "~": a float or an int is accepted there
            if (d.guards) {
                out += " guard" + std::string(d.guards & 1 ? (d.guards & 4 ? " lhs~" : " lhs") : "") +
                       (d.guards & 2 ? (d.guards & 8 ? " rhs~" : " rhs") : "");
            }
        }
        const AbstractState &s = states_[k];
        std::string typed;
        for (size_t i = 0; i < s.locals.size(); i++) {
            if (s.locals[i] == VType::kObject) continue;
            PyObject *n = PyTuple_GetItem(names, i);
            typed += std::string(" ") + (n ? PyUnicode_AsUTF8(n) : "?") + ":" + vtype_name(s.locals[i]);
        }
        if (!typed.empty()) out += " |" + typed;
        out += " | [";
        for (size_t i = 0; i < s.stack.size(); i++) out += std::string(i ? " " : "") + vtype_name(s.stack[i]);
        out += "]\n";
    }
    return out;
}

}  // namespace pyjion::opt
