// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/cudafatbin.h>

#include "util/safefile.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <tuple>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace fatbin {
namespace {

// The fatbin layout (CUDA's fatbinary.h, and as cuobjdump reads it). Container header,
// 16 bytes: u32 magic, u16 version, u16 header size, u64 size of the entries after it.
// Entry header (64 bytes and more; CUDA 12.8+ appends fields for sm_100 and newer):
// u16 kind, u16 version, u32 header size, u64 padded payload size, u32 compressed size,
// u32 (unused here), u16 minor, u16 major (the PTX ISA or cubin ABI), u32 SM, u32 name
// offset, u32 name length, u64 flags, then the uncompressed size. The payload follows the
// entry's header.
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::size_t kContainerHeaderSize = 16;
constexpr std::size_t kEntryFieldsSize = 48; // through `flags`: all this reader needs
constexpr std::uint16_t kKindPtx = 1;
constexpr std::uint16_t kKindCubin = 2;
// Flags. Compressed: 0x8000 since CUDA 12, 0x2000 in the first compressing releases.
constexpr std::uint64_t kFlagCompressed = 0x8000 | 0x2000;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;   // sm_90a, compute_90a
constexpr std::uint64_t kFlagFamilySpecific = 0x200000; // sm_100f, compute_100f

std::uint64_t read_le(const unsigned char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

std::string hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

bool fatbin_init_libelf() {
    static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
    return ok;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

struct ElfEnd {
    Elf* elf = nullptr;
    ~ElfEnd() {
        if (elf)
            elf_end(elf);
    }
};

// "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0)
            out += i + 1 == items.size() ? " and " : ", ";
        out += items[i];
    }
    return out;
}

} // namespace
} // namespace fatbin

std::string GpuCodeImage::name() const {
    std::string out = (kind == GpuCodeKind::Cubin ? "sm_" : "compute_") + std::to_string(arch);
    if (variant == GpuArchVariant::ArchSpecific)
        out += 'a';
    else if (variant == GpuArchVariant::FamilySpecific)
        out += 'f';
    return out;
}

bool GpuCodeImage::runs_on(int cc) const noexcept {
    const int major = arch / 10, device_major = cc / 10;
    switch (variant) {
    case GpuArchVariant::ArchSpecific:
        return cc == arch;
    case GpuArchVariant::FamilySpecific:
        return device_major == major && cc >= arch;
    case GpuArchVariant::Portable:
        break;
    }
    if (kind == GpuCodeKind::Ptx)
        return cc >= arch; // the driver JIT-compiles it for any newer device
    return device_major == major && cc >= arch;
}

std::vector<GpuCodeImage> CudaGpuCode::distinct() const {
    auto key = [](const GpuCodeImage& i) {
        return std::tuple(i.kind == GpuCodeKind::Cubin ? 0 : 1, i.arch, int(i.variant));
    };
    std::vector<GpuCodeImage> out;
    for (const auto& image : images) {
        if (std::none_of(out.begin(), out.end(),
                         [&](const GpuCodeImage& o) { return key(o) == key(image); }))
            out.push_back(image);
    }
    std::sort(out.begin(), out.end(),
              [&](const GpuCodeImage& a, const GpuCodeImage& b) { return key(a) < key(b); });
    return out;
}

std::string CudaGpuCode::summary() const {
    std::vector<std::string> cubins, ptx;
    for (const auto& image : distinct())
        (image.kind == GpuCodeKind::Cubin ? cubins : ptx).push_back(image.name());
    if (cubins.empty() && ptx.empty())
        return "no GPU code";
    const std::string cubin_text =
        cubins.empty() ? "no cubin"
                       : fatbin::join_and(cubins) + (cubins.size() == 1 ? " cubin" : " cubins");
    const std::string ptx_text = ptx.empty() ? "no PTX" : fatbin::join_and(ptx) + " PTX";
    return cubins.empty() ? ptx_text + " and " + cubin_text : cubin_text + " and " + ptx_text;
}

