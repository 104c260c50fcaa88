// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/tuplekey.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// Where a kernel should run: a device kind ("cpu", "cuda", "opencl", "vulkan") and an arch
/// ("sm_90", "x86-64-v3", "generic"). An empty arch means "what this machine has".
struct SWITCHYARD_CORE_EXPORT Target {
    std::string device;
    std::string arch;
};

/// Parses "cuda", "cuda:sm_90", "cpu:x86-64-v2", "opencl". Device ids such as "cuda:0"
/// are accepted too and mean the device kind on this machine. Throws std::invalid_argument
/// naming the valid devices or arches.
SWITCHYARD_CORE_EXPORT Target parse_target(std::string_view text);

/// Device kinds the fallback builder knows.
SWITCHYARD_CORE_EXPORT const std::vector<std::string>& known_devices();

/// The arch ladder of a device kind, most specific first, ending at "generic":
/// cuda: sm_100 sm_90 sm_89 sm_86 sm_80 sm_75 generic; cpu (x86-64): x86-64-v4 x86-64-v3
/// x86-64-v2 generic; cpu (aarch64): sve neon generic; opencl, vulkan: generic.
SWITCHYARD_CORE_EXPORT std::vector<std::string> arch_ladder(std::string_view device);

/// The ladder from `start` down to generic. `start` may be any arch of the device kind,
/// also one not on the ladder ("sm_87", "sm_120" start at the highest rung not above them).
/// Throws std::invalid_argument for an arch that does not belong to the device kind.
SWITCHYARD_CORE_EXPORT std::vector<std::string> arch_chain(std::string_view device,
                                                           std::string_view start);

/// The most specific arch this host's CPU supports ("x86-64-v3", "neon", ...).
SWITCHYARD_CORE_EXPORT std::string host_cpu_arch();

/// The candidate keys for (op, target, variant): every rung of the arch chain with
/// `variant`, then the terminal rung (op, cpu, generic, reference). Without an arch, the
/// chain starts at this machine's arch (the host CPU's level; for devices without one
/// detected here, at the top of the ladder).
SWITCHYARD_CORE_EXPORT std::vector<TupleKey>
fallback_chain(std::string_view op, const Target& target, std::string_view variant = "default");

/// A kernel key's cell as tunings, dispatch findings and reports name it: "arch/variant"
/// ("x86-64-v4/default").
SWITCHYARD_CORE_EXPORT std::string cell_name(const TupleKey& kernel_key);

} // namespace switchyard
