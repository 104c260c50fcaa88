// SPDX-License-Identifier: MIT
#include <switchyard/profiling/workload.h>

#include <switchyard/hardware/hardware.h>

#include "util/splitmix.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace switchyard {

namespace {

// splitmix64: tiny, fast, identical everywhere.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() noexcept { return splitmix64(state); }
    // Uniform in [0, 1) with 24 random bits (exact in float).
    double unit() noexcept { return double(next() >> 40) * (1.0 / 16777216.0); }
};

std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
    SplitMix64 g{seed ^ (a * 0x100000001b3ULL) ^ (b << 32)};
    return g.next();
}

} // namespace

std::string_view to_string(InputPattern p) {
    switch (p) {
    case InputPattern::Random:
        return "random";
    case InputPattern::Zeros:
        return "zeros";
    case InputPattern::Negatives:
        return "negatives";
    case InputPattern::Large:
        return "large";
    }
    return "?";
}

void Workload::fill_uniform(std::vector<float>& v, std::uint64_t seed, float lo, float hi) {
    SplitMix64 g{seed};
    const double span = double(hi) - double(lo);
    for (auto& x : v)
        x = float(double(lo) + span * g.unit());
}

void Workload::fill_normal(std::vector<float>& v, std::uint64_t seed) {
    // Box-Muller; u1 in (0, 1] so log() stays finite.
    SplitMix64 g{seed};
    for (std::size_t i = 0; i < v.size(); i += 2) {
        const double u1 = 1.0 - g.unit();
        const double u2 = g.unit();
        const double r = std::sqrt(-2.0 * std::log(u1));
        v[i] = float(r * std::cos(2.0 * std::numbers::pi * u2));
        if (i + 1 < v.size())
            v[i + 1] = float(r * std::sin(2.0 * std::numbers::pi * u2));
    }
}

std::int64_t Workload::bytes_needed(const OpInfo& op, const Dims& dims) {
    // Each buffer is below 2^34 elements (parse_dims), so the sum fits easily.
    std::int64_t in = 0, out = 0;
    for (int s = 0; s < int(op.inputs.size()); ++s)
        in += op.input_elems(s, dims);
    for (int s = 0; s < int(op.outputs.size()); ++s)
        out += op.output_elems(s, dims);
    return std::int64_t(sizeof(float)) * (2 * in + 4 * out);
}

void Workload::check_fits_in_memory(const OpInfo& op, const Dims& dims) {
    const auto memory = physical_memory_bytes();
    if (memory <= 0)
        return; // unknown: let the allocation decide
    const double have = double(memory);
    const auto need = bytes_needed(op, dims);
    if (double(need) <= have)
        return;
    auto gib = [](double bytes) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1 << 30));
        return std::string(buf);
    };
    throw std::length_error(std::string(op.name) + " " + dims_to_string(op, dims) + " needs " +
                            gib(double(need)) +
                            " of memory (inputs and outputs on host and device, the CPU "
                            "reference and a copy for the parity check); this machine has " +
                            gib(have) + ". Choose a smaller size.");
}

Workload::Workload(const OpInfo& op, const Dims& dims, std::uint64_t seed, InputPattern pattern)
    : scalars(op.default_scalars), m_op(&op), m_dims(dims), m_seed(seed), m_pattern(pattern) {
    check_fits_in_memory(op, dims);
    std::uint64_t op_hash = 0xcbf29ce484222325ULL; // FNV-1a: std::hash differs between libraries
    for (char ch : op.name)
        op_hash = (op_hash ^ std::uint8_t(ch)) * 0x100000001b3ULL;
    for (int s = 0; s < int(op.inputs.size()); ++s) {
        std::vector<float> v(std::size_t(op.input_elems(s, dims)));
        const auto name = op.inputs[std::size_t(s)];
        // The seed depends on (seed, op, slot) only, not on the size, so a prefix of a big
        // input is not the small one; that is fine, each size is its own workload.
        const auto slot_seed = mix(seed, op_hash, std::uint64_t(s));
        const bool is_noise = name == "noise";
        const bool is_weight = op.name == kRmsNorm && name == "w";
        if (is_noise)
            fill_normal(v, slot_seed);
        else if (is_weight)
            fill_uniform(v, slot_seed, 0.5f, 1.5f);
        else
            fill_uniform(v, slot_seed, -1.0f, 1.0f);
        if (!is_noise && !is_weight) {
            const float large = op.name == kGemm ? 1e15f : 1e30f;
            for (auto& x : v) {
                switch (pattern) {
                case InputPattern::Random:
                    break;
                case InputPattern::Zeros:
                    x = 0.0f;
                    break;
                case InputPattern::Negatives:
                    x = -std::fabs(x);
                    break;
                case InputPattern::Large:
                    x *= large;
                    break;
                }
            }
        }
        m_inputs.push_back(std::move(v));
    }
}

const std::vector<std::vector<float>>& Workload::initial_outputs() const {
    if (m_initial.empty())
        m_initial = make_outputs();
    return m_initial;
}

std::vector<std::vector<float>> Workload::make_outputs() const {
    std::vector<std::vector<float>> out;
    for (int s = 0; s < int(m_op->outputs.size()); ++s) {
        std::vector<float> v(std::size_t(m_op->output_elems(s, m_dims)));
        if (s == 0 && m_op->first_output_is_input) {
            fill_uniform(v, mix(m_seed, 0xc0ffee, std::uint64_t(s)), -1.0f, 1.0f);
            if (m_pattern == InputPattern::Zeros)
                std::fill(v.begin(), v.end(), 0.0f);
            else if (m_pattern == InputPattern::Negatives)
                for (auto& x : v)
                    x = -std::fabs(x);
            else if (m_pattern == InputPattern::Large)
                for (auto& x : v)
                    x *= 1e30f;
        } else {
            std::fill(v.begin(), v.end(), std::numeric_limits<float>::quiet_NaN());
        }
        out.push_back(std::move(v));
    }
    return out;
}

KernelArgs Workload::args(std::vector<std::vector<float>>& outputs) const {
    KernelArgs a;
    a.dims = m_dims;
    for (std::size_t s = 0; s < m_inputs.size() && s < a.in.size(); ++s)
        a.in[s] = m_inputs[s].data();
    for (std::size_t s = 0; s < outputs.size() && s < a.out.size(); ++s)
        a.out[s] = outputs[s].data();
    a.scalars = scalars;
    return a;
}

const std::vector<std::vector<float>>& Workload::reference() const {
    if (m_reference.empty()) {
        auto out = make_outputs();
        const auto t0 = std::chrono::steady_clock::now();
        m_op->reference(args(out));
        m_reference_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m_reference = std::move(out);
    }
    return m_reference;
}

} // namespace switchyard
