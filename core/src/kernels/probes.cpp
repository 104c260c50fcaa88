// SPDX-License-Identifier: MIT
// The CPU's ceilings, measured by small probes built from the CPU kernels' own loops.
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/kernels/probes.h>

#include <switchyard/hardware/hardware.h>

#include "hardware/affinity.h"
#include "kernels/cpukernels.h"
#include "kernels/cpuvariants.h"
#include "kernels/threadpool.h"
#include "util/sanitizer.h"
#include "util/textutil.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <time.h>

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the calling thread, in seconds.
double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
// A timing is disturbed when a thread of it ran for less than this share of its own
// wall-clock span: it was preempted (another process took its core) and the wall time
// counts someone else's work. On a shared 2-core VM under load 8, a 128 MiB DRAM pass
// measured 5-7 GB/s preempted and 40 GB/s not; best-of-N kept the undisturbed ones only by
// luck, and a pool run whose two threads were serialised on one core measured each
// thread's half of the set as if the other half were not in the last-level cache.
constexpr double kUndisturbed = 0.9;

// "1 thread on CPU 3", "1 thread" (not pinned), "all threads": a ceiling's method.
std::string threads_text(std::int64_t threads, int cpu) {
    if (threads != 1)
        return "all threads";
    return cpu >= 0 ? "1 thread on CPU " + std::to_string(cpu) : std::string("1 thread");
}

// The calling thread held on one_thread_cpu(ceilings_cpu) for a 1-thread probe (threads ==
// 1), for the scope's life; nothing for an all-thread one.
class OneThreadPin {
public:
    OneThreadPin(std::int64_t threads, int ceilings_cpu) {
        if (threads == 1)
            m_pin.emplace(one_thread_cpu(ceilings_cpu));
    }
    int cpu() const { return m_pin ? m_pin->cpu() : -1; }

private:
    std::optional<detail::ScopedCpuPin> m_pin;
};

} // namespace

// Named, not anonymous, from here to Probe: CpuMemoryProbe::State (of the public header) holds
// an Arena and a Probe, and a type of external linkage may not hold ones of internal linkage.
namespace probe_memory {

// The CPU device's allocator (fresh mappings advised for huge pages from 4 MiB on), so a
// ceiling and the rows judged by it run on the same page size: on this KVM guest (nested
// paging makes every TLB miss a 2-D walk) a DRAM triad with non-temporal stores moved
// 37-43 GB/s on 2 MiB pages and 30-33 GB/s on 4 KiB pages, where likwid-bench's
// stream_mem runs (29.8).
struct HostFree {
    void operator()(float* p) const { host_release(p); }
};
using AlignedBuffer = std::unique_ptr<float, HostFree>;
AlignedBuffer aligned_floats(std::size_t n) {
    return AlignedBuffer(
        static_cast<float*>(host_allocate(std::max<std::size_t>(n, 16) * sizeof(float))));
}

std::string mib_or_kib(double bytes) {
    char buf[32];
    if (bytes >= double(1 << 20))
        std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(1 << 20));
    else
        std::snprintf(buf, sizeof buf, "%.0f KiB", bytes / 1024.0);
    return buf;
}

// The widest ISA the probes use: 4 = AVX-512, 3 = AVX2+FMA, 0 = baseline.
int probe_isa() {
    if (cpu_supports_x86_64_v4())
        return 4;
    if (cpu_supports_x86_64_v3())
        return 3;
    return 0;
}

const char* isa_name(int isa) {
    return isa == 4 ? "AVX-512F (zmm)" : isa == 3 ? "AVX2+FMA (ymm)" : "baseline";
}

// The compute probe at an ISA level: an FMA loop from x86-64-v3 on, below it a multiply and
// an add on 4-float vectors (x86-64-v2 and the baseline have no FMA).
std::string compute_loop_name(int isa) {
    return isa >= 3 ? std::string(isa_name(isa)) + " FMA loop"
                    : std::string("baseline (4-float vectors) multiply-add loop");
}

// One working set, split into a 64-byte aligned slice per thread; each slice first
// touched by the thread that uses it.
class Arena {
public:
    Arena(std::int64_t total_floats, std::int64_t parts) : m_parts(parts) {
        // Slices of a multiple of 64 floats, so every slice stays 64-byte aligned.
        m_slice = std::max<std::int64_t>(192, (total_floats / parts) / 64 * 64);
        m_data = aligned_floats(std::size_t(m_slice * parts));
        ThreadPool::instance().parallel_together(parts, [&](std::int64_t t) {
            float* p = slice(t);
            for (std::int64_t i = 0; i < m_slice; ++i)
                p[i] = 1.0f + float(i & 7) * 0.125f;
        });
    }
    float* slice(std::int64_t t) const { return m_data.get() + t * m_slice; }
    std::int64_t slice_floats() const { return m_slice; }
    std::int64_t parts() const { return m_parts; }

private:
    AlignedBuffer m_data;
    std::int64_t m_slice = 0, m_parts = 1;
};

// Read: a sum (reads only). Triad: a = b + s c (two reads, one write). Copy: a = s b (one
// read, one write: the mix of rms_norm, which moves fewer bytes a second than a triad from
// DRAM, where reads and writes share the bus).
enum class Probe { Read, Triad, Copy };

} // namespace probe_memory

