// SPDX-License-Identifier: MIT
#pragma once

// What this process's dynamic loader accepts (its ELF class, byte order and machine), and the
// words for an ELF file's class and machine: shared by the load simulation (loadsim.cpp) and
// the file check (loadablefile.cpp).

#include <elf.h>

#include <string>

namespace switchyard::diagnosis {

constexpr int kProcessClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr int kProcessData = ELFDATA2LSB;
#else
constexpr int kProcessData = ELFDATA2MSB;
#endif
#if defined(__x86_64__)
constexpr int kProcessMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kProcessMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr int kProcessMachine = EM_386;
#else
constexpr int kProcessMachine = -1; // not judged
#endif

inline std::string machine_name(int machine) {
    switch (machine) {
    case EM_X86_64:
        return "x86-64";
    case EM_386:
        return "i386";
    case EM_AARCH64:
        return "aarch64";
    case EM_ARM:
        return "arm";
    case EM_RISCV:
        return "riscv";
    case EM_PPC64:
        return "ppc64";
    case EM_PPC:
        return "ppc";
    case EM_S390:
        return "s390x";
    case EM_MIPS:
        return "mips";
    case EM_SPARCV9:
        return "sparc64";
    case EM_LOONGARCH:
        return "loongarch";
    default:
        return "machine " + std::to_string(machine);
    }
}

inline std::string class_name(int elf_class) {
    return elf_class == ELFCLASS64 ? "ELF64" : elf_class == ELFCLASS32 ? "ELF32" : "ELF class ?";
}

/// "x86-64 (ELF64)": what this process runs.
inline std::string process_kind() {
    return machine_name(kProcessMachine) + " (" + class_name(kProcessClass) + ")";
}

} // namespace switchyard::diagnosis
