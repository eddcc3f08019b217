// The frame as compiled code models it, shared by the baseline and the
// optimising tier: for every fast local (co_nlocalsplus of them) and every
// value-stack slot, what it holds. A guard's side exit carries a Snapshot of
// it: where the interpreter resumes and what each slot holds there, so the
// exit can rebuild the boxed frame exactly as the interpreter would have it.
// Plain C++ (no AsmJit): the layers above decide how a kind is kept in
// machine code.
#pragma once

#include <Python.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pyjion::model {

enum class Kind : uint8_t {
    Boxed,         // a strong reference to an object (never NULL)
    BoxedOrNull,   // a strong reference or NULL: a local that may be unbound, the
                   // NULL-or-method 3.11's LOAD_METHOD leaves below a call (3.13: the
                   // self-or-NULL LOAD_ATTR leaves above it), a value nothing classified
    Null,          // NULL: what PUSH_NULL and LOAD_GLOBAL (oparg & 1) push beside a callable
                   // (3.11: below it; 3.13's LOAD_GLOBAL: above it)
    Const,         // co_consts[detail]; boxed in the frame (a strong reference to that object)
    KnownType,     // a strong reference to an object whose exact type is (PyTypeObject *)detail
    Int64,         // unboxed: the value of an exact int that fits int64 (optimising tier)
    Double,        // unboxed: the value of a float (optimising tier)
    // Not yet in its frame slot (optimising tier): the value is one the
    // frame already references, so nothing is stored or counted until an
    // instruction or exit needs the slot filled; the tier's own operations
    // read it where it is.
    LazyConst,     // co_consts[detail]
    LazyLocal,     // the object fast local `detail` holds (bound, boxed)
};

struct SlotKind {
    Kind kind = Kind::BoxedOrNull;
    uintptr_t detail = 0;   // Const, LazyConst: index into co_consts; LazyLocal: the local; KnownType: the type

    static constexpr SlotKind boxed() { return {Kind::Boxed, 0}; }
    static constexpr SlotKind boxed_or_null() { return {Kind::BoxedOrNull, 0}; }
    static constexpr SlotKind null() { return {Kind::Null, 0}; }
    static constexpr SlotKind constant(uint32_t index) { return {Kind::Const, index}; }
    static SlotKind known_type(PyTypeObject *type) { return {Kind::KnownType, reinterpret_cast<uintptr_t>(type)}; }
    static constexpr SlotKind int64() { return {Kind::Int64, 0}; }
    static constexpr SlotKind dbl() { return {Kind::Double, 0}; }
    static constexpr SlotKind lazy_const(uint32_t index) { return {Kind::LazyConst, index}; }
    static constexpr SlotKind lazy_local(uint32_t index) { return {Kind::LazyLocal, index}; }

    uint32_t const_index() const { return static_cast<uint32_t>(detail); }
    PyTypeObject *type() const { return reinterpret_cast<PyTypeObject *>(detail); }
    // The slot may hold NULL.
    bool may_be_null() const { return kind == Kind::BoxedOrNull || kind == Kind::Null; }
    // The frame slot holds a PyObject * (or NULL) as the interpreter keeps it;
    // Int64 and Double live unboxed and are boxed again at a side exit; the
    // lazy kinds are stored there when something needs them.
    bool boxed_in_frame() const { return kind < Kind::Int64; }
    bool lazy() const { return kind == Kind::LazyConst || kind == Kind::LazyLocal; }

    bool operator==(const SlotKind &o) const { return kind == o.kind && detail == o.detail; }
    bool operator!=(const SlotKind &o) const { return !(*this == o); }
    // "obj", "obj?", "null", "const#3", "type:int", "i64", "f64"
    std::string describe() const;
};

// The most precise kind that describes a value of kind `a` and a value of
// kind `b` (where control-flow paths meet): equal kinds stay; otherwise a
// boxed object, NULL allowed if either side allows it.
SlotKind join(SlotKind a, SlotKind b);

// A misuse of the model (popping an empty stack, a local out of range): a bug
// in the compiler, never in the code compiled.
struct ModelError : std::logic_error {
    using std::logic_error::logic_error;
};

// What a guard or side exit carries: the code unit execution resumes at (in
// the interpreter, or at that instruction's label) and every slot's kind.
struct Snapshot {
    int unit = -1;
    std::vector<SlotKind> locals;
    std::vector<SlotKind> stack;   // bottom first

    int depth() const { return static_cast<int>(stack.size()); }
    bool operator==(const Snapshot &o) const { return unit == o.unit && locals == o.locals && stack == o.stack; }
    bool operator!=(const Snapshot &o) const { return !(*this == o); }
    // "unit=12 depth=2 locals=[obj, obj?] stack=[null, obj]"
    std::string describe() const;
};

class FrameState {
public:
    FrameState() = default;
    explicit FrameState(int nlocals, SlotKind local_kind = SlotKind::boxed_or_null())
        : locals_(static_cast<size_t>(nlocals), local_kind)
    {
    }

    int nlocals() const { return static_cast<int>(locals_.size()); }
    int depth() const { return static_cast<int>(stack_.size()); }

    // ---- the value stack; peek/set count from the top (0: the top value),
    // slot/set_slot from the bottom (slot 0 is the first value pushed)
    void push(SlotKind k) { stack_.push_back(k); }
    SlotKind pop();
    SlotKind peek(int n = 0) const { return stack_[top_index(n)]; }
    void set(int n, SlotKind k) { stack_[top_index(n)] = k; }
    SlotKind slot(int i) const { return stack_[slot_index(i)]; }
    void set_slot(int i, SlotKind k) { stack_[slot_index(i)] = k; }
    void drop(int n);                                            // pops n values
    void grow(int n, SlotKind k = SlotKind::boxed_or_null());    // pushes n values of kind k
    void set_depth(int depth, SlotKind fill = SlotKind::boxed_or_null());   // drops, or grows with `fill`
    void set_stack(const SlotKind *kinds, int depth) { stack_.assign(kinds, kinds + depth); }
    const std::vector<SlotKind> &stack() const { return stack_; }

    // ---- the fast locals (co_nlocalsplus: arguments, locals, cells, free variables)
    SlotKind local(int i) const { return locals_[local_index(i)]; }
    void set_local(int i, SlotKind k) { locals_[local_index(i)] = k; }
    const std::vector<SlotKind> &locals() const { return locals_; }

    Snapshot snapshot(int unit) const { return Snapshot{unit, locals_, stack_}; }
    bool operator==(const FrameState &o) const { return locals_ == o.locals_ && stack_ == o.stack_; }
    bool operator!=(const FrameState &o) const { return !(*this == o); }
    // "depth=2 locals=[obj, obj?] stack=[null, obj]"
    std::string describe() const;

private:
    size_t top_index(int n) const
    {
        if (n < 0 || n >= depth()) out_of_range("value from the top", n, depth());
        return stack_.size() - 1 - static_cast<size_t>(n);
    }
    size_t slot_index(int i) const
    {
        if (i < 0 || i >= depth()) out_of_range("stack slot", i, depth());
        return static_cast<size_t>(i);
    }
    size_t local_index(int i) const
    {
        if (i < 0 || i >= nlocals()) out_of_range("local", i, nlocals());
        return static_cast<size_t>(i);
    }
    [[noreturn]] static void out_of_range(const char *what, int index, int count);

    std::vector<SlotKind> locals_;
    std::vector<SlotKind> stack_;
};

// "[obj, null, const#1]"
std::string describe(const std::vector<SlotKind> &kinds);

}  // namespace pyjion::model