namespace {

using namespace probe_memory;

// A probe's answer: the best timing and the spread of the timings of the form that gave it.
struct ProbeResult {
    double best = 0;
    double spread = 0;           // (best - median) / best
    bool undisturbed = true;     // from timings no thread of which was preempted
    std::vector<double> timings; // the best form's (those `best` and `spread` are of), GB/s
};

// (best - median) / best of `v` (GB/s or GFLOP/s: higher is better).
double spread_of(std::vector<double> v) {
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const double best = v.back();
    const std::size_t h = v.size() / 2;
    const double median = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
    return best > 0 ? (best - median) / best : 0.0;
}

// Best GB/s of `probe` over the arena's slices on `threads` threads (1: the first slice on
// the calling thread; otherwise one slice per pool thread). Each timing repeats the pass
// until about `min_bytes` per thread went through, so in-cache timings are not dominated
// by the pool's dispatch. Every form of the loop this CPU runs is tried, interleaved; the
// best is the machine's limit, so no kernel can beat the probe by storing differently.
//
// `warm_s`: untimed timings of the first form first, until that many seconds went by (DRAM).
ProbeResult run_probe(Probe probe, const Arena& arena, std::int64_t threads, bool streaming_forms,
                      int timings, double min_bytes, std::int64_t prefix_floats = 0,
                      double warm_s = 0) {
    const int isa = probe_isa();
    // `prefix_floats`: only the first that many floats of each slice (the sweep).
    const std::int64_t n =
        prefix_floats > 0 ? std::min(prefix_floats, arena.slice_floats()) : arena.slice_floats();
    // Triad arrays a, b, c: whole 64-float blocks (256-byte aligned, no loop tails, as a
    // kernel on a round size runs), each placed 256 bytes past the previous
    // one's end, so a store to a[i] and the loads of b[i], c[i] never sit a multiple of
    // 4 KiB apart (4K aliasing stalls loads behind stores and understated the L1 ceiling).
    constexpr std::int64_t kSkew = 64;
    const std::int64_t third = std::max<std::int64_t>(64, (n - 2 * kSkew) / 3 / 64 * 64);
    // The copy's arrays a, b likewise: halves, b 256 bytes past a's end.
    const std::int64_t half = std::max<std::int64_t>(64, (n - kSkew) / 2 / 64 * 64);
    // Elements of each array a pass goes over, and the bytes it moves.
    const std::int64_t span = probe == Probe::Read ? n : probe == Probe::Triad ? third : half;
    const double pass_bytes = probe == Probe::Read    ? 4.0 * double(n)
                              : probe == Probe::Triad ? 12.0 * double(third)
                                                      : 8.0 * double(half);
    const std::int64_t reps = std::max<std::int64_t>(1, std::int64_t(min_bytes / pass_bytes));
    // Forms: read uses the widest loads only; triad and copy every store flavour (+ 10: the
    // non-temporal store variant, with `streaming_forms`).
    std::vector<int> forms;
    if (probe == Probe::Read) {
        forms.push_back(isa);
    } else if (streaming_forms) {
        // Beyond the caches the width of the loads and stores does not limit a pass: the
        // widest regular-store form and the widest non-temporal one.
        forms.push_back(isa >= 3 ? isa : 0);
        forms.push_back(forms.back() + 10);
        // ... except that on Zen 4 (512-bit ops split in two) 256-bit non-temporal stores
        // moved 5-15 % more from DRAM than 512-bit ones, which the v4 flow_match_step uses.
        if (isa >= 4)
            forms.push_back(13);
        // The copy also in two lanes (+ 100), as rms_norm streams from memory: a threaded
        // rms_norm moved 1.1-1.2x a one-lane copy's all-thread ceiling on Zen 5.
        if (probe == Probe::Copy && isa >= 3) {
            forms.push_back(isa + 110);
            if (isa >= 4)
                forms.push_back(113);
        }
    } else {
        forms.push_back(0);
        if (isa >= 3)
            forms.push_back(3);
        if (isa >= 4)
            forms.push_back(4);
    }
    std::vector<double> sink(std::size_t(arena.parts()), 0.0);
    // One range [i0, i0 + len) of slice `t`'s arrays (floats of the read probe, elements of
    // the triad's), `times` times; the read probe's sum (kept, so the loads stay).
    auto range = [&](int form, std::int64_t t, std::int64_t i0, std::int64_t len,
                     std::int64_t times) -> double {
        float* p = arena.slice(t);
        if (probe == Probe::Read) {
            double s = 0;
            for (std::int64_t r = 0; r < times; ++r)
                s += cpu_read_probe(form, len, p + i0);
            return s;
        }
        float* a = p + i0;
        if (probe == Probe::Copy) {
            const float* b = p + half + kSkew + i0;
            for (std::int64_t r = 0; r < times; ++r)
                cpu_copy_probe(form, len, a, b);
            return 0.0;
        }
        const float* b = p + third + kSkew + i0;
        const float* c = p + 2 * (third + kSkew) + i0;
        for (std::int64_t r = 0; r < times; ++r) {
            switch (form) {
            case 0:
                cpu::generic::triad(len, a, b, c, 0.5f);
                break;
            case 10:
                cpu::generic::triad_stream(len, a, b, c, 0.5f);
                break;
            case 3:
                cpu::avx2::flow_match(len, b, c, 0.5f, a, false);
                break;
            case 13:
                cpu::avx2::flow_match(len, b, c, 0.5f, a, true);
                break;
            case 4:
                cpu::avx512::flow_match(len, b, c, 0.5f, a, false);
                break;
            case 14:
                cpu::avx512::flow_match(len, b, c, 0.5f, a, true);
                break;
            default:
                break;
            }
        }
        return 0.0;
    };
    // `t` is the thread running the pass: each thread adds to its own sink.
    auto pass = [&](int form, std::int64_t t) {
        sink[std::size_t(t)] += range(form, t, 0, span, reps);
    };
    // All threads from memory: chunks of 4 MiB claimed one at a time from every slice and
    // pass, as the threaded kernels claim their blocks, so a thread whose vCPU another
    // process holds does not leave the probe waiting on its fixed half (a 2-vCPU guest read
    // 44-49 GB/s where a threaded kernel moved 64). In the caches each thread keeps its own
    // slice: that is what makes the level's capacity the per-core sum.
    const bool claimed = threads > 1 && streaming_forms;
    const std::int64_t chunk = std::min<std::int64_t>(span, std::int64_t(1) << 20) / 64 * 64;
    const std::int64_t chunks_per_slice = chunk > 0 ? (span + chunk - 1) / chunk : 1;
    const std::int64_t chunk_count = reps * std::int64_t(arena.parts()) * chunks_per_slice;
    std::atomic<std::int64_t> next_chunk{0};
    // `self`: the thread running it, whose sink takes the read sums of what it claimed.
    auto claim_pass = [&](int form, std::int64_t self) {
        double s = 0;
        for (std::int64_t k;
             (k = next_chunk.fetch_add(1, std::memory_order_relaxed)) < chunk_count;) {
            const std::int64_t in_pass = k % (std::int64_t(arena.parts()) * chunks_per_slice);
            const std::int64_t t = in_pass / chunks_per_slice;
            const std::int64_t i0 = (in_pass % chunks_per_slice) * chunk;
            s += range(form, t, i0, std::min(chunk, span - i0), 1);
        }
        sink[std::size_t(self)] += s;
    };
    // Each form's timings, and those of them no thread of which was preempted.
    std::vector<std::vector<double>> gbs(forms.size()), clean(forms.size());
    auto& pool = ThreadPool::instance();
    std::vector<char> disturbed(std::size_t(threads), 0);
    // All threads start together (ThreadPool::parallel_together), and a timing spans the
    // first start to the last end. With parallel_for the calling thread finished its short
    // in-cache slice before the woken worker claimed the other, ran both slices one after
    // the other, and the timing also counted the worker's wake-up (on a 2-vCPU Zen 3 guest
    // l1.read.all read 131 GB/s, less than l1.read.1t's 173, where likwid-bench's two
    // threads read 314).
    std::vector<Clock::time_point> started(static_cast<std::size_t>(threads)),
        ended(static_cast<std::size_t>(threads));
    auto timed_pass = [&](int form, std::int64_t t) {
        const auto w0 = Clock::now();
        const double c0 = thread_cpu_seconds();
        if (claimed)
            claim_pass(form, t);
        else
            pass(form, t);
        const double cpu = thread_cpu_seconds() - c0;
        const auto w1 = Clock::now();
        const double wall = std::chrono::duration<double>(w1 - w0).count();
        disturbed[std::size_t(t)] = cpu < kUndisturbed * wall ? 1 : 0;
        started[std::size_t(t)] = w0;
        ended[std::size_t(t)] = w1;
    };
    // One timing of `form`: seconds from the first thread's start to the last one's end.
    auto timing = [&](int form) {
        next_chunk.store(0, std::memory_order_relaxed);
        if (threads == 1)
            timed_pass(form, 0);
        else
            pool.parallel_together(threads, [&](std::int64_t t) { timed_pass(form, t); });
        return std::chrono::duration<double>(*std::max_element(ended.begin(), ended.end()) -
                                             *std::min_element(started.begin(), started.end()))
            .count();
    };
    if (warm_s > 0 && !forms.empty()) {
        const auto warm_start = Clock::now();
        while (std::chrono::duration<double>(Clock::now() - warm_start).count() < warm_s)
            (void)timing(forms.front());
    }
    for (int rep = 0; rep < timings; ++rep) {
        for (std::size_t f = 0; f < forms.size(); ++f) {
            const double s = timing(forms[f]);
            if (s <= 0)
                continue;
            const double v = pass_bytes * double(reps) * double(threads) / s / 1e9;
            gbs[f].push_back(v);
            if (std::find(disturbed.begin(), disturbed.end(), 1) == disturbed.end())
                clean[f].push_back(v);
        }
    }
    volatile double keep = sink[0];
    (void)keep;
    ProbeResult r;
    // Each form's undisturbed timings where it has at least 3; otherwise all of them (a
    // machine so busy that nearly every pass is preempted: the method then says so).
    // (A preempted timing only reads low, so the best is the same either way; the spread
    // is what the disturbed timings would inflate.)
    for (std::size_t f = 0; f < forms.size(); ++f) {
        const bool use_clean = clean[f].size() >= 3;
        const auto& v = use_clean ? clean[f] : gbs[f];
        if (!v.empty() && *std::max_element(v.begin(), v.end()) > r.best) {
            r.best = *std::max_element(v.begin(), v.end());
            r.spread = spread_of(v);
            r.timings = v;
            r.undisturbed = use_clean;
        }
    }
    return r;
}

ProbeResult run_fma(int isa, std::int64_t threads) {
    auto& pool = ThreadPool::instance();
    constexpr std::int64_t iterations = 1'000'000;
    std::vector<double> gflops;
    for (int rep = 0; rep < 5; ++rep) {
        std::vector<double> flops(std::size_t(threads), 0.0);
        auto one = [&](std::int64_t t) {
            flops[std::size_t(t)] = isa == 4   ? cpu::avx512::fma_probe(iterations)
                                    : isa == 3 ? cpu::avx2::fma_probe(iterations)
                                               : cpu::generic::mul_add_probe(iterations);
        };
        const auto t0 = Clock::now();
        if (threads == 1)
            one(0);
        else
            pool.parallel_together(threads, one);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        double total = 0;
        for (double f : flops)
            total += f;
        if (s > 0)
            gflops.push_back(total / s / 1e9);
    }
    if (gflops.empty())
        return {};
    return {*std::max_element(gflops.begin(), gflops.end()), spread_of(gflops)};
}

std::string lower(std::string s) {
    for (auto& ch : s)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

// The 1-thread read probe over a doubling working set, on one arena (the largest set's):
// each point ~16 MiB per timing, 5 timings (3 from 64 MiB on, a pass each).
std::vector<SweepPoint> read_sweep(int ceilings_cpu) {
    std::vector<SweepPoint> points;
    constexpr std::int64_t kMin = std::int64_t(16) << 10;
    std::int64_t max_bytes = std::int64_t(512) << 20;
    if (const auto mem = host_info().memory_bytes; mem > 0)
        max_bytes = std::min<std::int64_t>(max_bytes, std::int64_t(mem) / 8);
    if (max_bytes < 4 * kMin)
        return points;
    const OneThreadPin pin(1, ceilings_cpu);
    const Arena arena(max_bytes / 4, 1);
    for (std::int64_t ws = kMin; ws <= max_bytes; ws *= 2) {
        announce_prepare_step("CPU ceilings, read sweep at " + mib_or_kib(double(ws)));
        const bool big = ws >= (std::int64_t(64) << 20);
        const auto r = run_probe(Probe::Read, arena, 1, false, big ? 3 : 5,
                                 big ? 0.0 : double(16 << 20), ws / 4);
        points.push_back({double(ws), r.best});
    }
    return points;
}

// The working set of the DRAM probes: 4x the last-level cache (at least 128 MiB), so no
// cache holds it; smaller where the read sweep shows this process already at DRAM
// bandwidth far below that. A VM reports the host's whole last level (480 MiB on a 2-vCPU
// Granite Rapids guest, whose reads were flat at 12-13 GB/s from 128 MiB to 2 GiB while
// 4 x 480 MiB made every probe run hold ~8 GB and take 100 s; its sweep read 21.8, 18.1 and
// 17.1 GB/s at 128, 256 and 512 MiB, and the 1,920 MiB probe 17.2): where the sweep's points
// from some size S >= 128 MiB to its end (S and at least 2 x S) all read within 20 % of its
// last (a busy host's noise, where a cache's step is 1.5-3x), no cache serves S, and 2 x S is
// DRAM. A real cache that large reads far above DRAM at S and keeps the 4 x rule.
constexpr double kDramFlatness = 0.2;
std::int64_t dram_working_set(const std::vector<SweepPoint>& sweep, std::int64_t llc) {
    constexpr std::int64_t kMinDram = std::int64_t(128) << 20;
    const std::int64_t by_cache = std::max<std::int64_t>(kMinDram, 4 * llc);
    // Under a sanitizer (no sweep: its timings measure the instrumentation) the figures mean
    // nothing, and a 4 x LLC set is seconds of checked accesses per pass (1,920 MiB on the
    // 480 MiB guest above: a row that large, checked, outlasted the worker's 10 s of
    // silence). 2 x 128 MiB keeps the same code paths, sized past most last levels.
    if (kSanitized)
        return std::min(by_cache, 2 * kMinDram);
    if (sweep.size() < 2 || !(sweep.back().gbs > 0))
        return by_cache;
    const double last = sweep.back().gbs;
    std::size_t first_flat = sweep.size();
    for (std::size_t i = sweep.size(); i-- > 0;) {
        if (std::abs(sweep[i].gbs - last) > kDramFlatness * last)
            break;
        first_flat = i;
    }
    while (first_flat < sweep.size() && sweep[first_flat].working_set_bytes < double(kMinDram))
        ++first_flat;
    if (sweep.size() - first_flat < 2)
        return by_cache;
    return std::min(by_cache, std::int64_t(2 * sweep[first_flat].working_set_bytes));
}

// Round 2's ceilings into round 1's: each keeps the better of its two values (with that
// round's method and spread).
void keep_best(CpuPeaks& p, const CpuPeaks& again) {
    for (const auto& c : again.ceilings) {
        auto it = std::find_if(p.ceilings.begin(), p.ceilings.end(),
                               [&](const Ceiling& k) { return k.id == c.id; });
        if (it == p.ceilings.end() || !(c.value > it->value))
            continue;
        *it = c;
        if (const auto s = again.spread.find(c.id); s != again.spread.end())
            p.spread[c.id] = s->second;
    }
}

CpuPeaks measure_all(int ceilings_cpu) {
    CpuPeaks p;
    const int isa = probe_isa();
    auto& pool = ThreadPool::instance();
    const std::int64_t all = pool.size();
    const auto& cpu = cpu_info();
    // Per-core caches serve all threads with their combined capacity (one per core: SMT
    // siblings share theirs).
    const std::int64_t cores = std::max<std::int64_t>(
        1, std::min<std::int64_t>(all, cpu.physical_cores ? cpu.physical_cores : all));
    // The level below's capacity (1 thread, all threads): a level is probed at the low end
    // of its range, 4x the level below but at most half its own capacity, so the probe sees
    // the best the level gives and a row that fits in it cannot beat it.
    // One round of the level probes into `p`.
    // The read sweep first: it finds where this process meets DRAM (dram_working_set).
    if (!kSanitized) {
        std::vector<SweepCache> caches;
        for (const auto& lv : cpu_probe_levels())
            if (lv.level != "DRAM")
                caches.push_back({lv.level, double(lv.capacity)});
        p.sweep = read_sweep(ceilings_cpu);
        // Where only the sweep can bring the DRAM set below 4 x the last level, a point a
        // busy moment read low must not keep it there: up to two more sweeps, each point the
        // best of its readings (a cache reads high every time, a neighbour's burst once).
        const auto llc = cpu.last_level_cache_bytes();
        for (int again = 0;
             again < 2 && !p.sweep.empty() && dram_working_set(p.sweep, llc) >= 4 * llc &&
             double(4 * llc) > p.sweep.back().working_set_bytes;
             ++again) {
            const auto more = read_sweep(ceilings_cpu);
            for (std::size_t i = 0; i < std::min(more.size(), p.sweep.size()); ++i)
                p.sweep[i].gbs = std::max(p.sweep[i].gbs, more[i].gbs);
        }
        p.plateaus = detect_plateaus(p.sweep, caches, "DRAM");
    }
    const std::vector<SweepPoint>& out_sweep = p.sweep;
    auto probe_levels = [&](CpuPeaks& out) {
        std::int64_t below_1t = 0, below_all = 0;
        for (const auto& lv : cpu_probe_levels()) {
            const bool dram = lv.level == "DRAM";
            const std::int64_t cap_all = lv.per_core ? lv.capacity * cores : lv.capacity;
            // L1 at 3/4 of its size: at half, the per-call overhead of its short passes shows.
            const bool l1 = lv.level == "L1";
            std::int64_t ws_1t = l1 ? lv.capacity * 3 / 4 : lv.capacity / 2,
                         ws_all = l1 ? cap_all * 3 / 4 : cap_all / 2;
            if (below_1t > 0)
                ws_1t = std::min(ws_1t, 4 * below_1t);
            if (below_all > 0)
                ws_all = std::min(ws_all, 4 * below_all);
            below_1t = lv.capacity;
            below_all = cap_all;
            std::string dram_reason;
            if (dram) {
                // At least 128 MiB: in a VM the reported last level may be one CCD's or less
                // than the host's (and a 3D V-Cache part has 96 MiB per CCD); at 64 MiB the
                // triad's two read arrays (43 MiB) partly stayed in a 32 MiB L3 and read
                // ~10 % high (48 against 39-42 GB/s from 128 MiB to 1 GiB, which agree).
                // Smaller than 4 x the last level only where the sweep shows DRAM below it.
                ws_1t = ws_all = dram_working_set(out_sweep, cpu.last_level_cache_bytes());
                const auto mem = host_info().memory_bytes;
                if (mem > 0 && ws_all > mem / 4)
                    dram_reason =
                        "not measured: a DRAM working set (" + mib_or_kib(double(ws_all)) +
                        ", 4 x the last-level cache) is more than a quarter of memory (" +
                        mib_or_kib(double(mem)) + "); a DRAM working set cannot be had here";
            }
            const std::string id = lower(lv.level);
            for (std::int64_t threads : {std::int64_t(1), all}) {
                const OneThreadPin pin(threads, ceilings_cpu);
                if (pin.cpu() >= 0)
                    out.pinned_cpu = pin.cpu();
                const std::int64_t ws = threads == 1 ? ws_1t : ws_all;
                std::unique_ptr<Arena> arena;
                if (dram_reason.empty())
                    arena = std::make_unique<Arena>(ws / 4, threads == 1 ? 1 : all);
                // DRAM: 7 timings, so the spread has a median to go by.
                // In-cache passes are short: repeat each to ~16 MiB per thread per timing.
                // Under a sanitizer every load is checked and the figures mean nothing: the same
                // passes run (same arenas, slices and forms), 3 timings of ~1 MiB, about 10x less.
                const int timings = kSanitized ? 3 : dram ? 7 : 15;
                // DRAM: each timing is 4 passes (~13 ms at 40 GB/s, 1 thread). One core's DRAM
                // bandwidth is bound by its outstanding misses, so by the memory latency, which
                // other tenants of a shared host change from millisecond to millisecond: the best
                // of 42 single 3 ms passes caught idle moments (48 GB/s) that no row's median
                // sees, while 4-pass timings agree within ~8 % (37.7-40.9 over three runs here).
                // DRAM: the timed windows after 0.2 s of the pattern, untimed. DRAM bandwidth
                // climbs while a core streams: on a 2-vCPU Zen 5 guest, quiet, likwid-bench's
                // stream_mem read 47 GB/s over its first pass, 59 over 4 and 66 over 64 (every
                // pass of a longer run faster), and this read probe's all-thread windows, 7 in
                // all (~60 ms), sat at 0.84 of likwid-bench's 64-pass ddot (100 against 119
                // GB/s) where the triad's and copy's 21 and 35 windows sat at 0.91-0.92.
                const double warm_s = dram && !kSanitized ? 0.2 : 0.0;
                const double min_bytes =
                    kSanitized ? double(1 << 20)
                    : dram ? 4.0 * double(ws / std::max<std::int64_t>(1, threads == 1 ? 1 : all))
                           : double(16 << 20);
                // DRAM also gets the copy: its one read per write is rms_norm's mix, which
                // the bus serves slower than a triad's two (one thread of a 2-vCPU Zen 5
                // guest: 0.89-1.0 of the triad over four runs; likwid-bench's copy_mem
                // 0.90-0.93 of its stream_mem beside them), so the triad overstated what such
                // a row could reach (choose_ceiling).
                std::vector<Probe> probes{Probe::Read, Probe::Triad};
                if (dram)
                    probes.push_back(Probe::Copy);
                for (Probe probe : probes) {
                    Ceiling c;
                    const bool read = probe == Probe::Read;
                    const char* pattern = read ? "read" : probe == Probe::Triad ? "triad" : "copy";
                    const std::string tsuffix = threads == 1 ? "1t" : "all";
                    c.id = id + "." + pattern + "." + tsuffix;
                    c.kind = "bandwidth";
                    c.level = lv.level;
                    c.threads = threads == 1 ? 1 : 0;
                    c.measured = true;
                    c.working_set_bytes = double(ws);
                    c.capacity_bytes =
                        dram ? 0.0
                             : double(lv.per_core && threads != 1 ? lv.capacity * cores
                                                                  : lv.capacity);
                    const std::string what =
                        read ? std::string("read (sum), fp32, ") + isa_name(isa) + " loads"
                        : probe == Probe::Triad ? std::string("STREAM triad, fp32")
                                                : std::string("copy (a = s b), fp32");
                    const std::string who = threads_text(threads, pin.cpu());
                    if (!dram_reason.empty()) {
                        c.value = 0;
                        c.method = what + ", " + who + ": " + dram_reason;
                    } else {
                        announce_prepare_step("CPU ceilings, " + lv.level + " " + pattern + ", " +
                                              who);
                        const auto r = run_probe(probe, *arena, threads == 1 ? 1 : all, dram,
                                                 timings, min_bytes, 0, warm_s);
                        c.value = r.best;
                        out.spread[c.id] = r.spread;
                        c.method = what + ", " + who + ", " + mib_or_kib(double(ws)) +
                                   (r.undisturbed ? "" : " (most timings preempted: reads low)");
                    }
                    out.ceilings.push_back(std::move(c));
                }
                if (all == 1)
                    break; // one thread is all threads: the "all" ceilings would be the same run
            }
        }
    };
    probe_levels(p);
    auto probe_fma = [&](CpuPeaks& out) {
        for (std::int64_t threads : {std::int64_t(1), all}) {
            const OneThreadPin pin(threads, ceilings_cpu);
            Ceiling c;
            c.id = threads == 1 ? "fma.fp32.1t" : "fma.fp32.all";
            c.kind = "compute";
            c.threads = threads == 1 ? 1 : 0;
            announce_prepare_step(std::string("CPU ceilings, compute peak, ") +
                                  (threads == 1 ? "1 thread" : "all threads"));
            const auto r = run_fma(isa, threads);
            c.value = r.best;
            out.spread[c.id] = r.spread;
            c.method = compute_loop_name(isa) + ", fp32, " + threads_text(threads, pin.cpu());
            out.ceilings.push_back(std::move(c));
            if (all == 1)
                break;
        }
    };
    probe_fma(p);
    // A second round of the level probes and the FMA peak, seconds after the first (the
    // compute peak lies between), each ceiling the better of its two rounds. On a shared host a
    // neighbour's burst can cover a whole probe: one run read l3.triad.1t 52 and
    // fma.fp32.all 151 where the next read 78 and 188, another dram.triad.all 40 where
    // others read 45-52, and rows later in those runs stood at 117-120 % of them.
    if (!kSanitized) {
        CpuPeaks again;
        probe_levels(again);
        probe_fma(again);
        keep_best(p, again);
    }
    if (const auto* t = p.find(all == 1 ? "dram.triad.1t" : "dram.triad.all")) {
        p.triad_gbs = t->value;
        p.triad_bytes = std::int64_t(t->working_set_bytes);
    }
    p.fma_isa = isa_name(isa);
    if (const auto* f = p.find(all == 1 ? "fma.fp32.1t" : "fma.fp32.all"))
        p.fma_gflops = f->value;
    // With one thread the all-thread ceilings are the single-thread ones: list them too, so
    // a threaded row finds its ceiling by id.
    if (all == 1) {
        std::vector<Ceiling> extra;
        for (const auto& c : p.ceilings) {
            Ceiling a = c;
            a.id = c.id.substr(0, c.id.size() - 2) + "all";
            a.threads = 0;
            if (const auto it = p.spread.find(c.id); it != p.spread.end())
                p.spread[a.id] = it->second;
            extra.push_back(std::move(a));
        }
        p.ceilings.insert(p.ceilings.end(), extra.begin(), extra.end());
    }
    return p;
}

} // namespace

double cpu_read_probe(int isa, std::int64_t n, const float* x) {
    return isa == 4   ? cpu::avx512::read_probe(n, x)
           : isa == 3 ? cpu::avx2::read_probe(n, x)
                      : cpu::generic::read_probe(n, x);
}

void cpu_copy_probe(int form, std::int64_t n, float* a, const float* b) {
    const bool stream = form % 100 >= 10;
    const int lanes = form >= 100 ? 2 : 1;
    switch (form % 10) {
    case 4:
        cpu::avx512::scale(n, b, 0.5f, a, stream, lanes);
        break;
    case 3:
        cpu::avx2::scale(n, b, 0.5f, a, stream, lanes);
        break;
    default:
        if (stream)
            cpu::generic::scale_stream(n, a, b, 0.5f);
        else
            cpu::generic::scale(n, a, b, 0.5f);
        break;
    }
}

struct CpuMemoryProbe::State {
    Probe probe;
    std::int64_t threads;
    int ceilings_cpu; // the set's pinned_cpu
    Arena arena;
};

CpuMemoryProbe::CpuMemoryProbe(std::string_view id, const CpuPeaks& peaks) {
    // "dram.<pattern>.<1t|all>", a measured ceiling of `peaks`.
    const auto parts = text::split(id, ".");
    if (parts.size() != 3 || parts[0] != "dram" || (parts[2] != "1t" && parts[2] != "all"))
        return;
    std::optional<Probe> probe;
    if (parts[1] == "read")
        probe = Probe::Read;
    else if (parts[1] == "triad")
        probe = Probe::Triad;
    else if (parts[1] == "copy")
        probe = Probe::Copy;
    if (!probe)
        return;
    const auto* c = peaks.find(id);
    if (!c || !c->measured || !(c->value > 0) || !(c->working_set_bytes > 0))
        return;
    const std::int64_t threads = parts[2] == "1t" ? 1 : ThreadPool::instance().size();
    // The ceiling's own working set and slices (measure_all).
    m_state.reset(new State{*probe, threads, peaks.pinned_cpu,
                            Arena(std::int64_t(c->working_set_bytes) / 4, threads)});
}

CpuMemoryProbe::~CpuMemoryProbe() = default;

std::vector<double> CpuMemoryProbe::time(int timings) const {
    if (!m_state || timings <= 0)
        return {};
    // One pass a timing: a row's sample is one call, one pass over its buffers. A 1-thread
    // probe on its ceiling's CPU (inside a pinned row this is the row's already).
    const OneThreadPin pin(m_state->threads, m_state->ceilings_cpu);
    return run_probe(m_state->probe, m_state->arena, m_state->threads, true, timings, 0.0).timings;
}

std::vector<CpuProbeLevel> cpu_probe_levels() {
    std::vector<CpuProbeLevel> levels;
    const auto& cpu = cpu_info();
    for (int level = 1; level <= 3; ++level) {
        std::int64_t size = 0;
        for (const auto& c : cpu.caches)
            if (c.level == level && c.type != "instruction")
                size = std::max(size, c.size_bytes);
        if (size > 0)
            levels.push_back({"L" + std::to_string(level), size, level <= 2});
    }
    levels.push_back({"DRAM", 0, false});
    return levels;
}

const Ceiling* CpuPeaks::find(std::string_view id) const {
    for (const auto& c : ceilings)
        if (c.id == id)
            return &c;
    return nullptr;
}

nlohmann::json CpuPeaks::to_json() const {
    nlohmann::json j = {{"triad_gbs", triad_gbs},   {"triad_bytes", triad_bytes},
                        {"fma_gflops", fma_gflops}, {"fma_isa", fma_isa},
                        {"ceilings", ceilings},     {"spread", spread}};
    if (!sweep.empty())
        j["sweep"] = sweep_json(sweep, plateaus, {});
    if (pinned_cpu >= 0)
        j["pinned_cpu"] = pinned_cpu;
    return j;
}

CpuPeaks CpuPeaks::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error("peaks: expected an object, got " + std::string(j.type_name()));
    CpuPeaks p;
    auto num = [&](const char* key) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number())
            throw std::runtime_error(std::string("peaks.") + key + ": expected a number");
        return it->get<double>();
    };
    p.triad_gbs = num("triad_gbs");
    p.triad_bytes = std::int64_t(num("triad_bytes"));
    p.fma_gflops = num("fma_gflops");
    if (const auto it = j.find("fma_isa"); it != j.end() && it->is_string())
        p.fma_isa = it->get<std::string>();
    if (const auto it = j.find("pinned_cpu"); it != j.end()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
            it->get<std::int64_t>() > (std::int64_t(1) << 20))
            throw std::runtime_error("peaks.pinned_cpu: expected a CPU number (0 or more), got " +
                                     it->dump());
        p.pinned_cpu = it->get<int>();
    }
    if (const auto it = j.find("spread"); it != j.end()) {
        if (!it->is_object())
            throw std::runtime_error("peaks.spread: expected an object");
        for (const auto& [id, v] : it->items()) {
            if (!v.is_number())
                throw std::runtime_error("peaks.spread." + id + ": expected a number");
            p.spread[id] = v.get<double>();
        }
    }
    if (const auto it = j.find("sweep"); it != j.end() && it->is_object()) {
        auto number = [](const nlohmann::json& o, const char* key, const std::string& where) {
            const auto k = o.find(key);
            if (k == o.end() || !k->is_number())
                throw std::runtime_error(where + "." + key + ": expected a number");
            return k->get<double>();
        };
        if (const auto pts = it->find("points"); pts != it->end() && pts->is_array())
            for (std::size_t i = 0; i < pts->size(); ++i) {
                const std::string where = "peaks.sweep.points[" + std::to_string(i) + "]";
                p.sweep.push_back({number((*pts)[i], "working_set_bytes", where),
                                   number((*pts)[i], "gbs", where)});
            }
        if (const auto pls = it->find("plateaus"); pls != it->end() && pls->is_array())
            for (std::size_t i = 0; i < pls->size(); ++i) {
                const auto& o = (*pls)[i];
                const std::string where = "peaks.sweep.plateaus[" + std::to_string(i) + "]";
                Plateau pl;
                if (const auto l = o.find("level"); l != o.end() && l->is_string())
                    pl.level = l->get<std::string>();
                pl.gbs = number(o, "gbs", where);
                pl.first_bytes = number(o, "first_bytes", where);
                pl.last_bytes = number(o, "last_bytes", where);
                pl.capacity_bytes = number(o, "capacity_bytes", where);
                p.plateaus.push_back(std::move(pl));
            }
    }
    if (const auto it = j.find("ceilings"); it != j.end()) {
        if (!it->is_array())
            throw std::runtime_error("peaks.ceilings: expected an array");
        for (std::size_t i = 0; i < it->size(); ++i) {
            try {
                p.ceilings.push_back((*it)[i].get<Ceiling>());
            } catch (const std::exception& e) {
                throw std::runtime_error("peaks.ceilings[" + std::to_string(i) + "]: " + e.what());
            }
        }
    }
    return p;
}

