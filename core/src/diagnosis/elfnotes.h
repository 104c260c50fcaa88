// SPDX-License-Identifier: MIT
#pragma once

// The notes of an ELF file's SHT_NOTE sections, read through libelf: what the build ID
// (buildid.cpp) and the x86 ISA level (loadsim.cpp) are read from.

#include <gelf.h>
#include <libelf.h>

#include <cstring>

namespace switchyard::diagnosis {

/// Calls `fn(note, name, desc)` for each note of `elf` (name: the note's owner bytes, desc:
/// its descriptor), until `fn` returns true; returns whether one did.
template <class Fn> bool find_note(Elf* elf, Fn&& fn) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data || !data->d_buf)
            continue;
        const auto* base = static_cast<const unsigned char*>(data->d_buf);
        std::size_t offset = 0, name_offset = 0, desc_offset = 0;
        GElf_Nhdr note;
        while ((offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0)
            if (fn(note, base + name_offset, base + desc_offset))
                return true;
    }
    return false;
}

/// Whether a note is the GNU owner's of `type` ("GNU\0", 4 bytes of name).
inline bool gnu_note(const GElf_Nhdr& note, const unsigned char* name, unsigned type) {
    return note.n_type == type && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0;
}

} // namespace switchyard::diagnosis
