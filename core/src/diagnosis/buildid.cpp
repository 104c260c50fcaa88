// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/buildid.h>

#include "diagnosis/elfnotes.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace switchyard {

namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i)
        out += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
    return out;
}

bool is_gnu_build_id(std::uint32_t type, std::uint32_t namesz, const void* name) {
    return type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(name, "GNU", 4) == 0;
}

} // namespace

std::string file_build_id(const std::string& path, std::string* error) {
    auto fail = [&](std::string why) {
        if (error)
            *error = std::move(why);
        return std::string();
    };
    static const bool libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
    if (!libelf_ok)
        return fail("libelf is out of date");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return fail(std::strerror(errno));
    struct stat st {};
    Elf* elf = nullptr;
    std::string id;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        elf = elf_begin(fd, ELF_C_READ, nullptr);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        ::close(fd);
        return fail("not an ELF file");
    }
    diagnosis::find_note(
        elf, [&](const GElf_Nhdr& note, const unsigned char* name, const unsigned char* desc) {
            if (!diagnosis::gnu_note(note, name, NT_GNU_BUILD_ID))
                return false;
            id = hex(desc, note.n_descsz);
            return true;
        });
    elf_end(elf);
    ::close(fd);
    if (id.empty())
        return fail("no GNU build ID note (linked without --build-id)");
    return id;
}

std::string loaded_build_id(const void* address) {
    struct Search {
        const void* address;
        std::string id;
    } search{address, {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            const auto address = reinterpret_cast<ElfW(Addr)>(s->address);
            bool contains = false;
            for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                const auto start = info->dlpi_addr + ph.p_vaddr;
                contains = ph.p_type == PT_LOAD && address >= start && address < start + ph.p_memsz;
            }
            if (!contains)
                return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_NOTE)
                    continue;
                const auto* p =
                    reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
                const auto* end = p + ph.p_memsz;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                    const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
                    const auto* name = p + sizeof(ElfW(Nhdr));
                    const auto* desc = name + ((note->n_namesz + 3) & ~3u);
                    if (desc + note->n_descsz > end)
                        break;
                    if (is_gnu_build_id(note->n_type, note->n_namesz, name)) {
                        s->id = hex(desc, note->n_descsz);
                        return 1;
                    }
                    p = desc + ((note->n_descsz + 3) & ~3u);
                }
            }
            return 1;
        },
        &search);
    return search.id;
}

std::string core_build_id() {
    static const std::string id = loaded_build_id(reinterpret_cast<const void*>(&core_build_id));
    return id;
}

} // namespace switchyard
