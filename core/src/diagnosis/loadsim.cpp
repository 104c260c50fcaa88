// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/diagnosis/loadsim.h>

#include "diagnosis/elfident.h"
#include "diagnosis/elfnotes.h"
#include "diagnosis/statictls.h"
#include "util/textutil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_set>

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GNU_PROPERTY_X86_ISA_1_NEEDED
#define GNU_PROPERTY_X86_ISA_1_NEEDED 0xc0008002
#endif

namespace switchyard {
namespace loadsim_detail { // named: the module's sources are compiled as one unity file

using diagnosis::kProcessClass;
using diagnosis::kProcessMachine;

// What the loader reads of one object to bind it: its header, its versions and its dynamic
// symbols.
struct ObjectTables {
    bool readable = false;
    std::string error;
    int elf_class = 0, machine = 0, osabi = 0;
    int isa_level = 0;                     // GNU_PROPERTY_X86_ISA_1_NEEDED: highest level asked for
    std::vector<std::string> version_defs; // DT_VERDEF names, the base (file) name excluded
    struct Need {
        std::string file;
        std::string version;
        bool weak = false;
    };
    std::vector<Need> version_needs;
    struct Undefined {
        std::string name;
        std::string version; // empty: unversioned
    };
    std::vector<Undefined> undefined;        // non-weak undefined dynamic symbols
    std::unordered_set<std::string> defined; // "name" (default or unversioned), "name@version"
    bool static_tls = false; // DF_STATIC_TLS: initial-exec TLS, placed in the static block
    std::size_t tls_memsz = 0, tls_align = 0, tls_vaddr = 0; // PT_TLS (memsz 0: none)
};

struct ElfFile {
    int fd = -1;
    Elf* elf = nullptr;
    ~ElfFile() {
        if (elf)
            elf_end(elf);
        if (fd >= 0)
            ::close(fd);
    }
};

int isa_level_of(unsigned bits) {
    for (int level = 4; level >= 1; --level)
        if (bits & (1u << (level - 1)))
            return level;
    return 0;
}

// GNU_PROPERTY_X86_ISA_1_NEEDED from the .note.gnu.property section (NT_GNU_PROPERTY_TYPE_0).
int read_isa_note(Elf* elf, int elf_class) {
    int level = 0;
    diagnosis::find_note(
        elf, [&](const GElf_Nhdr& note, const unsigned char* name, const unsigned char* desc) {
            if (!diagnosis::gnu_note(note, name, NT_GNU_PROPERTY_TYPE_0))
                return false;
            const std::size_t align = elf_class == ELFCLASS64 ? 8 : 4;
            for (std::size_t p = 0; p + 8 <= note.n_descsz;) {
                std::uint32_t type = 0, size = 0;
                std::memcpy(&type, desc + p, 4);
                std::memcpy(&size, desc + p + 4, 4);
                if (p + 8 + size > note.n_descsz)
                    break;
                if (type == GNU_PROPERTY_X86_ISA_1_NEEDED && size >= 4) {
                    std::uint32_t bits = 0;
                    std::memcpy(&bits, desc + p + 8, 4);
                    level = isa_level_of(bits);
                    return true;
                }
                p += 8 + ((size + align - 1) / align) * align;
            }
            return false;
        });
    return level;
}

ObjectTables read_tables(const std::string& path, bool with_defined) {
    ObjectTables t;
    static const bool libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
    if (!libelf_ok) {
        t.error = "libelf is out of date";
        return t;
    }
    ElfFile f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st {};
    if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        t.error = f.fd < 0 ? std::strerror(errno) : "not a regular file";
        return t;
    }
    // The identification and machine straight from the file's first bytes, as the loader
    // checks them before anything else: a foreign file is judged even where libelf cannot
    // make sense of the rest (an ELF32 header over a 64-bit file's contents).
    unsigned char ident[20] = {};
    if (::pread(f.fd, ident, sizeof ident, 0) == ssize_t(sizeof ident) &&
        std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
        const int elf_class = ident[EI_CLASS];
        const int machine = ident[EI_DATA] == ELFDATA2MSB ? (ident[18] << 8) | ident[19]
                                                          : ident[18] | (ident[19] << 8);
        if (elf_class != kProcessClass || machine != kProcessMachine) {
            t.readable = true;
            t.elf_class = elf_class;
            t.machine = machine;
            t.osabi = ident[EI_OSABI];
            return t;
        }
    }
    f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, nullptr);
    GElf_Ehdr ehdr;
    if (!f.elf || elf_kind(f.elf) != ELF_K_ELF || !gelf_getehdr(f.elf, &ehdr)) {
        t.error = "not an ELF file";
        return t;
    }
    t.readable = true;
    t.elf_class = gelf_getclass(f.elf);
    t.machine = ehdr.e_machine;
    t.osabi = ehdr.e_ident[EI_OSABI];
    if (t.elf_class != kProcessClass || t.machine != kProcessMachine)
        return t; // foreign: nothing below the header is judged
    t.isa_level = read_isa_note(f.elf, t.elf_class);
    std::size_t phnum = 0;
    if (elf_getphdrnum(f.elf, &phnum) == 0)
        for (std::size_t i = 0; i < phnum; ++i) {
            GElf_Phdr ph;
            if (gelf_getphdr(f.elf, int(i), &ph) && ph.p_type == PT_TLS) {
                t.tls_memsz = ph.p_memsz;
                t.tls_align = ph.p_align;
                t.tls_vaddr = ph.p_vaddr;
            }
        }

