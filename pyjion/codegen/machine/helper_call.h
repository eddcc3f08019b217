// The pieces of Emitter's typed calls of C functions (Emitter::call<&fn>,
// Emitter::call_ptr): how an argument is given, the System V registers a
// function type's parameters go in, and the lookup of a function in the table
// of the C functions machine code may call (runtime/helpers.def, expanded by
// runtime/helpers.h). runtime/helpers.def's header says how the checks work.
#pragma once

#include <asmjit/x86.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pyjion {

namespace x86 = asmjit::x86;

// An argument that is the address `mem` names: lea reg, mem.
struct Lea {
    explicit Lea(const x86::Mem &m) : mem(m) {}
    x86::Mem mem;
};

// An argument already in its argument register (or, for a floating-point
// parameter, in its xmm register): nothing is emitted for it.
struct InReg {};

// One argument as given to a typed call. A register moves at its own width
// (a 32-bit move clears the upper half); memory is loaded at its size, or
// at the parameter's if it has none; an integer or a pointer constant is
// moved in as an immediate; nullptr is an xor of the register (which
// changes the flags).
struct CallArg {
    enum Kind : uint8_t { kInReg, kReg, kMem, kLea, kImm, kNull };
    Kind kind;
    x86::Gp reg;
    x86::Mem mem;
    int64_t imm = 0;

    CallArg(InReg) : kind(kInReg) {}
    CallArg(const x86::Gp &r) : kind(kReg), reg(r) {}
    CallArg(const x86::Mem &m) : kind(kMem), mem(m) {}
    CallArg(const Lea &l) : kind(kLea), mem(l.mem) {}
    CallArg(std::nullptr_t) : kind(kNull) {}
    CallArg(const asmjit::Imm &i) : kind(kImm), imm(i.value()) {}
    CallArg(const void *p) : kind(kImm), imm(static_cast<int64_t>(reinterpret_cast<uintptr_t>(p))) {}
    template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
    CallArg(T v) : kind(kImm), imm(static_cast<int64_t>(v))
    {
    }
};

// Where one parameter goes: general-purpose register `id` (rdi, rsi, rdx,
// rcx, r8, r9 in turn) or, for floating point, xmm `id`; `size` in bytes.
struct ParamSlot {
    uint8_t id;
    uint8_t size;
    bool xmm;
};

// Whether an argument of type A may be given for a parameter of type P.
template <class A, class P>
constexpr bool arg_fits()
{
    using T = std::decay_t<A>;
    if constexpr (std::is_same_v<T, InReg>) {
        return true;
    } else if constexpr (std::is_floating_point_v<P>) {
        return false;   // only InReg: the value must already be in its xmm register
    } else if constexpr (std::is_same_v<T, Lea> || std::is_same_v<T, std::nullptr_t> || std::is_pointer_v<T>) {
        return std::is_pointer_v<P>;
    } else if constexpr (std::is_integral_v<T> || std::is_same_v<T, asmjit::Imm>) {
        return std::is_integral_v<P> || std::is_enum_v<P>;
    } else {
        return std::is_base_of_v<x86::Gp, T> || std::is_base_of_v<x86::Mem, T>;
    }
}

// The System V registers of integer and pointer arguments, in order.
inline constexpr uint8_t kArgGpIds[6] = {x86::Gp::kIdDi, x86::Gp::kIdSi, x86::Gp::kIdDx,
                                         x86::Gp::kIdCx, x86::Gp::kIdR8, x86::Gp::kIdR9};

// A function pointer type's parameters (only integers, enums, pointers and
// floating point: nothing is passed on the stack).
template <class F>
struct CallSignature;

template <class R, class... P>
struct CallSignature<R (*)(P...)> {
    static constexpr size_t arity = sizeof...(P);
    static constexpr int gp_count = (0 + ... + (std::is_floating_point_v<P> ? 0 : 1));
    static constexpr int xmm_count = (0 + ... + (std::is_floating_point_v<P> ? 1 : 0));
    static_assert(((std::is_integral_v<P> || std::is_enum_v<P> || std::is_pointer_v<P> ||
                    std::is_floating_point_v<P>) && ...),
                  "typed calls pass integers, pointers and floating point only");
    static_assert(gp_count <= 6, "more than 6 integer/pointer parameters: stack arguments are not supported");
    static_assert(xmm_count <= 8, "more than 8 floating-point parameters: stack arguments are not supported");

    static constexpr std::array<ParamSlot, sizeof...(P)> slots()
    {
        std::array<ParamSlot, sizeof...(P)> out{};
        size_t i = 0, gp = 0, xmm = 0;
        ((out[i++] = std::is_floating_point_v<P>
                         ? ParamSlot{static_cast<uint8_t>(xmm++), static_cast<uint8_t>(sizeof(P)), true}
                         : ParamSlot{kArgGpIds[gp++], static_cast<uint8_t>(sizeof(P)), false}),
         ...);
        return out;
    }

    template <class... A>
    static constexpr bool accepts()
    {
        if constexpr (sizeof...(A) != sizeof...(P)) {
            return true;   // (the count has its own check)
        } else {
            return (arg_fits<A, P>() && ...);
        }
    }
};

template <class R, class... P>
struct CallSignature<R (*)(P...) noexcept> : CallSignature<R (*)(P...)> {};

// The table's entry for function `Fn`: specialised by runtime/helpers.h for
// each line of runtime/helpers.def; this unspecialised one is "not listed".
template <auto Fn>
struct HelperEntry {
    static constexpr const char *name = nullptr;
};

template <auto Fn>
constexpr const char *helper_name()
{
    static_assert(HelperEntry<Fn>::name != nullptr,
                  "this function is not in runtime/helpers.def (or runtime/helpers.h is not included): "
                  "machine code calls only the C functions listed there");
    return HelperEntry<Fn>::name;
}

// A function to call with its type and name, for code that passes the callee
// on (Compiler::slot_call): callee<&fn>() for a listed one.
template <class F>
struct Callee {
    F fn;
    const char *name;
};

template <auto Fn>
constexpr Callee<decltype(Fn)> callee()
{
    return Callee<decltype(Fn)>{Fn, helper_name<Fn>()};
}

}  // namespace pyjion
