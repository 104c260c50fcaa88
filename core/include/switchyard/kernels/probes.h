// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/device.h>
#include <switchyard/sdk/plateaus.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The host CPU's ceilings, measured by small probes (measure_cpu_peaks()). A run keeps one
/// set in its CPU device (cpudevice.h); a cache that outlives runs belongs to the front end.
///
/// `ceilings` is the cache-aware roofline: read and triad bandwidth at working sets
/// sized for L1, L2, L3 and DRAM (from cpu_info()'s cache sizes; DRAM at 4x the last
/// level, at least 128 MiB), each single-thread ("...1t") and all-thread ("...all"), plus the fp32
/// FMA peak with the widest ISA this CPU runs ("fma.fp32.1t", "fma.fp32.all"; below x86-64-v3,
/// which has no FMA, a multiply and an add on 4-float vectors: the peak of code built for it). A
/// level that cannot be measured (DRAM when memory is too small) has value 0 and a method saying
/// why. The first three fields are kept for older readers: the DRAM triad and FMA all-thread.
///
/// What a bandwidth ceiling means for a row: the most bytes per second a kernel can move
/// at that level on this machine, counted the way rows count them (every input read and
/// every output written once: no write-allocate traffic), on memory from the CPU device's
/// allocator (the same page size as the rows' buffers). The triad tries every store
/// flavour; in DRAM its non-temporal form sets the ceiling (a kernel that streams its
/// output, as flow_match_step's AVX variants do from 4 MiB on, reaches it). A kernel with
/// regular stores also moves the write-allocate read of each output line that it is not
/// credited with, so in DRAM it tops out near 3/4 of a triad ceiling (12 of 16 bytes an
/// element): 0.75 "of ceiling" is its limit there, not a slow kernel. Each figure is the
/// best timing among those no probe thread was preempted in (a preempted timing measures
/// the scheduler), so it is what the machine gives an undisturbed kernel; a row's median
/// on a busy machine sits below it.
struct SWITCHYARD_CORE_EXPORT CpuPeaks {
    double triad_gbs = 0;         // DRAM STREAM triad (a = b + s*c, fp32, all threads)
    std::int64_t triad_bytes = 0; // working set that probe used
    double fma_gflops = 0;        // FMA loop on all threads (a multiply-add loop below x86-64-v3)
    std::string fma_isa; // "AVX-512F (zmm)", "AVX2+FMA (ymm)", "baseline"; "" when not measured
    std::vector<Ceiling> ceilings;
    /// Each measured ceiling's own noise: (best - median) / best over its timings (the
    /// best form's). A ceiling is the best timing; when the timings spread by s, a run can
    /// have missed the machine's limit by about s, so two runs on one machine differ by
    /// up to the sum of their spreads (compare's threshold). JSON "spread": {id: number};
    /// absent in reports from before it.
    std::map<std::string, double> spread;
    /// The cross-check of the per-level ceilings, the way LBNL's Empirical Roofline Toolkit
    /// finds them: the 1-thread read probe over 16 KiB ... 512 MiB (x2), and the plateaus of
    /// that sweep labelled with the cache levels they match (detect_plateaus, memory
    /// "DRAM"). Information only: rows are judged against `ceilings`. JSON "sweep":
    /// {"points": [{working_set_bytes, gbs}], "plateaus": [{level, gbs, first_bytes,
    /// last_bytes, capacity_bytes}]}; absent in reports from before it and under a sanitizer.
    std::vector<SweepPoint> sweep;
    std::vector<Plateau> plateaus;
    /// The CPU the 1-thread probes ran on, held there (one CPU is not another: two vCPUs of
    /// one guest differed by 12 % in DRAM bandwidth, a hybrid part's P and E cores by more);
    /// 1-thread rows judged by these ceilings run there too (one_thread_cpu()). -1: not
    /// pinned (SWITCHYARD_PIN_CPU=off, or figures from before it). JSON "pinned_cpu", absent
    /// when -1.
    int pinned_cpu = -1;