    // Sections by type; the version tables' indices name versions for the symbols.
    Elf_Scn *dynsym = nullptr, *versym = nullptr, *verdef = nullptr, *verneed = nullptr;
    GElf_Shdr dynsym_hdr{}, verdef_hdr{}, verneed_hdr{};
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(f.elf, scn)) != nullptr;) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            continue;
        if (shdr.sh_type == SHT_DYNSYM)
            dynsym = scn, dynsym_hdr = shdr;
        else if (shdr.sh_type == SHT_GNU_versym)
            versym = scn;
        else if (shdr.sh_type == SHT_GNU_verdef)
            verdef = scn, verdef_hdr = shdr;
        else if (shdr.sh_type == SHT_GNU_verneed)
            verneed = scn, verneed_hdr = shdr;
        else if (shdr.sh_type == SHT_DYNAMIC)
            if (Elf_Data* data = elf_getdata(scn, nullptr); data && shdr.sh_entsize)
                for (std::size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
                    GElf_Dyn dyn;
                    if (!gelf_getdyn(data, int(i), &dyn) || dyn.d_tag == DT_NULL)
                        break;
                    if (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_STATIC_TLS))
                        t.static_tls = true;
                }
    }
    std::map<unsigned, std::string> version_names; // versym index -> name
    if (verdef) {
        Elf_Data* data = elf_getdata(verdef, nullptr);
        std::size_t offset = 0;
        for (std::size_t i = 0; data && i < verdef_hdr.sh_info; ++i) {
            GElf_Verdef def;
            if (!gelf_getverdef(data, int(offset), &def))
                break;
            GElf_Verdaux aux;
            if (def.vd_cnt > 0 && gelf_getverdaux(data, int(offset + def.vd_aux), &aux)) {
                const char* name = elf_strptr(f.elf, verdef_hdr.sh_link, aux.vda_name);
                if (name) {
                    version_names[def.vd_ndx] = name;
                    if (!(def.vd_flags & VER_FLG_BASE))
                        t.version_defs.emplace_back(name);
                }
            }
            if (def.vd_next == 0)
                break;
            offset += def.vd_next;
        }
    }
    if (verneed) {
        Elf_Data* data = elf_getdata(verneed, nullptr);
        std::size_t offset = 0;
        for (std::size_t i = 0; data && i < verneed_hdr.sh_info; ++i) {
            GElf_Verneed need;
            if (!gelf_getverneed(data, int(offset), &need))
                break;
            const char* file = elf_strptr(f.elf, verneed_hdr.sh_link, need.vn_file);
            std::size_t aux_offset = offset + need.vn_aux;
            for (unsigned k = 0; k < need.vn_cnt; ++k) {
                GElf_Vernaux aux;
                if (!gelf_getvernaux(data, int(aux_offset), &aux))
                    break;
                const char* name = elf_strptr(f.elf, verneed_hdr.sh_link, aux.vna_name);
                if (name) {
                    version_names[aux.vna_other] = name;
                    t.version_needs.push_back(
                        {file ? file : "", name, (aux.vna_flags & VER_FLG_WEAK) != 0});
                }
                if (aux.vna_next == 0)
                    break;
                aux_offset += aux.vna_next;
            }
            if (need.vn_next == 0)
                break;
            offset += need.vn_next;
        }
    }
    if (dynsym) {
        Elf_Data* syms = elf_getdata(dynsym, nullptr);
        Elf_Data* vers = versym ? elf_getdata(versym, nullptr) : nullptr;
        const std::size_t entsize = dynsym_hdr.sh_entsize
                                        ? dynsym_hdr.sh_entsize
                                        : gelf_fsize(f.elf, ELF_T_SYM, 1, EV_CURRENT);
        const std::size_t count = entsize && syms ? dynsym_hdr.sh_size / entsize : 0;
        if (with_defined)
            t.defined.reserve(count * 2);
        for (std::size_t i = 1; i < count; ++i) {
            GElf_Sym sym;
            if (!gelf_getsym(syms, int(i), &sym))
                continue;
            const char* raw = elf_strptr(f.elf, dynsym_hdr.sh_link, sym.st_name);
            if (!raw || !*raw)
                continue;
            const int bind = GELF_ST_BIND(sym.st_info);
            if (bind == STB_LOCAL)
                continue;
            GElf_Versym v = 0;
            if (vers)
                gelf_getversym(vers, int(i), &v);
            const bool hidden = (v & 0x8000) != 0;
            const unsigned index = v & 0x7fff;
            std::string version;
            if (index > 1)
                if (auto it = version_names.find(index); it != version_names.end())
                    version = it->second;
            if (sym.st_shndx == SHN_UNDEF) {
                if (bind != STB_WEAK)
                    t.undefined.push_back({raw, version});
                continue;
            }
            if (!with_defined)
                continue;
            if (!version.empty())
                t.defined.insert(std::string(raw) + "@" + version);
            if (!hidden)
                t.defined.insert(raw);
        }
    }
    return t;
}

