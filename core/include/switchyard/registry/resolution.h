// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace switchyard {

/// One rung of a fallback chain, as the GUI and the CLI explain it.
struct SWITCHYARD_CORE_EXPORT ResolutionRung {
    TupleKey key;
    bool declared = false;  // a cell exists for this key
    bool available = false; // ... and it is usable here
    std::string backend;    // who declared it
    std::string why_not;    // when declared but unavailable, or not declared
};

/// A resolved op: every rung of the chain and the winner (resolve_first semantics).
struct SWITCHYARD_CORE_EXPORT Resolution {
    std::string op;
    Target target;
    std::string variant;
    std::vector<ResolutionRung> rungs;
    std::optional<std::size_t> winner;         // index into rungs
    std::optional<std::size_t> first_declared; // what would resolve on hardware that has it
    KernelRegistry::CellPtr cell;              // the winning cell
};

/// Builds the chain for (op, target, variant), resolves it through `registry`'s kernels
/// (loading a plugin whose declared cell the chain reaches) and explains every rung.
/// Throws std::invalid_argument for an unknown op, device or arch, or a variant no cell of
/// the op has (check_variant).
SWITCHYARD_CORE_EXPORT Resolution resolve_kernel(BackendRegistry& registry, std::string_view op,
                                                 const Target& target,
                                                 std::string_view variant = "default");
/// The same with known_ops(registry) given: resolving every op of a 100,000-cell registry
/// then lists the ops once, not once per op.
SWITCHYARD_CORE_EXPORT Resolution resolve_kernel(BackendRegistry& registry, std::string_view op,
                                                 const Target& target, std::string_view variant,
                                                 const std::vector<std::string>& known);

SWITCHYARD_CORE_EXPORT nlohmann::json to_json(const Resolution& resolution);
/// The Resolution that to_json() wrote (without `cell`: the code stayed where it ran, e.g.
/// in an inspection worker). Throws std::runtime_error naming the key path when malformed.
SWITCHYARD_CORE_EXPORT Resolution resolution_from_json(const nlohmann::json& j);

/// Ops the registry has at least one cell for, sorted.
SWITCHYARD_CORE_EXPORT std::vector<std::string> known_ops(BackendRegistry& registry);

/// The variants the declared cells of `ops` have (every op's when `ops` is empty), on any
/// device and arch, sorted.
SWITCHYARD_CORE_EXPORT std::vector<std::string>
known_variants(BackendRegistry& registry, const std::vector<std::string>& ops = {});
/// Throws std::invalid_argument when no declared cell of `ops` (every op's when empty) has
/// `variant`, on any device or arch: "unknown variant 'threded'; did you mean 'threaded'?
/// (variants of gemm: ...)". "default" always passes. A variant that some cell has, but not
/// this target's, still falls back along the chain, as fallback_chain() says.
SWITCHYARD_CORE_EXPORT void check_variant(BackendRegistry& registry,
                                          const std::vector<std::string>& ops,
                                          std::string_view variant);

} // namespace switchyard