double measure_triad_gbs(std::int64_t bytes, int repeats) {
    const std::int64_t all = ThreadPool::instance().size();
    Arena arena(std::max<std::int64_t>(3072, bytes / 4), all);
    return run_probe(Probe::Triad, arena, all, true, std::max(1, repeats), 0.0).best;
}

int one_thread_cpu(int ceilings_cpu) {
    const int own = detail::measurement_cpu();
    if (own < 0)
        return -1; // SWITCHYARD_PIN_CPU=off
    return detail::process_may_run_on(ceilings_cpu) ? ceilings_cpu : own;
}

std::string pin_cpu_problem(int ceilings_cpu) {
    if (auto problem = detail::measurement_cpu_problem(); !problem.empty()) {
        // The CPU the 1-thread rows really run on (one_thread_cpu()), as their pinned_cpu says.
        const int cpu = one_thread_cpu(ceilings_cpu);
        if (cpu < 0)
            return problem;
        return problem + ": 1-thread probes and rows run on CPU " + std::to_string(cpu) +
               (cpu == ceilings_cpu && cpu != detail::measurement_cpu()
                    ? ", where the 1-thread ceilings in use were measured"
                    : ", where it was running");
    }
    // A CPU named by the user that the ceilings in use overrule (one_thread_cpu()): say so,
    // or the rows would run on another CPU than the one asked for without a word.
    const int named = detail::measurement_cpu();
    const int peaks = ceilings_cpu;
    if (detail::measurement_cpu_named() && detail::process_may_run_on(peaks) && peaks != named)
        return "SWITCHYARD_PIN_CPU=" + std::to_string(named) +
               " (--pin-cpu) is not followed for rows: the 1-thread ceilings in use were "
               "measured on CPU " +
               std::to_string(peaks) +
               " (an earlier report's, --ceilings-from), so 1-thread rows run there, where "
               "they are judged; measure the ceilings in this run to use CPU " +
               std::to_string(named);
    return {};
}

CpuPeaks measure_cpu_peaks(int ceilings_cpu) {
    return measure_all(ceilings_cpu);
}

} // namespace switchyard
