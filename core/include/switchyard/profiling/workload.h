// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/ops.h>
#include <switchyard/sdk/kernel.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace switchyard {

/// What the inputs look like. `Random` is what profile runs use; the others are the
/// edge cases of the parity tests.
enum class InputPattern {
    Random,    // uniform in [-1, 1] (noise: standard normal; rms_norm's w: [0.5, 1.5])
    Zeros,     // every data input 0 (rms_norm's w stays non-zero)
    Negatives, // -|Random|
    Large,     // Random scaled to large magnitudes (1e30; gemm 1e15 so products stay finite)
};

SWITCHYARD_CORE_EXPORT std::string_view to_string(InputPattern p);

/// The host-side inputs of one (op, dims): deterministic from `seed` on every machine (own
/// generator, no std:: distributions), so every variant and the reference see the same
/// numbers, and two reports from two machines measured the same thing.
class SWITCHYARD_CORE_EXPORT Workload {
public:
    Workload(const OpInfo& op, const Dims& dims, std::uint64_t seed = 0x5eedULL,
             InputPattern pattern = InputPattern::Random);

    const OpInfo& op() const noexcept { return *m_op; }
    const Dims& dims() const noexcept { return m_dims; }
    const std::vector<float>& input(int slot) const { return m_inputs.at(std::size_t(slot)); }
    std::array<double, 4> scalars; // the op's default scalars; tests may change them

    /// Fresh output buffers with their initial contents: gemm's C holds seeded values
    /// (beta reads it); other outputs are filled with NaN so an element a kernel forgets
    /// to write fails parity.
    std::vector<std::vector<float>> make_outputs() const;
    /// make_outputs()' contents, made on first call and kept: what every launch's output
    /// buffers are uploaded from (an A/B's 2 x pairs slices of a row made them afresh each
    /// time: a fill and a fresh mapping of every output, each slice).
    const std::vector<std::vector<float>>& initial_outputs() const;

    /// Host-pointer KernelArgs over this workload's inputs and the given outputs.
    KernelArgs args(std::vector<std::vector<float>>& outputs) const;

    /// The reference outputs (computed on first call, with the current scalars).
    const std::vector<std::vector<float>>& reference() const;
    /// How long computing reference() took, in seconds (wall clock); 0 before it ran.
    double reference_seconds() const noexcept { return m_reference_s; }

    /// The memory one row of (op, dims) needs at its peak, in bytes: inputs and outputs on
    /// the host and on the device (host memory for the CPU), the initial outputs
    /// (initial_outputs()), the reference outputs and the copy the parity check downloads:
    /// 4 * (2 * inputs + 4 * outputs).
    static std::int64_t bytes_needed(const OpInfo& op, const Dims& dims);
    /// Throws std::length_error ("gemm 100000x100000x100000 needs 112 GiB of memory ...; this
    /// machine has 15.6 GiB") when bytes_needed() is more than the machine's physical memory,
    /// before anything is allocated. The constructor calls it.
    static void check_fits_in_memory(const OpInfo& op, const Dims& dims);

    /// Seeded fill, exposed for device backends that generate on the host.
    static void fill_uniform(std::vector<float>& v, std::uint64_t seed, float lo, float hi);
    static void fill_normal(std::vector<float>& v, std::uint64_t seed);

private:
    const OpInfo* m_op;
    Dims m_dims;
    std::uint64_t m_seed;
    InputPattern m_pattern;
    std::vector<std::vector<float>> m_inputs;
    mutable std::vector<std::vector<float>> m_reference;
    mutable std::vector<std::vector<float>> m_initial;
    mutable double m_reference_s = 0;
};

} // namespace switchyard
