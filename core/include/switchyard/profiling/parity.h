// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/ops.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

/// The result of comparing a kernel's outputs with the CPU reference.
struct SWITCHYARD_CORE_EXPORT ParityResult {
    bool checked = false; // false: not compared (no reference, or the run failed first)
    bool pass = false;
    double max_abs_error = 0; // over every output element
    double max_rel_error = 0; // |got - ref| / |ref| where ref != 0
    Tolerance tolerance;
    std::int64_t mismatches = 0; // elements outside the tolerance
    std::int64_t non_finite = 0; // NaN/Inf in the kernel's output (always a failure)
    std::int64_t elements = 0;
    std::string first_failure; // "log_prob[3]: got nan, expected -1.25", empty on pass
    /// What the kernel did to memory it must not touch, found by the guard zones around its
    /// outputs and workspace and a comparison of its inputs after the launch: "wrote 2
    /// elements past `out`", "modified input `x` (x[511]: ...)". Any is a FAIL.
    std::vector<std::string> violations;

    const char* verdict() const noexcept {
        return !checked ? "NOT_CHECKED" : pass ? "PASS" : "FAIL";
    }
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key.
    static ParityResult from_json(const nlohmann::json& j);
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const ParityResult& parity);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, ParityResult& parity);

/// Compares every output slot of `op` element by element (ops.h's Tolerance rule). A
/// kernel output that is NaN or Inf always fails, whatever the reference holds; so does a
/// size mismatch.
SWITCHYARD_CORE_EXPORT ParityResult check_parity(const OpInfo& op, const Dims& dims,
                                                 const std::vector<std::vector<float>>& got,
                                                 const std::vector<std::vector<float>>& ref);
/// The same with a tolerance other than the op's (a cell whose metadata states its own,
/// e.g. TF32 gemm: `"tolerance": {"atol": ..., "rtol": ...}`).
SWITCHYARD_CORE_EXPORT ParityResult check_parity(const OpInfo& op, const Dims& dims,
                                                 const std::vector<std::vector<float>>& got,
                                                 const std::vector<std::vector<float>>& ref,
                                                 const Tolerance& tolerance);

} // namespace switchyard
