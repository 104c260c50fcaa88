// SPDX-License-Identifier: MIT
#pragma once

// Tuned resolution for applications that embed the registry: which cell to run for an op at
// a size on a device kind, following the machine's tuning files (`switchyard-cli tune`) where
// an entry applies, else the fallback chain. Versioned on its own (kTunedResolveVersion):
// a request says the revision it was written against, and a core that does not know it
// answers with an error instead of misreading it.

#include <switchyard/core_export.h>

#include <switchyard/sdk/registries.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

/// The revision of TunedResolveRequest and TunedResolveResult this core implements.
inline constexpr int kTunedResolveVersion = 1;

struct SWITCHYARD_CORE_EXPORT TunedResolveRequest {
    int version = kTunedResolveVersion;
    std::string op;             // "gemm"
    std::string device = "cpu"; // the kernel key's device kind: "cpu", "cuda", "opencl"
    std::string variant = "default";
    std::array<std::int64_t, 3> dims{}; // the size, as the op's dims (gemm: M, N, K)
    bool use_tuning = true;             // false: the chain alone
    /// The tuning files to follow; empty: SWITCHYARD_TUNING, then the user's folder.
    std::vector<std::string> tuning_files;
};

struct SWITCHYARD_CORE_EXPORT TunedResolveResult {
    KernelRegistry::CellPtr cell; // the cell to run; null when nothing resolves (see error)
    std::string cell_name;        // "x86-64-v4/threaded"
    bool tuned = false;           // a tuning entry chose it
    /// Why: "tuned -> x86-64-v4/threaded (1.83x the chain's x86-64-v4/default, ...)", or
    /// "the fallback chain's pick".
    std::string explanation;
    /// Entries that do not apply, each with why (another machine, a rebuilt plugin, a chosen
    /// cell that failed its parity check when first used in this process, ...).
    std::vector<std::string> ignored;
    std::string error; // a request this core cannot answer (unknown op or device, version)
};

/// Resolves `request` in the process-wide registry (runtime's default_backends()). The first
/// time a tuned CPU cell is chosen in a process, it is launched once on a small size and
/// checked against the reference at the overridden cell's tolerance; one that fails is
/// dropped for the rest of the process (said in `ignored`) and the chain's pick is used: a
/// wrong answer is never the price of speed. Never throws.
SWITCHYARD_CORE_EXPORT TunedResolveResult resolve_tuned(const TunedResolveRequest& request);

namespace detail {
/// The runtime's implementation, set when the core loads (the SDK sits below the modules that
/// implement it).
using TunedResolver = TunedResolveResult (*)(const TunedResolveRequest&);
SWITCHYARD_CORE_EXPORT void set_tuned_resolver(TunedResolver resolver) noexcept;
} // namespace detail

} // namespace switchyard
