#include "front/bound_locals.h"

#include "front/opcodes.h"

namespace pyjion {

namespace {

using State = std::vector<uint64_t>;

void set_bit(State &s, int i, bool on)
{
    if (on) {
        s[i / 64] |= uint64_t(1) << (i % 64);
    } else {
        s[i / 64] &= ~(uint64_t(1) << (i % 64));
    }
}

// Opcodes whose top result is a fresh, non-NULL object. (PUSH_NULL, COPY and
// SWAP are not: hand-made bytecode can move a NULL into a STORE_FAST.)
bool pushes_object(const Instr &ins)
{
    switch (ins.opcode) {
    case LOAD_CONST: case LOAD_FAST: case LOAD_DEREF: case LOAD_NAME: case BINARY_OP: case BINARY_SUBSCR:
    case COMPARE_OP: case IS_OP: case CONTAINS_OP: case CALL: case CALL_FUNCTION_EX: case BUILD_TUPLE:
    case BUILD_LIST: case BUILD_SET: case BUILD_MAP: case BUILD_STRING: case BUILD_SLICE: case BUILD_CONST_KEY_MAP:
    case FOR_ITER: case UNARY_NEGATIVE: case UNARY_NOT: case UNARY_INVERT: case GET_ITER: case MAKE_FUNCTION:
    case IMPORT_NAME: case IMPORT_FROM:
#if PY_VERSION_HEX >= 0x030D0000
    // (3.13's plain LOAD_FAST is where its compiler proved the local bound.)
    case LOAD_FAST_CHECK: case LOAD_FAST_LOAD_FAST: case STORE_FAST_LOAD_FAST: case TO_BOOL: case CALL_KW:
    case BINARY_SLICE: case FORMAT_SIMPLE: case FORMAT_WITH_SPEC: case CONVERT_VALUE: case SET_FUNCTION_ATTRIBUTE:
    case CALL_INTRINSIC_1: case CALL_INTRINSIC_2:
#else
    case LOAD_CLOSURE: case LOAD_METHOD: case UNARY_POSITIVE: case FORMAT_VALUE: case LIST_TO_TUPLE:
#endif
        return true;
#if PY_VERSION_HEX >= 0x030D0000
    // With the method bit, 3.13 pushes NULL-or-self on top (LOAD_ATTR), or
    // NULL after the global (LOAD_GLOBAL).
    case LOAD_ATTR: case LOAD_GLOBAL:
        return (ins.oparg & 1) == 0;
#else
    case LOAD_GLOBAL: case LOAD_ATTR:
        return true;
#endif
    default:
        return false;
    }
}

// The locals a store instruction writes, with the value each takes (0: the
// top of the stack before it, 1: the one below); n = how many.
struct Stores {
    int local[2], from_top[2], n;
};
Stores stores_of(const Instr &ins)
{
    switch (ins.opcode) {
    case STORE_FAST:
        return {{ins.oparg, 0}, {0, 0}, 1};
#if PY_VERSION_HEX >= 0x030D0000
    case STORE_FAST_LOAD_FAST:
        return {{ins.oparg >> 4, 0}, {0, 0}, 1};
    case STORE_FAST_STORE_FAST:   // the top value into oparg >> 4, the next into oparg & 15
        return {{ins.oparg >> 4, ins.oparg & 15}, {0, 1}, 2};
#endif
    default:
        return {{0, 0}, {0, 0}, 0};
    }
}

// The store at instruction k certainly stores an object (not a NULL) from
// the value `from_top` values below the top: it comes straight from an
// instruction that pushes one, possibly through a run of stores taking the
// values an UNPACK_SEQUENCE/UNPACK_EX pushed.
bool stores_object(const Bytecode &bc, int k, int from_top)
{
    const auto &instrs = bc.instrs();
    int consumed = from_top;
    for (int j = k; j > 0; j--) {
        if (bc.is_jump_target(instrs[j].start)) return false;   // other paths arrive here
        const Instr &prev = instrs[j - 1];
        if (prev.opcode == STORE_FAST
#if PY_VERSION_HEX >= 0x030D0000
            || prev.opcode == STORE_FAST_STORE_FAST
#endif
        ) {
            consumed += stores_of(prev).n;
            continue;
        }
        if (prev.opcode == UNPACK_SEQUENCE) return consumed < prev.oparg;
        if (prev.opcode == UNPACK_EX) return consumed < (prev.oparg & 0xFF) + 1 + (prev.oparg >> 8);
        return consumed == 0 && pushes_object(prev);
    }
    return false;
}

}  // namespace

int concat_target(const Bytecode &bc, int k)
{
    const auto &instrs = bc.instrs();
    if (k < 0 || k + 1 >= (int)instrs.size()) return -1;
    const Instr &op = instrs[k], &store = instrs[k + 1];
    if (op.opcode != BINARY_OP || (op.oparg != NB_ADD && op.oparg != NB_INPLACE_ADD)) return -1;
    if (store.opcode != STORE_FAST || bc.is_jump_target(store.start)) return -1;
    return store.oparg;
}

BoundLocals::BoundLocals(const Bytecode &bytecode, PyCodeObject *code) : nlocals_(code->co_nlocalsplus)
{
    const auto &instrs = bytecode.instrs();
    states_.assign(instrs.size(), State());
    if (instrs.empty()) return;
    size_t words = (nlocals_ + 63) / 64;
    if (words == 0) return;

    // The arguments are bound when the frame starts (COPY_FREE_VARS and
    // MAKE_CELL bind the free and cell slots, which LOAD_FAST never reads).
    int nargs = code->co_argcount + code->co_kwonlyargcount + ((code->co_flags & CO_VARARGS) ? 1 : 0) +
                ((code->co_flags & CO_VARKEYWORDS) ? 1 : 0);
    State entry(words, 0);
    for (int i = 0; i < nargs && i < nlocals_; i++) set_bit(entry, i, true);

    std::vector<int> work;
    std::vector<bool> queued(instrs.size(), false);
    // Meet: a local stays certain only if it is bound on every incoming path.
    auto flow_into = [&](int k, const State &in) {
        if (k < 0) return;
        State &s = states_[k];
        bool changed = false;
        if (s.empty()) {
            s = in;
            changed = true;
        } else {
            for (size_t w = 0; w < words; w++) {
                uint64_t m = s[w] & in[w];
                if (m != s[w]) {
                    s[w] = m;
                    changed = true;
                }
            }
        }
        if (changed && !queued[k]) {
            queued[k] = true;
            work.push_back(k);
        }
    };
    flow_into(0, entry);
    while (!work.empty()) {
        int k = work.back();
        work.pop_back();
        queued[k] = false;
        const Instr &ins = instrs[k];
        const State before = states_[k];
        // An exception inside the instruction reaches its handler with the
        // locals as they were before it.
        if (const ExceptionEntry *e = bytecode.exceptions().find(ins.index)) {
            int emptied = concat_target(bytecode, k);
            if (emptied >= 0 && emptied < nlocals_) {
                State in_handler = before;
                set_bit(in_handler, emptied, false);
                flow_into(bytecode.instr_at(e->handler), in_handler);
            } else {
                flow_into(bytecode.instr_at(e->handler), before);
            }
        }
        State after = before;
        Stores st = stores_of(ins);
        // Stored in order: the second store wins where both name one local.
        for (int i = 0; i < st.n; i++) {
            if (st.local[i] < nlocals_) set_bit(after, st.local[i], stores_object(bytecode, k, st.from_top[i]));
        }
        if (ins.opcode == DELETE_FAST && ins.oparg < nlocals_) set_bit(after, ins.oparg, false);
#if PY_VERSION_HEX >= 0x030D0000
        // LOAD_FAST_AND_CLEAR leaves the local unbound (a comprehension's
        // variable, restored by a STORE_FAST of the saved value, maybe NULL);
        // after LOAD_FAST_CHECK the local is bound (else it raised), and a
        // plain load is one the compiler proved bound.
        int loaded[2] = {-1, -1};
        switch (ins.opcode) {
        case LOAD_FAST_AND_CLEAR:
            if (ins.oparg < nlocals_) set_bit(after, ins.oparg, false);
            break;
        case LOAD_FAST: case LOAD_FAST_CHECK: loaded[0] = ins.oparg; break;
        case LOAD_FAST_LOAD_FAST: loaded[0] = ins.oparg >> 4; loaded[1] = ins.oparg & 15; break;
        case STORE_FAST_LOAD_FAST: loaded[0] = ins.oparg & 15; break;
        default: break;
        }
        for (int l : loaded) {
            if (l >= 0 && l < nlocals_) set_bit(after, l, true);
        }
#endif
        if (ins.target >= 0) flow_into(bytecode.instr_at(ins.target), after);
        if (!ends_block(ins.opcode) && k + 1 < (int)instrs.size()) flow_into(k + 1, after);
    }
#if PY_VERSION_HEX >= 0x030D0000
    // 3.13's plain loads read locals its compiler proved bound there (the
    // interpreter does not test them): certain where they start too.
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &ins = instrs[k];
        if (states_[k].empty()) continue;
        if (ins.opcode == LOAD_FAST && ins.oparg < nlocals_) set_bit(states_[k], ins.oparg, true);
        if (ins.opcode == LOAD_FAST_LOAD_FAST) {
            if ((ins.oparg >> 4) < nlocals_) set_bit(states_[k], ins.oparg >> 4, true);
            if ((ins.oparg & 15) < nlocals_) set_bit(states_[k], ins.oparg & 15, true);
        }
        // (the load after the store: of another local, bound before it too)
        int loaded = ins.oparg & 15;
        if (ins.opcode == STORE_FAST_LOAD_FAST && loaded != (ins.oparg >> 4) && loaded < nlocals_) {
            set_bit(states_[k], loaded, true);
        }
    }
#endif
}

}  // namespace pyjion
