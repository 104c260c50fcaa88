// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/elfdeps.h>

#include "util/safefile.h"

#include "diagnosis/ldcache.h"
#include "util/textutil.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace {

bool init_libelf() {
    static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
    return ok;
}

// A search path's directories; with `empty_is_cwd`, an empty item means "." (ld.so's
// reading of LD_LIBRARY_PATH).
std::vector<std::string> split_path_list(std::string_view text, std::string_view separators,
                                         bool empty_is_cwd) {
    auto out = text::split(text, separators, empty_is_cwd);
    for (auto& dir : out)
        if (dir.empty())
            dir = ".";
    return out;
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : m_fd(fd) {}
    ~FileDescriptor() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const noexcept { return m_fd; }

private:
    int m_fd;
};

struct ElfHandle {
    Elf* elf = nullptr;
    ~ElfHandle() {
        if (elf)
            elf_end(elf);
    }
};

// Reads the dynamic entries through the section headers (the common case).
bool read_dynamic_from_sections(Elf* elf, ElfDynamicInfo& info, std::vector<GElf_Dyn>& dyns,
                                std::size_t& strtab_section) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data)
            return false;
        const std::size_t entsize =
            shdr.sh_entsize ? shdr.sh_entsize : gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
        const std::size_t count = entsize ? shdr.sh_size / entsize : 0;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, int(i), &dyn) || dyn.d_tag == DT_NULL)
                break;
            dyns.push_back(dyn);
        }
        strtab_section = shdr.sh_link;
        (void)info;
        return true;
    }
    return false;
}

// Files whose section headers were stripped (sstrip): PT_DYNAMIC and DT_STRTAB, mapped
// from virtual addresses to file offsets through the PT_LOAD segments.
bool read_dynamic_from_segments(Elf* elf, std::vector<GElf_Dyn>& dyns, std::string& strtab) {
    std::size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return false;
    std::vector<GElf_Phdr> loads;
    std::optional<GElf_Phdr> dynamic;
    for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, int(i), &ph))
            continue;
        if (ph.p_type == PT_LOAD)
            loads.push_back(ph);
        else if (ph.p_type == PT_DYNAMIC)
            dynamic = ph;
    }
    if (!dynamic)
        return false;
    Elf_Data* data = elf_getdata_rawchunk(elf, dynamic->p_offset, dynamic->p_filesz, ELF_T_DYN);
    if (!data)
        return false;
    GElf_Addr strtab_addr = 0;
    GElf_Xword strsz = 0;
    const std::size_t count = dynamic->p_filesz / gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
    for (std::size_t i = 0; i < count; ++i) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, int(i), &dyn) || dyn.d_tag == DT_NULL)
            break;
        if (dyn.d_tag == DT_STRTAB)
            strtab_addr = dyn.d_un.d_ptr;
        else if (dyn.d_tag == DT_STRSZ)
            strsz = dyn.d_un.d_val;
        dyns.push_back(dyn);
    }
    for (const auto& ph : loads) {
        if (strtab_addr >= ph.p_vaddr && strtab_addr + strsz <= ph.p_vaddr + ph.p_filesz) {
            Elf_Data* s = elf_getdata_rawchunk(elf, ph.p_offset + (strtab_addr - ph.p_vaddr), strsz,
                                               ELF_T_BYTE);
            if (!s || !s->d_buf)
                return false;
            strtab.assign(static_cast<const char*>(s->d_buf), s->d_size);
            return true;
        }
    }
    return false;
}

std::string elf_error() {
    const char* message = elf_errmsg(-1);
    return message ? message : "libelf error";
}

using text::dirname_of;

std::string absolute(const std::string& path) {
    if (!path.empty() && path[0] == '/')
        return path;
    char buf[4096];
    if (::getcwd(buf, sizeof buf))
        return std::string(buf) + "/" + path;
    return path;
}

// The ELF class and machine of the running process (what dlopen accepts).
std::pair<int, int> process_class_machine() {
    static const std::pair<int, int> value = [] {
        if (auto info = read_elf_dynamic("/proc/self/exe"))
            return std::make_pair(info->elf_class, info->machine);
#if defined(__x86_64__)
        return std::make_pair(int(ELFCLASS64), int(EM_X86_64));
#elif defined(__aarch64__)
        return std::make_pair(int(ELFCLASS64), int(EM_AARCH64));
#else
        return std::make_pair(int(sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32), 0);
#endif
    }();
    return value;
}

