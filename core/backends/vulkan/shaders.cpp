// SPDX-License-Identifier: MIT
// The SPIR-V of shaders/*.comp, as glslc -mfmt=num writes it (CMakeLists.txt).
#include "shaders.h"

#include <array>
#include <stdexcept>
#include <string>

namespace switchyard::vulkan {

namespace {

constexpr std::uint32_t kFlowMatchStepScalar[] = {
#include "shaders/flow_match_step_scalar.spv.inc"
};
constexpr std::uint32_t kFlowMatchStepVec4[] = {
#include "shaders/flow_match_step_vec4.spv.inc"
};
constexpr std::uint32_t kFlowSdeStepScalar[] = {
#include "shaders/flow_sde_step_scalar.spv.inc"
};
constexpr std::uint32_t kFlowSdeStepVec4[] = {
#include "shaders/flow_sde_step_vec4.spv.inc"
};
constexpr std::uint32_t kRmsNormShared[] = {
#include "shaders/rms_norm_shared.spv.inc"
};
constexpr std::uint32_t kRmsNormSubgroup[] = {
#include "shaders/rms_norm_subgroup.spv.inc"
};
constexpr std::uint32_t kGemmNaive[] = {
#include "shaders/gemm_naive.spv.inc"
};
constexpr std::uint32_t kGemmTiled[] = {
#include "shaders/gemm_tiled.spv.inc"
};
constexpr std::uint32_t kProbeRead[] = {
#include "shaders/probe_read.spv.inc"
};
constexpr std::uint32_t kProbeCopy[] = {
#include "shaders/probe_copy.spv.inc"
};
constexpr std::uint32_t kProbeTriad[] = {
#include "shaders/probe_triad.spv.inc"
};
constexpr std::uint32_t kProbeFma[] = {
#include "shaders/probe_fma.spv.inc"
};

#define SHADER(name, array, bindings)                                                              \
    Shader {                                                                                       \
        name, array, sizeof(array) / sizeof(array[0]), bindings                                    \
    }
const std::array<Shader, 12> kShaders = {
    SHADER("flow_match_step_scalar", kFlowMatchStepScalar, 3),
    SHADER("flow_match_step_vec4", kFlowMatchStepVec4, 6),
    SHADER("flow_sde_step_scalar", kFlowSdeStepScalar, 5),
    SHADER("flow_sde_step_vec4", kFlowSdeStepVec4, 9),
    SHADER("rms_norm_shared", kRmsNormShared, 3),
    SHADER("rms_norm_subgroup", kRmsNormSubgroup, 3),
    SHADER("gemm_naive", kGemmNaive, 3),
    SHADER("gemm_tiled", kGemmTiled, 3),
    SHADER("probe_read", kProbeRead, 2),
    SHADER("probe_copy", kProbeCopy, 2),
    SHADER("probe_triad", kProbeTriad, 3),
    SHADER("probe_fma", kProbeFma, 1),
};
#undef SHADER

} // namespace

const Shader& shader(std::string_view name) {
    for (const auto& s : kShaders)
        if (s.name == name)
            return s;
    throw std::invalid_argument("the vulkan plugin has no shader '" + std::string(name) + "'");
}

} // namespace switchyard::vulkan
