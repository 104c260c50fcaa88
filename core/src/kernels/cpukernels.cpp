// SPDX-License-Identifier: MIT
#include "kernels/cpukernels.h"

#include <switchyard/hardware/isa.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/kernels/reference.h>

#include "kernels/cpuvariants.h"
#include "kernels/threadpool.h"

#if defined(SWITCHYARD_HAVE_OPENBLAS)
#include <cblas.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace switchyard {

bool cpu_supports_x86_64_v3() noexcept {
    static const bool ok = cpu_supports("x86-64-v3");
    return ok;
}

bool cpu_supports_x86_64_v4() noexcept {
    static const bool ok = cpu_supports("x86-64-v4");
    return ok;
}

namespace {

// The guard every x86-64-v3 entry point passes first: TupleRegistry::lookup ignores
// availability, so a caller could reach the cell's fn on a v2-only machine.
void require_v3() {
    if (!cpu_supports_x86_64_v3())
        throw std::runtime_error("this CPU cannot run x86-64-v3 (AVX2+FMA) kernels");
}
// The same for the x86-64-v4 (AVX-512) entry points.
void require_v4() {
    if (!cpu_supports_x86_64_v4())
        throw std::runtime_error(
            "this CPU cannot run x86-64-v4 (AVX-512F/BW/VL) kernels; use an x86-64-v3 variant");
}

// Splits [0, n) into at most `parts` chunks whose boundaries are multiples of `align`.
template <class Fn> void split_range(std::int64_t n, std::int64_t align, Fn&& fn) {
    auto& pool = ThreadPool::instance();
    const std::int64_t units = (n + align - 1) / align;
    const std::int64_t parts =
        std::max<std::int64_t>(1, std::min<std::int64_t>(pool.size(), units));
    pool.parallel_for(parts, [&](std::int64_t t) {
        const std::int64_t u0 = units * t / parts, u1 = units * (t + 1) / parts;
        const std::int64_t i0 = std::min(n, u0 * align), i1 = std::min(n, u1 * align);
        if (i1 > i0)
            fn(i0, i1);
    });
}

// Elements past which flow_match's AVX2 kernel switches to non-temporal stores.
constexpr std::int64_t kStreamThresholdElems = std::int64_t(1) << 20;

// ---- per-op adapters from KernelArgs ----------------------------------------------------

void fm_generic(const KernelArgs& a) {
    cpu::generic::flow_match(a.dims[0], a.in[0], a.in[1], float(a.scalars[0]), a.out[0]);
}
void fm_generic_mt(const KernelArgs& a) {
    split_range(a.dims[0], 1024, [&](std::int64_t i0, std::int64_t i1) {
        cpu::generic::flow_match(i1 - i0, a.in[0] + i0, a.in[1] + i0, float(a.scalars[0]),
                                 a.out[0] + i0);
    });
}
cpu::SdeCoefs sde_coefs(const KernelArgs& a) {
    return cpu::SdeCoefs::from(a.scalars[0], a.scalars[1], a.scalars[2], a.scalars[3]);
}
void sde_generic(const KernelArgs& a) {
    cpu::generic::flow_sde(a.dims[0], a.dims[1], a.in[0], a.in[1], a.in[2], sde_coefs(a), a.out[0],
                           a.out[1]);
}
void sde_generic_mt(const KernelArgs& a) {
    const auto c = sde_coefs(a);
    const std::int64_t d = a.dims[1];
    split_range(a.dims[0], 1, [&](std::int64_t r0, std::int64_t r1) {
        const std::int64_t off = r0 * d;
        cpu::generic::flow_sde(r1 - r0, d, a.in[0] + off, a.in[1] + off, a.in[2] + off, c,
                               a.out[0] + off, a.out[1] + r0);
    });
}

void rms_generic(const KernelArgs& a) {
    cpu::generic::rms_norm(a.dims[0], a.dims[1], a.in[0], a.in[1], a.scalars[0], a.out[0]);
}
void rms_generic_mt(const KernelArgs& a) {
    const std::int64_t d = a.dims[1];
    split_range(a.dims[0], 1, [&](std::int64_t r0, std::int64_t r1) {
        cpu::generic::rms_norm(r1 - r0, d, a.in[0] + r0 * d, a.in[1], a.scalars[0],
                               a.out[0] + r0 * d);
    });
}

// ---- the SIMD cells, one template per op over the ISA's entry points ----------------------

// What the adapters need of an ISA: its runtime guard and cpuvariants.h's entry points.
struct IsaV3 {
    static constexpr cpu::GemmBlocking kGemm = cpu::avx2::kGemm;
    static void require() { require_v3(); }
    static constexpr auto flow_match = cpu::avx2::flow_match;
    static constexpr auto flow_sde = cpu::avx2::flow_sde;
    static constexpr auto rms_norm = cpu::avx2::rms_norm;
    static constexpr auto gemm = cpu::avx2::gemm;
    static constexpr auto gemm_pack_a = cpu::avx2::gemm_pack_a;
    static constexpr auto gemm_pack_b = cpu::avx2::gemm_pack_b;
    static constexpr auto gemm_macro = cpu::avx2::gemm_macro;
};
struct IsaV4 {
    static constexpr cpu::GemmBlocking kGemm = cpu::avx512::kGemm;
    static void require() { require_v4(); }
    static constexpr auto flow_match = cpu::avx512::flow_match;
    static constexpr auto flow_sde = cpu::avx512::flow_sde;
    static constexpr auto rms_norm = cpu::avx512::rms_norm;
    static constexpr auto gemm = cpu::avx512::gemm;
    static constexpr auto gemm_pack_a = cpu::avx512::gemm_pack_a;
    static constexpr auto gemm_pack_b = cpu::avx512::gemm_pack_b;
    static constexpr auto gemm_macro = cpu::avx512::gemm_macro;
};

template <class Isa> void fm_simd(const KernelArgs& a) {
    Isa::require();
    Isa::flow_match(a.dims[0], a.in[0], a.in[1], float(a.scalars[0]), a.out[0],
                    a.dims[0] >= kStreamThresholdElems);
}
template <class Isa> void fm_simd_mt(const KernelArgs& a) {
    Isa::require();
    const bool stream = a.dims[0] >= kStreamThresholdElems;
    split_range(a.dims[0], 1024, [&](std::int64_t i0, std::int64_t i1) {
        Isa::flow_match(i1 - i0, a.in[0] + i0, a.in[1] + i0, float(a.scalars[0]), a.out[0] + i0,
                        stream);
    });
}

template <class Isa> void sde_simd(const KernelArgs& a) {
    Isa::require();
    Isa::flow_sde(a.dims[0], a.dims[1], a.in[0], a.in[1], a.in[2], sde_coefs(a), a.out[0], a.out[1],
                  a.dims[0] * a.dims[1] >= kStreamThresholdElems);
}
template <class Isa> void sde_simd_mt(const KernelArgs& a) {
    Isa::require();
    const auto c = sde_coefs(a);
    const std::int64_t d = a.dims[1];
    const bool stream = a.dims[0] * d >= kStreamThresholdElems;
    split_range(a.dims[0], 1, [&](std::int64_t r0, std::int64_t r1) {
        const std::int64_t off = r0 * d;
        Isa::flow_sde(r1 - r0, d, a.in[0] + off, a.in[1] + off, a.in[2] + off, c, a.out[0] + off,
                      a.out[1] + r0, stream);
    });
}

// rms_norm streams its output past the caches from the same size as flow_match.
template <class Isa> void rms_simd(const KernelArgs& a) {
    Isa::require();
    Isa::rms_norm(a.dims[0], a.dims[1], a.in[0], a.in[1], a.scalars[0], a.out[0],
                  a.dims[0] * a.dims[1] >= kStreamThresholdElems);
}
template <class Isa> void rms_simd_mt(const KernelArgs& a) {
    Isa::require();
    const std::int64_t d = a.dims[1];
    const bool stream = a.dims[0] * d >= kStreamThresholdElems;
    split_range(a.dims[0], 1, [&](std::int64_t r0, std::int64_t r1) {
        Isa::rms_norm(r1 - r0, d, a.in[0] + r0 * d, a.in[1], a.scalars[0], a.out[0] + r0 * d,
                      stream);
    });
}

// gemm packing workspace: one slice per thread (its packed B block, then its packed A block),
// each Isa::kGemm.workspace_floats() floats; slice `slot` of the caller's workspace when it
// is big enough and 64-byte aligned, else a thread-local buffer of our own.
template <class Isa>
constexpr std::size_t kGemmSliceBytes = Isa::kGemm.workspace_floats() * sizeof(float);

template <class Isa> float* gemm_workspace(const KernelArgs& a, std::int64_t slot) {
    constexpr std::size_t slice = kGemmSliceBytes<Isa>;
    auto base = reinterpret_cast<std::uintptr_t>(a.workspace);
    const std::size_t need = slice * std::size_t(slot + 1);
    if (a.workspace && a.workspace_bytes >= need && base % 64 == 0)
        return reinterpret_cast<float*>(base + slice * std::size_t(slot));
    struct Free {
        void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
    };
    thread_local std::unique_ptr<float, Free> own(
        static_cast<float*>(::operator new[](slice, std::align_val_t(64))));
    return own.get();
}

void gemm_generic(const KernelArgs& a) {
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    cpu::generic::gemm(m, n, k, a.in[0], k, a.in[1], n, float(a.scalars[0]), float(a.scalars[1]),
                       a.out[0], n);
}
template <class Isa> void gemm_simd(const KernelArgs& a) {
    Isa::require();
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    Isa::gemm(m, n, k, a.in[0], k, a.in[1], n, float(a.scalars[0]), float(a.scalars[1]), a.out[0],
              n, gemm_workspace<Isa>(a, 0));
}

// Splits the larger of M and N across the pool, each thread running a whole gemm on its
// part (whole micro-tiles each). Isa = void: the baseline gemm.
template <class Isa> void gemm_split(const KernelArgs& a) {
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    const float alpha = float(a.scalars[0]), beta = float(a.scalars[1]);
    const float* A = a.in[0];
    const float* B = a.in[1];
    float* C = a.out[0];
    auto& pool = ThreadPool::instance();
    const bool by_rows = m >= n;
    const std::int64_t extent = by_rows ? m : n;
    std::int64_t align = 16;
    if constexpr (!std::is_void_v<Isa>)
        align = by_rows ? Isa::kGemm.mr : Isa::kGemm.nr;
    const std::int64_t units = (extent + align - 1) / align;
    const std::int64_t parts =
        std::max<std::int64_t>(1, std::min<std::int64_t>(pool.size(), units));
    pool.parallel_for(parts, [&](std::int64_t t) {
        const std::int64_t i0 = std::min(extent, units * t / parts * align);
        const std::int64_t i1 = std::min(extent, units * (t + 1) / parts * align);
        if (i1 <= i0)
            return;
        const float* As = by_rows ? A + i0 * k : A;
        const float* Bs = by_rows ? B : B + i0;
        float* Cs = by_rows ? C + i0 * n : C + i0;
        const std::int64_t ms = by_rows ? i1 - i0 : m, ns = by_rows ? n : i1 - i0;
        if constexpr (std::is_void_v<Isa>)
            cpu::generic::gemm(ms, ns, k, As, k, Bs, n, alpha, beta, Cs, n);
        else
            Isa::gemm(ms, ns, k, As, k, Bs, n, alpha, beta, Cs, n, gemm_workspace<Isa>(a, t));
    });
}

// The threaded SIMD gemm when M is the larger extent: per (NC, KC) block the threads pack
// B together into one shared panel set (slot 0's B part, so it sits in L3 once), then
// claim row blocks of C one at a time (each thread packs its A block into its own slot's
// A part). Claiming keeps both cores busy when one is slowed by another process, which a
// fixed half each did not; every parallel_for is the barrier between the two phases.
template <class Isa> void gemm_simd_mt(const KernelArgs& a) {
    Isa::require();
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    auto& pool = ThreadPool::instance();
    const std::int64_t threads = pool.size();
    if (threads == 1 || m < n || k == 0) {
        gemm_split<Isa>(a);
        return;
    }
    constexpr cpu::GemmBlocking g = Isa::kGemm;
    const float alpha = float(a.scalars[0]), beta = float(a.scalars[1]);
    const float* A = a.in[0];
    const float* B = a.in[1];
    float* C = a.out[0];
    // Row blocks of at most g.mc rows, at least four a thread and as many as a multiple of
    // the threads, of whole micro-tiles as even as they go (block ib: micro-tile rows
    // [units * ib / blocks, units * (ib + 1) / blocks)): no thread waits long for another's
    // last block, even when another process takes a core for a while.
    const std::int64_t units = (m + g.mr - 1) / g.mr;
    const std::int64_t units_per_block = g.mc / g.mr;
    const std::int64_t min_blocks =
        std::max((units + units_per_block - 1) / units_per_block, 4 * threads);
    const std::int64_t blocks = std::min(units, (min_blocks + threads - 1) / threads * threads);
    float* packed_b = gemm_workspace<Isa>(a, 0);
    for (std::int64_t j0 = 0; j0 < n; j0 += g.nc) {
        const std::int64_t nc = std::min(g.nc, n - j0);
        const std::int64_t panels = (nc + g.nr - 1) / g.nr;
        // Four packing tasks a thread, claimed as the row blocks are: a thread slowed by
        // another process does not hold the others up for a whole share.
        const std::int64_t pack_parts = std::min(4 * threads, panels);
        for (std::int64_t p0 = 0; p0 < k; p0 += g.kc) {
            const std::int64_t kc = std::min(g.kc, k - p0);
            pool.parallel_for(pack_parts, [&](std::int64_t t) {
                const std::int64_t q0 = panels * t / pack_parts;
                const std::int64_t q1 = panels * (t + 1) / pack_parts;
                const std::int64_t c0 = q0 * g.nr, c1 = std::min(nc, q1 * g.nr);
                if (c1 > c0)
                    Isa::gemm_pack_b(kc, c1 - c0, B + p0 * n + j0 + c0, n, packed_b + c0 * kc);
            });
            const float cb = p0 == 0 ? beta : 1.0f;
            pool.parallel_for(blocks, [&](std::int64_t ib) {
                const std::int64_t i0 = units * ib / blocks * g.mr;
                const std::int64_t mc = std::min(m, units * (ib + 1) / blocks * g.mr) - i0;
                float* packed_a =
                    gemm_workspace<Isa>(a, std::int64_t(ThreadPool::worker_index())) + g.b_floats();
                Isa::gemm_pack_a(mc, kc, A + i0 * k + p0, k, packed_a);
                Isa::gemm_macro(mc, nc, kc, packed_a, packed_b, C + i0 * n + j0, n, alpha, cb);
            });
        }
    }
}

#if defined(SWITCHYARD_HAVE_OPENBLAS)
void gemm_openblas(const KernelArgs& a) {
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(m), blasint(n), blasint(k),
                float(a.scalars[0]), a.in[0], blasint(k), a.in[1], blasint(n), float(a.scalars[1]),
                a.out[0], blasint(n));
}
#endif

} // namespace