std::vector<GpuCodeImage> parse_cuda_fatbin(std::span<const unsigned char> section,
                                            std::string* error, int* containers) {
    std::vector<GpuCodeImage> images;
    int count = 0;
    auto fail = [&](std::size_t offset, const std::string& why) {
        if (error)
            *error = ".nv_fatbin offset " + fatbin::hex(offset) + ": " + why;
    };
    const unsigned char* base = section.data();
    const std::size_t size = section.size();
    std::size_t pos = 0;
    while (pos + fatbin::kContainerHeaderSize <= size) {
        const auto magic = static_cast<std::uint32_t>(fatbin::read_le(base + pos, 4));
        if (magic == 0) { // padding between containers
            pos += 8;
            continue;
        }
        if (magic != fatbin::kFatbinMagic) {
            fail(pos, "not a fatbin container (magic " + fatbin::hex(magic) + ", expected " +
                          fatbin::hex(fatbin::kFatbinMagic) + ")");
            break;
        }
        const auto header_size = static_cast<std::size_t>(fatbin::read_le(base + pos + 6, 2));
        const std::uint64_t entries_size = fatbin::read_le(base + pos + 8, 8);
        if (header_size < fatbin::kContainerHeaderSize || entries_size > size ||
            pos + header_size + entries_size > size) {
            fail(pos, "container header size " + std::to_string(header_size) + " and size " +
                          std::to_string(entries_size) + " run past the section's " +
                          std::to_string(size) + " bytes");
            break;
        }
        const std::size_t end = pos + header_size + static_cast<std::size_t>(entries_size);
        std::size_t entry = pos + header_size;
        bool damaged = false;
        while (entry < end) {
            if (end - entry < fatbin::kEntryFieldsSize) {
                fail(entry, "entry header truncated");
                damaged = true;
                break;
            }
            const unsigned char* e = base + entry;
            const auto kind = static_cast<std::uint16_t>(fatbin::read_le(e, 2));
            const auto entry_header = static_cast<std::size_t>(fatbin::read_le(e + 4, 4));
            const std::uint64_t payload = fatbin::read_le(e + 8, 8);
            const auto sm = static_cast<int>(fatbin::read_le(e + 28, 4));
            const auto isa_minor = static_cast<int>(fatbin::read_le(e + 24, 2));
            const auto isa_major = static_cast<int>(fatbin::read_le(e + 26, 2));
            const std::uint64_t flags = fatbin::read_le(e + 40, 8);
            if (entry_header < fatbin::kEntryFieldsSize || entry_header > end - entry ||
                payload > end - entry - entry_header) {
                fail(entry, "entry header size " + std::to_string(entry_header) +
                                " and payload size " + std::to_string(payload) +
                                " run past the container");
                damaged = true;
                break;
            }
            if (kind == fatbin::kKindPtx || kind == fatbin::kKindCubin) {
                GpuCodeImage image;
                image.kind = kind == fatbin::kKindPtx ? GpuCodeKind::Ptx : GpuCodeKind::Cubin;
                image.arch = sm;
                image.variant = (flags & fatbin::kFlagArchSpecific) ? GpuArchVariant::ArchSpecific
                                : (flags & fatbin::kFlagFamilySpecific)
                                    ? GpuArchVariant::FamilySpecific
                                    : GpuArchVariant::Portable;
                image.compressed = (flags & fatbin::kFlagCompressed) != 0;
                image.size = payload;
                image.container = count;
                if (kind == fatbin::kKindPtx && isa_major > 0 && isa_minor < 10)
                    image.ptx_isa = isa_major * 10 + isa_minor;
                images.push_back(image);
            } // other kinds (LTO IR, ...) run on no device as they are
            entry += entry_header + static_cast<std::size_t>(payload);
        }
        ++count;
        if (damaged)
            break;
        pos = (end + 7) & ~std::size_t(7);
    }
    if (containers)
        *containers = count;
    return images;
}

CudaGpuCode read_cuda_gpu_code(const std::string& path) {
    CudaGpuCode out;
    out.library = path;
    if (!fatbin::fatbin_init_libelf()) {
        out.error = "libelf is out of date";
        return out;
    }
    // Without blocking: a FIFO named as a library is refused, never waited on.
    fatbin::Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
    if (fd.fd < 0) {
        out.error = std::strerror(errno);
        return out;
    }
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) {
        out.error = std::strerror(errno);
        return out;
    }
    if (!S_ISREG(st.st_mode)) {
        out.error = safefile::kind_of(st.st_mode) + ", not a regular file";
        return out;
    }
    fatbin::ElfEnd handle{elf_begin(fd.fd, ELF_C_READ_MMAP, nullptr)};
    if (!handle.elf || elf_kind(handle.elf) != ELF_K_ELF) {
        out.error = "not an ELF file";
        return out;
    }
    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(handle.elf, &shstrndx) != 0) {
        out.error = elf_errmsg(-1);
        return out;
    }
    out.readable = true;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(handle.elf, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            continue;
        const char* name = elf_strptr(handle.elf, shstrndx, shdr.sh_name);
        if (!name || std::strcmp(name, ".nv_fatbin") != 0)
            continue;
        out.has_fatbin = true;
        if (shdr.sh_type == SHT_NOBITS)
            break;
        Elf_Data* data = elf_rawdata(scn, nullptr);
        if (!data || !data->d_buf) {
            out.error = std::string(".nv_fatbin: ") + elf_errmsg(-1);
            break;
        }
        out.images =
            parse_cuda_fatbin({static_cast<const unsigned char*>(data->d_buf), data->d_size},
                              &out.error, &out.containers);
        break;
    }
    return out;
}

std::optional<GpuCodeImage> image_for_device(const CudaGpuCode& code, int cc, int container) {
    std::optional<GpuCodeImage> best;
    auto rank = [](const GpuCodeImage& i) {
        return std::pair(i.kind == GpuCodeKind::Cubin ? 1 : 0, i.arch);
    };
    for (const auto& image : code.images) {
        if (container >= 0 && image.container != container)
            continue;
        if (image.runs_on(cc) && (!best || rank(image) > rank(*best)))
            best = image;
    }
    return best;
}

