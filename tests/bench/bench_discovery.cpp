// SPDX-License-Identifier: MIT
// Plugin discovery over generated manifests, without opening any library.
// Goal: under 100 ms for 1,000 manifests, growing linearly.
//   build/bin/bench/bench_discovery --benchmark_filter=Discover
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace fs = std::filesystem;
using namespace switchyard;

namespace {

// A folder of `n` manifests shaped like real ones (one optional dependency, two kernels,
// one component), created once per size and removed at exit.
const std::string& manifest_dir(int n) {
    static std::map<int, std::string> dirs;
    static struct Cleanup {
        ~Cleanup() {
            std::error_code ec;
            for (const auto& [n, d] : dirs)
                fs::remove_all(d, ec);
        }
    } cleanup;
    auto it = dirs.find(n);
    if (it != dirs.end())
        return it->second;
    std::string tmpl = (fs::temp_directory_path() / "switchyard-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        std::abort();
    for (int i = 0; i < n; ++i) {
        const std::string name = "generated-" + std::to_string(i);
        std::ofstream(tmpl + "/" + name + ".plugin.json")
            << R"({"schema": 1, "name": ")" << name
            << R"(", "version": "1.0.0", "description": "A generated plugin", "library": "libswitchyard-)"
            << name
            << R"(.so", "tags": ["generated"], "capabilities": {"contract_version": 1, "min_core_version": "0.1.0",
  "max_core_version": null, "optional_deps": [{"name": "libc.so.6", "kind": "library", "hint": "Install libc6"}]},
  "kernels": [{"op": "gemm", "device": "cpu", "arch": "generic", "variant": ")"
            << name
            << R"(", "workspace_bytes": 0}, {"op": "rms_norm", "device": "cpu", "arch": "generic", "variant": ")"
            << name << R"("}], "components": [{"kind": "vae", "device": "cpu", "variant": ")"
            << name << R"("}]})";
    }
    return dirs.emplace(n, tmpl).first->second;
}

// Search path scan + manifest parsing + describe() of every plugin; nothing is cached
// between iterations (the OS page cache is warm after the first).
void BM_Discover(benchmark::State& state) {
    const int n = int(state.range(0));
    const auto path = PluginSearchPath::from_dirs({manifest_dir(n)});
    for (auto _ : state) {
        auto providers = path.discover();
        for (const auto& p : providers)
            benchmark::DoNotOptimize(p->describe());
        if (int(providers.size()) != n)
            state.SkipWithError("wrong number of plugins");
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Discover)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// The same, through a fresh BackendRegistry: name claiming and the manifest's placeholder
// cells published into the matrix.
void BM_DiscoverIntoRegistry(benchmark::State& state) {
    const int n = int(state.range(0));
    const auto discovery = PluginSearchPath::from_dirs({manifest_dir(n)}).discovery();
    for (auto _ : state) {
        KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
        ComponentRegistry components("components", {"kind", "device", "variant"});
        BackendRegistry registry(kernels, components, builtin_backends);
        registry.set_plugin_discovery(discovery);
        registry.ensure_initialized();
        benchmark::DoNotOptimize(kernels.size());
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_DiscoverIntoRegistry)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
