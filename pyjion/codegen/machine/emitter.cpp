#include "machine/emitter.h"

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

void Emitter::incref(const x86::Gp &obj) { a_.inc(x86::qword_ptr(obj)); }

void Emitter::decref_no_dealloc(const x86::Gp &obj) { a_.dec(x86::qword_ptr(obj)); }

void Emitter::decref(const x86::Gp &obj, int prev_unit)
{
    Label alive = a_.newLabel();
    auto dealloc = [&] {
        if (obj != x86::rdi) a_.mov(x86::rdi, obj);
        if (prev_unit >= 0) set_prev_instr(prev_unit);
        call(reinterpret_cast<const void *>(&_Py_Dealloc), "_Py_Dealloc");
    };
    a_.dec(x86::qword_ptr(obj));
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

void Emitter::set_prev_instr(int unit_index)
{
    a_.lea(x86::rax, x86::ptr(first_instr, unit_index * 2));
    a_.mov(frame_q(layout::kFramePrevInstr), x86::rax);
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
