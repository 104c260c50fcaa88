// SPDX-License-Identifier: MIT
#pragma once

// The static TLS block of this process, as glibc's loader keeps it: what a library loaded
// with dlopen() that uses initial-exec TLS (DF_STATIC_TLS) must fit into. Read from the
// loader's own figures (`_dl_get_tls_static_info`, the TCB size libthread_db is given) and
// the offsets of the TLS blocks already placed; nothing is allocated.

#include <cstddef>

namespace switchyard::diagnosis {

/// glibc's static TLS surplus with its default tunables (elf/dl-tls.c: 1664 bytes), what is
/// judged where the process's block cannot be measured.
constexpr std::size_t kDefaultStaticTlsSurplus = 1664;

struct StaticTlsBlock {
    bool measured = false; // false: only the default surplus is judged
    std::size_t size = 0;  // dl_tls_static_size (the TCB included)
    std::size_t align = 0; // dl_tls_static_align
    std::size_t used = 0;  // dl_tls_static_used
    std::size_t tcb = 0;   // TLS_TCB_SIZE

    /// What _dl_try_allocate_static_tls(map, false) (elf/dl-reloc.c) does with a TLS segment
    /// of `memsz` bytes aligned to `align` whose image starts at `vaddr`: true with `used`
    /// advanced, or false (the loader's "cannot allocate memory in static TLS block").
    bool allocate(std::size_t memsz, std::size_t align, std::size_t vaddr);
    /// The bytes a block may still take (alignment aside).
    std::size_t left() const noexcept;
};

/// This process's block now (x86-64 with glibc: measured; elsewhere the default surplus).
StaticTlsBlock process_static_tls();

} // namespace switchyard::diagnosis