// Each object's tables, read once while the file is unchanged (path, size, mtime); the set
// of symbols it defines (a big library's is the costly part) only where a lookup needs it.
class TablesCache {
public:
    std::shared_ptr<const ObjectTables> get(const std::string& path, bool with_defined = false) {
        struct stat st {};
        Key key{path, 0, 0, 0, with_defined};
        if (::stat(path.c_str(), &st) == 0)
            key = {path, (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
                   (long long)st.st_mtim.tv_nsec, with_defined};
        {
            std::lock_guard lock(m_mutex);
            if (auto it = m_tables.find(key); it != m_tables.end())
                return it->second;
        }
        auto tables = std::make_shared<const ObjectTables>(read_tables(path, with_defined));
        std::lock_guard lock(m_mutex);
        return m_tables.emplace(std::move(key), std::move(tables)).first->second;
    }

private:
    struct Key {
        std::string path;
        unsigned long long size;
        long long sec, nsec;
        bool with_defined;
        auto operator<=>(const Key&) const = default;
    };
    std::mutex m_mutex;
    std::map<Key, std::shared_ptr<const ObjectTables>> m_tables;
};

TablesCache& tables_cache() {
    static auto* cache = new TablesCache; // never destroyed: used by threads until exit
    return *cache;
}

// 56240 -> "56,240".
std::string grouped(std::size_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

// The numbers of a version name ("GLIBCXX_3.4.30" -> {3, 4, 30}) and its family prefix
// ("GLIBCXX_").
std::pair<std::string, std::vector<int>> version_parts(const std::string& name) {
    const auto first_digit = name.find_first_of("0123456789");
    std::pair<std::string, std::vector<int>> out{name.substr(0, first_digit), {}};
    if (first_digit == std::string::npos)
        return out;
    for (const auto& part : text::split(name.substr(first_digit), "."))
        out.second.push_back(std::atoi(part.c_str()));
    return out;
}

// "GLIBCXX_3.4 … GLIBCXX_3.4.30": the oldest and newest versions of `needed`'s family that
// `defs` holds; every version when none is of that family.
std::string provided_range(const std::vector<std::string>& defs, const std::string& needed) {
    const auto family = version_parts(needed).first;
    std::vector<std::string> same;
    for (const auto& d : defs)
        if (version_parts(d).first == family)
            same.push_back(d);
    if (same.empty())
        return defs.empty() ? "no versions" : text::join(defs, ", ");
    std::sort(same.begin(), same.end(), [](const std::string& a, const std::string& b) {
        return version_parts(a).second < version_parts(b).second;
    });
    return same.size() == 1 ? same.front() : same.front() + " … " + same.back();
}

// The objects this process has loaded (the executable, the core, their libraries): a
// plugin's symbols may bind to them too.
std::vector<std::string> process_objects() {
    std::vector<std::string> out;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            auto* list = static_cast<std::vector<std::string>*>(data);
            if (info->dlpi_name && info->dlpi_name[0] == '/') {
                list->emplace_back(info->dlpi_name);
            } else if (info->dlpi_name && !info->dlpi_name[0] && list->empty()) {
                // The executable itself (its name is empty): a sanitizer's runtime lives
                // there, and the symbols an instrumented plugin imports from it.
                char exe[4096];
                const auto n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
                if (n > 0)
                    list->emplace_back(exe, std::size_t(n));
            }
            return 0;
        },
        &out);
    return out;
}

} // namespace loadsim_detail

