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
bool pushes_object(int op)
{
    switch (op) {
    case LOAD_CONST: case LOAD_FAST: case LOAD_DEREF: case LOAD_CLOSURE: case LOAD_GLOBAL: case LOAD_NAME:
    case LOAD_ATTR: case LOAD_METHOD: case BINARY_OP: case BINARY_SUBSCR: case COMPARE_OP: case IS_OP:
    case CONTAINS_OP: case CALL: case CALL_FUNCTION_EX: case BUILD_TUPLE: case BUILD_LIST: case BUILD_SET:
    case BUILD_MAP: case BUILD_STRING: case BUILD_SLICE: case BUILD_CONST_KEY_MAP: case FOR_ITER:
    case UNARY_NEGATIVE: case UNARY_NOT: case UNARY_INVERT: case UNARY_POSITIVE: case GET_ITER:
    case FORMAT_VALUE: case MAKE_FUNCTION: case IMPORT_NAME: case IMPORT_FROM: case LIST_TO_TUPLE:
        return true;
    default:
        return false;
    }
}

// STORE_FAST at instruction k certainly stores an object (not a NULL): its
// value comes straight from an instruction that pushes one, possibly through
// a run of STORE_FASTs taking the values an UNPACK_SEQUENCE/UNPACK_EX pushed.
bool stores_object(const Bytecode &bc, int k)
{
    const auto &instrs = bc.instrs();
    int consumed = 0;
    for (int j = k; j > 0; j--) {
        if (bc.is_jump_target(instrs[j].start)) return false;   // other paths arrive here
        const Instr &prev = instrs[j - 1];
        if (prev.opcode == STORE_FAST) {
            consumed++;
            continue;
        }
        if (prev.opcode == UNPACK_SEQUENCE) return consumed < prev.oparg;
        if (prev.opcode == UNPACK_EX) return consumed < (prev.oparg & 0xFF) + 1 + (prev.oparg >> 8);
        return consumed == 0 && pushes_object(prev.opcode);
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
        if (ins.opcode == STORE_FAST && ins.oparg < nlocals_) set_bit(after, ins.oparg, stores_object(bytecode, k));
        if (ins.opcode == DELETE_FAST && ins.oparg < nlocals_) set_bit(after, ins.oparg, false);
        if (ins.target >= 0) flow_into(bytecode.instr_at(ins.target), after);
        if (!ends_block(ins.opcode) && k + 1 < (int)instrs.size()) flow_into(k + 1, after);
    }
}

}  // namespace pyjion
