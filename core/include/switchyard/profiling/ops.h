// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/kernel.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// Problem dimensions in kernel.h's `dims` order ({N}, {B, D} or {M, N, K}).
using Dims = std::array<std::int64_t, 3>;

/// Parity tolerance: an element passes when it is finite and
/// |got - ref| <= atol * max(1, max|ref|) + rtol * |ref|
/// (numpy's allclose, with atol scaled by the output's magnitude when that exceeds 1, so
/// large inputs do not turn rounding into failures where values cancel).
struct SWITCHYARD_CORE_EXPORT Tolerance {
    double atol = 0;
    double rtol = 0;
};

/// What the profiler and the parity check need to know about an op: its buffers, the
/// bytes it moves and the flops it does (docs/kernels.md), its tolerance and its
/// default size sweep. Plain data with capture-less function pointers.
struct SWITCHYARD_CORE_EXPORT OpInfo {
    std::string_view name;
    std::vector<std::string_view> dim_names;    // {"N"}, {"B", "D"}, {"M", "N", "K"}
    std::vector<std::string_view> inputs;       // names of the `in` slots
    std::vector<std::string_view> outputs;      // names of the `out` slots
    std::vector<std::string_view> scalar_names; // names of the `scalars` slots
    std::array<double, 4> default_scalars{};    // what a profile run passes
    bool first_output_is_input = false;         // gemm: C is read (beta) and written
    std::int64_t (*input_elems)(int slot, const Dims&) = nullptr;
    std::int64_t (*output_elems)(int slot, const Dims&) = nullptr;
    double (*bytes)(const Dims&) = nullptr;
    double (*flops)(const Dims&) = nullptr;
    Tolerance (*tolerance)(const Dims&) = nullptr;
    KernelFn reference; // the scalar CPU reference (reference.h)

    std::size_t rank() const noexcept { return dim_names.size(); }
};

/// The four ops, in docs/kernels.md's order.
SWITCHYARD_CORE_EXPORT const std::vector<OpInfo>& ops();
/// nullptr when unknown.
SWITCHYARD_CORE_EXPORT const OpInfo* find_op(std::string_view name);

/// A sweep from small (in L1) to a working set well beyond the last-level cache
/// (max(64 MiB, 4 x llc_bytes)); gemm stops where the scalar reference stays affordable.
SWITCHYARD_CORE_EXPORT std::vector<Dims> default_sizes(const OpInfo& op, std::int64_t llc_bytes);

/// "1048576", "64x4096", "512x512x512".
SWITCHYARD_CORE_EXPORT std::string dims_to_string(const OpInfo& op, const Dims& dims);

/// Parses a size for `op`: "AxBxC" with the op's rank, or a single number (K/M/G suffixes
/// are powers of 1024): N for a 1-D op; for [B,D] ops that many elements with D = 1024
/// (B = 1, D = n below 1024); n^3 for gemm. nullopt (and `error`) when malformed.
SWITCHYARD_CORE_EXPORT std::optional<Dims> parse_dims(const OpInfo& op, std::string_view text,
                                                      std::string* error = nullptr);

/// The working set in bytes (what `bytes` counts).
inline double working_set_bytes(const OpInfo& op, const Dims& d) {
    return op.bytes(d);
}

/// The reads' share (0..1) of the bytes the op moves: its inputs and an output it also reads
/// (gemm's C), against those and its outputs; 0 when it moves none. rms_norm 1/2 (a copy's
/// mix), flow_match_step 2/3 (a triad's), flow_sde_step about 3/4. It picks the bandwidth
/// ceilings that bound a row (choose_ceiling).
inline double read_share(const OpInfo& op, const Dims& d) {
    double reads = 0, writes = 0;
    for (int s = 0; s < int(op.inputs.size()); ++s)
        reads += double(op.input_elems(s, d));
    for (int s = 0; s < int(op.outputs.size()); ++s) {
        writes += double(op.output_elems(s, d));
        if (s == 0 && op.first_output_is_input)
            reads += double(op.output_elems(s, d));
    }
    return reads + writes > 0 ? reads / (reads + writes) : 0.0;
}

} // namespace switchyard
