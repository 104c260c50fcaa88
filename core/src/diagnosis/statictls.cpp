// SPDX-License-Identifier: MIT
#include "diagnosis/statictls.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdint>

namespace switchyard::diagnosis {

bool StaticTlsBlock::allocate(std::size_t memsz, std::size_t tls_align, std::size_t vaddr) {
    if (tls_align == 0)
        tls_align = 1;
    if (tls_align > align)
        return false;
    const std::size_t firstbyte = vaddr & (tls_align - 1);
    if (size < used + tcb)
        return false;
    const std::size_t freebytes = size - used - tcb;
    const std::size_t blsize = memsz + firstbyte;
    if (freebytes < blsize)
        return false;
    const std::size_t n = (freebytes - blsize) / tls_align;
    used += freebytes - n * tls_align - firstbyte;
    return true;
}

std::size_t StaticTlsBlock::left() const noexcept {
    return size > used + tcb ? size - used - tcb : 0;
}

StaticTlsBlock process_static_tls() {
    StaticTlsBlock block;
    block.size = kDefaultStaticTlsSurplus;
    block.align = 64;
#if defined(__x86_64__) && defined(__GLIBC__)
    // The thread pointer is above the static blocks (TLS_TCB_AT_TP): a block placed at offset
    // N lies at tp - N; the largest N in use is dl_tls_static_used.
    using InfoFn = void (*)(std::size_t*, std::size_t*);
    const auto info = reinterpret_cast<InfoFn>(::dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
    const auto* tcb =
        static_cast<const std::uint32_t*>(::dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
    if (!info || !tcb)
        return block;
    std::size_t size = 0, align = 0;
    info(&size, &align);
    std::uintptr_t tp = 0;
    asm("mov %%fs:0, %0" : "=r"(tp));
    struct Walk {
        std::uintptr_t tp;
        std::size_t size, used;
    } walk{tp, size, 0};
    dl_iterate_phdr(
        [](dl_phdr_info* i, std::size_t, void* data) {
            auto* w = static_cast<Walk*>(data);
            const auto at = reinterpret_cast<std::uintptr_t>(i->dlpi_tls_data);
            if (i->dlpi_tls_modid && at && at < w->tp && w->tp - at <= w->size)
                w->used = std::max<std::size_t>(w->used, w->tp - at);
            return 0;
        },
        &walk);
    block = {true, size, align, walk.used, *tcb};
#endif
    return block;
}

} // namespace switchyard::diagnosis