std::string isa_level_name(int level) {
    if (level <= 0)
        return {};
    if (level == 1)
        return "x86-64";
    return "x86-64-v" + std::to_string(level);
}

std::string demangled(const std::string& name) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : name;
}

LoadSimulation simulate_load(const ElfDependencyReport& report) {
    LoadSimulation sim;
    auto& cache = loadsim_detail::tables_cache();
    const auto root = cache.get(report.library);
    // The file itself: another architecture, not ELF, not a shared library, cut off.
    if (auto refused = check_loadable_file(report.library)) {
        sim.problems.push_back(std::move(*refused));
        return sim;
    }
    if (!root->readable)
        return sim; // unreadable: the dependency walk says why
    sim.isa_level_needed = root->isa_level;

    // The closure in the loader's breadth-first order: the library, then its dependencies.
    std::vector<std::pair<std::string, std::shared_ptr<const loadsim_detail::ObjectTables>>>
        closure{{report.library, root}};
    std::map<std::string, std::string> path_of; // soname -> the file it resolved to
    for (const auto& d : report.dependencies)
        if (d.found()) {
            path_of.emplace(d.soname, d.path);
            if (std::none_of(closure.begin(), closure.end(),
                             [&](const auto& o) { return o.first == d.path; }))
                closure.emplace_back(d.path, cache.get(d.path));
        }

    // Symbol versions: each object's needs against the definitions of the file it names.
    for (const auto& [path, tables] : closure) {
        for (const auto& need : tables->version_needs) {
            const auto provider = path_of.find(need.file);
            if (need.weak || provider == path_of.end())
                continue; // a missing file is library_dependency_missing
            const auto defs = cache.get(provider->second);
            if (!defs->readable || std::find(defs->version_defs.begin(), defs->version_defs.end(),
                                             need.version) != defs->version_defs.end())
                continue;
            LoadProblem p;
            p.cause = BackendCause::SymbolVersionMissing;
            p.object = path;
            p.missing = need.version + " from " + need.file;
            p.provider = provider->second;
            p.provided = loadsim_detail::provided_range(defs->version_defs, need.version);
            p.message =
                path + " needs " + p.missing + "; " + p.provider + " provides " + p.provided;
            sim.problems.push_back(std::move(p));
        }
    }
    if (!sim.problems.empty())
        return sim;

    // Initial-exec TLS: each object not loaded yet that has it takes its block from what is
    // left of the static TLS block, in the loader's relocation order (dependencies first, the
    // library last); the first that does not fit stops the load.
    {
        std::set<std::pair<dev_t, ino_t>> loaded;
        for (const auto& path : loadsim_detail::process_objects()) {
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0)
                loaded.emplace(st.st_dev, st.st_ino);
        }
        auto block = diagnosis::process_static_tls();
        for (auto it = closure.rbegin(); it != closure.rend(); ++it) {
            const auto& [path, tables] = *it;
            if (!tables->static_tls || tables->tls_memsz == 0)
                continue;
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && loaded.count({st.st_dev, st.st_ino}))
                continue;
            const std::size_t left = block.left();
            if (block.allocate(tables->tls_memsz, tables->tls_align, tables->tls_vaddr))
                continue;
            LoadProblem p;
            p.cause = BackendCause::StaticTlsExhausted;
            p.object = path;
            p.missing = loadsim_detail::grouped(tables->tls_memsz) + " bytes of static TLS for " +
                        path + " (" + loadsim_detail::grouped(left) + " left)";
            const std::size_t tunable =
                ((tables->tls_memsz + tables->tls_align + 512 + 1023) / 1024) * 1024;
            p.message = path + " uses initial-exec TLS (DF_STATIC_TLS): it needs " +
                        loadsim_detail::grouped(tables->tls_memsz) +
                        " bytes of the static TLS block, and " +
                        (block.measured ? "this process has " : "glibc's default surplus is ") +
                        loadsim_detail::grouped(left) +
                        " bytes left; load it at start-up (LD_PRELOAD=" + path +
                        ") or raise the surplus (GLIBC_TUNABLES=glibc.rtld.optional_static_tls=" +
                        std::to_string(tunable) + ")";
            sim.problems.push_back(std::move(p));
            return sim;
        }
    }

    // Undefined symbols of the library: bound from its closure (in the loader's order) or
    // what the process has loaded (the core, the executable's libraries). Each object's
    // definitions are read only when a symbol is not found in the objects before it.
    std::vector<std::string> scope_paths;
    for (const auto& [path, tables] : closure)
        if (path != report.library)
            scope_paths.push_back(path);
    std::vector<std::shared_ptr<const loadsim_detail::ObjectTables>> scope;
    bool process_read = false;
    auto defined = [&](const std::string& key) {
        for (std::size_t k = 0;; ++k) {
            if (k == scope.size()) {
                if (scope.size() == scope_paths.size())
                    return false;
                scope.push_back(cache.get(scope_paths[k], true));
            }
            if (scope[k]->defined.count(key))
                return true;
        }
    };
    for (const auto& u : root->undefined) {
        const std::string key = u.version.empty() ? u.name : u.name + "@" + u.version;
        if (defined(key))
            continue;
        if (!process_read) {
            process_read = true;
            for (const auto& path : loadsim_detail::process_objects())
                if (std::find(scope_paths.begin(), scope_paths.end(), path) == scope_paths.end())
                    scope_paths.push_back(path);
            if (defined(key))
                continue;
        }
        LoadProblem p;
        p.cause = BackendCause::UndefinedSymbol;
        p.object = report.library;
        const std::string readable = demangled(u.name);
        p.missing = readable == u.name ? u.name : readable + " (" + u.name + ")";
        if (!u.version.empty())
            p.missing += ", version " + u.version;
        p.message = report.library + " imports " + p.missing +
                    ", which no library it loads defines (nor this process)";
        sim.problems.push_back(std::move(p));
    }
    return sim;
}