std::vector<GpuCodeMismatch> gpu_code_missing(const CudaGpuCode& code,
                                              std::span<const CudaDeviceArch> devices) {
    std::vector<GpuCodeMismatch> out;
    if (code.images.empty())
        return out;
    std::vector<int> containers; // those that carry some image
    for (const auto& image : code.images)
        if (std::find(containers.begin(), containers.end(), image.container) == containers.end())
            containers.push_back(image.container);
    for (const auto& device : devices) {
        std::size_t uncovered = 0;
        for (int c : containers)
            if (!image_for_device(code, device.compute_capability, c))
                ++uncovered;
        if (uncovered == 0)
            continue;
        GpuCodeMismatch m;
        m.device = device.device;
        m.compute_capability = device.compute_capability;
        m.partial = uncovered < containers.size();
        m.message = "carries " + code.summary() + "; " + device.device + " is sm_" +
                    std::to_string(device.compute_capability) + ": " +
                    (m.partial ? "the kernels of " + std::to_string(uncovered) + " of its " +
                                     std::to_string(containers.size()) +
                                     " fatbin containers cannot run there"
                               : std::string("no kernel can run there"));
        out.push_back(std::move(m));
    }
    return out;
}

int cuda_version_for_ptx_isa(int ptx_isa) noexcept {
    // PTX ISA -> the CUDA release that introduced it (the PTX ISA manual's release notes).
    struct Row {
        int isa, cuda;
    };
    static constexpr Row kRows[] = {
        {60, 9000},  {61, 9010},  {62, 9020},  {63, 10000}, {64, 10010}, {65, 10020}, {70, 11000},
        {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050}, {76, 11060}, {77, 11070},
        {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040}, {85, 12050},
        {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000},
    };
    for (const auto& row : kRows)
        if (row.isa == ptx_isa)
            return row.cuda;
    return 0;
}

std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

int parse_cuda_version(const std::string& text) noexcept {
    int major = 0, minor = 0;
    char tail = 0;
    const int n = std::sscanf(text.c_str(), "%d.%d%c", &major, &minor, &tail);
    if (n != 2 || major <= 0 || major > 99 || minor < 0 || minor > 99)
        return 0;
    return major * 1000 + minor * 10;
}

std::vector<DriverTooOld> driver_too_old(const CudaGpuCode& code,
                                         const std::vector<std::string>& needed_sonames,
                                         std::span<const CudaDeviceArch> devices) {
    // The runtime's major from its soname: libcudart.so.12 -> 12.0.
    int runtime = 0;
    std::string runtime_soname;
    for (const auto& soname : needed_sonames) {
        constexpr std::string_view kPrefix = "libcudart.so.";
        if (soname.rfind(kPrefix, 0) != 0)
            continue;
        const int major = std::atoi(soname.c_str() + kPrefix.size());
        if (major > 0 && major * 1000 > runtime) {
            runtime = major * 1000;
            runtime_soname = soname;
        }
    }
    std::vector<DriverTooOld> out;
    for (const auto& device : devices) {
        if (device.driver_version <= 0)
            continue;
        int needed = runtime;
        std::string because = runtime > 0 ? "its CUDA runtime is " + runtime_soname : std::string();
        if (device.compute_capability > 0)
            if (const auto image = image_for_device(code, device.compute_capability);
                image && image->kind == GpuCodeKind::Ptx) {
                const int ptx = cuda_version_for_ptx_isa(image->ptx_isa);
                if (ptx > needed) {
                    needed = ptx;
                    because = "its " + image->name() + " PTX is PTX ISA " +
                              std::to_string(image->ptx_isa / 10) + "." +
                              std::to_string(image->ptx_isa % 10) +
                              ", which the driver must compile there";
                }
            }
        if (needed <= device.driver_version)
            continue;
        DriverTooOld d;
        d.device = device.device;
        d.needed = needed;
        d.driver = device.driver_version;
        d.message = "CUDA " + cuda_version_text(needed) + " on " + device.device + " (" + because +
                    "); the driver supports CUDA " + cuda_version_text(device.driver_version);
        out.push_back(std::move(d));
    }
    return out;
}

std::optional<BackendCause> classify_cuda_error(std::string_view message) {
    for (std::string_view driver :
         {"driver version is insufficient for CUDA runtime version",
          "PTX was compiled with an unsupported toolchain", "cudaErrorInsufficientDriver",
          "cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"})
        if (message.find(driver) != std::string_view::npos)
            return BackendCause::DriverTooOld;
    for (std::string_view image :
         {"no kernel image is available for execution on the device",
          "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU"})
        if (message.find(image) != std::string_view::npos)
            return BackendCause::GpuCodeMissing;
    return std::nullopt;
}

} // namespace switchyard