OpenBlasInfo openblas_info() {
    OpenBlasInfo info;
#if defined(SWITCHYARD_HAVE_OPENBLAS)
    info.present = true;
    if (const char* c = openblas_get_corename())
        info.corename = c;
    info.threads = openblas_get_num_threads();
    if (const char* c = openblas_get_config())
        info.config = c;
#endif
    return info;
}

nlohmann::json OpenBlasInfo::to_json() const {
    return {{"present", present}, {"corename", corename}, {"threads", threads}, {"config", config}};
}

std::string openblas_core_level(std::string_view corename) {
    std::string core;
    for (char ch : corename)
        core += char(std::tolower(static_cast<unsigned char>(ch)));
    if (core == "skylakex" || core == "cooperlake" || core == "sapphirerapids" || core == "zen4" ||
        core == "zen5")
        return "x86-64-v4";
    // Sandybridge's kernels are AVX without FMA: beyond x86-64-v2, short of v3; taken as v3
    // (a cap at v2 measures no 256-bit loop that could bound them).
    if (core == "haswell" || core == "zen" || core == "skylake" || core == "excavator" ||
        core == "sandybridge")
        return "x86-64-v3";
    return {};
}

std::string openblas_core_warning(const OpenBlasInfo& info) {
    if (!info.present || info.corename.empty())
        return {};
    std::string core;
    for (char ch : info.corename)
        core += char(std::tolower(static_cast<unsigned char>(ch)));
    // OpenBLAS's fallbacks when DYNAMIC_ARCH does not recognise a CPU, and pre-AVX2 cores.
    static const char* const generic[] = {"prescott",  "generic", "katmai",  "coppermine",
                                          "northwood", "core2",   "penryn",  "dunnington",
                                          "nehalem",   "atom",    "opteron", "barcelona",
                                          "athlon",    "bobcat",  "unknown"};
    const bool is_generic =
        std::find(std::begin(generic), std::end(generic), core) != std::end(generic);
    const std::string level = openblas_core_level(core);
    const bool has_avx512_kernels = level == "x86-64-v4";
    const bool has_avx2_kernels = !level.empty() && core != "sandybridge";
    if (is_generic || (cpu_supports_x86_64_v3() && !has_avx2_kernels))
        return "OpenBLAS runs its generic '" + info.corename +
               "' core here: it did not recognise this CPU (or lacks its kernels), so the "
               "openblas gemm is far below this CPU's peak; use an OpenBLAS built for it "
               "(OPENBLAS_CORETYPE=Haswell or SkylakeX, or a newer OpenBLAS)";
    if (cpu_supports_x86_64_v4() && !has_avx512_kernels)
        return "OpenBLAS runs its '" + info.corename +
               "' core, which has no AVX-512 kernels, on a CPU with AVX-512: its gemm is "
               "below this CPU's peak (OPENBLAS_CORETYPE=SkylakeX, or a newer OpenBLAS)";
    return {};
}

