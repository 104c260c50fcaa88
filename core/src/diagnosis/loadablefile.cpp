// SPDX-License-Identifier: MIT
// What glibc's loader judges of a file before it reads the file's dependencies: open_verify()
// and _dl_map_object_from_fd() in elf/dl-load.c (glibc 2.36), check by check, in their order,
// read as bytes with pread (nothing mapped, nothing run).
#include <switchyard/diagnosis/loadsim.h>

#include "diagnosis/elfident.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace switchyard {
namespace loadablefile_detail { // named: the module's sources are compiled as one unity file

// The ABI versions glibc 2.36's loader accepts with ELFOSABI_GNU (libc-abis on x86-64:
// UNIQUE, IFUNC, ABSOLUTE; LIBC_ABI_MAX is 4); any other OS ABI must say 0.
constexpr int kLibcAbiMax = 4;

class Fd {
public:
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const noexcept { return m_fd; }

private:
    int m_fd;
};

std::string grouped(unsigned long long n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string bytes(unsigned long long n) {
    return grouped(n) + (n == 1 ? " byte" : " bytes");
}

std::string printable_start(const unsigned char* data, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n && i < 16; ++i)
        out += data[i] >= 0x20 && data[i] < 0x7f ? char(data[i]) : '.';
    return out;
}

std::string type_name(unsigned type) {
    switch (type) {
    case ET_NONE:
        return "an ELF file of no type (ET_NONE)";
    case ET_REL:
        return "a relocatable object file (ET_REL), not linked into a shared library";
    case ET_CORE:
        return "a core dump (ET_CORE)";
    default:
        return "an ELF file of type " + std::to_string(type);
    }
}

} // namespace loadablefile_detail