std::string multiarch_triple(int elf_class, int machine) {
    switch (machine) {
    case EM_X86_64:
        return elf_class == ELFCLASS64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case EM_386:
        return "i386-linux-gnu";
    case EM_AARCH64:
        return "aarch64-linux-gnu";
    case EM_ARM:
        return "arm-linux-gnueabihf";
    case EM_PPC64:
        return "powerpc64le-linux-gnu";
    case EM_RISCV:
        return "riscv64-linux-gnu";
    case EM_S390:
        return "s390x-linux-gnu";
    default:
        return {};
    }
}

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// glibc's system search path (`ld.so --help`): Debian's multiarch folders, or lib64 on
// other 64-bit distributions, then lib and usr/lib.
std::vector<std::string> system_dirs(int elf_class, int machine) {
    std::vector<std::string> dirs;
    const auto triple = multiarch_triple(elf_class, machine);
    if (!triple.empty()) {
        for (const char* root : {"/lib/", "/usr/lib/"})
            if (is_dir(root + triple))
                dirs.push_back(root + triple);
    }
    if (dirs.empty() && elf_class == ELFCLASS64) // multiarch systems do not search lib64
        for (const char* d : {"/lib64", "/usr/lib64"})
            if (is_dir(d))
                dirs.emplace_back(d);
    for (const char* d : {"/lib", "/usr/lib"})
        dirs.emplace_back(d);
    return dirs;
}

std::string lib_token(int elf_class, int machine) {
    const auto triple = multiarch_triple(elf_class, machine);
    if (!triple.empty() && is_dir("/lib/" + triple))
        return "lib/" + triple;
    return elf_class == ELFCLASS64 && is_dir("/lib64") ? "lib64" : "lib";
}

std::string platform_token() {
    if (const auto value = getauxval(AT_PLATFORM))
        return reinterpret_cast<const char*>(value);
    return {};
}

// Replaces $ORIGIN/${ORIGIN}, $LIB/${LIB} and $PLATFORM/${PLATFORM}.
std::string expand_tokens(const std::string& entry, const std::string& origin,
                          const std::string& lib, const std::string& platform) {
    std::string out;
    for (std::size_t i = 0; i < entry.size();) {
        if (entry[i] != '$') {
            out += entry[i++];
            continue;
        }
        bool matched = false;
        for (auto [token, value] :
             {std::pair<std::string_view, const std::string*>{"ORIGIN", &origin},
              {"LIB", &lib},
              {"PLATFORM", &platform}}) {
            const std::string braced = "{" + std::string(token) + "}";
            if (entry.compare(i + 1, braced.size(), braced) == 0) {
                out += *value;
                i += 1 + braced.size();
                matched = true;
                break;
            }
            if (entry.compare(i + 1, token.size(), token) == 0) {
                const auto next = i + 1 + token.size();
                if (next == entry.size() ||
                    !(std::isalnum(static_cast<unsigned char>(entry[next])) ||
                      entry[next] == '_')) {
                    out += *value;
                    i = next;
                    matched = true;
                    break;
                }
            }
        }
        if (!matched)
            out += entry[i++];
    }
    return out;
}

} // namespace

