#include "machine/emitter.h"

#include <string>

#include "codegen_api.h"
#include "cpython/object_layout.h"
#include "front/bytecode.h"   // CompileError

namespace pyjion {

using namespace asmjit;

Emitter::Emitter(CodeHolder &holder, int nlocalsplus)
    : a_(&holder), text_section_(holder.textSection()), nlocalsplus_(nlocalsplus)
{
    // Without the section (out of memory) the out-of-line code stays in the
    // text section: still right, only less compact.
    holder.newSection(&cold_section_, ".cold", SIZE_MAX, SectionFlags::kExecutable, 1);
    if (cold_section_ == nullptr) cold_section_ = text_section_;
}

void Emitter::incref_at(x86::Assembler &a, const x86::Gp &obj)
{
    if constexpr (layout::kImmortalObjects) {
        // low32 += 1, undone when it wrapped (it was 0xFFFFFFFF: immortal).
        a.add(x86::dword_ptr(obj, layout::kObjectRefcnt), 1);
        a.sbb(x86::dword_ptr(obj, layout::kObjectRefcnt), 0);
    } else {
        a.inc(x86::qword_ptr(obj, layout::kObjectRefcnt));
    }
}

void Emitter::decref_at(x86::Assembler &a, const x86::Gp &obj)
{
    if constexpr (layout::kImmortalObjects) {
        // An immortal (low 32 bits negative as an int32) is left alone; the
        // compare leaves ZF clear then.
        Label skip = a.newLabel();
        a.cmp(x86::dword_ptr(obj, layout::kObjectRefcnt), 0);
        a.jl(skip);
        a.dec(x86::qword_ptr(obj, layout::kObjectRefcnt));
        a.bind(skip);
    } else {
        a.dec(x86::qword_ptr(obj, layout::kObjectRefcnt));
    }
}

void Emitter::incref(const x86::Gp &obj) { incref_at(a_, obj); }

void Emitter::decref_no_dealloc(const x86::Gp &obj)
{
    // True, False and None: immortal where objects can be.
    if constexpr (!layout::kImmortalObjects) a_.dec(x86::qword_ptr(obj));
}

void Emitter::decref(const x86::Gp &obj, int prev_unit)
{
    Label alive = a_.newLabel();
    auto dealloc = [&] {
        if (obj != x86::rdi) a_.mov(x86::rdi, obj);   // before set_prev_instr, which clobbers rax
        if (prev_unit >= 0) set_prev_instr(prev_unit);
        // (machine/ is below runtime/, whose helpers.h holds the table: the
        // pointer's type is checked here; _Py_Dealloc is listed there.)
        call_ptr<void (*)(PyObject *)>(&_Py_Dealloc, "_Py_Dealloc", x86::rdi);
    };
    decref_at(a_, obj);
    if (in_cold_) {   // already out of line: no need to jump further away
        a_.jnz(alive);
        dealloc();
    } else {          // the deallocation is the rare outcome: out of line
        Label dying = a_.newLabel();
        a_.jz(dying);
        out_of_line([&] {
            a_.bind(dying);
            dealloc();
            a_.jmp(alive);
        });
    }
    a_.bind(alive);
}

void Emitter::xdecref(const x86::Gp &obj, int prev_unit)
{
    Label done = a_.newLabel();
    a_.test(obj, obj);
    a_.jz(done);
    decref(obj, prev_unit);
    a_.bind(done);
}

void Emitter::call(const void *fn, const char *name)
{
    if (a_.logger() != nullptr) a_.setInlineComment(name);   // the listing names the callee
    a_.call(imm(reinterpret_cast<uint64_t>(fn)));
    calls_.push_back(CallSite{a_.currentSection(), static_cast<uint32_t>(a_.offset()), name});
}

namespace {

// The general-purpose registers an argument reads, a bit per register id.
uint32_t registers_read(const CallArg &arg)
{
    auto gp = [](asmjit::RegType type, uint32_t id) -> uint32_t {
        return type == asmjit::RegType::kX86_Gpq || type == asmjit::RegType::kX86_Gpd ? 1u << id : 0;
    };
    switch (arg.kind) {
    case CallArg::kReg: return 1u << arg.reg.id();
    case CallArg::kMem:
    case CallArg::kLea: return gp(arg.mem.baseType(), arg.mem.baseId()) | gp(arg.mem.indexType(), arg.mem.indexId());
    default: return 0;
    }
}

}  // namespace

void Emitter::load_args(const CallArg *args, const ParamSlot *params, size_t n, const char *name)
{
    constexpr size_t kMaxArgs = 16;   // 6 general-purpose and 8 xmm registers
    bool pending[kMaxArgs] = {};
    uint32_t reads[kMaxArgs] = {};
    for (size_t i = 0; i < n; i++) {
        const CallArg &arg = args[i];
        bool in_place = arg.kind == CallArg::kInReg || (arg.kind == CallArg::kReg && arg.reg.id() == params[i].id);
        pending[i] = !params[i].xmm && !in_place;
        reads[i] = registers_read(arg);
    }
    for (;;) {
        // The first pending move whose register no other pending move reads.
        size_t pick = n;
        bool any = false;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (!pending[i]) continue;
            any = true;
            uint32_t others = 0;
            for (size_t j = 0; j < n; j++) {
                if (j != i && pending[j]) others |= reads[j];
            }
            if ((others & (1u << params[i].id)) == 0) pick = i;
        }
        if (!any) return;
        if (pick == n) {
            throw CompileError{PYJION_RESULT_COMPILER_ERROR,
                               std::string("the arguments of a call to ") + name +
                                   " read each other's registers in a cycle"};
        }
        load_arg(args[pick], params[pick]);
        pending[pick] = false;
    }
}

