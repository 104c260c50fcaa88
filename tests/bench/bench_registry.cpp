// SPDX-License-Identifier: MIT
// resolve_first over a 7-rung chain, list() over 10,000 backends, the registry work of
// the issue-10 scale (100,000 cells): manifest() sorted, one plugin's cells replaced, and the
// memory of rescanning that scale 20 times (retired cells reclaimed).
// Compare with the Python seed: tests/bench/compare_seed.sh.
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/runtime/runtime.h>

#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

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

// A registry shaped like tests/bench/scale.sh's: `backends` plugins of 100 CPU cells each.
void fill_scale(KernelRegistry& reg, int backends) {
    const char* archs[] = {"generic", "x86-64-v2", "x86-64-v3"};
    std::vector<KernelCell> cells;
    for (int b = 0; b < backends; ++b) {
        const std::string name = "generated-" + std::to_string(b);
        for (int c = 0; c < 100; ++c) {
            KernelCell cell;
            cell.key = {"op_" + std::to_string(c), "cpu", archs[c % 3], name};
            cell.fn = [](const KernelArgs&) {};
            cell.backend = name;
            cells.push_back(std::move(cell));
        }
    }
    reg.put_all(std::move(cells));
}

// The matrix's order (the seed kernel registry's manifest(): sorted by the key's strings) over all
// cells.
void BM_ManifestSorted(benchmark::State& state) {
    KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
    fill_scale(reg, int(state.range(0)));
    for (auto _ : state) {
        auto rows = reg.manifest();
        benchmark::DoNotOptimize(rows);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0) * 100);
}
BENCHMARK(BM_ManifestSorted)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// One plugin's load: its 100 placeholders give way to 100 real cells (replace_if). Its cost
// times the number of device backends loaded at start is that start's registry work.
void BM_ReplaceOneBackend(benchmark::State& state) {
    KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
    fill_scale(reg, int(state.range(0)));
    const std::string name = "generated-7";
    for (auto _ : state) {
        std::vector<KernelCell> cells;
        for (int c = 0; c < 100; ++c) {
            KernelCell cell;
            cell.key = {"op_" + std::to_string(c), "cpu", "generic", name};
            cell.fn = [](const KernelArgs&) {};
            cell.backend = name;
            cells.push_back(std::move(cell));
        }
        reg.replace_if([&](const KernelCell& c) { return c.backend == name; }, std::move(cells));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReplaceOneBackend)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

// A plugin found on disk and never loaded: what a rescan forgets and rediscovers, with its
// manifest's placeholder cells.
class UnloadedPlugin : public BackendProvider {
public:
    UnloadedPlugin(std::string name, DeclaredCells kernels) {
        m_info.name = std::move(name);
        m_info.source = BackendSource::Plugin;
        m_info.state = BackendState::Discovered;
        m_info.manifest_path = "/generated/" + m_info.name + ".plugin.json";
        m_info.declared_kernels = std::move(kernels);
    }
    BackendInfo describe() const override { return m_info; }
    void load(CellRegistrar&) override {}

private:
    BackendInfo m_info;
};

double resident_bytes() {
    long pages = 0, resident = 0;
    std::ifstream("/proc/self/statm") >> pages >> resident;
    return double(resident) * double(::sysconf(_SC_PAGESIZE));
}

// 1,000 plugins of 100 cells (scale.sh's shape, found by an in-process discovery) rescanned
// 20 times: each rescan retires the 100,000 placeholders and publishes 100,000 new ones. The
// resident set after the last rescan over that after the first must stay within 1.10.
void BM_Rescan1000Plugins(benchmark::State& state) {
    constexpr int kPlugins = 1000, kCells = 100, kRescans = 20;
    const char* archs[] = {"generic", "x86-64-v2", "x86-64-v3"};
    std::vector<std::pair<std::string, DeclaredCells>> plugins;
    for (int b = 0; b < kPlugins; ++b) {
        const std::string name = "generated-" + std::to_string(b);
        std::vector<DeclaredCell> cells;
        for (int c = 0; c < kCells; ++c)
            cells.push_back({{"op_" + std::to_string(c), "cpu", archs[c % 3], name}, 0});
        plugins.emplace_back(name, DeclaredCells(std::move(cells)));
    }
    for (auto _ : state) {
        KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
        ComponentRegistry components("components", {"kind", "device", "variant"});
        BackendRegistry registry(kernels, components, builtin_backends);
        registry.set_plugin_discovery([&] {
            std::vector<std::shared_ptr<BackendProvider>> found;
            for (const auto& [name, cells] : plugins)
                found.push_back(std::make_shared<UnloadedPlugin>(name, cells));
            return found;
        });
        registry.ensure_initialized();
        double first = 0, last = 0;
        for (int i = 0; i < kRescans; ++i) {
            registry.rescan();
            (i == 0 ? first : last) = resident_bytes();
        }
        if (kernels.size() < std::size_t(kPlugins) * kCells)
            state.SkipWithError("the plugins' cells are missing");
        state.counters["rss_first_MiB"] = first / (1 << 20);
        state.counters["rss_last_MiB"] = last / (1 << 20);
        state.counters["rss_last_over_first"] = last / first;
        state.counters["cells_held"] = double(kernels.cells_held());
    }
}
BENCHMARK(BM_Rescan1000Plugins)->Iterations(1)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
