// SPDX-License-Identifier: MIT
// The built-in host CPU device: host memory, host timers, the run's ceilings from the probes.
#include <switchyard/kernels/cpudevice.h>

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/sdkjson.h>

#include "kernels/cpukernels.h"
#include "util/splitmix.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace switchyard {

namespace {

// Large buffers are mapped, not taken from the heap: a heap chunk below glibc's mmap
// threshold (which grows to 32 MiB once a mapped chunk is freed) may be memory an earlier
// buffer already touched on 4 KiB pages, and MADV_HUGEPAGE does not change pages that are
// already there. A fresh mapping advised before its first touch is backed by 2 MiB pages
// wherever THP allows it, for a row's buffers as for the probes' working sets. Before,
// rows of 48 MiB - 1 GiB often ran on recycled 4 KiB pages (24-31 GB/s) while the DRAM
// probe's fresh arena got huge pages (35-40 GB/s): 20-35 % apart on one machine.
constexpr std::size_t kHugePage = std::size_t(2) << 20;
std::mutex g_maps_mutex;
std::unordered_map<void*, std::pair<void*, std::size_t>>& mapped() {
    static auto* m = new std::unordered_map<void*, std::pair<void*, std::size_t>>();
    return *m;
}

} // namespace

void* host_allocate(std::size_t bytes) {
    const bool huge = bytes >= 2 * kHugePage;
    if (!huge) {
        const std::size_t size = (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, size);
        if (!p)
            throw std::bad_alloc();
        return p;
    }
    // Over-map by one huge page and use the 2 MiB aligned part.
    const std::size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    const std::size_t span = size + kHugePage;
    void* base = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        throw std::bad_alloc();
    const auto addr = reinterpret_cast<std::uintptr_t>(base);
    void* p = reinterpret_cast<void*>((addr + kHugePage - 1) / kHugePage * kHugePage);
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, size, MADV_HUGEPAGE); // advice: nothing to do when it is refused
#endif
    try {
        std::lock_guard lock(g_maps_mutex);
        mapped().emplace(p, std::make_pair(base, span));
    } catch (...) {
        munmap(base, span);
        throw;
    }
    return p;
}

void host_release(void* buffer) noexcept {
    if (!buffer)
        return;
    {
        std::lock_guard lock(g_maps_mutex);
        auto& m = mapped();
        if (const auto it = m.find(buffer); it != m.end()) {
            const auto [base, span] = it->second;
            m.erase(it);
            munmap(base, span);
            return;
        }
    }
    std::free(buffer);
}

CpuDevice::CpuDevice(std::optional<CpuPeaks> peaks) {
    const auto& cpu = cpu_info();
    m_info.id = "cpu";
    m_info.kind = "cpu";
    m_info.name = cpu.brand.empty() ? cpu.vendor : cpu.brand;
    m_info.arch = cpu.best_level;
    m_info.properties = cpu.to_json().get<Value>();
    if (peaks) {
        std::lock_guard lock(m_peaks_mutex);
        apply_locked(std::move(*peaks));
    }
}

void CpuDevice::prepare() {
    std::lock_guard lock(m_peaks_mutex);
    if (!m_peaks)
        apply_locked(measure_cpu_peaks());
}

std::optional<CpuPeaks> CpuDevice::peaks() const {
    std::lock_guard lock(m_peaks_mutex);
    return m_peaks;
}

void CpuDevice::set_peaks(CpuPeaks peaks) {
    std::lock_guard lock(m_peaks_mutex);
    apply_locked(std::move(peaks));
}

void CpuDevice::apply_locked(CpuPeaks p) {
    m_info.peak_bandwidth_gbs = p.triad_gbs;
    m_info.peak_bandwidth_source = p.triad_gbs > 0
                                       ? "measured: STREAM triad, fp32, all threads, " +
                                             std::to_string(p.triad_bytes >> 20) + " MiB"
                                       : "";
    m_info.peak_gflops = p.fma_gflops;
    const auto* fma = p.find("fma.fp32.all");
    m_info.peak_gflops_source =
        p.fma_gflops > 0 ? "measured: " + (fma ? fma->method : p.fma_isa + " FMA loop, all threads")
                         : "";
    m_info.ceilings = p.ceilings;
    m_peaks = std::move(p);
}