void Emitter::load_arg(const CallArg &arg, const ParamSlot &param)
{
    auto reg = [&](uint32_t size) -> x86::Gp {
        if (size == 8) return x86::gpq(param.id);
        if (size == 4) return x86::gpd(param.id);
        throw CompileError{PYJION_RESULT_COMPILER_ERROR,
                           "a call argument of " + std::to_string(size) + " bytes (only 4 or 8 are loaded)"};
    };
    uint32_t size = param.size == 8 ? 8 : 4;
    switch (arg.kind) {
    case CallArg::kReg: a_.mov(reg(arg.reg.size()), arg.reg); break;
    case CallArg::kMem: a_.mov(reg(arg.mem.hasSize() ? arg.mem.size() : size), arg.mem); break;
    case CallArg::kLea: a_.lea(reg(8), arg.mem); break;
    case CallArg::kImm: a_.mov(reg(size), imm(arg.imm)); break;
    case CallArg::kNull: a_.xor_(reg(4), reg(4)); break;
    case CallArg::kInReg: break;
    }
}

void Emitter::set_prev_instr(int unit_index)
{
    a_.lea(x86::rax, x86::ptr(first_instr, unit_index * 2));
    a_.mov(frame_q(layout::kFrameInstr), x86::rax);
}

Label Emitter::cold(std::function<void(Emitter &)> body)
{
    Label l = a_.newLabel();
    cold_.push_back(ColdStub{l, std::move(body), owner_});
    return l;
}

void Emitter::emit_cold()
{
    out_of_line([&] {
        // Stubs may add further stubs; index rather than iterate.
        for (size_t i = 0; i < cold_.size(); i++) {
            a_.bind(cold_[i].label);
            auto body = cold_[i].body;
            int owner = cold_[i].owner;
            size_t start = cold_section_->buffer().size();
            owner_ = owner;   // stubs a stub asks for are its owner's too
            body(*this);
            sizes_[owner].cold_bytes += cold_section_->buffer().size() - start;
        }
        cold_.clear();
        owner_ = size_stats::kFrameBucket;
    });
}

const size_stats::Table &Emitter::finish_sizes()
{
    uint64_t hot = 0, cold = 0;
    for (int i = 0; i < size_stats::kFrameBucket; i++) {
        hot += sizes_[i].hot_bytes;
        cold += sizes_[i].cold_bytes;
    }
    uint64_t text = text_section_->buffer().size();
    uint64_t stubs = cold_section_ == text_section_ ? 0 : cold_section_->buffer().size();
    sizes_[size_stats::kFrameBucket].hot_bytes = text > hot ? text - hot : 0;
    sizes_[size_stats::kFrameBucket].cold_bytes = stubs > cold ? stubs - cold : 0;
    return sizes_;
}

void Emitter::begin_instr(int opcode)
{
    owner_ = opcode;
    hot_start_ = text_section_->buffer().size();
    cold_start_ = cold_section_->buffer().size();
}

void Emitter::end_instr()
{
    size_stats::Bucket &b = sizes_[owner_];
    b.instructions++;
    b.hot_bytes += text_section_->buffer().size() - hot_start_;
    if (cold_section_ != text_section_) b.cold_bytes += cold_section_->buffer().size() - cold_start_;
    owner_ = size_stats::kFrameBucket;
}

}  // namespace pyjion