std::optional<ElfDynamicInfo> read_elf_dynamic(const std::string& path, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<ElfDynamicInfo> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (!init_libelf())
        return fail("libelf is out of date");
    // Without blocking: a FIFO reached through a DT_NEEDED path (or named as a plugin's
    // library) is refused, never waited on.
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0)
        return fail(std::string(std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return fail(std::string(std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        return fail(safefile::kind_of(st.st_mode) + ", not a regular file");
    ElfHandle handle{elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr)};
    if (!handle.elf)
        return fail(elf_error());
    if (elf_kind(handle.elf) != ELF_K_ELF)
        return fail("not an ELF file");
    GElf_Ehdr ehdr;
    if (!gelf_getehdr(handle.elf, &ehdr))
        return fail(elf_error());

    ElfDynamicInfo info;
    info.path = path;
    info.elf_class = gelf_getclass(handle.elf);
    info.machine = ehdr.e_machine;

    std::vector<GElf_Dyn> dyns;
    std::size_t strtab_section = 0;
    std::string strtab;
    const bool from_sections = read_dynamic_from_sections(handle.elf, info, dyns, strtab_section);
    if (!from_sections && !read_dynamic_from_segments(handle.elf, dyns, strtab))
        return info; // static, or no dynamic section: nothing needed
    auto string_at = [&](GElf_Xword offset) -> std::string {
        if (from_sections) {
            const char* s = elf_strptr(handle.elf, strtab_section, offset);
            return s ? s : "";
        }
        if (offset >= strtab.size())
            return {};
        return std::string(strtab.c_str() + offset);
    };
    for (const auto& dyn : dyns) {
        switch (dyn.d_tag) {
        case DT_NEEDED:
            info.needed.push_back(string_at(dyn.d_un.d_val));
            break;
        case DT_SONAME:
            info.soname = string_at(dyn.d_un.d_val);
            break;
        case DT_RPATH:
            info.rpath = split_path_list(string_at(dyn.d_un.d_val), ":", false);
            break;
        case DT_RUNPATH:
            info.runpath = split_path_list(string_at(dyn.d_un.d_val), ":", false);
            break;
        case DT_FLAGS_1:
            if (dyn.d_un.d_val & DF_1_NODEFLIB)
                info.nodeflib = true;
            break;
        default:
            break;
        }
    }
    return info;
}

std::string_view to_string(LibrarySearchSource source) noexcept {
    switch (source) {
    case LibrarySearchSource::Direct:
        return "path";
    case LibrarySearchSource::Rpath:
        return "RPATH";
    case LibrarySearchSource::LdLibraryPath:
        return "LD_LIBRARY_PATH";
    case LibrarySearchSource::Runpath:
        return "RUNPATH";
    case LibrarySearchSource::LdCache:
        return "ld.so.cache";
    case LibrarySearchSource::DefaultDir:
        return "default folder";
    case LibrarySearchSource::NotFound:
        return "not found";
    }
    return "not found";
}

std::vector<std::string> ElfDependencyReport::unresolved_with_requester() const {
    std::vector<std::string> out;
    for (const auto& d : dependencies)
        if (!d.found())
            out.push_back(d.soname +
                          (d.needed_by == library ? "" : " (needed by " + d.needed_by + ")"));
    return out;
}

std::string missing_libraries_message(const std::string& library,
                                      const std::vector<std::string>& missing) {
    return "its library " + library +
           " cannot be loaded because a library it needs is missing: " + text::join(missing, ", ");
}

void to_json(nlohmann::json& j, const ResolvedLibrary& d) {
    j = {{"soname", d.soname},       {"path", d.path},
         {"found", d.found()},       {"source", std::string(to_string(d.source))},
         {"needed_by", d.needed_by}, {"depth", d.depth},
         {"detail", d.detail}};
}

void to_json(nlohmann::json& j, const ElfDependencyReport& r) {
    j = {{"library", r.library},
         {"readable", r.readable},
         {"error", r.error},
         {"unresolved", r.unresolved()},
         {"dependencies_read", r.dependencies_read},
         {"dependencies", r.dependencies},
         {"load_problems", r.load_problems},
         {"isa_level_needed", isa_level_name(r.isa_level_needed)}};
}

std::vector<std::string> ElfDependencyReport::unresolved() const {
    std::vector<std::string> out;
    for (const auto& d : dependencies)
        if (!d.found())
            out.push_back(d.soname);
    return out;
}

std::string ElfDependencyReport::to_text() const {
    std::ostringstream os;
    if (!dependencies_read) {
        os << kNotReadByLoader << "\n";
        for (const auto& p : load_problems)
            os << "FAILS: " << p.message << "\n";
        return os.str();
    }
    if (!readable) {
        os << library << ": cannot read: " << error << "\n";
        return os.str();
    }
    for (const auto& d : dependencies) {
        os << std::string(std::size_t(d.depth - 1) * 2, ' ') << d.soname << " => ";
        if (d.found())
            os << d.path << " (" << to_string(d.source) << ")";
        else
            os << "not found" << (d.detail.empty() ? "" : " (" + d.detail + ")");
        os << "\n";
    }
    // Where the loader would stop although every file is found.
    for (const auto& p : load_problems)
        os << "FAILS: " << p.message << "\n";
    return os.str();
}

namespace {

// The loader's open_verify(): the file exists and is ELF of the requester's class and machine.
std::optional<ElfDynamicInfo> accept(const std::string& path, int elf_class, int machine) {
    if (::access(path.c_str(), F_OK) != 0)
        return std::nullopt;
    auto info = read_elf_dynamic(path);
    if (!info || info->elf_class != elf_class || (machine && info->machine != machine))
        return std::nullopt;
    return info;
}

struct SearchResult {
    std::string path;
    LibrarySearchSource source = LibrarySearchSource::NotFound;
    std::optional<ElfDynamicInfo> info;
    std::vector<std::string> searched;
};

// One object met during a walk and the one that needed it (for the RPATH chain).
struct WalkNode {
    ElfDynamicInfo info;
    int parent = -1;
};

} // namespace

struct ElfDependencyResolver::Impl {
    std::shared_ptr<const LdCache> cache;
    std::string platform = platform_token();
    mutable std::mutex mutex;
    mutable std::map<int, std::vector<std::string>> default_dirs; // per class*1000+machine
    mutable std::map<int, std::string> lib_tokens;

    const std::vector<std::string>& defaults(const Options& options, int elf_class,
                                             int machine) const {
        std::lock_guard lock(mutex);
        const int key = elf_class * 100000 + machine;
        auto it = default_dirs.find(key);
        if (it == default_dirs.end())
            it = default_dirs
                     .emplace(key, options.default_dirs.empty() ? system_dirs(elf_class, machine)
                                                                : options.default_dirs)
                     .first;
        return it->second;
    }
    const std::string& lib(int elf_class, int machine) const {
        std::lock_guard lock(mutex);
        const int key = elf_class * 100000 + machine;
        auto it = lib_tokens.find(key);
        if (it == lib_tokens.end())
            it = lib_tokens.emplace(key, lib_token(elf_class, machine)).first;
        return it->second;
    }

    SearchResult search(const Options& options, const std::string& soname,
                        const std::vector<WalkNode>& nodes, int requester, int elf_class,
                        int machine) const;
};

SearchResult ElfDependencyResolver::Impl::search(const Options& options, const std::string& soname,
                                                 const std::vector<WalkNode>& nodes, int requester,
                                                 int elf_class, int machine) const {
    const Impl& impl = *this;
    SearchResult result;
    if (soname.find('/') != std::string::npos) {
        std::string path = soname;
        if (path[0] != '/' && requester >= 0)
            path = absolute(path); // relative to the working directory, as dlopen does
        if (auto info = accept(path, elf_class, machine)) {
            result = {path, LibrarySearchSource::Direct, std::move(info), {}};
        } else {
            result.searched.push_back(path);
        }
        return result;
    }
    const std::string& lib = impl.lib(elf_class, machine);
    auto try_dirs = [&](const std::vector<std::string>& dirs, const std::string& origin,
                        LibrarySearchSource source) {
        for (const auto& raw : dirs) {
            const auto dir = expand_tokens(raw, origin, lib, impl.platform);
            const auto path = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + soname;
            result.searched.push_back(dir);
            if (auto info = accept(path, elf_class, machine)) {
                result.path = path;
                result.source = source;
                result.info = std::move(info);
                return true;
            }
        }
        return false;
    };
    const ElfDynamicInfo* req = requester >= 0 ? &nodes[std::size_t(requester)].info : nullptr;
    // DT_RPATH of the requester and up the chain of objects that loaded it, unless the
    // requester has DT_RUNPATH.
    if (req && req->runpath.empty()) {
        for (int at = requester; at >= 0; at = nodes[std::size_t(at)].parent) {
            const auto& node = nodes[std::size_t(at)].info;
            if (node.runpath.empty() && !node.rpath.empty() &&
                try_dirs(node.rpath, dirname_of(absolute(node.path)), LibrarySearchSource::Rpath))
                return result;
        }
    }
    if (try_dirs(options.ld_library_path, ".", LibrarySearchSource::LdLibraryPath))
        return result;
    if (req && !req->runpath.empty() &&
        try_dirs(req->runpath, dirname_of(absolute(req->path)), LibrarySearchSource::Runpath))
        return result;
    if (req && req->nodeflib)
        return result;
    if (impl.cache) {
        // Plain entries first; hwcap-specific ones (glibc-hwcaps subfolders) only as a fallback.
        const auto entries = impl.cache->find(soname);
        for (int pass = 0; pass < 2; ++pass) {
            for (const auto* e : entries) {
                if ((e->hwcap == 0) != (pass == 0))
                    continue;
                if (auto info = accept(e->path, elf_class, machine)) {
                    result.path = e->path;
                    result.source = LibrarySearchSource::LdCache;
                    result.info = std::move(info);
                    return result;
                }
            }
        }
        result.searched.push_back("ld.so.cache");
    }
    try_dirs(impl.defaults(options, elf_class, machine), ".", LibrarySearchSource::DefaultDir);
    return result;
}

ElfDependencyResolver::ElfDependencyResolver() : ElfDependencyResolver(Options{}) {
    if (const char* env = std::getenv("LD_LIBRARY_PATH"))
        m_options.ld_library_path = split_path_list(env, ":;", true);
}

ElfDependencyResolver::ElfDependencyResolver(Options options)
    : m_options(std::move(options)), m_impl(std::make_unique<Impl>()) {
    if (m_options.use_ld_cache)
        m_impl->cache =
            m_options.ld_cache_path.empty()
                ? LdCache::system()
                : std::make_shared<const LdCache>(LdCache::read(m_options.ld_cache_path));
}

ElfDependencyResolver::~ElfDependencyResolver() = default;

namespace {
std::string describe_searched(const std::vector<std::string>& searched) {
    std::string text = "searched ";
    std::set<std::string> seen;
    bool first = true;
    for (const auto& s : searched) {
        if (!seen.insert(s).second)
            continue;
        text += (first ? "" : ", ") + s;
        first = false;
    }
    return first ? "nothing to search" : text;
}
} // namespace

ResolvedLibrary ElfDependencyResolver::resolve_for_process(const std::string& soname) const {
    const auto [elf_class, machine] = process_class_machine();
    const std::vector<WalkNode> none;
    auto found = m_impl->search(m_options, soname, none, -1, elf_class, machine);
    ResolvedLibrary out;
    out.soname = soname;
    out.path = found.path;
    out.source = found.source;
    out.depth = 0;
    if (!out.found())
        out.detail = describe_searched(found.searched);
    return out;
}

ElfDependencyReport ElfDependencyResolver::diagnose(const std::string& library_path) const {
    ElfDependencyReport report;
    report.library = library_path;
    // A file the loader refuses itself: its dependencies are never read (nor resolved here).
    if (auto refused = check_loadable_file(absolute(library_path))) {
        report.dependencies_read = false;
        report.readable = refused->cause != BackendCause::LibraryNotElf;
        if (!report.readable)
            report.error = "not an ELF file: " + refused->missing;
        refused->object = library_path;
        report.load_problems.push_back(std::move(*refused));
        return report;
    }
    std::string error;
    auto root = read_elf_dynamic(absolute(library_path), &error);
    if (!root) {
        report.error = error;
        report.load_problems = simulate_load(report).problems;
        return report;
    }
    report.readable = true;
    const int elf_class = root->elf_class;
    const int machine = root->machine;

    std::vector<WalkNode> nodes;
    std::set<std::string> known; // sonames and paths already mapped, as the loader matches them
    if (!root->soname.empty())
        known.insert(root->soname);
    nodes.push_back({std::move(*root), -1});
    std::deque<std::pair<int, int>> queue{{0, 1}}; // node index, depth of its dependencies
    while (!queue.empty()) {
        const auto [index, depth] = queue.front();
        queue.pop_front();
        const auto needed = nodes[std::size_t(index)].info.needed;
        for (const auto& soname : needed) {
            if (known.count(soname))
                continue;
            known.insert(soname);
            auto found = m_impl->search(m_options, soname, nodes, index, elf_class, machine);
            ResolvedLibrary lib;
            lib.soname = soname;
            lib.needed_by = nodes[std::size_t(index)].info.path;
            lib.depth = depth;
            lib.source = found.source;
            if (found.info) {
                lib.path = found.path;
                if (known.count(found.path)) {
                    report.dependencies.push_back(std::move(lib));
                    continue;
                }
                known.insert(found.path);
                if (!found.info->soname.empty())
                    known.insert(found.info->soname);
                nodes.push_back({std::move(*found.info), index});
                queue.emplace_back(int(nodes.size() - 1), depth + 1);
            } else {
                lib.detail = describe_searched(found.searched);
            }
            report.dependencies.push_back(std::move(lib));
        }
    }
    auto simulation = simulate_load(report);
    report.load_problems = std::move(simulation.problems);
    report.isa_level_needed = simulation.isa_level_needed;
    return report;
}

ElfDependencyReport diagnose_library(const std::string& path) {
    return ElfDependencyResolver().diagnose(path);
}

} // namespace switchyard