void register_cpu_cells(CellRegistrar& r) {
    const auto threads = std::int64_t(ThreadPool::available_cpus());
    const std::function<bool()> v3 = [] { return cpu_supports_x86_64_v3(); };
    const std::function<bool()> v4 = [] { return cpu_supports_x86_64_v4(); };
    auto add = [&](std::string_view op, const char* arch, const char* variant, KernelFn fn,
                   std::function<bool()> available, std::int64_t workspace, Value meta) {
        r.add_kernel({std::string(op), "cpu", arch, variant, std::move(fn), std::move(available),
                      workspace, std::move(meta)});
    };
    const Value ref_meta = {{"isa", "scalar"}, {"threads", 1}, {"precision", "fp64 accumulate"}};
    const Value gen_meta = {{"isa", "baseline"}, {"threads", 1}};
    const Value gen_mt_meta = {{"isa", "baseline"}, {"threads", threads}};
    const Value v3_meta = {{"isa", "avx2+fma"}, {"threads", 1}};
    const Value v3_mt_meta = {{"isa", "avx2+fma"}, {"threads", threads}};
    const Value v4_meta = {{"isa", "avx512f+bw+vl+fma"}, {"threads", 1}};
    const Value v4_mt_meta = {{"isa", "avx512f+bw+vl+fma"}, {"threads", threads}};

    add(kFlowMatchStep, "generic", "reference", reference::flow_match_step_kernel, {}, 0, ref_meta);
    add(kFlowMatchStep, "generic", "default", fm_generic, {}, 0, gen_meta);
    add(kFlowMatchStep, "generic", "threaded", fm_generic_mt, {}, 0, gen_mt_meta);
    add(kFlowMatchStep, "x86-64-v3", "default", fm_simd<IsaV3>, v3, 0, v3_meta);
    add(kFlowMatchStep, "x86-64-v3", "threaded", fm_simd_mt<IsaV3>, v3, 0, v3_mt_meta);
    add(kFlowMatchStep, "x86-64-v4", "default", fm_simd<IsaV4>, v4, 0, v4_meta);
    add(kFlowMatchStep, "x86-64-v4", "threaded", fm_simd_mt<IsaV4>, v4, 0, v4_mt_meta);

    add(kFlowSdeStep, "generic", "reference", reference::flow_sde_step_kernel, {}, 0, ref_meta);
    add(kFlowSdeStep, "generic", "default", sde_generic, {}, 0, gen_meta);
    add(kFlowSdeStep, "generic", "threaded", sde_generic_mt, {}, 0, gen_mt_meta);
    add(kFlowSdeStep, "x86-64-v3", "default", sde_simd<IsaV3>, v3, 0, v3_meta);
    add(kFlowSdeStep, "x86-64-v3", "threaded", sde_simd_mt<IsaV3>, v3, 0, v3_mt_meta);
    add(kFlowSdeStep, "x86-64-v4", "default", sde_simd<IsaV4>, v4, 0, v4_meta);
    add(kFlowSdeStep, "x86-64-v4", "threaded", sde_simd_mt<IsaV4>, v4, 0, v4_mt_meta);

    // The reference keeps one row of A*B in double: 8*N bytes it allocates itself. The SIMD
    // cells declare one packing slice (simdvariants.h's blocks) per thread they may use.
    const auto v3_slice = std::int64_t(kGemmSliceBytes<IsaV3>);
    const auto v4_slice = std::int64_t(kGemmSliceBytes<IsaV4>);
    add(kGemm, "generic", "reference", reference::gemm_kernel, {}, 0, ref_meta);
    add(kGemm, "generic", "default", gemm_generic, {}, 0, gen_meta);
    add(kGemm, "generic", "threaded", gemm_split<void>, {}, 0, gen_mt_meta);
    add(kGemm, "x86-64-v3", "default", gemm_simd<IsaV3>, v3, v3_slice, v3_meta);
    add(kGemm, "x86-64-v3", "threaded", gemm_simd_mt<IsaV3>, v3, v3_slice * threads, v3_mt_meta);
    add(kGemm, "x86-64-v4", "default", gemm_simd<IsaV4>, v4, v4_slice, v4_meta);
    add(kGemm, "x86-64-v4", "threaded", gemm_simd_mt<IsaV4>, v4, v4_slice * threads, v4_mt_meta);
#if defined(SWITCHYARD_HAVE_OPENBLAS)
    Value blas_meta = {{"isa", "OpenBLAS dispatch"},
                       {"library", "OpenBLAS"},
                       {"threads", openblas_get_num_threads()},
                       {"config", openblas_get_config()}};
    // The level its kernels need: OpenBLAS picks them itself, whatever SWITCHYARD_MAX_ISA
    // says (the profiler does not judge it against a capped level's ceilings).
    if (const char* core = openblas_get_corename(); core) {
        blas_meta["corename"] = core;
        if (const auto level = openblas_core_level(core); !level.empty())
            blas_meta["isa_level"] = level;
    }
    add(kGemm, "generic", "openblas", gemm_openblas, {}, 0, std::move(blas_meta));
#endif

    add(kRmsNorm, "generic", "reference", reference::rms_norm_kernel, {}, 0, ref_meta);
    add(kRmsNorm, "generic", "default", rms_generic, {}, 0, gen_meta);
    add(kRmsNorm, "generic", "threaded", rms_generic_mt, {}, 0, gen_mt_meta);
    add(kRmsNorm, "x86-64-v3", "default", rms_simd<IsaV3>, v3, 0, v3_meta);
    add(kRmsNorm, "x86-64-v3", "threaded", rms_simd_mt<IsaV3>, v3, 0, v3_mt_meta);
    add(kRmsNorm, "x86-64-v4", "default", rms_simd<IsaV4>, v4, 0, v4_meta);
    add(kRmsNorm, "x86-64-v4", "threaded", rms_simd_mt<IsaV4>, v4, 0, v4_mt_meta);
}

} // namespace switchyard