std::optional<BackendCause> classify_dlopen_error(std::string_view message,
                                                  const std::string& library) {
    if (!library.empty() && message.starts_with(library + ": cannot open shared object file")) {
        const auto tables = loadsim_detail::tables_cache().get(library);
        if (tables->readable && (tables->elf_class != loadsim_detail::kProcessClass ||
                                 tables->machine != loadsim_detail::kProcessMachine))
            return BackendCause::WrongArchitecture;
    }
    auto has = [&](std::string_view text) { return message.find(text) != std::string_view::npos; };
    if (has("version `") && has("' not found"))
        return BackendCause::SymbolVersionMissing;
    if (has("undefined symbol: "))
        return BackendCause::UndefinedSymbol;
    if (has("cannot allocate memory in static TLS block"))
        return BackendCause::StaticTlsExhausted;
    if (has("CPU ISA level is lower than required"))
        return BackendCause::IsaUnsupported;
    // elf/dl-load.c's refusals of the file itself: "OBJECT: MESSAGE[: ERRNO TEXT]".
    if (const auto at = message.find(": file too short"); at != std::string_view::npos) {
        // Cut inside its ELF header, or no ELF file at all.
        unsigned char magic[SELFMAG] = {};
        const std::string object(message.substr(0, at));
        const int fd = ::open(object.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        const bool elf = fd >= 0 && ::pread(fd, magic, SELFMAG, 0) == SELFMAG &&
                         std::memcmp(magic, ELFMAG, SELFMAG) == 0;
        if (fd >= 0)
            ::close(fd);
        return elf ? BackendCause::LibraryTruncated : BackendCause::LibraryNotElf;
    }
    if (message.ends_with(": cannot read file data"))
        return BackendCause::LibraryTruncated; // a short read, not an I/O error (no errno text)
    if (has(": invalid ELF header"))
        return BackendCause::LibraryNotElf;
    for (std::string_view arch :
         {"wrong ELF class", "ELF file data encoding not", "ELF file OS ABI invalid",
          "ELF file ABI version invalid", "ELF file's machine", "wrong ELF machine"})
        if (has(arch))
            return BackendCause::WrongArchitecture;
    for (std::string_view refused :
         {"ELF file version ident does not match current one", "nonzero padding in e_ident",
          "ELF file version does not match current one", "only ET_DYN and ET_EXEC can be loaded",
          "ELF file's phentsize not the expected size",
          "ELF load command address/offset not page-aligned",
          "ELF load command address/offset not properly aligned",
          "object file has no loadable segments", "cannot dynamically load executable",
          "cannot dynamically load position-independent executable",
          "object file has no dynamic section", "shared object cannot be dlopen()ed"})
        if (has(refused))
            return BackendCause::LibraryNotLoadable;
    return std::nullopt;
}

namespace loadsim_detail {

// The cause table's id (registry/backendcause.h, above this module) of the causes the
// simulation gives.
std::string_view cause_id(BackendCause cause) {
    switch (cause) {
    case BackendCause::WrongArchitecture:
        return "wrong_architecture";
    case BackendCause::SymbolVersionMissing:
        return "symbol_version_missing";
    case BackendCause::UndefinedSymbol:
        return "undefined_symbol";
    case BackendCause::IsaUnsupported:
        return "isa_unsupported";
    case BackendCause::LibraryNotElf:
        return "library_not_elf";
    case BackendCause::LibraryTruncated:
        return "library_truncated";
    case BackendCause::LibraryNotLoadable:
        return "library_not_loadable";
    case BackendCause::StaticTlsExhausted:
        return "static_tls_exhausted";
    default:
        return "library_load_failed";
    }
}

} // namespace loadsim_detail

void to_json(nlohmann::json& j, const LoadProblem& p) {
    j = {{"cause", loadsim_detail::cause_id(p.cause)},
         {"object", p.object},
         {"missing", p.missing},
         {"provider", p.provider},
         {"provided", p.provided},
         {"message", p.message}};
}

} // namespace switchyard
