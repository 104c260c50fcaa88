// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/kernels/probes.h>
#include <switchyard/sdk/device.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace switchyard {

class DeviceRegistry;

/// The built-in host CPU device ("cpu"): host memory, host timers, and one set of CPU
/// ceilings (probes.h), the run's: its peak bandwidth from the triad probe, its peak FLOP/s
/// from the FMA probe, every ceiling in info().ceilings. The set is the device's own, so two
/// devices (two registries: a test's, the runtime's) never share one behind their backs.
class SWITCHYARD_CORE_EXPORT CpuDevice final : public Device {
public:
    /// `peaks`: the set to use (a cache's, an earlier report's, the run's first worker's);
    /// without one, prepare() measures it. Listing devices stays cheap either way.
    explicit CpuDevice(std::optional<CpuPeaks> peaks = std::nullopt);
    ~CpuDevice() override;

    const DeviceInfo& info() const override { return m_info; }
    /// Measures the ceilings (measure_cpu_peaks(): seconds) when the device has none yet;
    /// they are kept, so only the first call measures.
    void prepare() override;
    /// The ceilings in use: given, set, or measured by prepare(); none before.
    std::optional<CpuPeaks> peaks() const;
    /// Uses `peaks` from now on, info() included: a worker handed the run's set, a profiler
    /// that measured them again.
    void set_peaks(CpuPeaks peaks);

    /// From now on, each allocate() places its buffer at a random 64-byte step (0 - 4032
    /// bytes) past a page-aligned start, drawn from `seed` and a counter; 0 turns it off (the
    /// default: 64-byte aligned, where the heap puts it). A row's arrays then sit at a new
    /// offset from each other (4 KiB aliasing, cache sets) in every slice, so what placement
    /// does to a kernel's time is noise spread over the slices, not a bias a whole process
    /// keeps: two worker processes of one build were 2-5 % apart on small rows for no other
    /// reason, which a paired A/B read as a difference. While it is on, released buffers of
    /// 4 MiB and more are kept (at most kMaxSpares, kSpareBytes in all) for the next
    /// allocate() of their size: the next slice of a row then reuses its pages instead of
    /// faulting in and zeroing a fresh mapping (a third of each slice of a 134 MB row).
    void vary_placement(std::uint64_t seed);
    /// From now on, placed buffers (vary_placement() on) are cut from the memory file `fd`
    /// (a memfd: the caller keeps it open), which another process maps too: the two workers
    /// of a paired A/B run. Given the same seed and the same sizes, both then run on the very
    /// same physical pages, not only at the same offsets within them. On a virtual machine the
    /// cache sets and DRAM banks follow from the host's pages, which no guest chooses: fresh
    /// pages put each side of a pair in its own mode (one row's slices came at 0.92, 1.00,
    /// 1.09 and 1.25 of its median, on each side independently), and the pair's ratio carried
    /// it. Each seed starts the row at its own page of the file (vary_placement), so the pairs
    /// still see many placements. `at` (non-zero): the file is mapped at this address, where
    /// the other side maps it too, so the two sides' buffers have the same virtual addresses
    /// as well (what the CPU keys on virtual addresses: its L1 way predictor, its TLBs); two
    /// workers of one build were otherwise 1-1.5 % apart on some rows for a whole run. When
    /// that range is taken, anywhere: shared_at() says which. Throws std::system_error when
    /// the file cannot be mapped.
    void place_in_shared_file(int fd, std::uintptr_t at = 0);
    /// Where place_in_shared_file() mapped the file (0: not placing in one).
    std::uintptr_t shared_at() const noexcept;
    void* allocate(std::size_t bytes) override;
    void release(void* buffer) noexcept override;
    void upload(void* dst, const void* src, std::size_t bytes) override;
    void download(void* dst, const void* src, std::size_t bytes) override;
    void flush_caches() override;

private:
    void apply_locked(CpuPeaks peaks); // m_peaks_mutex held

    DeviceInfo m_info;
    mutable std::mutex m_peaks_mutex;
    std::optional<CpuPeaks> m_peaks;
    std::vector<std::uint64_t> m_flush;
    struct Spare {
        void* base;        // what host_allocate gave
        std::size_t bytes; // what it was asked for
    };
    static constexpr std::size_t kSpareFrom = std::size_t(4) << 20;
    static constexpr std::size_t kMaxSpares = 8;
    static constexpr std::size_t kSpareBytes = std::size_t(1) << 30;
    std::mutex m_placed_mutex;
    std::uint64_t m_placement = 0;             // vary_placement's state; 0: off
    std::unordered_map<void*, Spare> m_placed; // placed buffer -> its allocation
    std::vector<Spare> m_spares;               // kept for reuse, oldest first
    struct SharedFile {                        // place_in_shared_file()'s
        int fd = -1;
        std::byte* base =
            nullptr; // `reserved` bytes of address space, the file mapped at its start
        std::size_t reserved = 0, mapped = 0;
        std::size_t cursor = 0; // where the next buffer goes (bytes into the file)
        std::size_t live = 0;   // buffers cut from it and not released
        bool holds(const void* p) const noexcept {
            return base && p >= base && p < base + reserved;
        }
    } m_shared;
    void map_shared_locked(std::size_t end); // m_placed_mutex held; throws when it cannot
    volatile std::uint64_t m_sink = 0;
};

/// A CPU device of its own (see CpuDevice(peaks)).
SWITCHYARD_CORE_EXPORT std::shared_ptr<CpuDevice>
make_cpu_device(std::optional<CpuPeaks> peaks = std::nullopt);
/// The provider of one CPU device, its own (the same device object on every enumerate(), so
/// the ceilings it measured stay with the registry that holds the provider).
SWITCHYARD_CORE_EXPORT std::shared_ptr<DeviceProvider> make_cpu_device_provider();
/// `devices`' device "cpu" when it is a CpuDevice; nullptr when there is none.
SWITCHYARD_CORE_EXPORT std::shared_ptr<CpuDevice> find_cpu_device(DeviceRegistry& devices);

} // namespace switchyard