CpuDevice::~CpuDevice() {
    for (const auto& spare : m_spares)
        host_release(spare.base);
    if (m_shared.base)
        munmap(m_shared.base, m_shared.reserved);
}

std::uintptr_t CpuDevice::shared_at() const noexcept {
    return reinterpret_cast<std::uintptr_t>(m_shared.base);
}

void CpuDevice::place_in_shared_file(int fd, std::uintptr_t at) {
    std::lock_guard lock(m_placed_mutex);
    if (m_shared.base)
        throw std::logic_error("CpuDevice::place_in_shared_file: already placing in one");
    // Address space for the largest row this machine can hold (its RAM, at most 1 TiB), plus
    // the seeds' starting pages; reserved, not committed.
    const auto ram = std::max<std::int64_t>(physical_memory_bytes(), std::int64_t(1) << 30);
    const std::size_t reserve =
        std::min<std::size_t>(std::size_t(ram), std::size_t(1) << 40) + (std::size_t(64) << 20);
    // `at` as a hint, which the kernel takes where the range is free; elsewhere otherwise
    // (shared_at() says where). Not MAP_FIXED_NOREPLACE: a sanitizer that finds the address
    // outside its application memory drops it, and the flag with no address maps page 0.
    void* base = mmap(reinterpret_cast<void*>(at), reserve, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        throw std::system_error(errno, std::generic_category(),
                                "cannot reserve address space for the shared buffers");
    m_shared = SharedFile{};
    m_shared.fd = fd;
    m_shared.base = static_cast<std::byte*>(base);
    m_shared.reserved = reserve;
}

void CpuDevice::map_shared_locked(std::size_t end) {
    if (end <= m_shared.mapped)
        return;
    if (end > m_shared.reserved)
        throw std::bad_alloc();
    constexpr std::size_t kGrain = std::size_t(64) << 20;
    const std::size_t want = std::min(m_shared.reserved, (end + kGrain - 1) / kGrain * kGrain);
    struct stat st = {};
    if (fstat(m_shared.fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "the shared buffers' file");
    // The other side may have made it longer already; it never gets shorter.
    if (std::size_t(st.st_size) < want && ftruncate(m_shared.fd, off_t(want)) != 0)
        throw std::system_error(errno, std::generic_category(),
                                "cannot grow the shared buffers' file");
    // The same file pages at the same addresses, so buffers already cut stay where they are.
    if (mmap(m_shared.base, want, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m_shared.fd, 0) ==
        MAP_FAILED)
        throw std::system_error(errno, std::generic_category(),
                                "cannot map the shared buffers' file");
#if defined(MADV_HUGEPAGE)
    (void)madvise(m_shared.base, want, MADV_HUGEPAGE); // where shmem THP allows it
#endif
    m_shared.mapped = want;
}

void CpuDevice::vary_placement(std::uint64_t seed) {
    constexpr std::size_t kPage = 4096, kStartPages = 512;
    std::vector<Spare> spares;
    {
        std::lock_guard lock(m_placed_mutex);
        m_placement = seed;
        if (seed == 0)
            spares.swap(m_spares);
        // The buffers from this seed's page of the shared file on (within its first 2 MiB),
        // so both sides given the seed use the same pages and each seed others. A buffer still
        // held (none in a slice worker) keeps its pages: the next ones go after it.
        if (m_shared.base && m_shared.live == 0) {
            std::uint64_t s = seed ^ 0x5ba7ed5ba7edULL;
            m_shared.cursor = std::size_t(splitmix64(s) % kStartPages) * kPage;
        }
    }
    for (const auto& spare : spares)
        host_release(spare.base);
}

void* CpuDevice::allocate(std::size_t bytes) {
    constexpr std::size_t kPage = 4096, kStep = 64;
    const std::size_t want = bytes + 2 * kPage;
    std::size_t offset = 0;
    std::byte* base = nullptr;
    {
        std::lock_guard lock(m_placed_mutex);
        if (m_placement == 0)
            return host_allocate(bytes);
        // The same seed gives the same offsets, in any build.
        offset = std::size_t(splitmix64(m_placement) % (kPage / kStep)) * kStep;
        if (m_shared.base) {
            const std::size_t start = (m_shared.cursor + kPage - 1) / kPage * kPage + offset;
            const std::size_t need = std::max<std::size_t>(bytes, 1);
            if (start > m_shared.reserved || need > m_shared.reserved - start)
                throw std::bad_alloc();
            map_shared_locked(start + need);
            m_shared.cursor = start + need;
            ++m_shared.live;
            return m_shared.base + start;
        }
        for (auto it = m_spares.begin(); it != m_spares.end(); ++it)
            if (it->bytes == want) {
                base = static_cast<std::byte*>(it->base);
                m_spares.erase(it);
                break;
            }
    }
    // host_allocate's start: 64-byte aligned; from 4 MiB on, on a 2 MiB boundary. Round up to
    // the page, then step in, so the offset from the page start is the drawn one.
    if (!base)
        base = static_cast<std::byte*>(host_allocate(want));
    const auto addr = reinterpret_cast<std::uintptr_t>(base);
    std::byte* p = base + ((kPage - addr % kPage) % kPage) + offset;
    try {
        std::lock_guard lock(m_placed_mutex);
        m_placed.emplace(p, Spare{base, want});
    } catch (...) {
        host_release(base);
        throw;
    }
    return p;
}

void CpuDevice::release(void* buffer) noexcept {
    if (!buffer)
        return;
    std::vector<Spare> drop;
    {
        std::lock_guard lock(m_placed_mutex);
        if (m_shared.holds(buffer)) { // its pages stay the file's
            --m_shared.live;
            return;
        }
        const auto it = m_placed.find(buffer);
        if (it == m_placed.end()) {
            drop.push_back({buffer, 0});
        } else {
            const Spare got = it->second;
            m_placed.erase(it);
            if (m_placement == 0 || got.bytes < kSpareFrom) {
                drop.push_back(got);
            } else {
                // Kept for the next slice of the row, the newest last; the oldest go past the
                // limits. A kept mapping has had its pages touched (and huge where THP gave
                // them), so the next slice neither faults nor zeroes them again.
                try {
                    m_spares.push_back(got);
                } catch (...) {
                    drop.push_back(got);
                }
                std::size_t total = 0;
                for (const auto& s : m_spares)
                    total += s.bytes;
                while (!m_spares.empty() && (m_spares.size() > kMaxSpares || total > kSpareBytes)) {
                    total -= m_spares.front().bytes;
                    drop.push_back(m_spares.front());
                    m_spares.erase(m_spares.begin());
                }
            }
        }
    }
    for (const auto& d : drop)
        host_release(d.base);
}

void CpuDevice::upload(void* dst, const void* src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
}

void CpuDevice::download(void* dst, const void* src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
}

void CpuDevice::flush_caches() {
    // Write then read a buffer twice the size of the last-level cache.
    if (m_flush.empty()) {
        const auto llc = std::max<std::int64_t>(cpu_info().last_level_cache_bytes(), 8 << 20);
        m_flush.assign(std::size_t(2 * llc / 8), 0);
    }
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < m_flush.size(); i += 8) {
        m_flush[i] += 1;
        sum += m_flush[i];
    }
    m_sink = sum;
}

namespace {

class CpuProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "cpu"; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        std::lock_guard lock(m_mutex);
        if (!m_device)
            m_device =
                make_cpu_device(); // on the first listing: a registry never listed reads no CPU
        return {m_device};
    }

private:
    std::mutex m_mutex;
    std::shared_ptr<CpuDevice> m_device;
};

} // namespace

std::shared_ptr<DeviceProvider> make_cpu_device_provider() {
    return std::make_shared<CpuProvider>();
}

std::shared_ptr<CpuDevice> make_cpu_device(std::optional<CpuPeaks> peaks) {
    return std::make_shared<CpuDevice>(std::move(peaks));
}

std::shared_ptr<CpuDevice> find_cpu_device(DeviceRegistry& devices) {
    return std::dynamic_pointer_cast<CpuDevice>(devices.find("cpu"));
}

} // namespace switchyard
