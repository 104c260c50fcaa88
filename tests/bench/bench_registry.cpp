// SPDX-License-Identifier: MIT
// resolve_first over a 7-rung chain, and list() over 10,000 backends.
// Compare with the Python seed: tests/bench/compare_seed.sh.
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/runtime/runtime.h>

#include <benchmark/benchmark.h>

using namespace switchyard;

namespace {

// The same cells tests/bench/seed_resolve.py declares: every op's CPU ladder plus the
// terminal rung; the chain asks for cuda sm_90, so six rungs miss before the terminal hits.
void fill(KernelRegistry& reg) {
    for (const char* op : {"flow_match_step", "flow_sde_step", "gemm", "rms_norm"}) {
        for (const char* arch : {"x86-64-v3", "x86-64-v2", "generic"}) {
            KernelCell c;
            c.key = {op, "cpu", arch, "default"};
            c.fn = [](const KernelArgs&) {};
            c.available = [] { return true; };
            reg.put(c);
        }
        KernelCell ref;
        ref.key = {op, "cpu", "generic", "reference"};
        ref.fn = [](const KernelArgs&) {};
        ref.available = [] { return true; };
        reg.put(ref);
    }
}

void BM_ResolveFirst7Rungs(benchmark::State& state) {
    KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
    fill(reg);
    const auto chain = fallback_chain("gemm", Target{"cuda", "sm_90"});
    if (chain.size() != 7)
        state.SkipWithError("expected a 7-rung chain");
    for (auto _ : state) {
        auto cell = reg.resolve_first(chain);
        benchmark::DoNotOptimize(cell);
    }
}
BENCHMARK(BM_ResolveFirst7Rungs);

// The same call kept as an owning pointer (CellPtr): what a caller pays to hold the cell
// beyond the registry's life (two atomic reference-count updates per call).
void BM_ResolveFirst7RungsOwned(benchmark::State& state) {
    KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
    fill(reg);
    const auto chain = fallback_chain("gemm", Target{"cuda", "sm_90"});
    for (auto _ : state) {
        KernelRegistry::CellPtr cell = reg.resolve_first(chain);
        benchmark::DoNotOptimize(cell);
    }
}
BENCHMARK(BM_ResolveFirst7RungsOwned);

// The same chain prepared once, as a dispatcher that resolves it repeatedly would hold it.
void BM_ResolveFirst7RungsPrepared(benchmark::State& state) {
    KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
    fill(reg);
    PreparedChain<KernelFn> chain(fallback_chain("gemm", Target{"cuda", "sm_90"}));
    for (auto _ : state) {
        auto cell = reg.resolve_first(chain);
        benchmark::DoNotOptimize(cell);
    }
}
BENCHMARK(BM_ResolveFirst7RungsPrepared);

void BM_List10000Backends(benchmark::State& state) {
    KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
    ComponentRegistry components("components", {"kind", "device", "variant"});
    BackendRegistry registry(kernels, components, builtin_backends);
    for (int i = 0; i < 10000; ++i) {
        BackendSpec s;
        s.name = "backend_" + std::to_string(i);
        if (i % 10 == 0)
            s.tags = {"debug"};
        registry.register_backend(std::move(s));
    }
    registry.ensure_initialized();
    for (auto _ : state) {
        auto names = registry.list();
        benchmark::DoNotOptimize(names);
    }
    state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_List10000Backends)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
