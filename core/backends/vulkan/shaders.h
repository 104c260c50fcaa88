// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace switchyard::vulkan {

/// One compute shader of the plugin: GLSL in shaders/, compiled to SPIR-V 1.3 by glslc at
/// build time and embedded here.
struct Shader {
    std::string_view name; // "gemm_tiled": shaders/gemm_tiled.comp
    const std::uint32_t* code;
    std::size_t words;
    std::uint32_t bindings; // storage buffers, bindings 0..bindings-1
};

/// The shader `name`; throws std::invalid_argument for a name the plugin lacks.
const Shader& shader(std::string_view name);

} // namespace switchyard::vulkan