std::optional<LoadProblem> check_loadable_file(const std::string& path) {
    using namespace loadablefile_detail;
    using diagnosis::kProcessClass;
    using diagnosis::kProcessData;
    using diagnosis::kProcessMachine;
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt; // missing or unreadable: judged by whoever opens it
    const auto size = static_cast<unsigned long long>(st.st_size);

    auto problem = [&](BackendCause cause, std::string missing, std::string why) {
        LoadProblem p;
        p.cause = cause;
        p.object = path;
        p.missing = std::move(missing);
        p.message = path + " " + why;
        return std::optional<LoadProblem>(std::move(p));
    };
    auto cut = [&](const std::string& what, unsigned long long end) {
        const std::string missing =
            "its " + what + " ends at byte " + grouped(end) + ", the file has " + bytes(size);
        return problem(BackendCause::LibraryTruncated, missing,
                       "is cut off: " + missing +
                           " (the loader would map it and die of SIGBUS reading past the end)");
    };
    auto not_loadable = [&](std::string what, const std::string& loader_says) {
        return problem(BackendCause::LibraryNotLoadable, what,
                       "is " + what + "; the loader refuses it (\"" + loader_says + "\")");
    };
    auto foreign = [&](std::string what) {
        return problem(BackendCause::WrongArchitecture, what,
                       "is built for " + what + "; this machine runs " + diagnosis::process_kind() +
                           ", so the loader refuses it before reading any dependency");
    };

    ElfW(Ehdr) ehdr{};
    unsigned char* raw = reinterpret_cast<unsigned char*>(&ehdr);
    const ssize_t got = ::pread(fd.get(), raw, sizeof ehdr, 0);
    if (got < 0)
        return std::nullopt;
    const bool magic = got >= SELFMAG && std::memcmp(raw, ELFMAG, SELFMAG) == 0;
    // "file too short"
    if (std::size_t(got) < sizeof ehdr) {
        if (magic)
            return problem(BackendCause::LibraryTruncated,
                           "its ELF header is cut at " + bytes(size) + " (it takes " +
                               bytes(sizeof ehdr) + ")",
                           "is cut off: it has " + bytes(size) + ", less than an ELF header (" +
                               bytes(sizeof ehdr) + ")");
        return problem(BackendCause::LibraryNotElf,
                       size ? "a file of " + bytes(size) + ", not ELF" : "an empty file",
                       size ? "is not an ELF file: it has " + bytes(size) +
                                  ", less than an ELF header, and begins with \"" +
                                  printable_start(raw, std::size_t(got)) + "\""
                            : "is empty");
    }
    // "invalid ELF header"
    if (!magic)
        return problem(BackendCause::LibraryNotElf,
                       "a file that begins with \"" + printable_start(raw, std::size_t(got)) + "\"",
                       "is not an ELF file: it begins with \"" +
                           printable_start(raw, std::size_t(got)) + "\"");
    const int machine =
        raw[EI_DATA] == ELFDATA2MSB ? (raw[18] << 8) | raw[19] : raw[18] | (raw[19] << 8);
    const std::string kind =
        diagnosis::machine_name(machine) + " (" + diagnosis::class_name(raw[EI_CLASS]);
    // "wrong ELF class: ELFCLASS32"
    if (raw[EI_CLASS] != kProcessClass)
        return foreign(kind + ")");
    // "ELF file data encoding not little-endian"
    if (raw[EI_DATA] != kProcessData)
        return foreign(kind + ", " + (raw[EI_DATA] == ELFDATA2MSB ? "big" : "little") + "-endian)");
    // "ELF file version ident does not match current one"
    if (raw[EI_VERSION] != EV_CURRENT)
        return not_loadable("an ELF file with a damaged header (identification version " +
                                std::to_string(raw[EI_VERSION]) + ", not 1)",
                            "ELF file version ident does not match current one");
    // "ELF file OS ABI invalid"
    const int osabi = raw[EI_OSABI], abiversion = raw[EI_ABIVERSION];
    if (osabi != ELFOSABI_SYSV && osabi != ELFOSABI_GNU)
        return foreign(kind + ", OS ABI " + std::to_string(osabi) + ")");
    // "ELF file ABI version invalid"
    if (abiversion != 0 && !(osabi == ELFOSABI_GNU && abiversion < kLibcAbiMax))
        return foreign(kind + ", OS ABI " + std::to_string(osabi) + " version " +
                       std::to_string(abiversion) + ")");
    // "nonzero padding in e_ident"
    for (int i = EI_PAD; i < EI_NIDENT; ++i)
        if (raw[i] != 0)
            return not_loadable("an ELF file with a damaged header (nonzero padding in "
                                "e_ident)",
                                "nonzero padding in e_ident");
    // "ELF file version does not match current one"
    if (ehdr.e_version != EV_CURRENT)
        return not_loadable("an ELF file with a damaged header (e_version " +
                                std::to_string(ehdr.e_version) + ", not 1)",
                            "ELF file version does not match current one");
    // Another machine: the loader skips it as if it were not there ("cannot open shared object
    // file").
    if (kProcessMachine >= 0 && machine != kProcessMachine)
        return foreign(kind + ")");
    // "only ET_DYN and ET_EXEC can be loaded"
    if (ehdr.e_type != ET_DYN && ehdr.e_type != ET_EXEC)
        return not_loadable(type_name(ehdr.e_type), "only ET_DYN and ET_EXEC can be loaded");
    // "ELF file's phentsize not the expected size"
    if (ehdr.e_phentsize != sizeof(ElfW(Phdr)))
        return not_loadable("an ELF file with a damaged header (program header size " +
                                std::to_string(ehdr.e_phentsize) + ")",
                            "ELF file's phentsize not the expected size");
    // "cannot read file data": the program headers past the end.
    const unsigned long long ph_end =
        ehdr.e_phoff + (unsigned long long)(ehdr.e_phnum) * sizeof(ElfW(Phdr));
    if (ph_end > size)
        return cut("program header table", ph_end);
    std::vector<ElfW(Phdr)> phdrs(ehdr.e_phnum);
    const auto ph_bytes = ssize_t(phdrs.size() * sizeof(ElfW(Phdr)));
    if (::pread(fd.get(), phdrs.data(), std::size_t(ph_bytes), off_t(ehdr.e_phoff)) != ph_bytes)
        return cut("program header table", ph_end);

    // _dl_map_object_from_fd(): the load commands and the dynamic segment.
    const unsigned long long page = static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
    std::size_t loads = 0;
    const ElfW(Phdr)* dynamic = nullptr;
    bool empty_dynamic = false;
    for (const auto& ph : phdrs) {
        if (ph.p_type == PT_DYNAMIC) {
            if (ph.p_filesz == 0)
                empty_dynamic = true;
            else
                dynamic = &ph;
        } else if (ph.p_type == PT_LOAD) {
            // "ELF load command address/offset not page-aligned"
            if (((ph.p_vaddr - ph.p_offset) & (page - 1)) != 0)
                return not_loadable("an ELF file whose load segment at offset " +
                                        std::to_string(ph.p_offset) +
                                        " is not page-aligned with its address",
                                    "ELF load command address/offset not page-aligned");
            ++loads;
        }
    }
    // "object file has no loadable segments"
    if (loads == 0)
        return not_loadable("an ELF file with no loadable segments",
                            "object file has no loadable segments");
    // "cannot dynamically load executable"
    if (ehdr.e_type != ET_DYN)
        return not_loadable("an executable (ET_EXEC), not a shared library",
                            "cannot dynamically load executable");
    // "object file has no dynamic section" (a separate debug-info file, mostly)
    if (!dynamic || empty_dynamic)
        return not_loadable("an ELF file with no dynamic section (a separate debug-info file?)",
                            "object file has no dynamic section");
    // The segments are mapped next: a part of one past the end of the file maps, and the first
    // touch of it (the loader's own, reading the dynamic section or zeroing .bss) is SIGBUS.
    for (std::size_t i = 0; i < phdrs.size(); ++i)
        if (phdrs[i].p_type == PT_LOAD && phdrs[i].p_offset + phdrs[i].p_filesz > size)
            return cut("load segment " + std::to_string(i), phdrs[i].p_offset + phdrs[i].p_filesz);
    const unsigned long long dyn_end = dynamic->p_offset + dynamic->p_filesz;
    if (dyn_end > size)
        return cut("dynamic section", dyn_end);
    // "shared object cannot be dlopen()ed", "cannot dynamically load position-independent
    // executable": DT_FLAGS_1.
    std::vector<ElfW(Dyn)> dyns(std::size_t(dynamic->p_filesz / sizeof(ElfW(Dyn))));
    const auto dyn_bytes = ssize_t(dyns.size() * sizeof(ElfW(Dyn)));
    if (::pread(fd.get(), dyns.data(), std::size_t(dyn_bytes), off_t(dynamic->p_offset)) !=
        dyn_bytes)
        return cut("dynamic section", dyn_end);
    for (const auto& d : dyns) {
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag != DT_FLAGS_1)
            continue;
        if (d.d_un.d_val & DF_1_NOOPEN)
            return not_loadable("a shared library marked not to be opened with dlopen "
                                "(DF_1_NOOPEN)",
                                "shared object cannot be dlopen()ed");
        if (d.d_un.d_val & DF_1_PIE)
            return not_loadable("a position-independent executable (DF_1_PIE), not a shared "
                                "library",
                                "cannot dynamically load position-independent executable");
    }
    // The section headers: the loader does not read them, but a table past the end says the
    // file was cut (and nothing here can read its symbols).
    if (ehdr.e_shoff != 0 && ehdr.e_shnum != 0) {
        const unsigned long long sh_end =
            ehdr.e_shoff + (unsigned long long)(ehdr.e_shnum) * ehdr.e_shentsize;
        if (sh_end > size)
            return cut("section header table", sh_end);
    }
    return std::nullopt;
}

} // namespace switchyard