    /// The ceiling with this id, or nullptr.
    const Ceiling* find(std::string_view id) const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key ("peaks.ceilings[2].value: ...").
    static CpuPeaks from_json(const nlohmann::json& j);
};
/// Runs every probe now (about 25 s on a quiet 2-core Zen 4, most of it the DRAM working
/// sets; each step is announced: announce_prepare_step()); nothing is kept. The 1-thread
/// probes run on one_thread_cpu(ceilings_cpu): a set measured again passes its own
/// pinned_cpu, so the fresh figures are of the CPU its rows run on.
SWITCHYARD_CORE_EXPORT CpuPeaks measure_cpu_peaks(int ceilings_cpu = -1);
/// The CPU 1-thread probes and rows run on: `ceilings_cpu` (the pinned_cpu of the ceilings
/// in use; -1: none, or figures from before it) where this process may run there (rows then
/// share their ceilings' CPU, also with --ceilings-from), else the one SWITCHYARD_PIN_CPU
/// names, else the CPU this process was running on when it first asked (kept from then on);
/// -1 with SWITCHYARD_PIN_CPU=off. Never measures.
SWITCHYARD_CORE_EXPORT int one_thread_cpu(int ceilings_cpu);
/// Why SWITCHYARD_PIN_CPU was not followed as given ("" when it was, or is unset): a
/// warning for the report's context. Also when the CPU it names is overruled by
/// `ceilings_cpu`, the pinned_cpu of the ceilings in use (ceilings from an earlier report,
/// measured on another CPU).
SWITCHYARD_CORE_EXPORT std::string pin_cpu_problem(int ceilings_cpu);
/// Runs the triad probe now over `bytes` of working set on all threads; best of
/// `repeats` passes in GB/s.
SWITCHYARD_CORE_EXPORT double measure_triad_gbs(std::int64_t bytes, int repeats = 10);

/// The probe of a measured CPU DRAM ceiling ("dram.copy.1t", "dram.triad.all",
/// "dram.read.1t"; of the run's ceilings), ready to time what memory gives it now: that
/// pattern on that ceiling's threads (1 thread on one_thread_cpu() of the set's pinned_cpu)
/// and working set (allocated once, at construction), every form of it the ceiling tried.
/// The profiler times it beside every row judged against such a ceiling (ProfileRow::memory),
/// before and after the samples: on a shared host other tenants take a share of the memory's
/// bandwidth from moment to moment, and the ceiling is the best the probe ever got.
class SWITCHYARD_CORE_EXPORT CpuMemoryProbe {
public:
    /// Nothing to time (!valid()) when `id` names no such ceiling of `peaks` or it was not
    /// measured (too little memory).
    CpuMemoryProbe(std::string_view id, const CpuPeaks& peaks);
    ~CpuMemoryProbe();
    CpuMemoryProbe(const CpuMemoryProbe&) = delete;
    CpuMemoryProbe& operator=(const CpuMemoryProbe&) = delete;
    bool valid() const noexcept { return m_state != nullptr; }
    /// `timings` one-pass timings of each form, as GB/s of the form that gave the best of
    /// them, in the order they ran; empty when !valid() or timings <= 0.
    std::vector<double> time(int timings) const;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// What OpenBLAS (the `gemm generic/openblas` cell) runs here, as it reports itself.
struct SWITCHYARD_CORE_EXPORT OpenBlasInfo {
    bool present = false; // built with OpenBLAS
    std::string corename; // openblas_get_corename(): "Haswell", "SkylakeX", "Zen", "Prescott"
    int threads = 0;      // openblas_get_num_threads()
    std::string config;   // openblas_get_config()
    nlohmann::json to_json() const;
};
SWITCHYARD_CORE_EXPORT OpenBlasInfo openblas_info();
/// A warning when OpenBLAS runs a generic fallback core (it did not recognise this CPU,
/// or was built without its kernels): "Prescott", "Generic", ..., or a core without the
/// AVX-512 kernels on a CPU that has them. Empty when there is nothing to say.
SWITCHYARD_CORE_EXPORT std::string openblas_core_warning(const OpenBlasInfo& info);

/// The x86-64 level an OpenBLAS core's kernels need ("Haswell": "x86-64-v3", "SkylakeX":
/// "x86-64-v4"; any case), "" for the generic and pre-AVX cores.
SWITCHYARD_CORE_EXPORT std::string openblas_core_level(std::string_view corename);

/// A memory level the CPU's bandwidth probes measure. Each is probed at 4x the level
/// below but at most half its capacity (L1: 3/4; per core for the per-core L1 and L2),
/// DRAM at max(128 MiB, 4 x last level). Exposed for the tests.
struct SWITCHYARD_CORE_EXPORT CpuProbeLevel {
    std::string level;         // "L1", "L2", "L3", "DRAM"
    std::int64_t capacity = 0; // bytes one core sees (0 for DRAM)
    bool per_core = false;     // L1, L2: each core has its own
};
/// The levels cpu_info() reports, smallest first, then DRAM.
SWITCHYARD_CORE_EXPORT std::vector<CpuProbeLevel> cpu_probe_levels();

} // namespace switchyard
